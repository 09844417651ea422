package server

import (
	"slices"

	"github.com/moond-db/moond/resp"
)

// Transactions across shards (docs/DESIGN.md §3, "Transactions").
//
// A command, or a MULTI/EXEC, whose keys live on several shards runs as a
// txn that the connection's shard coordinates. The txn holds every shard
// it needs, one at a time in ascending shard order, each grant coming
// back to the coordinator before it asks for the next. A shard held by a
// txn runs nothing but that txn's steps: its connections stop running
// their input (parkWhileHeld), other shards' batches wait (runBatch), its
// blocked clients are not served and its active expiry pauses, until the
// txn releases it; then that work runs in the order it came.
//
// Once it holds them all, the txn runs its steps, each on the shard of
// its keys (step), reading what it needs (MSETNX: do the keys exist?)
// before it writes; a shard is released after its last step.
//
// Why it is serializable: holds are two-phase locks at the granularity of
// a shard. No txn releases a shard before it holds all of its shards, and
// everything that reads or writes keys on a shard runs either while no
// txn holds it or as the holder's step. So a txn's steps and any other
// command conflict only in one order on every shard they share: order the
// txns by the moment they held their last shard (their lock point), and
// each command by when it ran.
//
// Why it never deadlocks: a shard grants holds in the order they were
// asked (FIFO), and a txn asks for shard s only when it holds every shard
// it needs below s and none above. A txn waits only for a holder of a
// shard it asks for, which is either running its steps or waiting for a
// shard above s: following "waits for" always climbs the shard order, so
// it never comes back to where it started.
type txn struct {
	coord  *worker
	shards []int  // ascending
	next   int    // shards[:next] are held
	onHeld func() // runs on the coordinator once all are held
}

// beginTxn starts a txn coordinated by w over shards (any order, no
// duplicates needed); onHeld runs on w once it holds them all, possibly
// before beginTxn returns.
func (w *worker) beginTxn(shards []int, onHeld func(t *txn)) *txn {
	s := slices.Clone(shards)
	slices.Sort(s)
	t := &txn{coord: w, shards: slices.Compact(s)}
	t.onHeld = func() { onHeld(t) }
	// What this iteration batched for other shards (the connection's
	// earlier commands) goes first: each target runs it before the txn
	// holds it, as the mailboxes keep the order of what one shard sends.
	w.postBatches()
	w.stats.txns++
	if len(t.shards) > 1 {
		w.stats.txnsAcross++
	}
	t.acquire()
	return t
}

// acquire asks for the next shard, or runs the txn once it holds all.
// It runs on the coordinator.
func (t *txn) acquire() {
	if t.next == len(t.shards) {
		t.onHeld()
		return
	}
	target := t.coord.srv.workers[t.shards[t.next]]
	if target == t.coord {
		target.hold(t)
		return
	}
	t.coord.send(target, func() { target.hold(t) })
}

// hold gives w to t, or queues t behind the txns that asked first.
func (w *worker) hold(t *txn) {
	if w.holder != nil || len(w.holdQ) > 0 {
		w.holdQ = append(w.holdQ, t)
		return
	}
	w.grantHold(t)
}

// grantHold makes t w's holder and tells t's coordinator.
func (w *worker) grantHold(t *txn) {
	w.holder = t
	if t.coord == w {
		t.next++
		t.acquire()
		return
	}
	w.send(t.coord, func() {
		t.next++
		t.acquire()
	})
}

// unhold releases w from t: the work that waited runs in the order it
// came, unless it holds w again (a connection's own txn), then the next
// txn that asked gets w.
func (w *worker) unhold(t *txn) {
	if w.holder != t {
		panic("server: a txn releases a shard it does not hold")
	}
	w.holder = nil
	for len(w.heldWork) > 0 && w.holder == nil {
		f := w.heldWork[0]
		w.heldWork[0] = nil
		w.heldWork = w.heldWork[1:]
		f()
	}
	if len(w.heldWork) == 0 {
		w.heldWork = nil
	}
	if w.holder == nil && len(w.ready) > 0 {
		w.serveReady() // blocked clients whose keys the txn wrote
	}
	if w.holder == nil && len(w.holdQ) > 0 {
		next := w.holdQ[0]
		w.holdQ[0] = nil
		w.holdQ = w.holdQ[1:]
		w.grantHold(next)
	}
}

// whenFree runs f now when no txn holds w, else once one releases it.
func (w *worker) whenFree(f func()) bool {
	if w.holder == nil {
		return true
	}
	w.heldWork = append(w.heldWork, f)
	return false
}

// stepFunc is the work of a txn step on one shard: it writes its reply to
// out and returns the LSN of its last WAL record (0 for none).
type stepFunc func(w *worker, out *resp.Writer) uint64

// step runs fn on shard s, which t holds, then, once the WAL holds what
// fn wrote, calls done on the coordinator with fn's reply (a MISCONF error
// when it never will). With release set, s is released right after fn:
// the txn has nothing more to do there.
func (t *txn) step(s int, proto int, fn stepFunc, release bool, done func(reply []byte)) {
	target := t.coord.srv.workers[s]
	run := func() {
		out := resp.Writer{Proto: proto}
		lsn := fn(target, &out)
		if release {
			target.unhold(t)
		}
		back := func(reply []byte) {
			if target == t.coord {
				done(reply)
				return
			}
			target.send(t.coord, func() { done(reply) })
		}
		if lsn == 0 {
			back(out.Buf)
			return
		}
		target.sh.WhenDurable(lsn, func() { back(out.Buf) }, func() {
			e := resp.Writer{Proto: proto}
			e.Error(target.sh.Misconf())
			back(e.Buf)
		})
	}
	if target == t.coord {
		run()
		return
	}
	t.coord.send(target, run)
}

// release lets shard s go without a step.
func (t *txn) release(s int) {
	target := t.coord.srv.workers[s]
	if target == t.coord {
		target.unhold(t)
		return
	}
	t.coord.send(target, func() { target.unhold(t) })
}

// parkWhileHeld stops the connection's input while a txn holds its shard:
// it runs again (resumeHeld) once the shard is released.
func (c *conn) parkWhileHeld() {
	c.unprocessed = true
	if c.heldParked {
		return
	}
	c.heldParked = true
	c.w.heldWork = append(c.w.heldWork, c.resumeHeld)
}

// resumeHeld runs the input of a connection parked by parkWhileHeld.
func (c *conn) resumeHeld() {
	c.heldParked = false
	switch c.state {
	case connClosed:
	case connSending:
		c.unprocessed = true // afterSend runs it
	default:
		c.process()
	}
}
