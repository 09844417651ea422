package server

import (
	"errors"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/runtime"
)

// remoteFn runs on the target shard's loop and writes one reply.
type remoteFn func(w *worker, out *resp.Writer)

// batchItem is one command (or one part of a split command) for another shard.
type batchItem struct {
	conn  *conn
	reply *pendingReply
	part  int
	db    int
	proto int
	args  [][]byte // owned copies: the connection's buffer is reused
	fn    remoteFn // set for internal requests (INFO, CLIENT LIST, ...) instead of args
	// block is the spec of a blocking command: when it finds no data it
	// waits on the target shard (block.go) and answers later, not in
	// the batch's reply.
	block *keyspace.CommandSpec
	// spec is the data command's spec when its name does not give it: a
	// command no client may send (MOOND.LOAD); nil for Lookup(args[0]).
	spec *keyspace.CommandSpec
	// failed is set by the target shard when the data command answered an
	// error: the command, for the connection's shard to count it.
	failed *keyspace.CommandSpec
	// timed is the command, when the target shard times it for the
	// connection (a data command routed here alone); slow is the slow log
	// entry it made, for the connection's shard to complete and keep.
	timed *command
	slow  *slowEntry
}

// itemSpec is the spec of a data command item: block's, spec's, or its
// name's.
func (it *batchItem) itemSpec() *keyspace.CommandSpec {
	switch {
	case it.block != nil:
		return it.block
	case it.spec != nil:
		return it.spec
	}
	return keyspace.Lookup(it.args[0])
}

// batch carries every item one loop iteration sends to one target shard:
// one mailbox message there, one message back.
type batch struct {
	from  *worker
	items []batchItem
	// Filled on the target: all replies in one buffer, item i ends at ends[i].
	buf  []byte
	ends []int
	// parked[i] is item i's wait when it blocked (nil: no item did).
	parked []*blocked
	// warmed: its cold values were read (cold.go); it runs now.
	warmed bool
}

// queueRemote adds an item for shard target to this iteration's batch.
func (w *worker) queueRemote(target int, it batchItem) {
	b := w.outgoing[target]
	if b == nil {
		b = &batch{from: w}
		w.outgoing[target] = b
		w.outTargets = append(w.outTargets, target)
	}
	b.items = append(b.items, it)
}

// postBatches sends this iteration's batches, one message per target
// shard; it runs before the loop waits (runtime.Loop.BeforeWait).
func (w *worker) postBatches() {
	for _, t := range w.outTargets {
		b := w.outgoing[t]
		w.outgoing[t] = nil
		target := w.srv.workers[t]
		w.send(target, func() { target.runBatch(b) })
	}
	w.outTargets = w.outTargets[:0]
}

// runBatch executes a batch on this (the target) shard and posts the replies
// back to the shard that owns the connections.
func (w *worker) runBatch(b *batch) {
	if !w.whenFree(func() { w.runBatch(b) }) {
		return // a txn holds this shard (txn.go)
	}
	if !w.closing && w.waitCold(b) {
		return // its cold values are read first (cold.go)
	}
	if w.closing {
		b.ends = make([]int, len(b.items))
		b.refuse(shutdownError)
		from := b.from
		w.send(from, func() { from.deliverBatch(b) })
		return
	}
	out := resp.Writer{}
	b.ends = make([]int, len(b.items))
	var cl keyspace.Client
	var maxLSN uint64
	start := 0 // where the item's reply begins in out
	t := monotonicNanos()
	for i := range b.items {
		it := &b.items[i]
		out.Proto = it.proto
		if it.fn != nil {
			it.fn(w, &out)
		} else if it.block != nil {
			cl = keyspace.Client{DB: it.db, ID: it.conn.id}
			maxLSN = max(maxLSN, w.exec(&cl, it.block, it.args, &out))
			if cl.WouldBlock {
				if b.parked == nil {
					b.parked = make([]*blocked, len(b.items))
				}
				b.parked[i] = w.blockOn(it.conn, it.reply, b.from, it.block, it.args, it.db, it.proto)
			}
		} else {
			cl = keyspace.Client{DB: it.db, ID: it.conn.id}
			maxLSN = max(maxLSN, w.execData(&cl, it.itemSpec(), it.args, &out))
		}
		if it.fn == nil && len(out.Buf) > start && out.Buf[start] == '-' {
			// An error reply: deliverBatch counts the command as failed
			// (only errors pay for the lookup).
			it.failed = it.itemSpec()
		}
		b.ends[i] = len(out.Buf)
		start = len(out.Buf)
		end := monotonicNanos()
		if it.timed != nil {
			it.slow = w.recordCmd(nil, it.timed, it.args, nil, end-t)
		}
		t = end
		it.args = nil
	}
	b.buf = out.Buf
	if w.track.due() {
		w.track.flush() // ahead of the replies: the home queues them behind
	}
	from := b.from
	post := func() { w.send(from, func() { from.deliverBatch(b) }) }
	if maxLSN == 0 && w.sh != nil {
		maxLSN = w.sh.ReadBarrier() // reads see only what the WAL holds
	}
	if maxLSN == 0 {
		post()
		return
	}
	// The replies go back only once this shard's WAL holds the batch's
	// writes (durably, under appendfsync always).
	w.sh.WhenDurable(maxLSN, post, func() {
		b.refuse(w.sh.Misconf())
		post()
	})
}

