package server

import (
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/runtime"
)

// Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN,
// BZPOPMAX, BZMPOP) wait here, never on a shard's thread.
//
// A blocking command runs on its keys' shard like any other; when none of
// its keys holds data the keyspace replies nothing and sets
// Client.WouldBlock, and the command becomes a *blocked: registered on that
// shard under each key it waits on, in a FIFO per key. That shard, the
// blocked command's owner, alone decides what becomes of it, so it is
// served, times out or is cancelled exactly once:
//
//   - After every write command the owner runs (w.exec), the keys it wrote
//     that have waiters are ready; before the next command runs, each
//     ready key serves its waiters in the order they blocked, each by
//     running its command again for that key alone (BlockSpec.ServeArgs,
//     Client.Serving), until the key has no more data or waiters.
//   - A timer on the owner's loop answers the timeout's null reply.
//   - The connection's shard (home) asks the owner to cancel it when the
//     connection closes, and CLIENT UNBLOCK asks it to answer at once.
//
// The reply leaves the owner once the WAL holds the pop (the
// acknowledgement rule, as for a batch) and fills the connection's pending
// reply on home. While a connection waits it runs none of its later
// input, as in Redis, but keeps a read posted so that a client that hangs
// up is noticed and its wait cancelled (conn.watch).

// waitKey is a key in a logical database, as clients name it.
type waitKey struct {
	db  int
	key string
}

// blockState is a blocked command's state; only its owner changes it.
type blockState uint8

const (
	blockWaiting blockState = iota
	blockDone               // served, timed out, unblocked or cancelled
)

// blocked is one client's blocking command waiting for data.
type blocked struct {
	// Fixed at creation.
	conn  *conn // touched only on home's thread
	reply *pendingReply
	home  *worker
	owner *worker
	spec  *keyspace.CommandSpec
	args  [][]byte // owned copy
	db    int
	proto int
	keys  []waitKey // the distinct keys it waits on, in order

	// The owner's.
	state blockState
	timer *runtime.Timer
}

// waitQueue is a key's waiters, first blocked first.
type waitQueue []*blocked

// blockOn registers cl's blocking command, which found no data, on this
// (the owner) shard: args are owned. It arms the timeout.
func (w *worker) blockOn(c *conn, reply *pendingReply, home *worker, spec *keyspace.CommandSpec, args [][]byte, db, proto int) *blocked {
	b := &blocked{conn: c, reply: reply, home: home, owner: w, spec: spec, args: args, db: db, proto: proto}
	var posBuf [16]int
	for _, p := range spec.Block.WaitKeys(args, posBuf[:0]) {
		k := waitKey{db, string(args[p])}
		if !containsKey(b.keys, k) {
			b.keys = append(b.keys, k)
		}
	}
	if w.waits == nil {
		w.waits = make(map[waitKey]waitQueue)
	}
	for _, k := range b.keys {
		w.waits[k] = append(w.waits[k], b)
	}
	if ms, _ := keyspace.ParseBlockTimeout(spec.Block.Timeout(args), 0); ms > 0 {
		b.timer = w.loop.AfterFunc(time.Duration(ms)*time.Millisecond, func() { w.timeoutBlocked(b) })
	}
	w.waitingCmds++
	return b
}

func containsKey(keys []waitKey, k waitKey) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// unregister removes b from the queues of its keys.
func (w *worker) unregister(b *blocked) {
	for _, k := range b.keys {
		q := w.waits[k]
		for i, x := range q {
			if x == b {
				q = append(q[:i], q[i+1:]...)
				break
			}
		}
		if len(q) == 0 {
			delete(w.waits, k)
		} else {
			w.waits[k] = q
		}
	}
	w.waitingCmds--
}

// finishBlocked ends b's wait with reply, once the WAL holds record lsn
// (0: none), and sends the reply to b's connection.
func (w *worker) finishBlocked(b *blocked, reply []byte, lsn uint64) {
	if b.state != blockWaiting {
		panic("server: a blocked command finished twice")
	}
	b.state = blockDone
	w.unregister(b)
	if b.timer != nil {
		b.timer.Stop()
	}
	deliver := func() { w.send(b.home, func() { b.home.blockedReply(b, reply) }) }
	if lsn == 0 {
		deliver()
		return
	}
	w.sh.WhenDurable(lsn, deliver, func() {
		out := resp.Writer{Proto: b.proto}
		out.Error(w.sh.Misconf())
		reply = out.Buf
		deliver()
	})
}

