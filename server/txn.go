package server

import (
	"slices"
	"sync/atomic"

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
// before it writes; a shard is released after its last step. The txns a
// shard begins while the groups it started before still wait for shards
// hold their shards together, as one group (txnGroup), and run one after
// the other.
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
	g      *txnGroup
	shards []int // ascending
	onHeld func(t *txn)
	// onRefused, when set, answers the txn's client with msg instead of
	// running onHeld: a shard refused the writes of a txn whose steps are
	// decided once it is held (txn_refuse.go).
	onRefused func(msg string)
	alone     bool         // steps in rounds: never grouped with others
	left      atomic.Int32 // shards not released yet (Server.txnsLive)

	// id is taken when the group holds every shard (the lock point), from
	// one counter for the whole server: on every shard, the parts of txns
	// come in the order of their ids (persistence/txnlog).
	id uint64
	// writes is set by a txn that may write (before it is held): each of
	// its steps on a shard in writers is part of its part there, and its
	// last step there logs END; those shards are released together once
	// every END is in its WAL (closeParts), so that nothing reads or
	// overwrites a part before the txn is whole in the logs.
	writes bool
	// writers are the shards whose last step logs END (nil: every shard).
	writers []int
	// On the coordinator: the shards whose last step logs END and was sent,
	// how many of those answered, and how many shards were released
	// otherwise.
	ending   []int
	answered int
	freed    int
	early    []earlyStep // steps known before the hold (txn_early.go)

	// The chain of the group's txns that may write (txn_chain.go): on a
	// shard they share, a txn's steps run right after the earlier one's,
	// before that one is whole in the logs, so a txn closes (replies, lets
	// its shards go) only after the one before it did, and its ENDs name
	// the group's first txid so that a boot never keeps it without them.
	group    uint64 // the txid of the group's first txn that may write
	prev     *txn   // the group's txn that may write before this one
	next     *txn   // and after
	closed   bool   // closeParts let the shards go
	deferred []deferredReply
	// after is, for a txn that writes nothing, the group's last txn before
	// it that may write; waiters are the steps of such later txns that
	// wait for this one to close (afterPrev).
	after   *txn
	waiters []func()
}

// txnGroup is what holds the shards: the txns one shard began while its
// earlier groups waited for their shards (startTxns), run one after the
// other once the group holds the union of their shards. A group holds and
// releases each shard once for all its txns, as a group commit writes the
// WAL once for many commands. A txn whose steps come in rounds (MSETNX
// reads, then writes) is a group of its own: another txn's steps must not
// run between its rounds.
type txnGroup struct {
	coord  *worker
	shards []int // ascending
	next   int   // shards[:next] are held
	txns   []*txn
	// left[s] is how many of the group's txns still need shard s; it is
	// set before the group asks for s and then touched on s only.
	left []int
	// earlyRuns are the early steps sent with the last hold request, run
	// by that shard when it grants (txn_early.go).
	earlyRuns []func()
	// mayWrite is set when any of the group's txns may write: its shards
	// then say at the grant whether they refuse writes, and refused holds
	// the MISCONF text of each that does (txn_refuse.go).
	mayWrite bool
	refused  map[int]string
}

// beginTxn starts a txn coordinated by w over shards (any order,
// duplicates allowed). It joins the group of the txns begun since w's
// last group started, which asks for its shards once every group w
// started before holds all of its shards (startTxns), after every batch
// of this iteration went out (a connection's earlier commands reach each
// shard first).
// onHeld runs on w once the group holds every shard; the txn's steps with
// release set, or its release calls, free its shards.
func (w *worker) beginTxn(shards []int, onHeld func(t *txn)) *txn {
	s := slices.Clone(shards)
	slices.Sort(s)
	t := &txn{shards: slices.Compact(s), onHeld: onHeld}
	t.left.Store(int32(len(t.shards)))
	w.srv.txnsLive.Add(1)
	w.stats.txns++
	if len(t.shards) > 1 {
		w.stats.txnsAcross++
	}
	if len(w.pendingTxns) == 0 {
		w.loop.AfterFunc(0, w.startTxns)
	}
	w.pendingTxns = append(w.pendingTxns, t)
	return t
}