// refuse replaces every reply of an executed batch with the error msg: its
// writes can never be made durable, so none of it may be acknowledged.
func (b *batch) refuse(msg string) {
	out := resp.Writer{}
	for i := range b.items {
		out.Proto = b.items[i].proto
		out.Error(msg)
		b.ends[i] = len(out.Buf)
	}
	b.buf = out.Buf
}

// deliverBatch fills the pending replies a batch answered and lets their
// connections send what became ready.
func (w *worker) deliverBatch(b *batch) {
	start := 0
	var last *conn
	for i := range b.items {
		it := &b.items[i]
		end := b.ends[i]
		switch {
		case b.parked != nil && b.parked[i] != nil:
			it.conn.parked(b.parked[i])
		case it.conn.state != connClosed:
			if it.slow != nil {
				w.keepSlow(it.conn, it.slow)
			}
			if it.block != nil {
				it.conn.blockWait = nil
			}
			if it.reply.merge == nil && it.fn == nil && end > start && b.buf[start] == '-' {
				w.noteRemoteError(it, b.buf[start:end])
			}
			it.reply.fill(it.part, b.buf[start:end:end])
		}
		start = end
		if it.conn != last {
			if last != nil {
				last.delivered()
			}
			last = it.conn
		}
	}
	if last != nil {
		last.delivered()
	}
}

// noteRemoteError counts, on the connection's shard as for a command run
// here, the error reply of a data command another shard ran for it alone
// (errorstats; failed_calls when the command itself failed, not when the
// batch was refused whole). Parts of split commands are left to their
// merge.
func (w *worker) noteRemoteError(it *batchItem, reply []byte) {
	w.noteReply(reply)
	if it.failed != nil {
		w.noteFailed(it.failed, it.timed)
	}
}

// send posts f to target's loop, keeping the order of everything this
// worker sends there. A full mailbox is back-pressure: the message waits in
// a local queue and is retried shortly, never dropped.
func (w *worker) send(target *worker, f func()) {
	q := &w.blocked[target.id]
	if len(*q) == 0 {
		err := target.loop.Post(f)
		if err == nil {
			return
		}
		if !errors.Is(err, runtime.ErrMailboxFull) {
			return // the target stopped: shutdown drops the message
		}
	}
	*q = append(*q, f)
	if w.retryTimer == nil {
		w.retryTimer = w.loop.AfterFunc(100*time.Microsecond, w.retryBlocked)
	}
}

func (w *worker) retryBlocked() {
	w.retryTimer = nil
	for t := range w.blocked {
		q := w.blocked[t]
		n := 0
		for n < len(q) {
			err := w.srv.workers[t].loop.Post(q[n])
			if errors.Is(err, runtime.ErrMailboxFull) {
				break
			}
			n++
		}
		w.blocked[t] = append(q[:0], q[n:]...)
		if len(w.blocked[t]) > 0 && w.retryTimer == nil {
			w.retryTimer = w.loop.AfterFunc(100*time.Microsecond, w.retryBlocked)
		}
	}
}

// copyArgs copies a command's arguments into one allocation.
func copyArgs(args [][]byte) [][]byte {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(args))
	for i, a := range args {
		buf = append(buf, a...)
		out[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	return out
}
