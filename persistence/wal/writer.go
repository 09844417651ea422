package wal

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/runtime"
)

// FsyncPolicy is appendfsync: when the log is made durable.
type FsyncPolicy uint8

const (
	// FsyncEverysec fdatasyncs at most once a second, off the write path.
	FsyncEverysec FsyncPolicy = iota
	// FsyncAlways fdatasyncs every group before its records count as
	// written back to clients: the write and the fdatasync are one chain.
	FsyncAlways
	// FsyncNo leaves flushing to the OS (seals are still synced).
	FsyncNo
)

// ParseFsyncPolicy reads "always", "everysec" or "no".
func ParseFsyncPolicy(s string) (FsyncPolicy, error) {
	switch strings.ToLower(s) {
	case "always":
		return FsyncAlways, nil
	case "everysec":
		return FsyncEverysec, nil
	case "no":
		return FsyncNo, nil
	}
	return 0, fmt.Errorf("wal: unknown appendfsync policy %q", s)
}

func (p FsyncPolicy) String() string {
	return [...]string{"everysec", "always", "no"}[p]
}

// retryBackoff bounds how often a failed group write is retried (Redis
// retries a failed AOF write once a second; we try sooner, then back off).
const (
	retryFirst = 10 * time.Millisecond
	retryMax   = time.Second
)

// Writer drives an Appender's groups through a runtime.Backend on the
// shard's loop thread. Nothing it does blocks that thread: every write,
// fdatasync, segment creation and close is a submission whose completion
// callback moves the state on.
//
// Invariants:
//   - At most one group is in flight (the Appender enforces it), so
//     "written through LSN X" and "durable through LSN X" mean every LSN
//     up to X.
//   - Under FsyncAlways a group's write and fdatasync are one linked chain:
//     the kernel starts the fdatasync only after the whole write landed.
//   - A sealed segment is fdatasynced as part of its last group and closed;
//     the next group creates the next segment (temp file, fsync, rename,
//     directory fsync) before writing into it.
//   - A failed write puts the group back, unchanged, and is retried; it
//     sets LastError (aof_last_write_status:err) until a write succeeds.
//   - A failed fdatasync poisons the log for good (fsyncgate): the kernel
//     may have dropped the dirty pages, so no later fsync proves anything.
type Writer struct {
	loop   *runtime.Loop
	be     runtime.Backend
	app    *Appender
	dir    string
	Policy FsyncPolicy

	// OnProgress is called after the written or durable LSN moved, or the
	// error state changed: the server releases held replies and resumes
	// paused readers from it.
	OnProgress func()
	// OnSegment is called when a new segment file exists (its directory
	// entry durable), with its first LSN: the server keeps the list of
	// segments that checkpoint recycling works from.
	OnSegment func(firstLSN uint64)
	// OnSync, when set, is told how long each fdatasync of the log took
	// (the server's latency monitor, event wal-fsync).
	OnSync func(took time.Duration)

	seg         runtime.FD // the open segment file
	segFirst    uint64     // its first LSN; 0 when none is open
	created     uint64     // first LSN of the last segment created
	group       groupState // the group pipeline: its one group (inflight) or retry
	inflight    *Group     // the group taken, while groupCreating or groupWriting
	sync        syncState  // the standalone fdatasync beside it
	trailers    []trailer  // data-file writes waiting for the WAL (WriteAfterDurable)
	closeAfter  bool       // close closeFD once the fdatasync in flight returns
	closeFD     runtime.FD // the sealed segment that fdatasync runs on
	retryDelay  time.Duration
	retryTimer  *runtime.Timer
	syncTicker  *runtime.Timer
	stats       WriterStats
	closing     bool
	closedCb    []func(error)
	lastSyncErr error
}

// NewWriter returns a writer for app's groups in dir that does its I/O
// through be (normally loop.Backend(); tests wrap it to inject faults) and
// its timing on loop. Call it on the loop's thread.
func NewWriter(loop *runtime.Loop, be runtime.Backend, app *Appender, dir string, policy FsyncPolicy) *Writer {
	w := &Writer{loop: loop, be: be, app: app, dir: dir, Policy: policy}
	w.syncTicker = loop.Every(time.Second, w.syncTick)
	return w
}

// Appender is the writer's appender.
func (w *Writer) Appender() *Appender { return w.app }

// Stats returns the counters.
func (w *Writer) Stats() WriterStats { return w.stats }

// Busy reports whether a group write or an fdatasync is in flight.
func (w *Writer) Busy() bool { return w.inflight != nil || w.sync != syncIdle }

