package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/moond-db/moond/persistence/checkpoint"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/manifest"
	"github.com/moond-db/moond/persistence/recovery"
	"github.com/moond-db/moond/persistence/vfs"
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
	// it publishes (at most maxWALPause from walFullAt).
	walFull    bool
	walFullAt  time.Time
	begun      int       // checkpoints begun on this shard (for the crash hook)
	bootSave   time.Time // the control file's checkpoint time (LASTSAVE before the first)
	lastErrLog string
}

// recoverPersisted runs the boot of the shard's persisted state: the
// control file, the manifest, torn-page repair from full-page images, the
// heap's records loaded into the keyspace, then the WAL replayed from the
// redo point under the per-key LSN rule. It returns the WAL's recovery
// result; the caller opens the writer.
func (w *worker) recoverPersisted(walDir string) (*wal.RecoverResult, *recovery.State, []heap.RecordID, error) {
	s := w.srv
	cache := heap.NewCache(max(s.cfg.PageCacheSize/int64(s.nshards), 1<<20))
	var superseded []heap.RecordID
	var readers map[uint32]*heap.File
	defer func() {
		for _, f := range readers {
			f.Close()
		}
	}()
	heapDir := filepath.Join(s.shardDir(w.id), heap.DirName)
	headLSN := func(id heap.RecordID) (uint64, error) {
		if readers == nil {
			readers = make(map[uint32]*heap.File)
		}
		f := readers[id.File]
		if f == nil {
			var err error
			if f, err = heap.OpenFile(vfs.Default, heapDir, id.File); err != nil {
				return 0, err
			}
			readers[id.File] = f
		}
		var p heap.Page
		if err := f.ReadPage(id.Page, &p); err != nil {
			return 0, err
		}
		v, err := p.Record(int(id.Slot))
		if err != nil {
			return 0, err
		}
		return v.KeyLSN, nil
	}
	loaded := int64(0)
	st, err := recovery.Open(recovery.Options{
		ShardDir: s.shardDir(w.id),
		Shard:    uint32(w.id),
		Cache:    cache,
		Log:      s.log.With("shard", w.id),
		OnRedo:   func(redo uint64) { w.ks.BeginLoad(redo, headLSN) },
		OnRecord: func(r *heap.ScanRecord) error {
			sup, dup, err := w.ks.LoadRecord(r)
			if err != nil {
				return err
			}
			if dup {
				superseded = append(superseded, sup)
			}
			loaded++
			return nil
		},
	})
	if err != nil {
		w.ks.EndLoad()
		return nil, nil, nil, fmt.Errorf("shard %d: %w", w.id, err)
	}
	if loaded > 0 {
		s.log.Info("heap loaded", "shard", w.id, "keys", loaded, "redo", st.Redo, "files", len(st.Files))
	}
	var out = &w.scratch
	var args [][]byte
	failed := int64(0)
	res, err := wal.Recover(wal.RecoverOptions{
		Dir:     walDir,
		Shard:   uint32(w.id),
		Redo:    st.Redo,
		Floor:   st.Control.CheckpointLSN + 1,
		Salvage: s.cfg.WALSalvage || os.Getenv(wal.SalvageEnv) == "1",
		Apply: func(lsn uint64, typ wal.RecordType, payload []byte) error {
			if typ != wal.RecordData {
				// Full-page images were used by recovery.Open. The
				// database map logged at the redo point is the map
				// replay starts from (absent: the identity).
				if lsn == st.Redo && len(payload) > 0 && payload[0] == checkpoint.KindDBMap {
					m, err := checkpoint.DecodeDBMap(payload)
					if err == nil {
						err = w.ks.SetDBMap(m)
					}
					if err != nil {
						return fmt.Errorf("record %d: database map: %w", lsn, err)
					}
				}
				return nil
			}
			w.replayedData++
			db, a, err := wal.DecodeCommandInto(args[:0], payload)
			if err != nil {
				return fmt.Errorf("record %d: %w", lsn, err)
			}
			args = a
			if db >= w.ks.NumDBs() {
				return fmt.Errorf("record %d: database %d, but the server has %d (--databases)", lsn, db, w.ks.NumDBs())
			}
			out.Reset()
			w.ks.Replay(lsn, db, args, out)
			if len(out.Buf) > 0 && out.Buf[0] == '-' {
				failed++
				if failed <= 10 {
					s.log.Error("WAL record failed to replay", "shard", w.id, "lsn", lsn, "reply", string(out.Buf))
				}
			}
			return nil
		},
		Progress: func(p wal.Progress) {
			s.log.Info("recovering WAL", "shard", w.id, "segment", p.Segment, "records", p.Records,
				"MB/s", fmt.Sprintf("%.1f", p.MBPerSec()))
		},
	})
	w.ks.EndLoad()
	if err != nil {
		st.Heap.Close()
		return nil, nil, nil, fmt.Errorf("shard %d: WAL recovery: %w", w.id, err)
	}
	w.replayFailures = failed
	w.ckpt = &ckpt{heap: st.Heap, man: st.Manifest, bootSave: st.LastCheckpoint,
		loading: make(map[heap.PageID]bool), readFDs: make(map[uint32]runtime.FD)}
	segs, err := listSegments(walDir)
	if err != nil {
		st.Heap.Close()
		return nil, nil, nil, fmt.Errorf("shard %d: %w", w.id, err)
	}
	w.ckpt.segs = segs
	// The WAL above the redo point that recovery read counts toward
	// --max-wal-size until the next checkpoint publishes.
	w.ckpt.bytesAtPublished = -res.Bytes
	return res, st, superseded, nil
}

