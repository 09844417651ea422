package server

import (
	"strconv"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// BLMOVE and BRPOPLPUSH whose source and destination live on different
// shards. The move itself runs gathered (txn_gather.go): atomic, on both
// shards at once. When the source is empty, the command waits on the
// source's shard with a waiter that does not pop (blocked.wake): data in
// the source wakes it, and the connection runs the move again, gathered,
// blocking anew for what is left of its timeout when another client took
// the data first. The waiter is registered in the txn that found the
// source empty, so that no push between the look and the wait is missed.
// Unlike a wait on one shard, a woken client that loses the race waits
// again behind the clients that blocked after it.

// blockMoveAcross runs a cross-shard BLMOVE or BRPOPLPUSH (args owned)
// whose reply is reply; deadline is when its timeout ends (zero: never).
func (c *conn) blockMoveAcross(spec *keyspace.CommandSpec, args [][]byte, reply *pendingReply, deadline time.Time) {
	c.blockWait = reply
	var posBuf [16]int
	pos := keyPositions(spec, args, posBuf[:0])
	keys := c.gatherKeys(spec, args, pos, c.client.DB)
	var shards []int
	for _, k := range keys {
		shards = append(shards, k.shard)
	}
	src := c.w.srv.shardOf(args[pos[0]])
	proto, db, home := c.out.Proto, c.client.DB, c.w
	done := func(b []byte) {
		reply.fill(0, b)
		c.txnReplied(reply)
	}
	t := c.w.beginTxnAlone(shards, func(t *txn) {
		gatherExport(t, keys, proto, func() {
			c.gatheredRun(t, spec, args, db, keys, proto, false, func(r []byte) {
				if !isNullReply(r) { // moved: each shard's part ends
					t.endParts(proto, func() { done(r) })
					return
				}
				t.writes = false // nothing moved, nothing written
				if !deadline.IsZero() && !time.Now().Before(deadline) {
					for _, s := range t.shards {
						t.release(s)
					}
					done(r) // the timeout's reply
					return
				}
				wargs := withTimeout(spec, args, deadline)
				var b *blocked
				for _, s := range t.shards {
					if s != src {
						t.release(s)
					}
				}
				t.step(src, proto, func(w *worker, _ *resp.Writer) uint64 {
					b = w.blockOn(c, reply, home, spec, wargs, db, proto)
					b.wake, b.deadline = true, deadline
					return 0
				}, true, func([]byte) {
					if c.state == connClosed {
						c.w.toOwner(b, func() { b.owner.cancelBlocked(b) })
						return
					}
					c.setBlocked(b)
				})
			})
		})
	})
	t.writes = true
	t.onRefused = func(msg string) { done(errorReply(proto, msg)) }
}

// isNullReply reports whether r is a null (or null array) reply: a
// blocking command's reply when it would block.
func isNullReply(r []byte) bool {
	return string(r) == "*-1\r\n" || string(r) == "$-1\r\n" || string(r) == "_\r\n"
}

// withTimeout returns args with the timeout argument set to what is left
// until deadline (0: none).
func withTimeout(spec *keyspace.CommandSpec, args [][]byte, deadline time.Time) [][]byte {
	out := append([][]byte(nil), args...)
	i := spec.Block.TimeoutArg
	if i < 0 {
		i += len(args)
	}
	left := 0.0
	if !deadline.IsZero() {
		left = max(time.Until(deadline).Seconds(), 0.001)
	}
	out[i] = strconv.AppendFloat(nil, left, 'f', 3, 64)
	return out
}

// wakeMove runs on the connection's shard when the source of its
// cross-shard move got data: the move runs again.
func (w *worker) wakeMove(b *blocked) {
	c := b.conn
	if c.state == connClosed {
		// Nobody moves the data: the source's next waiter may.
		k := waitKey{b.db, string(b.args[1])}
		w.toOwner(b, func() {
			if b.owner.waits[k] != nil {
				b.owner.markReady(k)
				if b.owner.holder == nil {
					b.owner.serveReady()
				}
			}
		})
		return
	}
	if c.blocked == b {
		c.clearBlocked()
	}
	c.blockMoveAcross(b.spec, b.args, b.reply, b.deadline)
}

// moveDeadline is when a blocking command's timeout ends (zero: never).
func moveDeadline(spec *keyspace.CommandSpec, args [][]byte) time.Time {
	ms, _ := keyspace.ParseBlockTimeout(spec.Block.Timeout(args))
	if ms <= 0 || ms > maxTimerMillis {
		return time.Time{}
	}
	return time.Now().Add(time.Duration(ms) * time.Millisecond)
}
