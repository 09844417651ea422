package server

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/moond-db/moond/persistence/checkpoint"
	"github.com/moond-db/moond/persistence/checkpoint/record"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/manifest"
	"github.com/moond-db/moond/persistence/recovery"
	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/runtime"
)

// ckpt is one shard's share of the checkpoint machinery: the heap, the
// manifest, the checkpoint manager and what the shard keeps around them
// (the WAL segments that recycling works from, the page loader).
// Loop thread only.
type ckpt struct {
	mgr     *checkpoint.Manager
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
	changesAtBegin   int64 // worker.changes when the running checkpoint began

	// The page loader: pages that a heap operation needed and that are
	// being read, and the read-only handles it reads them through.
	loading map[heap.PageID]bool
	readFDs map[uint32]runtime.FD

	maxWAL int64 // --max-wal-size, refreshed by the tick
	// walFull: the WAL above the published redo point reached
	// --max-wal-size while a checkpoint runs; clients are not read until
	// it publishes, or makes no progress for maxWALPause.
	walFull     bool
	walStuck    bool      // the pause gave up on the running checkpoint
	walProgress int64     // checkpointProgress when last looked at
	begun       int       // checkpoints begun on this shard (for the crash hook)
	bootSave    time.Time // the control file's checkpoint time (LASTSAVE before the first)
	lastErrLog  string
}

// startCheckpoints creates the shard's checkpoint manager once the WAL
// writer exists. It runs on the loop's thread before the shard serves.
func (w *worker) startCheckpoints(st *recovery.State, superseded []heap.RecordID) {
	s := w.srv
	c := w.ckpt
	app := w.wal.Appender()
	c.barrier = &checkpoint.LogBarrier{App: app, Writer: w.wal, Loop: w.loop, Force: w.wal.Sync}
	w.wal.OnSegment = func(first uint64) { c.segs = append(c.segs, first) }
	w.ks.LastLSN = func() uint64 { return app.NextLSN() - 1 }
	w.ks.TrackDirty = true
	published := uint64(0)
	if !st.Fresh {
		published = st.Redo
	}
	c.mgr = checkpoint.New(checkpoint.Options{
		Loop:          w.loop,
		Backend:       w.be,
		ShardDir:      s.shardDir(w.id),
		Shard:         uint32(w.id),
		WAL:           c.barrier,
		Source:        w.ks,
		Heap:          c.heap,
		Manifest:      c.man,
		Files:         st.Files,
		PublishedRedo: published,
		Interval:      s.cfg.CheckpointTimeout,
		OnBegin:       w.checkpointBegan,
		BeginRecord:   w.dbMapRecord,
		OnPublished:   w.checkpointPublished,
		OnPoison:      w.checkpointPoisoned,
		OnVanished:    w.heapFileVanished,
		OnNeedPage:    w.loadPage,
		OnStep:        w.checkpointStep,
		// The crash points between a batch's WAL barrier and its page
		// writes exist in the process only when the writes are not
		// linked after the barrier.
		UnlinkedWrites: s.CrashAt.Step == checkpoint.StepBarrier || s.CrashAt.Step == checkpoint.StepMidPwrite,
	})
	for _, id := range superseded {
		c.mgr.Deferred().Add(published, id)
	}
	c.maxWAL = s.maxWALSize()
	w.loop.BeforeWait(w.maybeWALFull)
}

// walAppended is how many WAL bytes the shard has appended: written, or
// queued to be.
func (w *worker) walAppended() int64 {
	return w.wal.Stats().Bytes + int64(w.wal.Appender().Unwritten())
}

// walBytesSinceCheckpoint is the WAL above the published redo point.
func (w *worker) walBytesSinceCheckpoint() int64 {
	return max(w.walAppended()-w.ckpt.bytesAtPublished, 0)
}

// maybeWALFull is the --max-wal-size trigger, once per loop iteration. It
// only ever starts a checkpoint; it never waits on one.
//
// It fires at half of --max-wal-size: the WAL keeps growing while the
// checkpoint runs (the writes, and the checkpoint's own full-page images,
// about the size of the dirty part of the heap), and only its publication
// lets the segments below the new redo point go. Starting at the full size
// would overshoot it by a whole checkpoint's worth every time; as in
// PostgreSQL, the limit is kept when the hot set's heap pages are well
// below it.
//
// Should the WAL still reach seven eighths of the size while the
// checkpoint runs (a write burst, a slow disk), the shard stops reading
// from its clients until the checkpoint publishes its redo point: the
// last eighth is room for the commands already read and the checkpoint's
// own full-page images, and --max-wal-size is then a bound, not a hope.
// The pause holds while the checkpoint makes progress; one that makes none
// for maxWALPause (a failing heap disk) must not stop the server, so the
// shard reads again, logs that the limit is exceeded, and does not pause
// again before the next checkpoint publishes.
func (w *worker) maybeWALFull() {
	c := w.ckpt
	if c == nil || c.mgr == nil || c.maxWAL <= 0 {
		return
	}
	since := w.walBytesSinceCheckpoint()
	c.mgr.MaybeWALFull(since, c.maxWAL/2)
	if c.walFull || c.walStuck || since < c.maxWAL-c.maxWAL/8 || !c.mgr.Stats().InProgress {
		return
	}
	c.walFull = true
	c.walProgress = checkpointProgress(c.mgr.Stats())
	var check func()
	check = func() {
		if !c.walFull {
			return
		}
		if p := checkpointProgress(c.mgr.Stats()); p != c.walProgress {
			c.walProgress = p
			w.loop.AfterFunc(maxWALPause, check)
			return
		}
		w.srv.log.Warn("WAL over --max-wal-size and the checkpoint makes no progress: clients are read again",
			"shard", w.id, "wal_bytes_since_checkpoint", w.walBytesSinceCheckpoint(), "max_wal_size", c.maxWAL)
		c.walFull, c.walStuck = false, true
		w.resumeReaders()
	}
	w.loop.AfterFunc(maxWALPause, check)
}