// Kick starts the next group's I/O when none is in flight. The shard calls
// it once per loop iteration (runtime.Loop.BeforeWait), so that every record
// appended in the iteration goes out in one write; the writer calls it
// again when a group completes.
func (w *Writer) Kick() {
	w.runReadyTrailers()
	w.syncForTrailers()
	if w.group != groupIdle || w.app.Poisoned() != nil {
		return
	}
	g := w.app.Take()
	if g == nil {
		return
	}
	w.inflight = g
	if g.Create && w.created != g.Segment.FirstLSN {
		w.group = groupCreating
		w.createSegment(g.Segment, func(err error) {
			w.expectGroup(groupCreating, g)
			if err != nil {
				w.failed(g, err)
				return
			}
			w.write(g)
		})
		return
	}
	w.write(g)
}

// write sends one group: pwrite, plus fdatasync in the same chain when the
// policy or a seal asks for it.
func (w *Writer) write(g *Group) {
	if w.segFirst != g.Segment.FirstLSN {
		panic(fmt.Sprintf("wal: group for segment %d with segment %d open", g.Segment.FirstLSN, w.segFirst))
	}
	w.group = groupWriting
	sync := w.Policy == FsyncAlways || g.Sealed
	ops := []runtime.Op{{Kind: runtime.OpPwrite, FD: w.seg, Buf: g.Buf, Off: g.Offset}}
	var start time.Time
	if sync {
		ops = append(ops, runtime.Op{Kind: runtime.OpFdatasync, FD: w.seg})
		start = time.Now() // one clock read per synced group, never per record
	}
	w.be.Chain(ops, func(res []runtime.Result) {
		w.expectGroup(groupWriting, g)
		if res[0].Err != nil {
			w.failed(g, fmt.Errorf("wal: write %d bytes at %d of %s: %w", len(g.Buf), g.Offset, SegmentName(g.Segment.FirstLSN), res[0].Err))
			return
		}
		w.inflight, w.group = nil, groupIdle
		w.retryDelay = 0
		w.stats.Groups++
		w.stats.Records += int64(g.Records)
		w.stats.Bytes += int64(len(g.Buf))
		w.stats.GroupRecords.Observe(&GroupRecordBounds, float64(g.Records))
		last, sealed := g.LastLSN, g.Sealed
		w.app.Done(g, nil) // g belongs to the Appender again
		if sync {
			if err := res[1].Err; err != nil {
				w.poison(fmt.Errorf("wal: fdatasync %s: %w", SegmentName(w.segFirst), err))
				return
			}
			w.stats.Datasyncs++
			w.syncTook(start)
			w.app.MarkDurable(last)
		}
		if sealed {
			w.closeSegment()
		}
		w.progress()
		w.Kick()
	})
}

// failed puts a group back after a failed write (or segment creation) and
// schedules a retry with backoff.
func (w *Writer) failed(g *Group, err error) {
	w.inflight, w.group = nil, groupIdle
	w.stats.WriteErrors++
	w.app.Done(g, err)
	if vfs.IsSyncFailure(err) { // a new segment's or the directory's fsync
		w.poison(err)
		return
	}
	w.retryDelay = min(max(2*w.retryDelay, retryFirst), retryMax)
	w.group = groupRetry
	w.retryTimer = w.loop.AfterFunc(w.retryDelay, func() {
		w.expectGroup(groupRetry, nil)
		w.retryTimer, w.group = nil, groupIdle
		w.Kick()
	})
	w.progress()
}

// poison marks the log failed for good.
func (w *Writer) poison(err error) {
	w.app.Poison(err)
	w.lastSyncErr = err
	w.progress()
	w.finishClose()
}

func (w *Writer) progress() {
	if w.OnProgress != nil {
		w.OnProgress()
	}
	if w.closing && w.inflight == nil && w.sync == syncIdle {
		w.finishClose()
	}
}

// syncTick runs every second: under everysec, fdatasync what was written
// and is not durable yet.
func (w *Writer) syncTick() {
	if w.Policy != FsyncEverysec || w.sync != syncIdle || w.segFirst == 0 || w.app.Poisoned() != nil {
		return
	}
	w.Sync()
}

// Sync fdatasyncs the open segment and marks durable what was written
// before the call, whatever the policy: the checkpoint's WAL barrier uses
// it under everysec and no. It does nothing when everything written is
// durable already or an fdatasync is in flight (OnProgress reports when
// that one completes).
func (w *Writer) Sync() {
	if w.sync != syncIdle || w.app.Poisoned() != nil {
		return
	}
	target := w.app.WrittenPoint()
	if target.LSN <= w.app.DurableLSN() || w.segFirst == 0 {
		return
	}
	w.sync = syncRunning
	start := time.Now()
	w.be.Fdatasync(w.seg, func(err error) {
		w.expectSync(syncRunning)
		w.sync = syncIdle
		if err != nil {
			w.poison(fmt.Errorf("wal: fdatasync %s: %w", SegmentName(w.segFirst), err))
			return
		}
		w.syncTook(start)
		w.synced(target)
		w.progress()
	})
}

