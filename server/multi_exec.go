package server

import (
	"slices"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// EXEC: the queued commands run as one unit. Each data command goes to
// the shard of its keys (a multi-key command over several shards in
// parts, merged as the command merges them outside a transaction); the
// commands of one shard run there in their order, in one step. When they
// all live on the connection's shard they run at once; otherwise EXEC is
// a txn (txn.go) over every shard they touch, so no other command runs
// on those shards from the first of them to the last. Blocking commands
// do not block (Redis's rule in a transaction).

// execAllShards are the commands that concern every shard's keys, with how
// their replies merge.
var execAllShards = map[string]func(parts [][]byte, w *resp.Writer){
	"dbsize": sumParts, "flushdb": okParts, "flushall": okParts, "swapdb": okParts,
	"keys": concatArrays, "randomkey": randomPart,
}

// execItem is one queued command's plan: its reply, ready at once (a
// local server command, an error), or the parts that shards produce and
// how they merge.
type execItem struct {
	reply []byte
	// waits are the replies a server command queued to fill later
	// (INFO, CONFIG RESETSTAT, BGSAVE, ...): the item's reply is reply
	// followed by theirs, and EXEC runs once they are complete.
	waits  []*pendingReply
	parts  []execPart
	merge  func(parts [][]byte, w *resp.Writer)
	gather *execGather // a command run gathered (txn_gather.go)
}

// execGather is a command EXEC runs gathered, between the commands before
// it (at: each shard's list length when it was queued) and after it.
type execGather struct {
	spec *keyspace.CommandSpec
	args [][]byte
	pos  []int
	db   int
	at   map[int]int
	// shards are the shards of its keys: it stores back on them.
	shards []int
}

// execPart is a part of an item's reply: the reply of command idx of
// shard's list.
type execPart struct {
	shard, idx int
}

// execShardCmd is a command (or a part of one) a shard runs for EXEC.
type execShardCmd struct {
	db   int
	spec *keyspace.CommandSpec
	args [][]byte
}

// execPlan is EXEC's plan: an item per queued command and, per shard, the
// commands it runs in order.
type execPlan struct {
	items []execItem
	// lists[s] are the commands shard s runs (one list per shard: a
	// txn's plan, made for every EXEC, costs no map).
	lists   [][]execShardCmd
	db      int   // the connection's database after the transaction
	caller  int64 // the connection's client id
	gathers []int // the items run gathered, in order
	shards  []int // every shard a command touches
}

// execQueued runs a transaction's queued commands, unless a key the
// connection watches was touched: then EXEC answers a null array and runs
// nothing.
func (c *conn) execQueued(cmds []queuedCmd) {
	watches := c.watches
	c.watches = nil
	c.w.stats.execs++
	if c.track != nil {
		for _, q := range cmds {
			if q.cmd.spec != nil {
				c.rememberReads(q.cmd.spec, q.args)
			}
		}
	}
	db0 := c.client.DB
	p := c.planExec(cmds)
	var waits []*pendingReply
	for _, it := range p.items {
		for _, w := range it.waits {
			if !w.ready() {
				waits = append(waits, w)
			}
		}
	}
	if len(waits) == 0 {
		c.execPlanned(p, watches, db0, nil)
		return
	}
	// The server commands it captured finish first, as they ran first.
	reply := c.newPending(1, nil)
	c.blockWait = reply
	left := len(waits)
	for _, w := range waits {
		w.onReady = func() {
			if left--; left == 0 {
				c.execPlanned(p, watches, db0, reply)
			}
		}
	}
}

// execPlanned runs plan p of an EXEC that started in database db0;
// reply, when not nil, is the EXEC's queued reply (else it is made here).
func (c *conn) execPlanned(p *execPlan, watches []*connWatch, db0 int, reply *pendingReply) {
	c.client.DB = p.db
	shards := make([]int, 0, len(p.lists))
	for s, l := range p.lists {
		if len(l) > 0 {
			shards = append(shards, s)
		}
	}
	shards = append(shards, p.shards...)
	shards = append(shards, watchShards(watches)...)
	slices.Sort(shards)
	shards = slices.Compact(shards)
	if len(p.gathers) == 0 && (len(shards) == 0 || len(shards) == 1 && shards[0] == c.w.id) {
		// All on this shard: nothing runs between the check and the
		// commands, nor between the commands.
		var data []byte
		if touchedHere(c.w, watches) {
			c.client.DB = db0
			w := resp.Writer{Proto: c.out.Proto}
			w.NullArray()
			data = w.Buf
		} else {
			replies := make([][][]byte, len(p.lists))
			var lsn uint64
			if len(shards) == 1 {
				replies[c.w.id], lsn = runExecInline(c.w, p, c.out.Proto)
			}
			c.noteWrite(lsn)
			data = p.assemble(replies, c.out.Proto)
			c.w.noteReply(data)
		}
		if reply != nil {
			reply.fill(0, data)
			c.txnReplied(reply)
			return
		}
		c.replyLocal(func(w *resp.Writer) { w.Raw(data) })
		return
	}
	if reply == nil {
		reply = c.newPending(1, nil)
		c.blockWait = reply
	}
	proto := c.out.Proto
	finish := func(b []byte) {
		reply.fill(0, b)
		c.txnReplied(reply)
	}
	writers := p.writers()
	if len(p.gathers) == 0 && len(watches) == 0 {
		c.execGrouped(p, shards, writers, proto, finish)
		return
	}
	t := c.w.beginTxnAlone(shards, func(t *txn) {
		c.checkWatches(t, watches, proto, func(touched bool) {
			if touched {
				for _, s := range t.shards {
					t.release(s)
				}
				c.client.DB = db0
				w := resp.Writer{Proto: proto}
				w.NullArray()
				finish(w.Buf)
				return
			}
			c.execSegments(t, p, proto, finish)
		})
	})
	t.writes, t.writers = writers != nil, writers
	t.onRefused = func(msg string) { // as Redis 7.0 refuses an EXEC that would write
		c.client.DB = db0
		finish(errorReply(proto, msg))
	}
}

// writers are the shards the plan may write on, ascending; nil for none.
func (p *execPlan) writers() []int {
	var ws []int
	for s, l := range p.lists {
		if slices.ContainsFunc(l, func(sc execShardCmd) bool { return sc.spec.Writes() }) {
			ws = append(ws, s)
		}
	}
	for _, gi := range p.gathers {
		if g := p.items[gi].gather; g.spec.Writes() {
			ws = append(ws, g.shards...)
		}
	}
	slices.Sort(ws)
	return slices.Compact(ws)
}

// runExecInline runs an EXEC whose commands all live on w, the
// connection's shard: as one part (persistence/txnlog) when it writes, so
// that a crash never keeps half of it.
func runExecInline(w *worker, p *execPlan, proto int) ([][]byte, uint64) {
	if p.writers() == nil || w.sh == nil {
		return runExecList(w, p.lists[w.id], proto, p.caller)
	}
	id := w.srv.txnSeq.Add(1)
	w.sh.OpenPart(id)
	wasServing := w.serving
	w.serving = true // blocked clients are served after the END
	replies, lsn := runExecList(w, p.lists[w.id], proto, p.caller)
	end, err := w.sh.EndPart(id, 0, []int{w.id})
	if err != nil { // the EXEC never commits: no command of it is told it ran
		e := resp.Writer{Proto: proto}
		e.Error(err.Error())
		replies = repliesOr(nil, len(replies), e.Buf)
	}
	lsn = max(lsn, end)
	w.serving = wasServing
	if !wasServing && w.holder == nil && len(w.ready) > 0 {
		w.serveReady()
	}
	if w.mayEvict() {
		lsn = max(lsn, w.enforceMemory())
	}
	return replies, lsn
}

// execGrouped runs a plan with no gathered command and no watch as a txn
// of one step per shard, which may share its holds with other txns.
func (c *conn) execGrouped(p *execPlan, shards, writers []int, proto int, finish func([]byte)) {
	replies := make([][][]byte, len(p.lists))
	t := c.w.beginTxn(shards, (*txn).runEarly)
	t.writes, t.writers = writers != nil, writers
	left := len(shards)
	for _, s := range shards {
		list := p.lists[s]
		var got [][]byte
		t.stepEarly(s, proto, func(w *worker, out *resp.Writer) uint64 {
			var lsn uint64
			got, lsn = runExecList(w, list, proto, p.caller)
			return lsn
		}, true, func(r []byte) {
			replies[s] = repliesOr(got, len(list), r)
			if left--; left == 0 {
				finish(p.assemble(replies, proto))
			}
		})
	}
}

// checkWatches asks every shard of t that holds watches of ws whether one
// was touched, dropping them, and calls then with the answer.
func (c *conn) checkWatches(t *txn, ws []*connWatch, proto int, then func(touched bool)) {
	shards := slices.Compact(slices.Sorted(slices.Values(watchShards(ws))))
	if len(shards) == 0 {
		then(false)
		return
	}
	left, touched := len(shards), false
	for _, s := range shards {
		t.readStep(s, proto, func(w *worker, out *resp.Writer) uint64 {
			out.Int(int64(boolInt(touchedHere(w, ws))))
			return 0
		}, func(r []byte) {
			touched = touched || string(r) != ":0\r\n"
			if left--; left == 0 {
				then(touched)
			}
		})
	}
}

// repliesOr returns got, or, when a shard did not run its n commands (it
// stops) or what they wrote can never be durable, n copies of its step's
// reply r, an error (a step that runs EXEC commands replies nothing else).
func repliesOr(got [][]byte, n int, r []byte) [][]byte {
	if n == 0 || (got != nil && !isErrorReply(r)) {
		return got
	}
	got = make([][]byte, n)
	for i := range got {
		got[i] = r
	}
	return got
}

// runExecList runs a shard's EXEC commands in order and returns their
// replies and the LSN of the last WAL record they wrote. Clients blocked
// on the keys they write are served after the last of them, as Redis
// serves them after EXEC: while the list runs, w.serving keeps
// worker.exec from serving them; a shard a txn holds serves them when it
// is released (unhold).
func runExecList(w *worker, list []execShardCmd, proto int, caller int64) ([][]byte, uint64) {
	out := resp.Writer{Proto: proto}
	ends := make([]int, len(list))
	var lsn uint64
	wasServing := w.serving
	w.serving = true
	for i, sc := range list {
		cl := keyspace.Client{DB: sc.db, NoBlock: true, ID: caller}
		lsn = max(lsn, w.exec(&cl, sc.spec, sc.args, &out))
		ends[i] = len(out.Buf)
	}
	w.serving = wasServing
	if !wasServing && w.holder == nil && len(w.ready) > 0 {
		w.serveReady()
	}
	replies := make([][]byte, len(list))
	start := 0
	for i, end := range ends {
		replies[i] = out.Buf[start:end:end]
		start = end
	}
	return replies, lsn
}

// planExec builds the plan of cmds, starting in the connection's database.
func (c *conn) planExec(cmds []queuedCmd) *execPlan {
	p := &execPlan{items: make([]execItem, len(cmds)), lists: make([][]execShardCmd, c.w.srv.nshards), db: c.client.DB, caller: c.id}
	proto := c.out.Proto
	for i, q := range cmds {
		it := &p.items[i]
		switch {
		case q.cmd.server != nil && q.cmd.name == "select":
			it.reply, it.waits = c.capture(q.cmd.server, q.args)
			p.db = c.client.DB
		case q.cmd.server != nil:
			if merge, ok := execAllShards[q.cmd.name]; ok {
				for s := range c.w.srv.nshards {
					it.parts = append(it.parts, p.add(s, keyspace.Lookup(q.args[0]), q.args))
				}
				it.merge = merge
				continue
			}
			it.reply, it.waits = c.capture(q.cmd.server, q.args)
		default:
			c.planData(p, it, q.cmd.spec, q.args, proto)
			if it.gather != nil {
				p.gathers = append(p.gathers, i)
			}
		}
	}
	return p
}

// planData plans a data command: on the shard of its keys, split per shard
// when it may be, refused with CROSSSLOT when it spans shards otherwise.
func (c *conn) planData(p *execPlan, it *execItem, spec *keyspace.CommandSpec, args [][]byte, proto int) {
	var posBuf [16]int
	pos := keyPositions(spec, args, posBuf[:0])
	if len(pos) == 0 {
		it.parts = []execPart{p.add(c.w.id, spec, args)}
		return
	}
	home := c.w.srv.shardOf(args[pos[0]])
	same := true
	for _, q := range pos[1:] {
		if c.w.srv.shardOf(args[q]) != home {
			same = false
			break
		}
	}
	if same {
		it.parts = []execPart{p.add(home, spec, args)}
		return
	}
	sp := splitters[spec.Name]
	if sp == nil {
		g := &execGather{spec: spec, args: args, pos: slices.Clone(pos), db: p.db, at: map[int]int{}}
		for s, l := range p.lists {
			if len(l) > 0 {
				g.at[s] = len(l)
			}
		}
		for _, k := range pos {
			g.shards = append(g.shards, c.w.srv.shardOf(args[k]))
		}
		p.shards = append(p.shards, g.shards...)
		it.gather = g // planExec lists it in p.gathers
		return
	}
	order, subs, partPos := c.splitParts(sp, args, pos)
	for i, s := range order {
		it.parts = append(it.parts, p.add(s, spec, copyArgs(subs[i])))
	}
	total := len(pos)
	it.merge = func(parts [][]byte, w *resp.Writer) { sp.merge(c, parts, partPos, total, w) }
}

// add appends a command to shard s's list and returns its place.
func (p *execPlan) add(s int, spec *keyspace.CommandSpec, args [][]byte) execPart {
	p.lists[s] = append(p.lists[s], execShardCmd{db: p.db, spec: spec, args: args})
	return execPart{shard: s, idx: len(p.lists[s]) - 1}
}

// assemble builds EXEC's reply from the shards' replies.
func (p *execPlan) assemble(replies [][][]byte, proto int) []byte {
	w := resp.Writer{Proto: proto}
	w.ArrayHeader(len(p.items))
	for _, it := range p.items {
		switch {
		case it.reply != nil || it.waits != nil:
			w.Raw(it.reply)
			for _, p := range it.waits {
				w.Raw(p.data)
			}
		case it.merge == nil:
			w.Raw(replies[it.parts[0].shard][it.parts[0].idx])
		default:
			parts := make([][]byte, len(it.parts))
			for i, pt := range it.parts {
				parts[i] = replies[pt.shard][pt.idx]
			}
			mw := resp.Writer{Proto: proto}
			it.merge(parts, &mw)
			w.Raw(mw.Buf)
		}
	}
	return w.Buf
}

// capture runs a server command at once on this shard and returns its
// reply instead of queueing it: what it wrote, and the replies it queued to
// be filled later (a command that asks other shards), which are complete
// once their own completions ran.
func (c *conn) capture(sc *serverCmd, args [][]byte) ([]byte, []*pendingReply) {
	out, queue, wait := c.out, c.queue, c.blockWait
	c.out, c.queue = resp.Writer{Proto: out.Proto}, replyQueue{}
	// Counted and timed as a command of its own, as Redis counts and
	// times EXEC's commands.
	cmd := commands[sc.name].statEntry(args)
	c.w.stats.cmdCalls[cmd.id].calls++
	ran, pending := c.w.ran, c.w.pending
	c.w.ran, c.w.pending = cmd, nil
	start := monotonicNanos()
	sc.run(c, args)
	c.cmdDone(args, start)
	c.w.ran, c.w.pending = ran, pending
	reply, later := c.out.Buf, c.queue.items[c.queue.head:]
	out.Proto = c.out.Proto // HELLO switches the protocol
	c.out, c.queue, c.blockWait = out, queue, wait
	if len(later) == 0 {
		if reply == nil {
			reply = []byte{} // not nil: the item has its reply
		}
		return reply, nil
	}
	return reply, slices.Clone(later)
}

// execSegments runs a plan in t, which holds every shard it needs: the
// commands before a gathered one (one step per shard), then the gathered
// one (its two rounds), and so on; the shards are released after the
// last, and finish gets EXEC's reply.
func (c *conn) execSegments(t *txn, p *execPlan, proto int, finish func([]byte)) {
	replies := make([][][]byte, len(p.lists))
	for s, l := range p.lists {
		replies[s] = make([][]byte, len(l))
	}
	from := map[int]int{}
	var next func(gi int)
	next = func(gi int) {
		if gi == len(p.gathers) {
			c.execRange(t, p, from, nil, replies, proto, func() { finish(p.assemble(replies, proto)) })
			return
		}
		it := &p.items[p.gathers[gi]]
		g := it.gather
		c.execRange(t, p, from, g.at, replies, proto, func() {
			from = g.at
			keys := c.gatherKeys(g.spec, g.args, g.pos, g.db)
			gatherExport(t, keys, proto, func() {
				c.gatheredRun(t, g.spec, g.args, g.db, keys, proto, false, func(b []byte) {
					it.reply = b
					next(gi + 1)
				})
			})
		})
	}
	next(0)
}

// execRange runs on each shard of t its commands from from[s] up to to[s]
// (to the end, and releasing the shard, when to is nil), storing their
// replies in replies, then calls then on the coordinator.
func (c *conn) execRange(t *txn, p *execPlan, from, to map[int]int, replies [][][]byte, proto int, then func()) {
	left := len(t.shards)
	for _, s := range t.shards {
		lo, hi := from[s], len(p.lists[s])
		if to != nil {
			hi = to[s]
		}
		list, dst := p.lists[s][lo:hi], replies[s]
		ran := false
		t.step(s, proto, func(w *worker, _ *resp.Writer) uint64 {
			got, lsn := runExecList(w, list, proto, p.caller)
			copy(dst[lo:], got)
			ran = true
			return lsn
		}, to == nil, func(r []byte) {
			if !ran || isErrorReply(r) {
				copy(dst[lo:], repliesOr(nil, len(list), r))
			}
			if left--; left == 0 {
				then()
			}
		})
	}
}

// isErrorReply reports whether r is an error reply.
func isErrorReply(r []byte) bool { return len(r) > 0 && r[0] == '-' }
