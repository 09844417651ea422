package server

import (
	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// Commands whose keys live on several shards, run as txns (txn.go).

// runParts runs subs[i] on shards[i] (each shard once) as one txn and
// fills reply's part i with its reply. The connection runs none of its
// later input until the last part came back, as it would after a command
// that runs on its own shard.
func (c *conn) runParts(reply *pendingReply, shards []int, subs [][][]byte) {
	db, proto := c.client.DB, c.out.Proto
	c.blockWait = reply
	t := c.w.beginTxn(shards, (*txn).runEarly)
	t.writes = keyspace.Lookup(subs[0][0]).Writes()
	for i, s := range shards {
		sub := subs[i]
		t.stepEarly(s, proto, func(w *worker, out *resp.Writer) uint64 {
			cl := keyspace.Client{DB: db}
			return w.execData(&cl, keyspace.Lookup(sub[0]), sub, out)
		}, true, func(r []byte) { c.partDone(reply, i, r) })
	}
}

// partDone fills part i of reply, the reply the connection waits for;
// with the last part the connection goes on.
func (c *conn) partDone(reply *pendingReply, i int, r []byte) {
	reply.fill(i, r)
	if reply.ready() {
		c.txnReplied(reply)
	}
}

// txnReplied lets the connection go on once reply, the reply of its txn,
// is complete.
func (c *conn) txnReplied(reply *pendingReply) {
	if c.blockWait == reply {
		c.blockWait = nil
	}
	c.w.noteReply(reply.data)
	c.delivered()
}

// msetnxAcross is MSETNX over keys of several shards: a txn that counts
// the keys that exist on each shard, then sets them all when none does,
// and answers 1, or releases the shards and answers 0.
func (c *conn) msetnxAcross(args [][]byte, pos []int) {
	order, subs, _ := c.splitParts(&splitter{pairs: true}, args, pos)
	exists := make([][][]byte, len(order))
	sets := make([][][]byte, len(order))
	for i, sub := range subs {
		e := [][]byte{[]byte("EXISTS")}
		for j := 1; j+1 < len(sub); j += 2 {
			e = append(e, sub[j])
		}
		exists[i] = copyArgs(e)
		sets[i] = copyArgs(append([][]byte{[]byte("MSET")}, sub[1:]...))
	}
	db, proto := c.client.DB, c.out.Proto
	reply := c.newPending(1, nil)
	c.blockWait = reply
	run := func(sub [][]byte) stepFunc {
		return func(w *worker, out *resp.Writer) uint64 {
			cl := keyspace.Client{DB: db}
			return w.execData(&cl, keyspace.Lookup(sub[0]), sub, out)
		}
	}
	finish := func(f func(w *resp.Writer)) {
		out := resp.Writer{Proto: proto}
		f(&out)
		reply.fill(0, out.Buf)
		c.txnReplied(reply)
	}
	t := c.w.beginTxnAlone(order, func(t *txn) {
		left, found := len(order), int64(0)
		var failed []byte
		for i, s := range order {
			t.readStep(s, proto, run(exists[i]), func(r []byte) {
				n, ok := parseIntReply(r)
				if !ok && failed == nil {
					failed = r
				}
				found += n
				if left--; left > 0 {
					return
				}
				if failed != nil || found > 0 {
					for _, s := range order {
						t.release(s)
					}
					finish(func(w *resp.Writer) {
						if failed != nil {
							w.Raw(failed)
						} else {
							w.Int(0)
						}
					})
					return
				}
				c.msetnxSet(t, order, sets, run, proto, finish)
			})
		}
	})
	t.writes = true
	t.onRefused = func(msg string) { finish(func(w *resp.Writer) { w.Error(msg) }) }
}

// msetnxSet is MSETNX's second round: every shard sets its keys, and the
// reply is 1, or the first shard's error.
func (c *conn) msetnxSet(t *txn, order []int, sets [][][]byte, run func([][]byte) stepFunc, proto int, finish func(func(*resp.Writer))) {
	left := len(order)
	var failed []byte
	for i, s := range order {
		t.step(s, proto, run(sets[i]), true, func(r []byte) {
			if len(r) > 0 && r[0] == '-' && failed == nil {
				failed = r
			}
			if left--; left > 0 {
				return
			}
			finish(func(w *resp.Writer) {
				if failed != nil {
					w.Raw(failed)
				} else {
					w.Int(1)
				}
			})
		})
	}
}
