package server

import "github.com/moond-db/moond/resp"

// A txn that may write on a shard that refuses writes (MISCONF: its WAL
// cannot take records, or it is poisoned) is refused as a whole, as Redis
// refuses the whole MSET or EXEC, rather than written on the other shards
// only: such a part would never commit (the refusing shard logs no END),
// so it would vanish at the next boot after clients had read it.
//
// Each shard says at its grant whether it refuses writes (a group that
// may write asks), so by the time the group holds every shard the
// coordinator knows. The steps of a refused txn are not sent: each
// answers the refusing shard's MISCONF text, and its shards are let go.
// This covers the txns whose steps are all known before the hold (MSET,
// DEL, an EXEC without gathered commands or watches: txn_early.go), and
// those whose steps are decided once held that say how to answer a
// refusal (onRefused: MSETNX, EXEC with watches or gathered commands,
// gathered writes such as RENAME or SUNIONSTORE across shards, BLMOVE,
// MIGRATE), which then run no step at all; the
// early steps that go with the last hold request are kept back for a txn
// an earlier shard refused, and run, and fail, on the last shard when that
// one refuses. A step on a shard that refuses writes logs nothing of its
// part, not even its END, and answers MISCONF at once (runStep); a shard
// that starts refusing after its grant so refuses its own step only.

// refuses reports whether shard w refuses writes now.
func (w *worker) refuses() bool { return w.sh != nil && w.sh.RefusesWrites() }

// refusal is, on shard w as it grants g its hold, the MISCONF text of w
// when g may write and w refuses writes, else "".
func (w *worker) refusal(g *txnGroup) string {
	if !g.mayWrite || !w.refuses() {
		return ""
	}
	return w.sh.Misconf()
}

// refusedBy returns the MISCONF text of a shard that refused t's writes
// at its grant, "" when none did or t does not write there.
func (t *txn) refusedBy() string {
	if !t.writes || len(t.g.refused) == 0 {
		return ""
	}
	for _, s := range t.shards {
		if msg, ok := t.g.refused[s]; ok && t.writesOn(s) {
			return msg
		}
	}
	return ""
}

// refuse answers every early step of t not sent yet with msg and lets
// their shards go; it reports false, doing nothing, for a txn whose steps
// are not all known yet (its onHeld decides them, and runs as before).
func (t *txn) refuse(msg string) bool {
	if len(t.early) == 0 {
		return false
	}
	e := resp.Writer{Proto: t.early[0].proto}
	e.Error(msg) // counted in errorstats with the reply it goes into
	early := t.early
	t.early = nil
	for i := range early {
		st := &early[i]
		if st.sent {
			continue // it runs on the last shard, which refuses too
		}
		st.done(e.Buf)
		t.release(st.shard)
	}
	return true
}

// refuseWhole lets every shard of t go without a step and answers t's
// client with msg through onRefused; it reports false, doing nothing, for
// a txn without onRefused (its onHeld runs, and each step refuses itself).
func (t *txn) refuseWhole(msg string) bool {
	if t.onRefused == nil {
		return false
	}
	for _, s := range t.shards {
		t.release(s)
	}
	t.onRefused(msg)
	return true
}

// errorReply is msg as an error reply in protocol proto, for a txn's
// client that is answered with an error as a whole (onRefused).
func errorReply(proto int, msg string) []byte {
	e := resp.Writer{Proto: proto}
	e.Error(msg)
	return e.Buf
}
