package shard

import (
	"os"
	"sync/atomic"

	"github.com/moond-db/moond/persistence/heap"
)

// loadProgressEvery is how many scanned WAL bytes pass between the updates
// of a booting shard's LoadProgress: fine enough for INFO's
// loading_loaded_perc, coarse enough to cost nothing.
const loadProgressEvery = 1 << 20

// LoadProgress is how far a shard's boot has got, in bytes of its heap
// files and WAL segments, as INFO's loading_* fields report it. The boot
// writes it; any thread may read it while the shard is still loading,
// which is why it is made of atomics and lives outside the Shard (the
// server creates it and passes it in Options.Progress).
//
// The total is the size of the heap files and WAL segments on disk when
// the boot began; the WAL below the redo point is not replayed, so the
// loaded bytes may jump to the total at the end, as Redis's do for an AOF
// whose size it only estimated.
type LoadProgress struct {
	total  atomic.Int64
	loaded atomic.Int64
	done   atomic.Bool

	// Boot goroutine only.
	heapTotal int64
	heapPages map[uint32]uint32 // per heap file: pages below the highest record seen
	heapBytes int64
}

// Bytes returns the bytes loaded so far and the bytes to load.
func (p *LoadProgress) Bytes() (loaded, total int64) {
	return p.loaded.Load(), p.total.Load()
}

// Done reports whether the boot finished reading (successfully or not).
func (p *LoadProgress) Done() bool { return p.done.Load() }

// size sets the total from the files the boot is about to read.
func (p *LoadProgress) size(heapDir, walDir string) {
	p.heapTotal = dirBytes(heapDir)
	p.total.Store(p.heapTotal + dirBytes(walDir))
}

// heapRecord counts the heap pages up to the one that holds record id:
// recovery loads each heap file front to back.
func (p *LoadProgress) heapRecord(id heap.RecordID) {
	if p.heapPages == nil {
		p.heapPages = make(map[uint32]uint32)
	}
	if seen := p.heapPages[id.File]; id.Page+1 > seen {
		p.heapBytes += int64(id.Page+1-seen) * heap.PageSize
		p.heapPages[id.File] = id.Page + 1
		p.loaded.Store(min(p.heapBytes, p.heapTotal))
	}
}

// heapLoaded marks the heap read whole: the WAL comes next.
func (p *LoadProgress) heapLoaded() {
	p.heapPages = nil
	p.loaded.Store(p.heapTotal)
}

// walScanned sets the WAL bytes the replay has read so far.
func (p *LoadProgress) walScanned(n int64) {
	p.loaded.Store(min(p.heapTotal+n, p.total.Load()))
}

// finish marks the boot's reading over.
func (p *LoadProgress) finish() {
	p.loaded.Store(p.total.Load())
	p.done.Store(true)
}

// dirBytes is the size of the regular files in dir (0 when it cannot be
// read: the figure is only a progress estimate).
func dirBytes(dir string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}