// listSegments returns the first LSNs of the WAL segments in dir, ascending.
func listSegments(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list WAL segments: %w", err)
	}
	var firsts []uint64
	for _, e := range ents {
		if lsn, ok := wal.ParseSegmentName(e.Name()); ok {
			firsts = append(firsts, lsn)
		}
	}
	slices.Sort(firsts)
	return firsts, nil
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
// Should the WAL still reach the full size while the checkpoint runs (a
// write burst, a slow disk), the shard stops reading from its clients
// until the checkpoint publishes its redo point: --max-wal-size is then a
// bound, not a hope. The pause lasts maxWALPause at most: a checkpoint
// that cannot finish (a failing heap disk) must not stop the server, so
// after it the limit is exceeded and logged.
func (w *worker) maybeWALFull() {
	c := w.ckpt
	if c == nil || c.mgr == nil || c.maxWAL <= 0 {
		return
	}
	since := w.walBytesSinceCheckpoint()
	c.mgr.MaybeWALFull(since, c.maxWAL/2)
	if c.walFull || since < c.maxWAL || !c.mgr.Stats().InProgress {
		return
	}
	if !c.walFullAt.IsZero() && time.Since(c.walFullAt) < maxWALPause {
		return // this episode's pause ran out already
	}
	c.walFull, c.walFullAt = true, time.Now()
	w.loop.AfterFunc(maxWALPause, func() {
		if c.walFull {
			w.srv.log.Warn("WAL over --max-wal-size: the checkpoint did not finish in time, clients are read again",
				"shard", w.id, "wal_bytes_since_checkpoint", w.walBytesSinceCheckpoint(), "max_wal_size", c.maxWAL)
			c.walFull = false
			w.resumeReaders()
		}
	})
}

// maxWALPause bounds how long a shard stops reading for --max-wal-size.
const maxWALPause = time.Second

