package server

import (
	"strings"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// The connection's side of a blocking command (see block.go): it runs the
// command on its keys' shard, stops running its input until the reply
// comes, and cancels the wait when it closes.

// runBlocking runs a blocking command, whose keys are at pos in args: on
// their shard when they share one (block.go), across shards when they do
// not (block_multi.go), BLMOVE and BRPOPLPUSH between shards as a move
// that runs gathered (block_move.go).
func (c *conn) runBlocking(spec *keyspace.CommandSpec, args [][]byte, pos []int) {
	if len(pos) == 0 {
		// No keys (BLMPOP 0 0 ...): its arguments are refused here.
		msg := spec.Block.CheckArgs(args)
		if msg == "" {
			msg = "ERR syntax error" // a command with no key cannot wait
		}
		c.errorReply(msg)
		return
	}
	home := c.w.srv.shardOf(args[pos[0]])
	for _, p := range pos[1:] {
		if c.w.srv.shardOf(args[p]) == home {
			continue
		}
		// The key shards never run it whole: its arguments are checked
		// here, as Redis checks them before it looks at the keys.
		if msg := spec.Block.CheckArgs(args); msg != "" {
			c.errorReply(msg)
			return
		}
		var waitBuf [16]int
		if len(spec.Block.WaitKeys(args, waitBuf[:0])) != len(pos) {
			// BLMOVE and BRPOPLPUSH write a key they do not wait on.
			c.blockMoveAcross(spec, copyArgs(args), c.newPending(1, nil), moveDeadline(spec, args))
			return
		}
		c.blockAcross(spec, args)
		return
	}
	if home != c.w.id {
		reply := c.newPending(1, nil)
		c.blockWait = reply
		c.w.queueRemote(home, batchItem{conn: c, reply: reply, db: c.client.DB, proto: c.out.Proto, args: copyArgs(args), block: spec})
		return
	}
	// The connection's own client runs it (a copy would escape to the
	// heap): WouldBlock is cleared before and after.
	c.client.WouldBlock = false
	if c.queue.empty() {
		// Served at once, its reply goes straight to the output, as
		// execLocalSpec's; blocked, it replied nothing.
		start := len(c.out.Buf)
		lsn := c.w.exec(&c.client, spec, args, &c.out)
		wouldBlock := c.client.WouldBlock
		c.client.WouldBlock = false
		if !wouldBlock {
			c.noteWrite(lsn)
			c.w.noteReply(c.out.Buf[start:])
			return
		}
		c.block(spec, args)
		return
	}
	out := &c.w.scratch
	out.Reset()
	out.Proto = c.out.Proto
	lsn := c.w.exec(&c.client, spec, args, out)
	wouldBlock := c.client.WouldBlock
	c.client.WouldBlock = false
	if !wouldBlock {
		c.noteWrite(lsn)
		reply := c.newPending(1, nil)
		reply.fill(0, append([]byte(nil), out.Buf...))
		c.w.noteReply(reply.data)
		c.queue.popReady(&c.out)
		return
	}
	c.block(spec, args)
}

// block makes the wait of a blocking command that found no data on this
// connection's shard, which holds its keys: its reply is pending, and the
// connection runs none of its later input until the reply comes.
func (c *conn) block(spec *keyspace.CommandSpec, args [][]byte) {
	reply := c.newPending(1, nil)
	c.blockWait = reply
	c.setBlocked(c.w.blockOnArgs(c, reply, c.w, spec, args, false, c.client.DB, c.out.Proto))
}

// setBlocked records that the connection's blocking command waits in b.
func (c *conn) setBlocked(b *blocked) {
	c.blocked = b
	c.w.blockedClients++
	// b's spec and arguments never change: read here, off b's owner.
	if ms, _ := keyspace.ParseBlockTimeout(b.spec.Block.Timeout(b.args)); ms > 0 {
		c.blockedTimed = true
		c.w.timedBlocked++
	}
}

// clearBlocked records that the connection no longer waits.
func (c *conn) clearBlocked() {
	c.blocked = nil
	c.w.blockedClients--
	if c.blockedTimed {
		c.blockedTimed = false
		c.w.timedBlocked--
	}
}

// blockedReply runs on b's home shard with the reply that ended b's wait:
// the connection sends it and goes on with its input.
func (w *worker) blockedReply(b *blocked, reply []byte) {
	c := b.conn
	if c.state == connClosed {
		return // the wait was cancelled, or the reply crossed the close
	}
	if b.woken {
		w.wakeMove(b)
		return
	}
	if c.blocked == b {
		c.clearBlocked()
	}
	c.blockWait = nil
	b.reply.fill(0, reply)
	w.noteReply(reply)
	c.delivered()
}

// toOwner runs f on b's owner: at once when that is this shard, else as a
// message in order with this shard's others there.
func (w *worker) toOwner(b *blocked, f func()) {
	if b.owner == w {
		f()
		return
	}
	w.send(b.owner, f)
}

// parked is called on the connection's shard when the command it sent to
// another shard blocked there, as b.
func (c *conn) parked(b *blocked) {
	if b.reply.ready() {
		// Its reply came first: the batch that says it blocked waited for
		// the WAL, the timeout's reply did not.
		return
	}
	if c.state == connClosed {
		c.w.toOwner(b, func() { b.owner.cancelBlocked(b) })
		return
	}
	c.setBlocked(b)
}

// flags is CLIENT LIST's flags for the connection.
func (c *conn) flags() string {
	f := ""
	if c.replMaster {
		f += "M"
	}
	if c.subscribed() {
		f += "P"
	}
	if c.multi != nil {
		f += "x"
	}
	if c.blocked != nil || c.pauseHeld {
		f += "b"
	}
	if t := c.track; t != nil {
		f += "t"
		if t.broken {
			f += "R"
		}
		if t.bcast {
			f += "B"
		}
	}
	if c.noEvict {
		f += "e"
	}
	if f == "" {
		return "N"
	}
	return f
}

// clientUnblock is CLIENT UNBLOCK id [TIMEOUT|ERROR]: the client's wait,
// if it has one, ends now with the timeout's reply or the UNBLOCKED error.
// The client may be on any shard and its wait owned by yet another, so
// the reply (1 when it was unblocked) comes back once each shard looked.
func clientUnblock(c *conn, args [][]byte) {
	withError := false
	if len(args) == 4 {
		switch strings.ToLower(string(args[3])) {
		case "timeout":
		case "error":
			withError = true
		default:
			c.errorReply("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	id, ok := keyspace.ParseInt(args[2])
	if !ok {
		c.errorReply("ERR value is not an integer or out of range")
		return
	}
	n := c.w.srv.nshards
	reply := c.newPending(n, func(parts [][]byte, w *resp.Writer) {
		sum := 0
		for _, p := range parts {
			sum += len(p)
		}
		w.Int(int64(sum))
	})
	from := c.w
	for s := 0; s < n; s++ {
		part := s
		// done runs on the shard that decided, cur: one byte per client
		// unblocked.
		done := func(cur *worker, unblocked bool) {
			var b []byte
			if unblocked {
				b = []byte{1}
			}
			cur.send(from, func() {
				if c.state != connClosed {
					reply.fill(part, b)
					c.delivered()
				}
			})
		}
		target := from.srv.workers[s]
		from.send(target, func() { target.unblockConn(id, withError, done) })
	}
}

// unblockConn ends the wait of this shard's connection id, if it waits,
// on the wait's owner, which calls done.
func (w *worker) unblockConn(id int64, withError bool, done func(cur *worker, unblocked bool)) {
	cc := w.conns[id]
	if cc == nil || cc.blocked == nil {
		done(w, false)
		return
	}
	b := cc.blocked
	w.toOwner(b, func() { done(b.owner, b.owner.unblock(b, withError)) })
}
