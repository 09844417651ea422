package server

import (
	"github.com/moond-db/moond/resp"
)

// fanoutExec runs the same data command on every shard and merges the
// replies (KEYS, DBSIZE, FLUSHALL, ...), as one txn over every shard
// (txn.go): no other command sees some shards flushed and others not.
func (c *conn) fanoutExec(args [][]byte, merge func(parts [][]byte, w *resp.Writer)) {
	n := c.w.srv.nshards
	if n == 1 {
		c.execLocal(args)
		return
	}
	reply := c.newPending(n, merge)
	owned := copyArgs(args)
	shards := make([]int, n)
	subs := make([][][]byte, n)
	for s := range n {
		shards[s], subs[s] = s, owned
	}
	c.runParts(reply, shards, subs)
}

// fanoutCollect runs collect(w, i) on every shard i (on that shard's
// thread), then finish on this connection's shard once all have run. collect
// may store into memory indexed by i: the mailbox hand-offs order those
// writes before finish reads them.
func (c *conn) fanoutCollect(collect func(w *worker, i int), finish func(w *resp.Writer)) {
	n := c.w.srv.nshards
	reply := c.newPending(n, func(_ [][]byte, w *resp.Writer) { finish(w) })
	for s := 0; s < n; s++ {
		i := s
		if s == c.w.id {
			collect(c.w, i)
			reply.fill(i, nil)
			continue
		}
		c.w.queueRemote(s, batchItem{conn: c, reply: reply, part: i, proto: c.out.Proto,
			fn: func(w *worker, _ *resp.Writer) { collect(w, i) }})
	}
	if reply.ready() {
		c.queue.popReady(&c.out)
	}
}