// beginTxnAlone is beginTxn for a txn whose steps come in rounds.
func (w *worker) beginTxnAlone(shards []int, onHeld func(t *txn)) *txn {
	t := w.beginTxn(shards, onHeld)
	t.alone = true
	return t
}

// startTxns makes groups of the txns begun since it last ran and has them
// ask for their shards; while a group w started earlier still waits for
// a shard it does nothing, and runs again once none does (groupHeld).
//
// Why wait: a group that asks now would queue behind the earlier one on
// the shards they share, each hold, step and release its own round trip
// between the shards, when the txns begun meanwhile could share one.
// Waiting costs a txn nothing when it shares a shard with the earlier
// group: that shard is the earlier group's (or promised to it, FIFO) until
// its lock point at the soonest. One over other shards only (three shards
// or more) may wait for that lock point: the price of the shared holds.
func (w *worker) startTxns() {
	if w.acquiring > 0 || len(w.pendingTxns) == 0 {
		return
	}
	pending := w.pendingTxns
	w.pendingTxns = nil
	w.postBatches()
	var group []*txn
	for _, t := range pending {
		if t.alone {
			w.startGroup([]*txn{t})
		} else {
			group = append(group, t)
		}
	}
	if len(group) > 0 {
		w.startGroup(group)
	}
}

// startGroup makes a group of txns and has it ask for the first shard.
func (w *worker) startGroup(txns []*txn) {
	w.stats.txnGroups++
	w.acquiring++
	g := &txnGroup{coord: w, txns: txns, left: make([]int, w.srv.nshards)}
	for _, t := range txns {
		t.g = g
		g.mayWrite = g.mayWrite || t.writes
		g.shards = append(g.shards, t.shards...)
		for _, s := range t.shards {
			g.left[s]++
		}
	}
	slices.Sort(g.shards)
	g.shards = slices.Compact(g.shards)
	g.acquire()
}

// acquire asks for the next shard, or runs the txns once it holds all.
// It runs on the coordinator.
func (g *txnGroup) acquire() {
	if g.next == len(g.shards) {
		g.takeIDs(g.coord) // unless the last shard to grant took them (lockPoint)
		for _, t := range g.txns {
			if msg := t.refusedBy(); msg != "" && (t.refuse(msg) || t.refuseWhole(msg)) {
				continue
			}
			t.onHeld(t)
		}
		g.coord.groupHeld()
		return
	}
	target := g.coord.srv.workers[g.shards[g.next]]
	if target == g.coord {
		target.hold(g)
		return
	}
	if g.next == len(g.shards)-1 {
		g.earlyRuns = g.earlyFor(target)
	}
	g.coord.send(target, func() { target.hold(g) })
}

// groupHeld runs on w when a group it started holds all its shards: once
// none waits any more, the txns begun meanwhile start (startTxns).
func (w *worker) groupHeld() {
	if w.acquiring--; w.acquiring == 0 && len(w.pendingTxns) > 0 {
		w.loop.AfterFunc(0, w.startTxns)
	}
}

// hold gives w to g, or queues g behind the groups that asked first.
func (w *worker) hold(g *txnGroup) {
	if w.holder != nil || len(w.holdQ) > 0 {
		w.holdQ = append(w.holdQ, g)
		return
	}
	w.grantHold(g)
}

// grantHold makes g w's holder and tells g's coordinator.
func (w *worker) grantHold(g *txnGroup) {
	w.holder = g
	w.heldSince = w.loop.Now()
	refusal := w.refusal(g)
	if len(g.earlyRuns) > 0 {
		g.lockPoint(w)
	}
	if g.coord == w {
		g.granted(w.id, refusal)
		return
	}
	w.send(g.coord, func() { g.granted(w.id, refusal) })
}

// granted runs on the coordinator when shard s granted g its hold, with
// its MISCONF text when it refuses writes: g asks for its next shard.
func (g *txnGroup) granted(s int, refusal string) {
	if refusal != "" {
		if g.refused == nil {
			g.refused = map[int]string{}
		}
		g.refused[s] = refusal
	}
	g.next++
	g.acquire()
}

