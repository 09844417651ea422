package server

import (
	"io/fs"
	"math"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The garbage collector during the boot. Loading allocates almost only what
// it keeps (keys, values, tables: most of the heap the server will ever
// have), so every collection while it runs scans a growing heap to free
// next to nothing; even at GOGC=400 that was an eighth of a million-key
// load. The boot therefore turns the collector off and bounds the heap
// with a memory limit instead, sized from the data on disk: a load that
// does make garbage (a WAL replay that overwrites the same keys, a
// reshard) is collected once the heap reaches the limit, never lets it
// grow without bound, and a data set larger in memory than the limit
// assumed raises it (followLiveHeap). The settings the process had (GOGC,
// GOMEMLIMIT or what a caller set) come back when the boot ends; the GC
// percent by way of gcCtl (gcfloor.go), which puts the heap floor's in
// its place when one is set.

// bootHeapPerDiskByte is how many bytes of Go heap the boot may reach, per
// byte of data on disk, before the collector runs: a value takes more room
// in memory than in its heap record (headers, size classes, the table),
// and a replayed WAL may leave garbage about its own size.
const bootHeapPerDiskByte = 4

// bootHeapFloor is what the boot's memory limit allows besides the data:
// the process's own memory, and room for an empty or tiny data set.
const bootHeapFloor = 64 << 20

// bootGC turns the collector off for the boot, under a memory limit sized
// for the data under dir, and returns the function that restores the
// settings it found.
func bootGC(dir string) (restore func()) {
	prevLimit := debug.SetMemoryLimit(-1) // reads it
	limit := bootMemoryLimit(dirBytes(dir), prevLimit)
	debug.SetMemoryLimit(limit)
	gcBootBegin()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		followLiveHeap(limit, prevLimit, stop)
	}()
	return func() {
		close(stop)
		<-stopped
		gcBootEnd()
		debug.SetMemoryLimit(prevLimit)
	}
}

// liveHeapPoll is how often the boot compares its memory limit with the
// live heap.
const liveHeapPoll = 50 * time.Millisecond

// followLiveHeap raises the boot's memory limit, until stop is closed, to
// twice the live heap the last collection found whenever that is above
// it (nextBootLimit). A data set that takes more than
// bootHeapPerDiskByte times its size on disk (small members of large
// collections do) would otherwise have the collector run without pause
// once the heap reached the limit; this way it runs as GOGC=100 would at
// worst.
func followLiveHeap(limit, ceiling int64, stop <-chan struct{}) {
	t := time.NewTicker(liveHeapPoll)
	defer t.Stop()
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		metrics.Read(live)
		if next := nextBootLimit(limit, ceiling, int64(live[0].Value.Uint64())); next != limit {
			limit = next
			debug.SetMemoryLimit(limit)
		}
	}
}

// nextBootLimit is the boot's memory limit once a collection found live
// bytes live: at least twice that, never above ceiling (the limit the
// process had).
func nextBootLimit(limit, ceiling, live int64) int64 {
	if live > (limit-1)/2 && live < math.MaxInt64/2 {
		return max(limit, min(2*live, ceiling))
	}
	return limit
}

// bootMemoryLimit is the memory limit while the boot loads onDisk bytes of
// data: bootHeapPerDiskByte per byte plus bootHeapFloor, never above the
// limit the process had (configured).
func bootMemoryLimit(onDisk, configured int64) int64 {
	limit := int64(math.MaxInt64)
	if onDisk < (math.MaxInt64-bootHeapFloor)/bootHeapPerDiskByte {
		limit = onDisk*bootHeapPerDiskByte + bootHeapFloor
	}
	return min(limit, configured)
}

// dirBytes is the size of the regular files under dir (0 when it cannot
// be read: the boot then runs under bootHeapFloor and collects as it
// needs).
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return nil
		}
		if info, err := e.Info(); err == nil {
			n += info.Size()
		}
		return nil
	})
	return n
}