// timeoutBlocked answers b's timeout, if it still waits.
func (w *worker) timeoutBlocked(b *blocked) {
	b.timer = nil
	if b.state == blockWaiting {
		w.finishBlocked(b, timeoutReply(b), 0)
	}
}

// timeoutReply is the reply of b's command on timeout.
func timeoutReply(b *blocked) []byte {
	out := resp.Writer{Proto: b.proto}
	if b.spec.Block.NullBulk {
		out.Null()
	} else {
		out.NullArray()
	}
	return out.Buf
}

// cancelBlocked drops b, if it still waits: its connection closed.
func (w *worker) cancelBlocked(b *blocked) {
	if b.state != blockWaiting {
		return
	}
	b.state = blockDone
	w.unregister(b)
	if b.timer != nil {
		b.timer.Stop()
	}
}

// unblock is CLIENT UNBLOCK on the owner: b answers the timeout's reply
// (or the UNBLOCKED error) at once. It reports whether b was waiting.
func (w *worker) unblock(b *blocked, withError bool) bool {
	if b.state != blockWaiting {
		return false
	}
	reply := timeoutReply(b)
	if withError {
		out := resp.Writer{Proto: b.proto}
		out.Error("UNBLOCKED client unblocked via CLIENT UNBLOCK")
		reply = out.Buf
	}
	w.finishBlocked(b, reply, 0)
	return true
}

// exec runs a data command on this shard and returns the LSN of its last
// WAL record (0 for none). After a write, the keys it wrote that blocked
// commands wait on serve them, before anything else runs.
func (w *worker) exec(cl *keyspace.Client, spec *keyspace.CommandSpec, args [][]byte, out *resp.Writer) uint64 {
	lsn := w.sh.Exec(cl, spec, args, out)
	if len(w.waits) > 0 && spec.Writes() {
		w.signal(cl.DB, spec, args)
		w.serveReady()
	}
	return lsn
}

// signal marks the keys of a write command that have waiters ready.
// Commands that write keys other than their arguments (MOVE and COPY into
// another database, SWAPDB) make every waited-on key ready.
func (w *worker) signal(db int, spec *keyspace.CommandSpec, args [][]byte) {
	switch spec.Name {
	case "move", "copy", "swapdb":
		for k := range w.waits {
			w.markReady(k)
		}
		return
	}
	var posBuf [16]int
	for _, p := range keyPositions(spec, args, posBuf[:0]) {
		if k := (waitKey{db, string(args[p])}); w.waits[k] != nil {
			w.markReady(k)
		}
	}
}

func (w *worker) markReady(k waitKey) {
	if !containsKey(w.ready, k) {
		w.ready = append(w.ready, k)
	}
}

// serveReady serves the waiters of every ready key, in the order the keys
// became ready; serving one (BLMOVE) may make another key ready.
func (w *worker) serveReady() {
	if w.serving {
		return
	}
	w.serving = true
	for len(w.ready) > 0 {
		k := w.ready[0]
		w.ready = w.ready[1:]
		w.serveKey(k)
	}
	w.ready = w.ready[:0]
	w.serving = false
}

// serveKey serves k's waiters, first blocked first, while k has data.
func (w *worker) serveKey(k waitKey) {
	for {
		q := w.waits[k]
		if len(q) == 0 {
			return
		}
		b := q[0]
		pos := b.keyPos(k.key)
		cl := keyspace.Client{DB: b.db, Serving: true}
		out := resp.Writer{Proto: b.proto}
		lsn := w.sh.Exec(&cl, b.spec, b.spec.Block.ServeArgs(b.args, pos), &out)
		if cl.WouldBlock {
			return // k holds no data of the kind waited for
		}
		// A served BLMOVE wrote its destination: a key that may have
		// waiters of its own.
		if len(w.waits) > 0 {
			w.signal(b.db, b.spec, b.args)
		}
		w.finishBlocked(b, out.Buf, lsn)
	}
}

// keyPos is the index in b.args of key, one of the keys b waits on.
func (b *blocked) keyPos(key string) int {
	var posBuf [16]int
	for _, p := range b.spec.Block.WaitKeys(b.args, posBuf[:0]) {
		if string(b.args[p]) == key {
			return p
		}
	}
	panic("server: a blocked command served from a key it does not wait on")
}
