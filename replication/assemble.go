package replication

import (
	"fmt"
	"slices"
	"sort"
)

// The stream's assembly (docs/DESIGN.md §3, "Order and transactions"):
// the shards feed their records on their own threads, and a txn over
// several shards arrives as one part per shard, each at that shard's END.
// The assembler parks a part until every shard its END names delivered
// its own, then emits them all as one MULTI/EXEC, so that a replica never
// applies some of a txn's parts without the others. While a shard has a
// part parked, its later units queue behind it (a later write of that
// shard must not reach the replica before the txn); other shards go on.
//
// Nothing parks forever: a shard's parts come in increasing txid order,
// every part of a txn is fed before its coordinator closes it (close,
// from Backlog.TxnClosed),
// and at the close a part that did not come is taken as empty. So a parked
// part waits only for parts of txns that are still open, or for a lower
// txn's parts that are themselves waiting for open txns.

// Unit is what a shard feeds: the commands of one of its records (Txid 0),
// applied together, or its part of txn Txid, whose END named Shards. Its
// slices need be valid only during Backlog.Add: the assembler copies a
// unit it keeps.
type Unit struct {
	Shard  int
	Txid   uint64
	Shards []int      // ascending; a part's own shard is among them
	DBs    []int      // DBs[i] is the database of Cmds[i]
	Cmds   [][][]byte // the commands, as a replica runs them
}

// parked is a txn with at least one part parked.
type parked struct {
	shards []int
	parts  map[int]*Unit
	closed bool // no part comes any more: a missing one is empty
}

// assembler merges the shards' units into one stream. It is not safe for
// concurrent use: the Backlog calls it under its mutex.
type assembler struct {
	queues map[int][]*Unit                  // per shard, behind a parked part (its head)
	txns   map[uint64]*parked               // the txns with a part parked or queued
	emit   func(dbs []int, cmds [][][]byte) // one unit of the stream, atomic
}

// newAssembler returns an empty assembler that emits to emit.
func newAssembler(emit func(dbs []int, cmds [][][]byte)) *assembler {
	return &assembler{queues: map[int][]*Unit{}, txns: map[uint64]*parked{}, emit: emit}
}

// add takes one unit of shard u.Shard, in that shard's order.
func (a *assembler) add(u *Unit) error {
	queued := len(a.queues[u.Shard]) > 0
	if queued || u.Txid != 0 && len(u.Shards) > 1 {
		u = u.own() // it may wait: the caller's slices are its own again
	}
	if u.Txid != 0 {
		if err := a.register(u); err != nil {
			return err
		}
	}
	if queued {
		a.queues[u.Shard] = append(a.queues[u.Shard], u)
		return nil
	}
	if u.Txid == 0 {
		a.emitUnit(u)
		return nil
	}
	a.queues[u.Shard] = []*Unit{u}
	a.settle(u.Txid)
	return nil
}

// own returns a copy of u that shares no memory with it.
func (u *Unit) own() *Unit {
	c := &Unit{Shard: u.Shard, Txid: u.Txid, Shards: slices.Clone(u.Shards), DBs: slices.Clone(u.DBs),
		Cmds: make([][][]byte, len(u.Cmds))}
	for i, cmd := range u.Cmds {
		c.Cmds[i] = make([][]byte, len(cmd))
		for j, a := range cmd {
			c.Cmds[i][j] = slices.Clone(a)
		}
	}
	return c
}

// register files part u with its txn, checking that the parts agree.
func (a *assembler) register(u *Unit) error {
	if !slices.Contains(u.Shards, u.Shard) {
		return fmt.Errorf("replication: txn %d's part from shard %d, which its END %v does not name", u.Txid, u.Shard, u.Shards)
	}
	p := a.txns[u.Txid]
	if p == nil {
		p = &parked{shards: slices.Clone(u.Shards), parts: map[int]*Unit{}}
		a.txns[u.Txid] = p
	}
	if !slices.Equal(p.shards, u.Shards) {
		return fmt.Errorf("replication: txn %d's ENDs name %v and %v", u.Txid, p.shards, u.Shards)
	}
	if p.parts[u.Shard] != nil || p.closed {
		return fmt.Errorf("replication: txn %d's part from shard %d came twice, or after the txn closed", u.Txid, u.Shard)
	}
	p.parts[u.Shard] = u
	return nil
}