// checkpointProgress is a figure that changes whenever the running
// checkpoint moves on.
func checkpointProgress(st checkpoint.Stats) int64 {
	return st.PagesFlushed + st.Fsyncs + st.Barriers + int64(st.State) + st.KeysWritten
}

// maxWALPause is how long a checkpoint may make no progress while the
// shard does not read for --max-wal-size.
const maxWALPause = time.Second

// dbMapRecord is the record a checkpoint logs at its redo point: the map
// from logical databases to the physical ones heap keys name, when SWAPDB
// made it other than the identity.
func (w *worker) dbMapRecord() []byte {
	if w.ks.IdentityDBMap() {
		return nil
	}
	return record.AppendDBMap(nil, w.ks.DBMap())
}

func (w *worker) checkpointBegan(redo uint64) {
	c := w.ckpt
	c.begun++
	c.bytesAtBegin = w.walAppended()
	c.changesAtBegin = w.changes
}

// checkpointPublished runs once the control file holds redo: the WAL wholly
// below it is recycled, and heap files whose tombstone is covered are
// unlinked.
func (w *worker) checkpointPublished(redo uint64) {
	c := w.ckpt
	c.bytesAtPublished = c.bytesAtBegin
	c.walStuck = false
	if c.walFull {
		c.walFull = false
		w.resumeReaders()
	}
	w.changes -= c.changesAtBegin
	c.changesAtBegin = 0
	for _, first := range checkpoint.Recyclable(c.segs, redo) {
		path := wal.SegmentPath(filepath.Join(w.srv.shardDir(w.id), "wal"), first)
		w.be.Unlink(path, func(err error) {
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				w.srv.log.Warn("WAL segment not recycled", "shard", w.id, "segment", path, "err", err)
				return
			}
			c.recycled++
		})
		c.segs = slices.DeleteFunc(c.segs, func(f uint64) bool { return f == first })
	}
	w.retireEmptyFiles(redo)
}

// retireEmptyFiles tombstones heap files that hold no live record, and
// unlinks those whose tombstone a finalized checkpoint committed.
func (w *worker) retireEmptyFiles(published uint64) {
	c := w.ckpt
	heapDir := filepath.Join(w.srv.shardDir(w.id), heap.DirName)
	for _, id := range c.man.Unlinkable(published) {
		w.be.Unlink(heap.FilePath(heapDir, id), func(err error) {
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				w.srv.log.Warn("retired heap file not removed", "shard", w.id, "file", heap.FileName(id), "err", err)
				return
			}
			// Once unlinked, the manifest forgets it at its next commit.
			if ferr := c.man.Forget(id); ferr != nil {
				w.srv.log.Warn("manifest cannot forget heap file", "shard", w.id, "file", heap.FileName(id), "err", ferr)
			}
		})
	}
	// The next checkpoint's redo point is at least the next LSN: the
	// tombstone is committed by it.
	next := w.wal.Appender().NextLSN()
	for _, id := range c.heap.EmptyFiles() {
		if !c.man.IsLive(id) {
			continue
		}
		if err := c.man.Tombstone(id, next); err != nil {
			w.srv.log.Warn("cannot tombstone empty heap file", "shard", w.id, "file", heap.FileName(id), "err", err)
			continue
		}
		if err := c.heap.RetireFile(id); err != nil {
			w.srv.log.Warn("cannot retire empty heap file", "shard", w.id, "file", heap.FileName(id), "err", err)
			continue
		}
		c.mgr.FileRetired(id)
		w.closeReadFD(id)
	}
}

// checkpointPoisoned: a heap fsync failed. Writes are refused for good.
func (w *worker) checkpointPoisoned(err error) {
	w.srv.log.Error("heap fsync failed: shard poisoned, writes refused until restart (fsyncgate)", "shard", w.id, "err", err)
	w.walBlocked = true
}

// heapFileVanished: a heap file is gone. Its keys are written again.
func (w *worker) heapFileVanished(file uint32, retired bool) {
	n := w.ks.RedirtyFile(file)
	w.closeReadFD(file)
	if retired {
		w.srv.log.Info("retired heap file found gone", "shard", w.id, "file", heap.FileName(file))
		return
	}
	w.srv.log.Error("heap file vanished while the manifest lists it; its keys are written again",
		"shard", w.id, "file", heap.FileName(file), "keys", n)
}

// logCkptErr logs a checkpoint-side failure once per distinct message.
func (w *worker) logCkptErr(msg string) {
	if msg != w.ckpt.lastErrLog {
		w.ckpt.lastErrLog = msg
		w.srv.log.Error("checkpoint", "shard", w.id, "err", msg)
	}
}

// closeHeap releases the heap's and the checkpoint's file handles.
func (w *worker) closeHeap() {
	c := w.ckpt
	if c == nil {
		return
	}
	if c.mgr != nil {
		c.mgr.Close()
	}
	for id := range c.readFDs {
		w.closeReadFD(id)
	}
	if err := c.heap.Close(); err != nil {
		w.srv.log.Warn("closing heap files", "shard", w.id, "err", err)
	}
}

// heapPoisoned is the error of the heap fsync that poisoned the shard, or
// nil.
func (w *worker) heapPoisoned() error {
	if w.ckpt == nil || w.ckpt.mgr == nil {
		return nil
	}
	return w.ckpt.mgr.Poisoned()
}
