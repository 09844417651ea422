package server

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// A floor under the Go collector's heap goal (gc-heap-floor).
//
// GOGC sets the next collection's goal at the live heap times 1 + GOGC/100:
// with a small live heap (a few MB, as most benchmarks and many real data
// sets have) the collector runs every few MB allocated, and its marking,
// plus the sysmon thread it keeps awake, took about a quarter of moond's
// CPU on the bench-txn load. So after every collection the GC percent is
// raised, when needed, for the next goal to be at least the live heap plus
// gc-heap-floor; once GOGC's own room (live × GOGC/100) is at least the
// floor, the floor changes nothing. The room it adds holds garbage only: MEMORY PURGE collects it,
// and the soft memory limit maxmemory sets (evict.go) still bounds the
// heap, whatever the percent, because the runtime's goal is the lower of
// the two; the floor is also held under that limit (gcHeapFigures).
// GOGC=off is left alone.
//
// The GC percent is the process's, and two things change it: the boot
// turns the collector off (bootgc.go) and the floor raises it. gcCtl owns
// it for both, so that neither restores a value the other set: the
// percent the process had (its GOGC, or what a caller set) is read once
// when either starts and put back when neither is in effect.

// defaultHeapMinimum is the Go runtime's smallest heap goal at GOGC=100;
// the runtime scales it with the percent, so a percent above
// floor×100/defaultHeapMinimum would raise the goal past the floor even
// for an empty heap.
const defaultHeapMinimum = 4 << 20

// gcCtl is the process's GC percent, as the boots and the servers' floors
// want it. Invariant: while engaged, the percent in effect is percent,
// and base is what the process had before; while not, gcCtl has no
// change of its own in effect.
var gcCtl struct {
	sync.Mutex
	engaged bool
	base    int // the GC percent before gcCtl engaged
	percent int // the GC percent gcCtl last set
	boots   int // boots in progress: the collector is off
	floors  map[*Server]int64
	armed   bool // a sentinel waits for the next collection
}

// gcSentinel is the object whose cleanup runs after each collection; it
// holds a pointer so that the runtime's tiny allocator, whose blocks may
// outlive their objects, does not take it.
type gcSentinel struct{ _ *byte }

// gcBootBegin turns the collector off for a boot.
func gcBootBegin() {
	gcCtl.Lock()
	defer gcCtl.Unlock()
	gcEngageLocked()
	gcCtl.boots++
	gcApplyLocked()
}

// gcBootEnd undoes gcBootBegin.
func gcBootEnd() {
	gcCtl.Lock()
	defer gcCtl.Unlock()
	gcCtl.boots--
	gcApplyLocked()
}

// setHeapFloor sets s's gc-heap-floor (bytes; 0: none). The floor in
// effect is the largest of the running servers'.
func setHeapFloor(s *Server, floor int64) {
	gcCtl.Lock()
	defer gcCtl.Unlock()
	gcEngageLocked()
	if gcCtl.floors == nil {
		gcCtl.floors = make(map[*Server]int64)
	}
	gcCtl.floors[s] = max(floor, 0)
	gcApplyLocked()
}

// dropHeapFloor forgets s's floor, when s stops.
func dropHeapFloor(s *Server) {
	gcCtl.Lock()
	defer gcCtl.Unlock()
	delete(gcCtl.floors, s)
	gcApplyLocked()
}

// gcEngageLocked reads the percent the process has, before gcCtl changes it.
func gcEngageLocked() {
	if gcCtl.engaged {
		return
	}
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	gcCtl.base = int(int64(s[0].Value.Uint64()))
	gcCtl.percent = gcCtl.base
	gcCtl.engaged = true
}

// gcApplyLocked sets the percent the boots and floors want now, gives back
// the process's own once neither is in effect, and keeps a sentinel armed
// while a floor is.
func gcApplyLocked() {
	if !gcCtl.engaged {
		return
	}
	if gcCtl.boots == 0 && len(gcCtl.floors) == 0 {
		debug.SetGCPercent(gcCtl.base)
		gcCtl.engaged = false
		return
	}
	want := gcCtl.base
	floor := gcFloorLocked()
	switch {
	case gcCtl.boots > 0:
		want = -1
	case floor > 0:
		scan, limit := gcHeapFigures()
		want = floorPercent(gcCtl.base, min(floor, max(limit-scan, 0)), scan)
	}
	if want != gcCtl.percent {
		debug.SetGCPercent(want)
		gcCtl.percent = want
	}
	if floor > 0 && !gcCtl.armed {
		gcCtl.armed = true
		armGCSentinel()
	}
}

// gcFloorLocked is the floor in effect: the largest of the servers'.
func gcFloorLocked() int64 {
	var floor int64
	for _, f := range gcCtl.floors {
		floor = max(floor, f)
	}
	return floor
}

// armGCSentinel has afterGC run once the next collection is over: the
// sentinel is unreachable as soon as it is made.
func armGCSentinel() {
	runtime.AddCleanup(&gcSentinel{}, func(struct{}) { afterGC() }, struct{}{})
}

// afterGC sets the percent for the live heap the collection found, and
// arms the next sentinel while a floor is in effect.
func afterGC() {
	gcCtl.Lock()
	defer gcCtl.Unlock()
	gcCtl.armed = false
	gcApplyLocked()
}

// gcHeapFigures are scan, what GOGC's percent applies to (the live heap
// the last collection marked, and the stacks and globals it scanned), and
// the soft memory limit. The floor is held under the limit: its goal
// never asks for more than the limit allows, so that near the limit the
// runtime paces by the percent as it would without a floor.
func gcHeapFigures() (scan, limit int64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64() + s[1].Value.Uint64() + s[2].Value.Uint64()), int64(s[3].Value.Uint64())
}

// floorPercent is the GC percent that puts the next heap goal at scan
// bytes plus floor at least: base (the process's own percent) or more, as
// much as floor×100/scan, and never so much that the runtime's smallest
// goal, which scales with the percent, passes the floor. A base that turns
// the collector off is kept.
func floorPercent(base int, floor, scan int64) int {
	if base < 0 || floor <= 0 {
		return base
	}
	ceiling := min(float64(floor)*100/defaultHeapMinimum, math.MaxInt32)
	need := ceiling
	if scan > 0 {
		need = min(math.Ceil(float64(floor)*100/float64(scan)), ceiling)
	}
	return max(base, int(need))
}
