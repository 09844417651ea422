package monoclock

import (
	"math/bits"
	"sync"
	"time"
)

// base anchors the monotonic fallback.
var base = time.Now()

// tscClock scales TSC ticks to nanoseconds: ns = (ticks-start) * mult >> 32.
type tscClock struct {
	start uint64
	mult  uint64
}

var (
	initOnce sync.Once
	useTSC   bool
	clock    tscClock
)

// Nanos is a monotonic time in nanoseconds: only differences between two
// readings mean anything.
func Nanos() int64 {
	initOnce.Do(setup)
	if useTSC {
		return clock.nanos(readTSC())
	}
	return int64(time.Since(base))
}

// UsesTSC reports whether Nanos reads the time-stamp counter.
func UsesTSC() bool {
	initOnce.Do(setup)
	return useTSC
}

// nanos converts a TSC reading.
func (c tscClock) nanos(ticks uint64) int64 {
	hi, lo := bits.Mul64(ticks-c.start, c.mult)
	return int64(hi<<32 | lo>>32)
}

// setup measures the TSC's rate against the monotonic clock over a few
// milliseconds, when the TSC is trustworthy here.
func setup() {
	if !tscUsable() {
		return
	}
	t0, c0 := time.Now(), readTSC()
	time.Sleep(5 * time.Millisecond)
	t1, c1 := time.Now(), readTSC()
	ns, ticks := t1.Sub(t0), c1-c0
	if ns <= 0 || ticks == 0 {
		return
	}
	mult, _ := bits.Div64(uint64(ns)>>32, uint64(ns)<<32, ticks)
	clock = tscClock{start: c0, mult: mult}
	useTSC = mult > 0
}
