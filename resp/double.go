package resp

import (
	"math"
	"strconv"
)

// appendDouble appends f formatted as Redis 7.2 and later format a double
// reply (d2string in util.c):
//
//   - NaN is "nan" whatever its sign bit, the infinities "inf" and "-inf",
//     and zero "0" or "-0".
//   - An integer of magnitude at most 2^62 is written as an integer:
//     3 → "3", 1e18 → "1000000000000000000".
//   - Anything else gets the shortest digits that read back as f, laid out
//     the way Redis's fpconv_dtoa lays them out: plain notation for moderate
//     exponents ("0.1", "0.000001", "1234.5"), scientific notation with an
//     unpadded exponent otherwise ("1e-7", "1.5e+300", "1e+19").
//
// Redis 7.0 formatted doubles with printf's %.17g instead ("0.1" was
// "0.10000000000000001"). fpconv_dtoa is Grisu2, which in rare cases picks
// one more digit than the shortest; strconv always finds the shortest.
func appendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	case f >= -(1<<62) && f <= 1<<62 && f == math.Trunc(f):
		return strconv.AppendInt(dst, int64(f), 10)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Shortest digits d.ddddde±XX, taken apart into the digit string and
	// the power of ten of its last digit, K, as fpconv_dtoa's emit_digits
	// sees them.
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	var digits [24]byte
	nd := 0
	i := 0
	for ; e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	x := 0
	neg := e[i+1] == '-'
	for _, c := range e[i+2:] {
		x = x*10 + int(c-'0')
	}
	if neg {
		x = -x
	}
	k := x - (nd - 1)
	exp := x
	if exp < 0 {
		exp = -exp
	}
	d := digits[:nd]
	switch {
	case k >= 0 && exp < nd+7:
		// An integer: the digits and k zeros.
		dst = append(dst, d...)
		for range k {
			dst = append(dst, '0')
		}
		return dst
	case k < 0 && (k > -7 || exp < 4):
		// A fraction without an exponent.
		point := nd + k // digits before the decimal point
		if point <= 0 {
			dst = append(dst, '0', '.')
			for range -point {
				dst = append(dst, '0')
			}
			return append(dst, d...)
		}
		dst = append(dst, d[:point]...)
		dst = append(dst, '.')
		return append(dst, d[point:]...)
	}
	dst = append(dst, d[0])
	if nd > 1 {
		dst = append(dst, '.')
		dst = append(dst, d[1:]...)
	}
	dst = append(dst, 'e')
	if x < 0 {
		dst = append(dst, '-')
	} else {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(exp), 10)
}

// AppendDouble appends f as a double reply formats it (appendDouble), for
// replies that carry a score as a bulk string in both protocols (ZSCAN).
func AppendDouble(dst []byte, f float64) []byte { return appendDouble(dst, f) }