// synced records a standalone fdatasync of the open segment that covered
// every write through target, and closes the segment if it was sealed
// meanwhile (the writer may have a newer one open by now).
func (w *Writer) synced(target WritePoint) {
	w.stats.Datasyncs++
	w.app.MarkDurableAt(target)
	if w.closeAfter {
		w.closeAfter = false
		w.be.Close(w.closeFD, nil)
	}
}

// closeSegment closes the sealed segment, after an fdatasync in flight on
// it. The writer is done with it at once: the next group creates the next
// segment, which must never be the one a late close hits.
func (w *Writer) closeSegment() {
	if w.segFirst == 0 {
		return
	}
	fd := w.seg
	w.segFirst = 0
	if w.sync != syncIdle {
		w.closeAfter, w.closeFD = true, fd
		return
	}
	w.be.Close(fd, nil)
}

// createSegment makes the segment file for h: a temporary file with the
// header, fsync, rename into place, fsync of the directory, then keeps the
// file open for the group writes.
func (w *Writer) createSegment(h SegmentHeader, done func(error)) {
	final := SegmentPath(w.dir, h.FirstLSN)
	tmp := final + tempSuffix
	hdr := h.Append(make([]byte, 0, SegmentHeaderSize))
	w.be.Open(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644, func(fd runtime.FD, err error) {
		if err != nil {
			done(fmt.Errorf("wal: create segment %s: %w", tmp, err))
			return
		}
		ops := []runtime.Op{{Kind: runtime.OpPwrite, FD: fd, Buf: hdr}, {Kind: runtime.OpFsync, FD: fd}, {Kind: runtime.OpRename, Path: tmp, NewPath: final}}
		w.be.Chain(ops, func(res []runtime.Result) {
			if i := runtime.FailedStep(res); i >= 0 {
				w.be.Close(fd, nil)
				w.be.Unlink(tmp, func(error) {})
				err := fmt.Errorf("wal: create segment %s (%s): %w", final, ops[i].Kind, res[i].Err)
				if ops[i].Kind == runtime.OpFsync {
					err = &vfs.SyncError{Err: err}
				}
				done(err)
				return
			}
			w.be.SyncDir(w.dir, func(err error) {
				if err != nil {
					w.be.Close(fd, nil)
					done(&vfs.SyncError{Err: fmt.Errorf("wal: fsync directory %s: %w", w.dir, err)})
					return
				}
				w.seg, w.segFirst, w.created = fd, h.FirstLSN, h.FirstLSN
				w.stats.Segments++
				if w.OnSegment != nil {
					w.OnSegment(h.FirstLSN)
				}
				done(nil)
			})
		})
	})
}

// Close seals the log for a clean shutdown: every appended record is
// written and fdatasynced, the current segment gets its seal, and done runs
// with the first error (nil when everything is durable). Loop thread only.
func (w *Writer) Close(done func(error)) {
	w.closedCb = append(w.closedCb, done)
	if w.closing {
		return
	}
	w.closing = true
	w.syncTicker.Stop()
	if w.app.Poisoned() == nil {
		if _, err := w.app.Seal(SealShutdown); err != nil {
			w.poison(err)
			return
		}
	}
	if w.group == groupRetry {
		w.retryTimer.Stop()
		w.retryTimer, w.group = nil, groupIdle
	}
	w.Kick()
	w.progress()
}

// finishClose reports the end of Close once nothing is in flight.
func (w *Writer) finishClose() {
	if !w.closing || w.inflight != nil || w.sync != syncIdle {
		return
	}
	if w.app.Poisoned() == nil && w.app.Unwritten() > 0 {
		return // the next group is on its way (Kick)
	}
	var err error
	switch {
	case w.app.Poisoned() != nil:
		err = w.app.Poisoned()
	case w.app.LastError() != nil:
		err = w.app.LastError()
	}
	if w.segFirst != 0 {
		w.be.Close(w.seg, nil)
		w.segFirst = 0
	}
	cbs := w.closedCb
	w.closedCb = nil
	for _, cb := range cbs {
		cb(err)
	}
}

// IsNoSpace reports whether err is ENOSPC, for Redis's error texts.
func IsNoSpace(err error) bool { return errors.Is(err, syscall.ENOSPC) }

// syncTook counts an fdatasync that began at start (Stats.SyncSeconds) and
// reports its duration to OnSync.
func (w *Writer) syncTook(start time.Time) {
	took := time.Since(start)
	w.stats.SyncSeconds.Observe(&SyncSecondsBounds, took.Seconds())
	if w.OnSync != nil {
		w.OnSync(took)
	}
}
