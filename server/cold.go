package server

import (
	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// The cold tier on the command path (keyspace/cold.go, shard/cold.go).
// A command whose keys' values are cold and needed waits while the shard
// reads their pages on the ring and goes on serving others:
//
//   - a connection's command on its own shard parks the connection as a
//     blocking command does (blockWait: its later input waits behind it),
//     then runs once the values are in, and the input behind it runs on;
//     unlike a blocking command's, the earlier replies stay (coldWait):
//     the wait ends without the client, and the pipeline's replies leave
//     together, in one send rather than one for each value read;
//   - a batch from another shard waits whole, and the batches that come
//     after it wait behind it (coldQ), so that a connection's commands on
//     this shard keep their order.
//
// Whatever is still cold when the command runs (a read that failed, a
// value made cold again meanwhile) is read synchronously by the shard's
// Exec, which answers the error of a read that fails.

// parkCold parks the connection's command when values it needs are cold,
// and reports whether it did; the command runs when they are read.
func (c *conn) parkCold(spec *keyspace.CommandSpec, args [][]byte) bool {
	var buf [4]keyspace.ColdKey
	keys := c.w.sh.ColdKeys(&c.client, spec, args, buf[:0])
	if len(keys) == 0 {
		return false
	}
	var reply *pendingReply
	cl := c.client
	if c.w.sh.WarmKeys(keys, func() { c.w.runWarmed(c, reply, spec, args, cl) }) {
		return false // every page was cached: the values are in, it runs now
	}
	// The callback runs later, never inside WarmKeys: it sees these.
	args = copyArgs(args)
	reply = c.newPending(1, nil)
	c.blockWait = reply
	c.coldWait = true
	return true
}

// runWarmed runs a parked command once its values were read, and lets its
// connection go on with its input.
func (w *worker) runWarmed(c *conn, reply *pendingReply, spec *keyspace.CommandSpec, args [][]byte, cl keyspace.Client) {
	if !w.whenFree(func() { w.runWarmed(c, reply, spec, args, cl) }) {
		return // a txn holds the shard: after its release
	}
	out := resp.Writer{Proto: reply.proto}
	lsn := w.exec(&cl, spec, args, &out)
	if !spec.Writes() && w.mayEvict() {
		w.enforceMemory() // the values read back count again
	}
	if c.state == connClosed {
		return
	}
	c.noteWrite(lsn)
	c.blockWait, c.coldWait = nil, false
	reply.fill(0, out.Buf)
	if w.noteReply(reply.data) {
		w.noteFailed(spec, nil)
	}
	if c.unprocessed && c.state == connRunning {
		// Nothing was sent while it waited: the rest of the pipeline
		// runs first, and its replies leave with these. The replies
		// move out of the queue first, so that the commands behind
		// write theirs in place rather than each in a pending reply.
		c.queue.popReady(&c.out)
		c.process()
		return
	}
	c.delivered()
}

// waitCold reports whether batch b waits: for the batch ahead of it, or
// for its own cold values, whose reads it starts. A batch let go runs.
func (w *worker) waitCold(b *batch) bool {
	if b.warmed {
		return false
	}
	if len(w.coldQ) > 0 {
		w.coldQ = append(w.coldQ, b)
		return true
	}
	if w.warmBatch(b) {
		w.coldQ = append(w.coldQ, b)
		return true
	}
	return false
}

// warmBatch starts the reads of the cold values b's commands need and
// reports whether it must wait for them (coldDone then runs it).
func (w *worker) warmBatch(b *batch) bool {
	if w.ks == nil || !w.ks.HasCold() { // nil: the shard is loading
		return false
	}
	var keys []keyspace.ColdKey
	for i := range b.items {
		it := &b.items[i]
		if it.fn != nil {
			continue
		}
		spec := it.itemSpec()
		cl := keyspace.Client{DB: it.db}
		keys = w.sh.ColdKeys(&cl, spec, it.args, keys)
	}
	return len(keys) > 0 && !w.sh.WarmKeys(keys, w.coldDone)
}

// coldDone runs the batch whose values were read, then the batches behind
// it until one has to wait for its own. Under a txn's hold it waits for the
// release, behind the work that came meanwhile: a batch among that work
// finds the queue not empty and goes behind the ones here, in order.
func (w *worker) coldDone() {
	if !w.whenFree(w.coldDone) {
		return
	}
	b := w.coldQ[0]
	for {
		w.coldQ[0] = nil
		w.coldQ = w.coldQ[1:]
		b.warmed = true
		w.runBatch(b)
		if len(w.coldQ) == 0 {
			w.coldQ = nil
			return
		}
		if b = w.coldQ[0]; w.warmBatch(b) {
			return
		}
	}
}
