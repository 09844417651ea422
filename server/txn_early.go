package server

// Early steps: a txn that knows its steps before it holds its shards
// (runParts: MSET, DEL, MGET, ... over keys of several shards; an EXEC
// without gathered commands or watches) hands them to its group. When the
// group asks for its last shard and that shard is not the coordinator's,
// the steps for that shard go with the request: the shard runs them as
// soon as it grants the hold, which is the group's lock point (so that is
// where the txns take their ids), and sends the grant back at once. The
// step there then costs no round trip of its own: for a txn over two
// shards coordinated on the lower one, one round trip instead of two.

// earlyStep is a step a txn knows before it is held.
type earlyStep struct {
	shard   int
	proto   int
	fn      stepFunc
	release bool
	done    func(reply []byte)
	sent    bool // handed to the group's last hold request
}

// stepEarly registers a step of t on shard s (see step), to run once t
// holds its shards: with the last hold's request, or by runEarly.
func (t *txn) stepEarly(s, proto int, fn stepFunc, release bool, done func(reply []byte)) {
	if t.early == nil {
		t.early = make([]earlyStep, 0, len(t.shards)) // a step per shard, mostly
	}
	t.early = append(t.early, earlyStep{shard: s, proto: proto, fn: fn, release: release, done: done})
}

// runEarly runs t's early steps that did not go with a hold request: t's
// onHeld when all its steps are early.
func (t *txn) runEarly() {
	for i := range t.early {
		if e := &t.early[i]; !e.sent {
			t.step(e.shard, e.proto, e.fn, e.release, e.done)
		}
	}
	t.early = nil
}

// earlyFor takes, on the coordinator, the early steps of g's txns on
// target, g's last shard, and returns their runs for target's thread.
func (g *txnGroup) earlyFor(target *worker) []func() {
	var runs []func()
	for _, t := range g.txns {
		if t.refusedBy() != "" {
			continue // refused as a whole once held (txn_refuse.go)
		}
		for i := range t.early {
			if e := &t.early[i]; e.shard == target.id && !e.sent {
				e.sent = true
				runs = append(runs, t.stepOn(target, e.proto, e.fn, e.release, e.done))
			}
		}
	}
	return runs
}

// lockPoint runs on the shard whose grant makes g hold all its shards: the
// txns take their ids, then the early steps for this shard run.
func (g *txnGroup) lockPoint(w *worker) {
	g.takeIDs(w)
	runs := g.earlyRuns
	g.earlyRuns = nil
	for _, run := range runs {
		run()
	}
}
