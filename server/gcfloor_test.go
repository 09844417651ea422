package server

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// gcSink keeps the garbage loops' allocations from being optimized away.
var gcSink []byte

// gcCyclesAllocating allocates n bytes of garbage in 64 KiB blocks and
// returns how many collections ran meanwhile, the memory limit, and by
// how much the heap goal passed, at most, the larger of the limit and the
// live heap (the runtime's goal under a memory limit, which it never
// puts below the live heap) after each block.
func gcCyclesAllocating(n int) (cycles, limit, over uint64) {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/goal:bytes"},
		{Name: "/gc/gomemlimit:bytes"}, {Name: "/gc/heap/live:bytes"}}
	// A collection first, so that the heap goal starts from what is live
	// now, not from the live heap of an earlier test in this process (a
	// goal of twice a few hundred MiB let 512 MiB of garbage pass with one
	// collection and no floor).
	runtime.GC()
	metrics.Read(s)
	before := s[0].Value.Uint64()
	for done := 0; done < n; done += 64 << 10 {
		gcSink = make([]byte, 64<<10)
		metrics.Read(s)
		if goal, bound := s[1].Value.Uint64(), max(s[2].Value.Uint64(), s[3].Value.Uint64()); goal > bound {
			over = max(over, goal-bound)
		}
	}
	gcSink = nil
	metrics.Read(s)
	return s[0].Value.Uint64() - before, s[2].Value.Uint64(), over
}

func TestHeapFloorKeepsASmallHeapFromBeingCollectedOften(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	s := startTest(t, "pool", 1, "gc-heap-floor", "64mb")
	c := client(t, s)
	ctx := testCtx(t)
	const garbage = 512 << 20
	floored, _, _ := gcCyclesAllocating(garbage)
	// A collection every 64 MiB at best; the server's own allocations add
	// to the test's, hence half that.
	if want := uint64(garbage / (32 << 20)); floored > want {
		t.Errorf("%d collections while allocating %d MiB of garbage with a 64 MiB floor, want at most %d", floored, garbage>>20, want)
	}
	if err := c.ConfigSet(ctx, "gc-heap-floor", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if p, _ := gcSettings(); p != 100 {
		t.Errorf("GOGC %d with the floor off, want the process's own 100", p)
	}
	plain, _, _ := gcCyclesAllocating(garbage)
	t.Logf("collections over %d MiB of garbage: %d with the floor, %d without", garbage>>20, floored, plain)
	if plain < 4*floored {
		t.Errorf("%d collections with the floor, %d without: want at least 4 times fewer with it", floored, plain)
	}
	if err := c.ConfigSet(ctx, "gc-heap-floor", "64mb").Err(); err != nil {
		t.Fatal(err)
	}
	if p, _ := gcSettings(); p <= 100 {
		t.Errorf("GOGC %d with the floor back on and a small heap, want it raised above 100", p)
	}
	s.Stop()
	if p, _ := gcSettings(); p != 100 {
		t.Errorf("GOGC %d once the server stopped, want the process's own 100 back", p)
	}
}

func TestHeapFloorYieldsToMaxmemorysLimit(t *testing.T) {
	startTest(t, "pool", 1, "gc-heap-floor", "1gb", "maxmemory", "16mb", "pagecache-size", "1mb")
	const garbage = 512 << 20
	cycles, limit, over := gcCyclesAllocating(garbage)
	if want := uint64(goMemoryLimit(16<<20, 1<<20, math.MaxInt64)); limit != want {
		t.Fatalf("memory limit %d, want maxmemory's %d", limit, want)
	}
	if over > 0 {
		t.Errorf("the heap goal passed the memory limit of %d (and the live heap) by %d: the 1 GiB floor overrode it", limit, over)
	}
	if want := uint64(garbage / limit); cycles < want {
		t.Errorf("%d collections while allocating %d MiB under a %d MiB memory limit, want at least %d", cycles, garbage>>20, limit>>20, want)
	}
}

func TestFloorPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		base        int
		floor, scan int64
		want        int
	}{
		{100, 64 * mb, 8 * mb, 800},   // goal: 8 + 64 MiB
		{100, 64 * mb, 10 * mb, 640},  // rounded up
		{100, 64 * mb, 64 * mb, 100},  // GOGC gives as much
		{100, 64 * mb, 200 * mb, 100}, // and more
		{1000, 64 * mb, 8 * mb, 1000}, // the process's own GOGC is a floor too
		{100, 64 * mb, 1 * mb, 1600},  // the runtime's minimum goal, 4 MiB×percent/100, stays at the floor
		{100, 64 * mb, 0, 1600},       // no collection yet
		{-1, 64 * mb, 8 * mb, -1},     // GOGC=off stays off
		{100, 0, 8 * mb, 100},         // no floor
		{100, math.MaxInt64, 1, math.MaxInt32},
	} {
		if got := floorPercent(c.base, c.floor, c.scan); got != c.want {
			t.Errorf("floorPercent(%d, %d, %d) = %d, want %d", c.base, c.floor, c.scan, got, c.want)
		}
	}
}
