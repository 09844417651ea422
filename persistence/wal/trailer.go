package wal

import (
	"fmt"
	"time"

	"github.com/moond-db/moond/runtime"
)

// trailer is a chain of data-file writes (a checkpoint's page writes) that
// may run only once every WAL record through lsn is durable: log before
// data.
type trailer struct {
	lsn  uint64
	ops  []runtime.Op
	done func(res []runtime.Result, err error)
}

// WriteAfterDurable runs ops once every record through lsn is durable and
// calls done, on the loop's thread, with their results. Records that are
// written and not durable get a chain of their own: an fdatasync of the
// segment, then ops linked after it (on io_uring, IOSQE_IO_LINK), so the
// kernel itself keeps the data writes behind the log with no completion
// round trip in between, and a failed fdatasync cancels them (err says
// why; res then holds ECANCELED, or is nil when they were never
// submitted). Records not written yet wait for their group's write; a
// group commit that made them durable (appendfsync always) lets ops go out
// at once.
//
// The data writes are never put into a group's own chain: that chain's
// completion releases the clients' replies, which must not wait for page
// writes.
func (w *Writer) WriteAfterDurable(lsn uint64, ops []runtime.Op, done func(res []runtime.Result, err error)) {
	if len(ops) > runtime.MaxChainLen-2 {
		panic(fmt.Sprintf("wal: %d trailing writes, at most %d", len(ops), runtime.MaxChainLen-2))
	}
	w.trailers = append(w.trailers, trailer{lsn: lsn, ops: ops, done: done})
	// Kick, once per loop iteration, links or submits it.
}

// runReadyTrailers submits the trailers whose records are durable, and
// fails them all when the log is poisoned.
func (w *Writer) runReadyTrailers() {
	if len(w.trailers) == 0 {
		return
	}
	err := w.app.Poisoned()
	durable := w.app.DurableLSN()
	var ready []trailer
	keep := w.trailers[:0]
	for _, t := range w.trailers {
		if err != nil || t.lsn <= durable {
			ready = append(ready, t)
		} else {
			keep = append(keep, t)
		}
	}
	clear(w.trailers[len(keep):])
	w.trailers = keep
	for _, t := range ready {
		if err != nil {
			t.done(nil, err)
			continue
		}
		w.be.Chain(t.ops, func(res []runtime.Result) { t.done(res, nil) })
	}
}

// takeTrailers removes and returns the trailers that wait on records
// through last, as many as fit in one chain behind its fdatasync.
func (w *Writer) takeTrailers(last uint64) []trailer {
	var out []trailer
	n := 1 // the fdatasync
	keep := w.trailers[:0]
	for _, t := range w.trailers {
		if t.lsn <= last && n+len(t.ops) <= runtime.MaxChainLen {
			out = append(out, t)
			n += len(t.ops)
			continue
		}
		keep = append(keep, t)
	}
	clear(w.trailers[len(keep):])
	w.trailers = keep
	return out
}

func appendTrailerOps(ops []runtime.Op, ts []trailer) []runtime.Op {
	for _, t := range ts {
		ops = append(ops, t.ops...)
	}
	return ops
}

// finishTrailers hands each trailer its share of res, the chain's steps
// after the WAL's.
func finishTrailers(ts []trailer, res []runtime.Result, err error) {
	for _, t := range ts {
		n := min(len(t.ops), len(res))
		t.done(res[:n:n], err)
		res = res[n:]
	}
}

// syncForTrailers: trailers wait on records that are written and not
// durable (their group went out without an fdatasync): one chain of an
// fdatasync of the open segment and their writes. It may run beside a
// group's write in flight: the fdatasync covers what was written before
// it was submitted, which is what target says.
func (w *Writer) syncForTrailers() {
	if len(w.trailers) == 0 || w.sync != syncIdle || w.segFirst == 0 {
		return
	}
	target := w.app.WrittenPoint()
	attached := w.takeTrailers(target.LSN)
	if len(attached) == 0 {
		return
	}
	w.sync = syncTrailers
	ops := appendTrailerOps([]runtime.Op{{Kind: runtime.OpFdatasync, FD: w.seg}}, attached)
	seg := w.segFirst
	start := time.Now()
	w.be.Chain(ops, func(res []runtime.Result) {
		w.expectSync(syncTrailers)
		w.sync = syncIdle
		if err := res[0].Err; err != nil {
			err = fmt.Errorf("wal: fdatasync %s: %w", SegmentName(seg), err)
			finishTrailers(attached, res[1:], err)
			w.poison(err)
			return
		}
		w.syncTook(start)
		w.synced(target)
		w.progress()
		finishTrailers(attached, res[1:], nil)
		w.Kick()
	})
}