// dbMapRecord is the record a checkpoint logs at its redo point: the map
// from logical databases to the physical ones heap keys name, when SWAPDB
// made it other than the identity.
func (w *worker) dbMapRecord() []byte {
	if w.ks.IdentityDBMap() {
		return nil
	}
	return checkpoint.AppendDBMap(nil, w.ks.DBMap())
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
	if c.walFull {
		c.walFull, c.walFullAt = false, time.Time{}
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

// loadPage reads a heap page a checkpoint step needs into the page cache,
// through the backend; the checkpoint retries the step on a later tick.
func (w *worker) loadPage(id heap.PageID) {
	c := w.ckpt
	if c.loading[id] || c.heap.Cache().Resident(id) {
		return
	}
	c.loading[id] = true
	read := func(fd runtime.FD) {
		buf := make([]byte, heap.PageSize)
		w.be.Pread(fd, buf, heap.PageOffset(id.Page), func(n int, err error) {
			delete(c.loading, id)
			if err == nil && n != heap.PageSize {
				err = runtime.ErrShort
			}
			if err != nil {
				w.logCkptErr(fmt.Sprintf("read heap page %v: %v", id, err))
				return
			}
			if _, err := c.heap.Cache().AddClean(id, buf); err != nil {
				w.logCkptErr(fmt.Sprintf("heap page %v: %v", id, err))
			}
		})
	}
	if fd, ok := c.readFDs[id.File]; ok {
		read(fd)
		return
	}
	path := heap.FilePath(filepath.Join(w.srv.shardDir(w.id), heap.DirName), id.File)
	w.be.Open(path, os.O_RDONLY, 0, func(fd runtime.FD, err error) {
		if err != nil {
			delete(c.loading, id)
			w.logCkptErr(fmt.Sprintf("open %s: %v", path, err))
			return
		}
		if old, ok := c.readFDs[id.File]; ok {
			w.be.Close(fd, nil)
			fd = old
		} else {
			c.readFDs[id.File] = fd
		}
		read(fd)
	})
}

func (w *worker) closeReadFD(file uint32) {
	if fd, ok := w.ckpt.readFDs[file]; ok {
		w.be.Close(fd, nil)
		delete(w.ckpt.readFDs, file)
	}
}

// logCkptErr logs a checkpoint-side failure once per distinct message.
func (w *worker) logCkptErr(msg string) {
	if msg != w.ckpt.lastErrLog {
		w.ckpt.lastErrLog = msg
		w.srv.log.Error("checkpoint", "shard", w.id, "err", msg)
	}
}

// checkpointStep is the test-only crash hook (--test-crash-at): the
// process kills itself with SIGKILL at the named step of the named
// checkpoint, as kill -9 would.
func (w *worker) checkpointStep(step checkpoint.Step) {
	at := w.srv.CrashAt
	if at.Step == "" || at.Step != step || w.ckpt.begun < at.Checkpoint {
		return
	}
	w.srv.log.Warn("test hook: killing the process at a checkpoint step", "shard", w.id, "step", string(step), "checkpoint", w.ckpt.begun)
	killSelf()
}

// CrashPoint is where the test-only hook kills the process: Step of the
// Checkpoint-th checkpoint a shard begins (1 for its first).
type CrashPoint struct {
	Step       checkpoint.Step
	Checkpoint int
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

// ckptInfo is one shard's checkpoint figures for INFO persistence.
type ckptInfo struct {
	on         bool
	stats      checkpoint.Stats
	heapFiles  int
	heapBytes  int64
	walSince   int64
	dirtyKeys  int
	recycled   int64
	lastSave   time.Time
	lastStatus string
}

func (w *worker) collectCheckpoint() ckptInfo {
	ci := ckptInfo{lastSave: w.lastSave(), lastStatus: "ok"}
	c := w.ckpt
	if c == nil {
		return ci
	}
	hs := c.heap.Stats()
	ci.heapFiles, ci.heapBytes = hs.Files, hs.Bytes
	if c.mgr == nil {
		return ci
	}
	ci.on = true
	ci.stats = c.mgr.Stats()
	ci.walSince = w.walBytesSinceCheckpoint()
	ci.dirtyKeys = w.ks.DirtyKeys()
	ci.recycled = c.recycled
	if ci.stats.Poisoned || (ci.stats.LastError != "" && ci.stats.InProgress) {
		ci.lastStatus = "err"
	}
	return ci
}

// writeInfoCheckpoint writes the checkpoint's share of INFO persistence:
// Redis's rdb_* fields mapped onto checkpoints, then moond's checkpoint_*
// and heap_* fields (per-shard LSNs as comma-separated lists).
func writeInfoCheckpoint(kv func(string, any), infos []shardInfo, changes int64, bgsaveSecs func(time.Duration) int64) {
	var inProgress, poisoned bool
	var completed, flushed, failed, fsyncPending, files, bytes, retired, unexpected, walSince, recycled int64
	var lastDur int64 = -1
	var redo []string
	var reasons, lastErrs []string
	status := "ok"
	var oldest time.Time
	for i, si := range infos {
		ci := si.ckpt
		if oldest.IsZero() || ci.lastSave.Before(oldest) {
			oldest = ci.lastSave
		}
		if ci.lastStatus != "ok" {
			status = "err"
		}
		files += int64(ci.heapFiles)
		bytes += ci.heapBytes
		st := ci.stats
		redo = append(redo, fmt.Sprint(st.LastRedoLSN))
		if st.InProgress {
			inProgress = true
		}
		completed += st.Completed
		flushed += st.PagesFlushed
		failed += st.PagesFailed
		fsyncPending += int64(st.DataFsyncPending)
		retired += st.VanishedRetired
		unexpected += st.VanishedUnexpected
		walSince += ci.walSince
		recycled += ci.recycled
		if st.Completed > 0 {
			lastDur = max(lastDur, st.LastDurationMs)
		}
		if st.LastError != "" {
			lastErrs = append(lastErrs, fmt.Sprintf("shard %d: %s", i, st.LastError))
		}
		if st.Poisoned {
			poisoned = true
			reasons = append(reasons, fmt.Sprintf("shard %d: %s", i, st.PoisonReason))
		}
	}
	kv("rdb_changes_since_last_save", changes)
	kv("rdb_bgsave_in_progress", boolInt(inProgress))
	kv("rdb_last_save_time", oldest.Unix())
	kv("rdb_last_bgsave_status", status)
	kv("rdb_last_bgsave_time_sec", bgsaveSecs(time.Duration(lastDur)*time.Millisecond))
	kv("rdb_current_bgsave_time_sec", -1)
	kv("checkpoint_in_progress", boolInt(inProgress))
	kv("last_checkpoint_redo_lsn", strings.Join(redo, ","))
	kv("checkpoints_completed", completed)
	kv("checkpoint_last_duration_ms", lastDur)
	kv("checkpoint_pages_flushed", flushed)
	kv("checkpoint_pages_failed", failed)
	kv("data_fsync_pending", fsyncPending)
	kv("heap_files", files)
	kv("heap_bytes", bytes)
	kv("heap_vanished_retired", retired)
	kv("heap_vanished_unexpected", unexpected)
	kv("wal_bytes_since_checkpoint", walSince)
	kv("wal_segments_recycled", recycled)
	kv("checkpoint_state", strings.Join(states(infos), ","))
	if len(lastErrs) > 0 {
		kv("checkpoint_last_error", strings.Join(lastErrs, "; "))
	}
	kv("poisoned", boolInt(poisoned))
	if poisoned {
		kv("poisoned_reason", strings.Join(reasons, "; "))
	}
}

func states(infos []shardInfo) []string {
	out := make([]string, len(infos))
	for i, si := range infos {
		out[i] = si.ckpt.stats.State.String()
	}
	return out
}
