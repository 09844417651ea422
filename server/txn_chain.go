package server

// The chain of a group's txns that may write. A group holds the union of
// its txns' shards and runs their steps one txn after the other, without
// waiting between them for the WAL: on a shard two of them share, the
// later one's step runs on what the earlier one wrote before that is in
// every log. If a crash then kept the later txn and dropped the earlier,
// the later one's records (values computed from the earlier's) would
// stand without them: a transfer would be half there. So:
//   - the group's txns take consecutive txids, and each txn's ENDs name
//     the txid of the group's first txn that may write (txnlog's GROUP):
//     a boot commits a txn only when every txn of its group below it that
//     some log names committed too (txnlog.Decide);
//   - a txn closes (its replies go, its shards are let go) only once the
//     txn before it in the chain closed (closeParts), so none is
//     acknowledged, nor its part checkpointed, while one it may have read
//     can still be dropped.
// A txn that writes nothing is not waited for: it leaves no record a boot
// could keep. But it may read what a txn before it in the group wrote, so
// its replies wait for that txn to close (afterPrev): nobody sees a write a
// crash could still drop.

// takeIDs gives g's txns their txids, consecutive, once the group holds
// every shard (on w, the shard whose grant made it so), and links its txns
// that may write into the chain. It does nothing when they have them.
func (g *txnGroup) takeIDs(w *worker) {
	if len(g.txns) == 0 || g.txns[0].id != 0 {
		return
	}
	n := uint64(len(g.txns))
	first := w.srv.txnSeq.Add(n) - n + 1
	var prev *txn
	for i, t := range g.txns {
		t.id = first + uint64(i)
		if !t.writes {
			t.after = prev
			continue
		}
		if prev == nil {
			t.group = t.id
		} else {
			t.group, t.prev, prev.next = prev.group, prev, t
		}
		prev = t
	}
}

// afterPrev wraps done, a step's callback of a txn that writes nothing, so
// that it runs only once the group's last txn before it that may write
// closed (t.after): what t read of it is then in every log. Without such a
// txn it returns done as is.
func (t *txn) afterPrev(done func(reply []byte)) func(reply []byte) {
	a := t.after
	if a == nil {
		return done
	}
	return func(reply []byte) {
		if a.closed {
			done(reply)
			return
		}
		a.waiters = append(a.waiters, func() { done(reply) })
	}
}
