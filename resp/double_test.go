package resp

import (
	"math"
	"strconv"
	"testing"
)

func TestAppendDouble(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "-0"},
		{math.NaN(), "nan"},
		{math.Copysign(math.NaN(), -1), "nan"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{1, "1"},
		{-3, "-3"},
		{10, "10"},
		{1e8, "100000000"},
		{1e18, "1000000000000000000"},
		{1 << 62, "4611686018427387904"},
		{-(1 << 62), "-4611686018427387904"},
		{1 << 63, "9223372036854776000"},
		{1e19, "1e+19"},
		{1.5e19, "1.5e+19"},
		{1e22, "1e+22"},
		{1.2345678901234567e19, "12345678901234567000"},
		{0.1, "0.1"},
		{-0.1, "-0.1"},
		{1.5, "1.5"},
		{3.14159, "3.14159"},
		{2.5e-3, "0.0025"},
		{0.000001, "0.000001"},
		{0.000123, "0.000123"},
		{0.0001234, "1.234e-4"}, // fpconv_dtoa's rule, not %g's
		{1e-7, "1e-7"},
		{1.5e-7, "1.5e-7"},
		{-1.5e-7, "-1.5e-7"},
		{1.2345678, "1.2345678"},
		{1234.5678901, "1234.5678901"},
		{12345.678901, "12345.678901"},
		{12345.6789012, "1.23456789012e+4"},
		{10000000.5, "10000000.5"},
		{1.2345678901234e-5, "1.2345678901234e-5"},
		{1e100, "1e+100"},
		{1e-100, "1e-100"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{-math.MaxFloat64, "-1.7976931348623157e+308"},
		{math.SmallestNonzeroFloat64, "5e-324"},
		{0.30000000000000004, "0.30000000000000004"},
	}
	for _, tt := range tests {
		if got := string(appendDouble(nil, tt.f)); got != tt.want {
			t.Errorf("appendDouble(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

// Every formatted double reads back as the same value.
func TestAppendDoubleRoundTrips(t *testing.T) {
	check := func(f float64) {
		s := string(appendDouble(nil, f))
		g, err := strconv.ParseFloat(s, 64)
		if err != nil || g != f {
			t.Fatalf("%v formats as %q, which reads back as %v, %v", f, s, g, err)
		}
	}
	x := uint64(0x9e3779b97f4a7c15)
	for range 100000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		f := math.Float64frombits(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		check(f)
		check(float64(int64(x) >> (x % 64)))
		check(float64(x%1000000) / 1000)
	}
}
