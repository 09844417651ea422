package shard

import (
	"time"

	"github.com/moond-db/moond/persistence/checkpoint"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/manifest"
	"github.com/moond-db/moond/persistence/recovery"
	"github.com/moond-db/moond/runtime"
)

// ckpt is the shard's share of the checkpoint machinery: the heap, the
// manifest, the checkpoint manager and what the shard keeps around them
// (the WAL segments that recycling works from, the page loader).
type ckpt struct {
	mgr     *checkpoint.Manager // nil with appendonly no
	heap    *heap.Heap
	man     *manifest.Manifest
	barrier *checkpoint.LogBarrier

	// segs are the first LSNs of the WAL segments on disk, ascending.
	segs     []uint64
	recycled int64 // segments unlinked

	// WAL bytes appended (written or queued) when the published redo
	// point, and the redo point of the running checkpoint, were taken:
	// wal_bytes_since_checkpoint and the --max-wal-size trigger count from
	// the first.
	bytesAtPublished int64
	bytesAtBegin     int64
	changesAtBegin   int64 // Shard.changes when the running checkpoint began

	// The page loader (pageload.go): pages being read and who waits for
	// each, heap files being opened for reading and who waits for each,
	// and the read-only handles it reads through.
	loading map[heap.PageID][]func(error)
	opening map[uint32][]func(runtime.FD, error)
	readFDs map[uint32]runtime.FD
	// readBufs are page buffers no read owns: a read takes one for the
	// ring and gives it back once the cache copied the page out.
	readBufs [][]byte

	maxWAL int64 // --max-wal-size, refreshed by the tick
	// The --max-wal-size read pause (walfull.go).
	walFull     bool
	walStuck    bool
	walProgress int64

	begun      int       // checkpoints begun on this shard (for the crash hook)
	bootSave   time.Time // the control file's checkpoint time (LASTSAVE before the first)
	lastErrLog string
}

// startCheckpoints creates the shard's checkpoint manager once the WAL
// writer exists. It runs on the loop's thread before the shard serves.
func (s *Shard) startCheckpoints(st *recovery.State, superseded []heap.RecordID) {
	c := s.ckpt
	c.barrier = &checkpoint.LogBarrier{App: s.wal.Appender(), Writer: s.wal, Loop: s.loop, Force: s.wal.Sync}
	s.ks.TrackDirty = true
	published := uint64(0)
	if !st.Fresh {
		published = st.Redo
	}
	// Heap records that newer ones superseded at boot are freed once a
	// checkpoint above the published redo point finalizes.
	deferred := &heap.DeferredFrees{}
	for _, id := range superseded {
		deferred.Add(published, id)
	}
	t := s.o.Tunables()
	c.mgr = checkpoint.New(checkpoint.Options{
		Loop:          s.loop,
		Backend:       s.be,
		ShardDir:      s.o.Dir,
		Shard:         uint32(s.id),
		WAL:           txnWAL{c.barrier, s},
		Source:        s.ks,
		Heap:          c.heap,
		Manifest:      c.man,
		Files:         st.Files,
		PublishedRedo: published,
		Interval:      t.CheckpointTimeout,
		Deferred:      deferred,
		OnBegin:       s.checkpointBegan,
		BeginRecord:   s.redoRecord,
		Held:          s.o.Held,
		OnPublished:   s.checkpointPublished,
		OnPoison:      s.checkpointPoisoned,
		OnVanished:    s.heapFileVanished,
		LoadPages:     s.loadPages,
		OnStep:        s.checkpointStep,
	})
	c.maxWAL = t.MaxWALSize
	s.loop.BeforeWait(s.maybeWALFull)
}

func (s *Shard) checkpointBegan(redo uint64) {
	c := s.ckpt
	c.begun++
	s.armCrash()
	// The manifest this checkpoint commits tells the next boot how large
	// to make each database's table.
	c.man.SetKeyCounts(s.ks.KeyCounts())
	c.bytesAtBegin = s.walAppended()
	c.changesAtBegin = s.changes
}

// checkpointPublished runs once the control file holds redo: the WAL's
// read pause ends, the changes it covered stop counting, the WAL wholly
// below it is recycled, and heap files whose tombstone is covered are
// unlinked (retire.go).
func (s *Shard) checkpointPublished(redo uint64) {
	c := s.ckpt
	c.bytesAtPublished = c.bytesAtBegin
	c.walStuck = false
	if c.walFull {
		c.walFull = false
		s.resumeReaders()
	}
	s.changes -= c.changesAtBegin
	c.changesAtBegin = 0
	s.gapCovered(redo)
	s.recycleSegments(redo)
	s.retireEmptyFiles(redo)
	if s.o.OnLatency != nil {
		s.o.OnLatency("checkpoint", time.Duration(c.mgr.Stats().LastDurationMs)*time.Millisecond)
	}
}

// checkpointPoisoned: a heap fsync failed. Writes are refused for good.
func (s *Shard) checkpointPoisoned(err error) {
	s.log.Error("heap fsync failed: shard poisoned, writes refused until restart (fsyncgate)", "shard", s.id, "err", err)
	s.refusing = true
}

// heapFileVanished: a heap file is gone. Its keys are written again.
func (s *Shard) heapFileVanished(file uint32, retired bool) {
	n := s.ks.RedirtyFile(file)
	s.closeReadFD(file)
	if retired {
		s.log.Info("retired heap file found gone", "shard", s.id, "file", heap.FileName(file))
		return
	}
	s.log.Error("heap file vanished while the manifest lists it; its keys are written again",
		"shard", s.id, "file", heap.FileName(file), "keys", n)
}

// logCkptErr logs a checkpoint-side failure once per distinct message.
func (s *Shard) logCkptErr(msg string) {
	if msg != s.ckpt.lastErrLog {
		s.ckpt.lastErrLog = msg
		s.log.Error("checkpoint", "shard", s.id, "err", msg)
	}
}

// shutdownCheckpoint runs the shutdown checkpoint (waiting for an
// outstanding heap fsync at most 5 s), then calls done on the loop thread.
func (s *Shard) shutdownCheckpoint(done func()) {
	if !s.Checkpoints() {
		done()
		return
	}
	start := time.Now()
	s.ckpt.mgr.Shutdown(func(err error) {
		if err != nil {
			s.log.Error("shutdown checkpoint did not finish; the next start replays the WAL above the last one",
				"shard", s.id, "err", err)
		} else {
			s.log.Info("shutdown checkpoint done", "shard", s.id, "elapsed", time.Since(start).String())
		}
		done()
	})
}

// closeHeap releases the heap's and the checkpoint's file handles.
func (s *Shard) closeHeap() {
	c := s.ckpt
	if c == nil {
		return
	}
	if c.mgr != nil {
		c.mgr.Close()
	}
	for id := range c.readFDs {
		s.closeReadFD(id)
	}
	if err := c.heap.Close(); err != nil {
		s.log.Warn("closing heap files", "shard", s.id, "err", err)
	}
}

// heapPoisoned is the error of the heap fsync that poisoned the shard, or
// nil.
func (s *Shard) heapPoisoned() error {
	if s.ckpt == nil || s.ckpt.mgr == nil {
		return nil
	}
	return s.ckpt.mgr.Poisoned()
}