// close says that every part of txn txid that is coming came: one that
// did not is taken as empty.
func (a *assembler) close(txid uint64) {
	if p := a.txns[txid]; p != nil {
		p.closed = true
		a.settle(txid)
	}
}

// ready reports whether every part of p is at the head of its shard's
// queue (or will not come).
func (a *assembler) ready(p *parked) bool {
	for _, s := range p.shards {
		part := p.parts[s]
		if part == nil {
			if !p.closed {
				return false
			}
			continue
		}
		if q := a.queues[s]; len(q) == 0 || q[0] != part {
			return false
		}
	}
	return true
}

// settle emits txid if it is ready, then whatever that frees on its
// shards, transitively.
func (a *assembler) settle(txid uint64) {
	work := []uint64{txid}
	for len(work) > 0 {
		id := work[len(work)-1]
		work = work[:len(work)-1]
		p := a.txns[id]
		if p == nil || !a.ready(p) {
			continue
		}
		delete(a.txns, id)
		a.emitTxn(p)
		for _, s := range p.shards {
			if p.parts[s] == nil {
				continue
			}
			a.queues[s] = a.queues[s][1:]
			if next, ok := a.drain(s); ok {
				work = append(work, next)
			}
		}
	}
}

// drain emits shard s's queued records up to its next part, and returns
// that part's txid (false when the queue emptied).
func (a *assembler) drain(s int) (uint64, bool) {
	q := a.queues[s]
	for len(q) > 0 && q[0].Txid == 0 {
		a.emitUnit(q[0])
		q = q[1:]
	}
	if len(q) == 0 {
		delete(a.queues, s)
		return 0, false
	}
	a.queues[s] = q
	return q[0].Txid, true
}

// flush emits everything parked, as if every txn closed (a point where no
// txn is open: Backlog.Start), in txid order; it reports whether anything
// was parked. A cycle cannot remain (each shard's parts come in txid
// order), but if one did, what is left is emitted shard by shard rather
// than kept forever.
func (a *assembler) flush() bool {
	if len(a.queues) == 0 && len(a.txns) == 0 {
		return false
	}
	ids := make([]uint64, 0, len(a.txns))
	for id, p := range a.txns {
		p.closed = true
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		a.settle(id)
	}
	shards := make([]int, 0, len(a.queues))
	for s := range a.queues {
		shards = append(shards, s)
	}
	sort.Ints(shards)
	for _, s := range shards {
		for _, u := range a.queues[s] {
			a.emitUnit(u)
		}
	}
	a.reset()
	return true
}

// reset forgets everything parked (the stream has a gap: Backlog.Reset).
func (a *assembler) reset() {
	clear(a.queues)
	clear(a.txns)
}

// parkedLen is how many units wait (a parked part counts).
func (a *assembler) parkedLen() int {
	n := 0
	for _, q := range a.queues {
		n += len(q)
	}
	return n
}

// emitUnit emits one unit's commands, if any.
func (a *assembler) emitUnit(u *Unit) {
	if len(u.Cmds) > 0 {
		a.emit(u.DBs, u.Cmds)
	}
}

// emitTxn emits p's parts as one unit (mergeParts).
func (a *assembler) emitTxn(p *parked) {
	parts := make([]*Unit, 0, len(p.parts))
	for _, s := range p.shards {
		if u := p.parts[s]; u != nil {
			parts = append(parts, u)
		}
	}
	dbs, cmds := mergeParts(parts)
	if len(cmds) > 0 {
		a.emit(dbs, cmds)
	}
}
