package monoclock

import (
	"testing"
	"time"
)

// TestNanosKeepsPaceWithTheMonotonicClock: over 50 ms, Nanos advances as
// Go's monotonic clock does, within 1% and 100 µs, and never goes back.
func TestNanosKeepsPaceWithTheMonotonicClock(t *testing.T) {
	UsesTSC() // the calibration, before the measurement
	t0, n0 := time.Now(), Nanos()
	prev := n0
	for time.Since(t0) < 50*time.Millisecond {
		n := Nanos()
		if n < prev {
			t.Fatalf("Nanos went back: %d after %d", n, prev)
		}
		prev = n
	}
	want, got := int64(time.Since(t0)), Nanos()-n0
	if d := got - want; d > want/100+100_000 || -d > want/100+100_000 {
		t.Fatalf("Nanos advanced %d ns while the monotonic clock advanced %d (TSC: %v)", got, want, UsesTSC())
	}
	t.Logf("TSC: %v; %d ns against %d", UsesTSC(), got, want)
}

// TestTSCScaling: the fixed-point scaling turns ticks at a known rate into
// nanoseconds, also far from the start, where ticks times the factor
// needs more than 64 bits.
func TestTSCScaling(t *testing.T) {
	// 3 GHz: a tick is 1/3 ns; mult = 2^32/3.
	c := tscClock{start: 1000, mult: (1 << 32) / 3}
	for _, ticks := range []uint64{0, 3, 3e9, 3e9 * 86400 * 365} {
		want := float64(ticks) / 3
		got := float64(c.nanos(1000 + ticks))
		if d := got - want; d > want*1e-9+1 || -d > want*1e-9+1 {
			t.Errorf("%d ticks: %v ns, want %v", ticks, got, want)
		}
	}
}

func BenchmarkNanos(b *testing.B) {
	var s int64
	for range b.N {
		s += Nanos()
	}
	_ = s
}
