package server

import (
	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// The waits on keys of several shards (see block.go): the connection's
// shard owns the wait and grants one key shard at a time the right to
// serve it. The messages, each run on the shard named:
//
//	key shard -> owner   onAsk(wt)        it has data for the wait
//	owner -> key shard   onGrant(wt)      serve it (only one shard holds the grant)
//	key shard -> owner   onServed(b, r)   served; r leaves once its WAL holds the pop
//	key shard -> owner   onRelease(wt)    the data went before the grant came
//	owner -> key shard   dropWaiter(wt)   the wait is over
//	key shard -> owner   onReport(wt, r)  registered; r: what its first existing key holds
//
// A shard that asked keeps the key's later waiters behind the asking one
// until the answer comes or the waiter is dropped.

// blockAcross starts the wait of a blocking command whose keys are on
// several shards, owned by this connection's shard. It does not run the
// command first: each key shard reports what its keys hold once it
// registered the wait, and the owner decides (onReport).
func (c *conn) blockAcross(spec *keyspace.CommandSpec, args [][]byte) {
	reply := c.newPending(1, nil)
	c.blockWait = reply
	b := newBlocked(c, reply, c.w, c.w, spec, args, false, c.client.DB, c.out.Proto)
	b.state = blockStarting
	b.unreported = len(b.waiters)
	b.first = keyReport{pos: -1}
	c.setBlocked(b)
	// The other shards' registrations go first: the local report may
	// end the wait at once, and the drops that ends it must reach each
	// shard after that shard's registration.
	var local *waiter
	for _, wt := range b.waiters {
		if wt.w == c.w {
			local = wt
		} else {
			c.w.send(wt.w, func() { wt.w.registerWaiter(wt) })
		}
	}
	if local != nil {
		c.w.registerWaiter(local)
	}
}

// keyReport is what a key shard found when it registered a wait: the
// first of its keys that exists, by its position in the command (-1:
// none exists), and whether it holds another kind than the one popped.
type keyReport struct {
	wt    *waiter
	pos   int
	wrong bool
}

// registerWaiter, on a key shard, registers wt and reports to the owner
// what the first of its keys that exists holds.
func (w *worker) registerWaiter(wt *waiter) {
	b := wt.b
	if wt.dropped {
		return // the wait ended before this shard heard of it
	}
	w.addWaiter(wt)
	r := keyReport{wt: wt, pos: -1}
	for _, k := range wt.keys { // in the command's order
		if kind, ok := w.ks.PeekKind(k.db, []byte(k.key)); ok {
			r.pos, r.wrong = b.posOf(k.key), kind != b.spec.Block.Pops()
			break
		}
	}
	w.toOwner(b, func() { b.owner.onReport(r) })
}

// onReport, on the owner, takes one key shard's report. Once every shard
// reported, the first key in the command's order that exists decides, as
// when Redis runs the command: another kind is WRONGTYPE, data is served
// from its shard; with none, the wait goes on, and the shards that asked
// meanwhile get their turn.
func (w *worker) onReport(r keyReport) {
	b := r.wt.b
	if b.state != blockStarting {
		return // it ended while the reports travelled
	}
	if r.pos >= 0 && (b.first.pos < 0 || r.pos < b.first.pos) {
		b.first = r
	}
	if b.unreported--; b.unreported > 0 {
		return
	}
	b.state = blockWaiting
	switch {
	case b.first.pos >= 0 && b.first.wrong:
		out := resp.Writer{Proto: b.proto}
		out.Error("WRONGTYPE Operation against a key holding the wrong kind of value")
		w.finishBlocked(b, out.Buf, 0)
	case b.first.pos >= 0:
		w.grant(b.first.wt)
	case len(b.asks) > 0:
		next := b.asks[0]
		b.asks = b.asks[1:]
		w.grant(next)
	}
}

// onAsk, on b's owner: wt's shard has data for b.
func (w *worker) onAsk(wt *waiter) {
	b := wt.b
	switch b.state {
	case blockWaiting:
		w.grant(wt)
	case blockGranted, blockStarting:
		b.asks = append(b.asks, wt)
	case blockDone:
		// wt's drop is on its way there, and ends its asking.
	}
}

// grant gives wt's shard the right to serve b.
func (w *worker) grant(wt *waiter) {
	wt.b.state = blockGranted
	if wt.w == w {
		w.onGrant(wt)
		return
	}
	w.send(wt.w, func() { wt.w.onGrant(wt) })
}

// onGrant, on wt's shard, serves b from the first of wt's keys with data,
// or releases the grant when none has any now.
func (w *worker) onGrant(wt *waiter) {
	if !w.whenFree(func() { w.onGrant(wt) }) {
		return // a txn holds this shard: the pop waits for its release
	}
	if w.closing {
		return // the server stops: nothing pops any more
	}
	b := wt.b
	wt.asking = false
	served := false
	for _, k := range wt.keys {
		reply, lsn, ok := w.tryServe(b, k)
		if !ok {
			continue
		}
		served = true
		w.removeWaiter(wt)
		if b.owner == w {
			w.finishBlocked(b, reply, lsn)
		} else {
			// The pop leaves this shard's WAL first, then the owner ends
			// the wait with its reply.
			w.whenDurable(lsn, b.proto, reply, func(reply []byte) {
				w.send(b.owner, func() { b.owner.onServed(b, reply) })
			})
		}
		break
	}
	if !served {
		w.toOwner(b, func() { b.owner.onRelease(wt) })
	}
	for _, k := range wt.keys {
		w.markReady(k)
	}
	w.serveReady()
}

// whenDurable calls f with reply once this shard's WAL holds record lsn,
// or with the MISCONF error when it never will.
func (w *worker) whenDurable(lsn uint64, proto int, reply []byte, f func([]byte)) {
	if lsn == 0 {
		f(reply)
		return
	}
	w.sh.WhenDurable(lsn, func() { f(reply) }, func() {
		out := resp.Writer{Proto: proto}
		out.Error(w.sh.Misconf())
		f(out.Buf)
	})
}

// onServed, on the owner: the shard holding the grant served b.
func (w *worker) onServed(b *blocked, reply []byte) {
	w.finishBlocked(b, reply, 0)
}

// onRelease, on the owner: the shard holding the grant found no data.
// The grant goes to the next shard that asked, unless the wait ended
// meanwhile.
func (w *worker) onRelease(wt *waiter) {
	b := wt.b
	b.state = blockWaiting
	switch b.pending {
	case endTimeout:
		w.finishBlocked(b, timeoutReply(b), 0)
		return
	case endCancel:
		w.finishBlocked(b, nil, 0)
		return
	}
	if len(b.asks) > 0 {
		next := b.asks[0]
		b.asks = b.asks[1:]
		w.grant(next)
	}
}

// dropWaiter, on wt's shard, ends its registration; if it was asking, the
// later waiters of its keys get their turn.
func (w *worker) dropWaiter(wt *waiter) {
	wt.dropped = true
	if !wt.registered {
		return
	}
	asking := wt.asking
	wt.asking = false
	w.removeWaiter(wt)
	if asking {
		for _, k := range wt.keys {
			w.markReady(k)
		}
		w.serveReady()
	}
}