// unhold releases w from g: the work that waited runs in the order it
// came, unless it holds w again (a connection's own txn), then the next
// group that asked gets w.
func (w *worker) unhold(g *txnGroup) {
	if w.holder != g {
		panic("server: a txn releases a shard it does not hold")
	}
	w.holder = nil
	w.stats.heldNanos += int64(w.loop.Now().Sub(w.heldSince))
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
	if w.mayEvict() {
		w.enforceMemory() // what the txn wrote may have put the shard over
	}
	if w.holder == nil && len(w.holdQ) > 0 {
		next := w.holdQ[0]
		w.holdQ[0] = nil
		w.holdQ = w.holdQ[1:]
		w.grantHold(next)
	}
}

// done records, on shard w, that t needs it no more: the last of the
// group's txns to say so releases it.
func (t *txn) done(w *worker) {
	if t.left.Add(-1) == 0 {
		w.srv.txnsLive.Add(-1)
	}
	g := t.g
	if g.left[w.id]--; g.left[w.id] == 0 {
		w.unhold(g)
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

// shutdownError answers what another shard asks of a shard that stops.
const shutdownError = "ERR the server is shutting down"

// stepFunc is the work of a txn step on one shard: it writes its reply to
// out and returns the LSN of its last WAL record (0 for none).
type stepFunc func(w *worker, out *resp.Writer) uint64

// step runs fn on shard s, which t's group holds, then, once the WAL holds
// what fn wrote, calls done on the coordinator with fn's reply (a MISCONF
// error when it never will). With release set, t needs s no more after fn:
// s is released at once, or, when the step ends t's part on s (writes),
// once every part's END is in its WAL (closeParts).
func (t *txn) step(s int, proto int, fn stepFunc, release bool, done func(reply []byte)) {
	t.send(s, t.stepOn(t.g.coord.srv.workers[s], proto, fn, release, t.afterPrev(done)))
}

// readStep is a step that only reads (it hands keys over, counts or checks
// watches) and does not release s: it is no part of t's part on s, so
// that a shard logs a BEGIN only in a step whose txn ends its part there
// (a key it expires on the way is logged as any expiry is).
func (t *txn) readStep(s int, proto int, fn stepFunc, done func(reply []byte)) {
	t.send(s, t.runStep(t.g.coord.srv.workers[s], proto, fn, false, false, false, t.afterPrev(done)))
}

// send runs run, a step's, on shard s.
func (t *txn) send(s int, run func()) {
	coord := t.g.coord
	target := coord.srv.workers[s]
	if target == coord {
		run()
		return
	}
	coord.send(target, run)
}

// stepOn does the coordinator's share of a step on target (what it counts
// for closeParts) and returns the step's run, for target's thread.
func (t *txn) stepOn(target *worker, proto int, fn stepFunc, release bool, done func(reply []byte)) func() {
	writes := t.writes && t.writesOn(target.id)
	ends := release && writes
	switch {
	case ends:
		if t.ending == nil {
			t.ending = make([]int, 0, len(t.shards))
		}
		t.ending = append(t.ending, target.id)
		inner := done
		done = func(reply []byte) {
			// The reply waits for the txn to close: until then a crash
			// may still take it (txn_chain.go).
			if t.deferred == nil {
				t.deferred = make([]deferredReply, 0, len(t.shards))
			}
			t.deferred = append(t.deferred, deferredReply{inner, reply})
			t.answered++
			t.closeParts()
		}
	case release:
		t.freed++
	}
	return t.runStep(target, proto, fn, release, writes, ends, done)
}

// runStep is a step's run on target's thread: fn, in t's part there when
// writes, ending it when ends, then done on the coordinator once the WAL
// holds what it wrote.
func (t *txn) runStep(target *worker, proto int, fn stepFunc, release, writes, ends bool, done func(reply []byte)) func() {
	coord := t.g.coord
	return func() {
		out := resp.Writer{Proto: proto}
		if target.closing { // its WAL is closing: nothing more runs there
			out.Error(shutdownError)
			if ends {
				target.sh.SkipPart(t.id, t.partShards())
			}
			if release && !ends {
				t.done(target)
			}
			target.send(coord, func() { done(out.Buf) })
			return
		}
		if writes && target.refuses() {
			// Nothing of the part is logged, not even its END: the txn
			// never commits (txn_refuse.go), and its client hears why now
			// rather than once the disk is back.
			out.Error(target.sh.Misconf())
			if ends {
				target.sh.SkipPart(t.id, t.partShards())
			}
			if release && !ends {
				t.done(target)
			}
			target.send(coord, func() { done(out.Buf) })
			return
		}
		if writes {
			target.sh.OpenPart(t.id)
		}
		lsn := fn(target, &out)
		switch {
		case ends:
			end, err := target.sh.EndPart(t.id, t.group, t.partShards())
			if err != nil { // the txn never commits: its client hears so
				out.Reset()
				out.Error(err.Error())
			}
			lsn = max(lsn, end)
		case writes:
			target.sh.ClosePart()
		}
		if release && !ends {
			t.done(target)
		}
		if lsn == 0 && target.sh != nil {
			lsn = target.sh.ReadBarrier() // reads see only what the WAL holds
		}
		if lsn == 0 {
			stepBack(target, coord, done, out.Buf)
			return
		}
		reply := out.Buf
		target.sh.WhenDurable(lsn, func() { stepBack(target, coord, done, reply) }, func() {
			e := resp.Writer{Proto: proto}
			e.Error(target.sh.Misconf())
			stepBack(target, coord, done, e.Buf)
		})
	}
}

// stepBack hands a step's reply from target to done on coord.
func stepBack(target, coord *worker, done func(reply []byte), reply []byte) {
	if target == coord {
		done(reply)
		return
	}
	target.send(coord, func() { done(reply) })
}

// deferredReply is a step's reply held until its txn closes (closeParts).
type deferredReply struct {
	done  func(reply []byte)
	reply []byte
}

// endParts ends t's part on each of its shards with a last step that runs
// nothing, then calls then on the coordinator: for a txn whose writes ran
// in steps that did not release.
func (t *txn) endParts(proto int, then func()) {
	left := len(t.shards)
	for _, s := range t.shards {
		t.step(s, proto, func(*worker, *resp.Writer) uint64 { return 0 }, true, func([]byte) {
			if left--; left == 0 {
				then()
			}
		})
	}
}

// writesOn reports whether shard s takes part in t's writes.
func (t *txn) writesOn(s int) bool {
	return t.writers == nil || slices.Contains(t.writers, s)
}

// partShards are the shards t's END names.
func (t *txn) partShards() []int {
	if t.writers != nil {
		return t.writers
	}
	return t.shards
}

// closeParts releases the shards whose last step ended t's part, once
// every shard was released or sent its last step, every END is in its
// WAL (their steps answered) and the txn before t in its group's chain
// closed; then the replies of those steps go on, and the next txn of the
// chain may close. It runs on the coordinator.
func (t *txn) closeParts() {
	if t.closed || len(t.ending)+t.freed != len(t.shards) || t.answered != len(t.ending) ||
		(t.prev != nil && !t.prev.closed) {
		return
	}
	t.closed = true
	t.g.coord.srv.txnClosed(t.id)
	for _, s := range t.ending {
		t.releaseNow(s)
	}
	t.ending = nil
	deferred := t.deferred
	t.deferred = nil
	for _, d := range deferred {
		d.done(d.reply)
	}
	waiters := t.waiters
	t.waiters = nil
	for _, f := range waiters {
		f()
	}
	if t.next != nil {
		t.next.closeParts()
	}
}

// release tells shard s that t needs it no more, without a step: t wrote
// nothing there.
func (t *txn) release(s int) {
	t.freed++
	t.releaseNow(s)
	t.closeParts()
}

// releaseNow tells shard s that t needs it no more.
func (t *txn) releaseNow(s int) {
	coord := t.g.coord
	target := coord.srv.workers[s]
	if target == coord {
		t.done(target)
		return
	}
	coord.send(target, func() { t.done(target) })
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
	c.resumeInput()
}

// resumeInput runs the connection's input again after a wait (a hold, a
// pause): now, or once the send in flight is done.
func (c *conn) resumeInput() {
	switch c.state {
	case connClosed:
	case connSending:
		c.unprocessed = true // afterSend runs it
	default:
		c.process()
	}
}
