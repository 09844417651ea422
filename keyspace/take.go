package keyspace

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// Taking the dirty pairs (see source.go), in steps.
//
// BeginTake is called at the checkpoint's redo point and costs O(number of
// databases): the dirty state (the list, each database's counts and mode)
// becomes the take's, the keyspace starts an empty one, and the two dirty
// bits of entry.loc swap roles (source.epoch): what was cur, the bit of
// every key dirty now, becomes prev, the bit of the keys the take has yet
// to take; cur, clear on every key (the last take cleared its prev bits),
// marks what changes from now on. TakeSome then returns the pairs a
// bounded slice of work at a time, while clients write in between.
//
// The take's work comes in phases, over the whole keyspace:
//
//  0. takeSweep, on the first take only: the keys made while TrackDirty
//     was off (no dirty bit, no location: the heap does not hold them)
//     are marked dirty and listed, a table walk in steps (sweepSome).
//     The take proper begins once they are (startTake): the dirty bits
//     swap then, not at BeginTake, so that the take also returns the
//     pairs changed while the sweep ran. Those changes came after the
//     redo point; the checkpoint writes a version that holds them, which
//     replay, above the redo point, never undoes (it applies a record to
//     a key only above the key's heap LSN).
//  1. takeDups: the marked references' pairs (refDup) go into a set, when
//     the list may name a pair twice: a reference is taken unless its
//     pair is in the set and was taken already.
//  2. takeClear: the tables of the databases planned takeWalk (list mode,
//     many listed pairs) are walked and every prev bit cleared: their
//     listed pairs are then taken as listed, with no lookup.
//  3. takeRefs: every reference is taken; but for takeWalk, its key is
//     looked up and its prev bit cleared.
//  4. takeWalkKeys: the tables of the databases in walk mode are walked,
//     and every key whose prev bit is set is taken and its bit cleared.
//  5. takeRefs again for the late references (see below), then done.
//
// Why every pair dirty at BeginTake is taken, once, whatever runs between
// two steps (the argument the tests check, source_take_test.go):
//
//   - A pair dirty at BeginTake is listed, or (walk mode) its key has its
//     prev bit set. A listed pair is taken in phase 3; the references
//     only grow. A key with its prev bit set and listed nowhere is in a
//     walk-mode database: if it stays for the whole walk, the walk finds
//     it (the dict's SCAN cursor, dict.scanSegs, visits every key present
//     from its start to its end however the table grows or shrinks); if
//     it leaves first, leaving lists a late reference (taking.leaving)
//     that phase 5 takes.
//   - A bit is cleared only with the pair taken in the same step or
//     later: phase 3 clears the key's bit as it takes the pair, phase 4
//     too, and phase 2 before phase 3 takes the listed pair. The
//     checkpoint reads a taken pair's Version after it was taken, so the
//     version it writes covers every change made before the bit was
//     cleared; a change after that finds no bit set and sets cur: the
//     next checkpoint takes the pair again. A change to a key whose prev
//     bit is still set needs nothing more (changed leaves it): the take
//     has yet to take it.
//   - Each pair once: unmarked references name distinct pairs (see
//     refDup), and the set of phase 1 holds every pair that a marked
//     reference names, with whether it was taken. A late reference's
//     pair joins the set when it is listed. A walk takes only keys whose
//     prev bit is set and clears it, so a key the walk sees twice (a merge
//     moves keys to a segment it visited) is taken once, and a key of a
//     listed pair had its bit cleared in phase 3 before the walk. Only
//     the keys present at BeginTake have a prev bit; a key made since has
//     cur, so no key of a late reference's pair (which left) is walked.
//   - When the take is done no key has a prev bit (in list mode every key
//     with one was listed and looked up, or its table walked; in walk mode
//     walked), so the next BeginTake may swap the bits again.
//
// A pair may be taken by this take and be dirty (cur) again for the next:
// it changed after its bit was cleared, or it left and came back. That is
// the price of never stopping the loop for the whole take.

// takeWalkRatio: TakeDirty walks a database's table, rather than looking
// up each listed key of it, when the database has fewer than this many
// keys per listed pair. A walk costs about 10 ns a key (the slots, read in
// order); a lookup of a listed key in a large table misses the cache two
// or three times (over 150 ns). A variable for the tests.
var takeWalkRatio = 16

// How a take takes a database's pairs (see planTake).
const (
	// takeLookup: each listed pair looked up, and its bit cleared.
	takeLookup = iota
	// takeWalk: the table walked to clear the bits, then the listed pairs
	// taken as listed.
	takeWalk
	// takeWalkMode: walk mode; the listed pairs looked up, then the table
	// walked for the other keys whose bit is set.
	takeWalkMode
)

// The phases of a take (see above).
const (
	takeIdle = iota
	takeSweep
	takeDups
	takeClear
	takeRefs
	takeWalkKeys
	takeLate
)

// The work a take step may do, in about nanoseconds of a large keyspace:
// a step given n keys may do n*takeStepCost. A lookup misses the cache; a
// slot of a walk is read in order.
const (
	takeStepCost   = 250
	takeCostSlot   = 2
	takeCostKey    = 30
	takeCostRef    = 10
	takeCostLookup = 150
	takeCostDup    = 60
)

// taking is the take in progress.
type taking struct {
	phase int
	// unplaced counts the keys TakeSome returned that the checkpoint has
	// not Placed yet: their dirty bits are clear, but the heap does not
	// hold their current version (coolable).
	unplaced  int
	stepWork  int        // the work the last TakeSome step did (takeSome)
	refs      []dirtyRef // the list at BeginTake, then the late references
	dbs       []dbDirty  // the databases' counts at BeginTake
	plan      []uint8    // by physical id (planTake)
	maybeDup  bool       // refs may name a pair twice
	idx       int        // the next reference of phases 1, 3 and 5
	db        int        // the database phases 2 and 4 walk
	cursor    uint64     // its scan cursor
	dups      map[pairKey]bool
	filter    []uint64 // a one-hash Bloom filter of dups' pairs
	shift     uint
	filterMem []uint64 // filter's memory, kept between takes
	out       heapKeys // TakeSome's result, reused
}

// Taking reports whether a take is in progress.
func (ks *Keyspace) Taking() bool { return ks.take.phase != takeIdle }

// BeginTake starts taking the pairs that are dirty now, live or deleted:
// TakeSome returns them. It implements checkpoint.Source. It costs O(the
// number of databases). The first take also marks every key made while
// TrackDirty was off, which has no heap location, dirty, in TakeSome's
// steps (takeSweep). No take may be in progress.
func (ks *Keyspace) BeginTake() {
	t := &ks.take
	if t.phase != takeIdle {
		panic("keyspace: BeginTake while a take is in progress")
	}
	if !ks.src.swept {
		t.phase, t.db, t.cursor = takeSweep, 0, 0
		return
	}
	ks.startTake()
}

// startTake makes the dirty state the take's: the take proper begins.
func (ks *Keyspace) startTake() {
	t := &ks.take
	if ks.src.maybeDup && len(ks.src.dirty) >= ks.src.compactAt {
		ks.compactDirty()
	}
	t.refs = ks.src.dirty
	t.dbs = append(t.dbs[:0], ks.src.dbs...)
	t.maybeDup = ks.src.maybeDup
	t.planTake(ks)
	t.idx, t.db, t.cursor = 0, 0, 0
	t.filter = nil
	t.phase = takeDups
	if t.maybeDup {
		t.makeFilter(len(t.refs))
	}

	ks.src.dirty = nil
	ks.src.deaths = 0
	ks.src.maybeDup = false
	ks.src.compactAt = 1024
	clear(ks.src.dbs) // no key is dirty (cur): list mode, nothing listed
	clear(ks.src.removedDirty)
	ks.src.epoch ^= 1
	ks.src.hint = placeHint{}
}

// planTake decides, for each physical database, how the take takes its
// pairs. In list mode it walks the table rather than look up each listed
// pair when the database has fewer than takeWalkRatio keys per listed
// pair; a database in walk mode is walked.
func (t *taking) planTake(ks *Keyspace) {
	if len(t.plan) != len(ks.pdbs) {
		t.plan = make([]uint8, len(ks.pdbs))
	}
	for phys, d := range ks.pdbs {
		dd := &t.dbs[phys]
		switch {
		case dd.walking:
			t.plan[phys] = takeWalkMode
		case dd.listed > 0 && dd.listed*takeWalkRatio >= d.keys.count:
			t.plan[phys] = takeWalk
		default:
			t.plan[phys] = takeLookup
		}
	}
}

// makeFilter sizes the filter for about n pairs (16 bits a pair) and the
// set, if they are not made yet.
func (t *taking) makeFilter(n int) {
	if t.dups == nil {
		t.dups = make(map[pairKey]bool)
	}
	if t.filter != nil {
		return
	}
	lg := min(max(bits.Len(uint(n))+4, 12), 24)
	if cap(t.filterMem) < 1<<lg/64 {
		t.filterMem = make([]uint64, 1<<lg/64)
	}
	t.filter, t.shift = t.filterMem[:1<<lg/64], uint(64-lg)
	clear(t.filter)
}

// addDup puts p in the set, not taken yet.
func (t *taking) addDup(p pairKey) {
	if _, ok := t.dups[p]; ok {
		return
	}
	t.dups[p] = false
	h := pairSig(p.db, p.key) >> t.shift
	t.filter[h/64] |= 1 << (h % 64)
}

// taken reports whether r's pair was taken already, and records that it
// is now.
func (t *taking) taken(r dirtyRef) bool {
	if t.filter == nil {
		return false
	}
	h := pairSig(r.phys(), r.key()) >> t.shift
	if t.filter[h/64]&(1<<(h%64)) == 0 {
		return false
	}
	p := r.pair()
	taken, ok := t.dups[p]
	if !ok {
		return false
	}
	if !taken {
		t.dups[p] = true
	}
	return taken
}

// leaving is told of a key whose prev bit is set (the take has yet to
// take it) that leaves its pair, r being its reference (refGone). In list
// mode its pair is listed; in walk mode it may not be, and the walk would
// not find the key: a late reference lists it.
func (t *taking) leaving(phys int, r dirtyRef) {
	if t.phase == takeIdle {
		panic(fmt.Sprintf("keyspace: key %d/%q has a prev dirty bit and no take is in progress", phys, r.key()))
	}
	if t.plan[phys] != takeWalkMode {
		return
	}
	if t.phase > takeWalkKeys {
		panic(fmt.Sprintf("keyspace: key %d/%q has a prev dirty bit after its table was walked", phys, r.key()))
	}
	r.db |= refDup
	t.makeFilter(len(t.refs))
	t.addDup(r.pair())
	t.refs = append(t.refs, r)
}

// TakeSome returns up to max more of the pairs the take in progress takes
// (heap keys), and whether the take is done; more than max only when one
// segment of a table holds more keys to take than max (a walk takes a
// segment whole). It implements
// checkpoint.Source. Its work is bounded too (about max*250 ns), so that
// it may return fewer keys, none even, before the take is done. The
// slices are valid until the next TakeSome. Once done, the keys taken
// have their dirty bits cleared, and BeginTake may be called again.
func (ks *Keyspace) TakeSome(max int) ([][]byte, bool) {
	a := &ks.take.out
	a.buf, a.out = a.buf[:0], a.out[:0]
	done := ks.takeSome(a, max, max*takeStepCost)
	ks.take.unplaced += len(a.out)
	if cap(a.buf) > 1<<20 && len(a.buf) < 1<<16 {
		a.buf = nil // a step of huge keys: not kept
	}
	return a.out, done
}

// TakeDirty returns the heap keys of the pairs that changed since the last
// take began, live or deleted, each once, and forgets them: BeginTake and
// TakeSome until done, in one call. The slices are the caller's, and
// share one allocation. No take may be in progress.
func (ks *Keyspace) TakeDirty() [][]byte {
	ks.BeginTake()
	t := &ks.take
	if t.phase == takeSweep {
		var work int
		ks.sweepSome(math.MaxInt, &work)
	}
	// Every pair returned has a reference of its own name in the list or
	// is a live dirty key of a database in walk mode, so this much room
	// is enough.
	size, n := 0, len(t.refs)
	for _, r := range t.refs {
		size += uvarintLen(uint64(r.phys())) + int(r.n)
	}
	for phys, dd := range t.dbs {
		if dd.walking {
			size += dd.live*uvarintLen(uint64(phys)) + dd.liveLen
			n += dd.live
		}
	}
	a := heapKeys{buf: make([]byte, 0, size), out: make([][]byte, 0, n)}
	if !ks.takeSome(&a, math.MaxInt, math.MaxInt) {
		panic("keyspace: a take with no bound left work undone")
	}
	return a.out
}

// takeSome runs the take's phases until max keys are in a, budget work is
// spent, or the take is done, which it reports.
func (ks *Keyspace) takeSome(a *heapKeys, max, budget int) bool {
	t := &ks.take
	if t.phase == takeIdle {
		panic("keyspace: TakeSome with no take in progress")
	}
	t.stepWork = 0
	work := &t.stepWork // the step's work so far, kept for tests
	for {
		if len(a.out) >= max || *work >= budget {
			return false
		}
		switch t.phase {
		case takeSweep:
			if !ks.sweepSome(budget, work) {
				return false // the step's share is spent
			}
		case takeDups:
			if !t.maybeDup {
				t.phase = takeClear
				continue
			}
			for ; t.idx < len(t.refs) && *work < budget; t.idx++ {
				if r := t.refs[t.idx]; r.mayDup() {
					t.addDup(r.pair())
					*work += takeCostDup
				}
			}
			if t.idx == len(t.refs) {
				t.phase, t.idx = takeClear, 0
			}
		case takeClear:
			if !t.walkTables(ks, takeWalk, a, max, budget, work) {
				return false // the step's share is spent
			}
			t.phase, t.db, t.cursor = takeRefs, 0, 0
		case takeRefs, takeLate:
			for t.idx < len(t.refs) && len(a.out) < max && *work < budget {
				*work += ks.takeRef(a, t.refs[t.idx])
				t.idx++
			}
			if t.idx < len(t.refs) {
				continue
			}
			if t.phase == takeRefs {
				t.phase = takeWalkKeys
				continue
			}
			ks.endTake()
			return true
		case takeWalkKeys:
			if !t.walkTables(ks, takeWalkMode, a, max, budget, work) {
				return false // the step's share is spent
			}
			t.phase, t.db, t.cursor = takeLate, 0, 0
		}
	}
}

// sweepSome marks dirty, from where the last step left off, every key that
// has neither a dirty bit nor a location (made while TrackDirty was off),
// until budget work is spent; once every table is swept it starts the
// take (startTake). It reports whether it did. The walk is the dict's SCAN
// cursor, which visits every key present for the whole walk; a key made
// since, or changed, is dirty already, and one removed needs nothing from
// the sweep. A key the walk visits twice is marked once: its loc is not 0
// the second time.
func (ks *Keyspace) sweepSome(budget int, work *int) bool {
	t := &ks.take
	defer ks.sweptAhead()
	for ; t.db < len(ks.pdbs); t.db, t.cursor = t.db+1, 0 {
		d := ks.pdbs[t.db]
		for {
			if *work >= budget {
				return false
			}
			s1, s2, next := d.keys.scanSegs(t.cursor)
			for _, s := range [2]*segment[entry]{s1, s2} {
				if s != nil {
					*work += ks.sweepSegment(d, s)
				}
			}
			t.cursor = next
			if next == 0 {
				break
			}
		}
	}
	ks.src.swept = true
	ks.startTake()
	return true
}

// sweepSegment marks the untracked keys of s, of database d, dirty and
// lists them (walk mode: counts them), and returns the work it cost.
func (ks *Keyspace) sweepSegment(d *db, s *segment[entry]) int {
	work := len(s.slots) * takeCostSlot
	for i := range s.slots {
		sl := &s.slots[i]
		if sl.kp == nil || sl.v.loc != 0 {
			continue
		}
		sl.v.loc = ks.src.cur()
		if ks.dirtied(d, sl) {
			ks.listRef(refOf(d, sl))
		}
		work += takeCostKey + takeCostRef
	}
	return work
}

// sweptAhead keeps a compaction of the dirty list away while the sweep
// lists keys: its references are distinct (each for a key that had no
// dirty bit), and a client's write must not pay to compact them all.
func (ks *Keyspace) sweptAhead() {
	ks.src.compactAt = max(ks.src.compactAt, 2*len(ks.src.dirty)+1024)
}

// takeRef takes the pair r names, unless it was taken already, and
// returns the work it cost.
func (ks *Keyspace) takeRef(a *heapKeys, r dirtyRef) int {
	t := &ks.take
	phys := r.phys()
	cost := takeCostRef + takeCostKey
	if t.plan[phys] != takeWalk {
		cost += takeCostLookup
		if sl := ks.findRef(r); sl != nil {
			sl.v.loc &^= ks.src.prev()
		}
	}
	if t.taken(r) {
		return cost
	}
	a.add(phys, unsafeBytes(r.key()))
	return cost
}

// walkTables walks, from where it left off, the tables of the databases
// planned plan: takeWalk clears the prev bits, takeWalkMode takes the keys
// that have one. It reports whether every such table was walked.
func (t *taking) walkTables(ks *Keyspace, plan uint8, a *heapKeys, max, budget int, work *int) bool {
	prev := ks.src.prev()
	w := walkTaker{a: a, prev: prev}
	defer w.take()
	for ; t.db < len(ks.pdbs); t.db, t.cursor = t.db+1, 0 {
		if t.plan[t.db] != plan {
			continue
		}
		d := ks.pdbs[t.db]
		w.phys = t.db
		for {
			if len(a.out)+w.n >= max || *work >= budget {
				return false
			}
			s1, s2, next := d.keys.scanSegs(t.cursor)
			// A segment pair is walked whole (the cursor moves past it): it
			// waits for the next step if its keys could pass max, unless
			// this step has taken none.
			if n := len(a.out) + w.n; plan == takeWalkMode && n > 0 && n+int(s1.used)+used(s2) > max {
				return false
			}
			for _, s := range [2]*segment[entry]{s1, s2} {
				if s == nil {
					continue
				}
				*work += len(s.slots) * takeCostSlot
				if plan == takeWalk {
					for i := range s.slots {
						s.slots[i].v.loc &^= prev // a free slot's loc is 0
					}
					continue
				}
				for i := range s.slots {
					if sl := &s.slots[i]; sl.v.loc&prev != 0 {
						w.batch[w.n] = sl
						*work += takeCostKey
						if w.n++; w.n == len(w.batch) {
							w.take()
						}
					}
				}
			}
			t.cursor = next
			if next == 0 {
				break
			}
		}
		w.take()
	}
	return true
}

func used(s *segment[entry]) int {
	if s == nil {
		return 0
	}
	return int(s.used)
}

// endTake ends the take: no key has a prev bit left.
func (ks *Keyspace) endTake() {
	t := &ks.take
	clear(t.refs) // they keep removed keys' bytes alive
	t.refs = nil
	if len(t.dups) > 1<<16 {
		t.dups = nil
		t.filterMem = nil
	} else {
		clear(t.dups)
	}
	t.filter = nil
	t.phase = takeIdle
}

// walkTaker takes the keys a walk finds with their prev bit set, and
// clears it, a batch at a time. Keys lie in memory in the order they were
// made, not the table's: reading each misses the cache. A first loop
// reads a byte of each key of the batch, loads that do not depend on one
// another, which the processor overlaps, so that the copies find the keys
// in the cache.
type walkTaker struct {
	a     *heapKeys
	prev  uint64
	phys  int
	n     int
	batch [64]*slot[entry]
	sink  byte
}

func (w *walkTaker) take() {
	batch := w.batch[:w.n]
	w.n = 0
	var x byte
	for _, sl := range batch {
		x += *(*byte)(sl.kp) // the empty key's kp is &emptyKey
	}
	w.sink += x
	for _, sl := range batch {
		sl.v.loc &^= w.prev
		w.a.add(w.phys, sl.keyBytes())
	}
	clear(batch)
}

// pairSig is a hash of a pair for the take's filter: of its database,
// its key's length and its key's last 8 bytes (read in one load), which
// tell apart most keys named after a counter. Its high bits are the best.
func pairSig(phys int, key string) uint64 {
	n := len(key)
	var x uint64
	if n >= 8 {
		x = binary.LittleEndian.Uint64(unsafeBytes(key[n-8:]))
	} else {
		for i := range n {
			x = x<<8 | uint64(key[i])
		}
	}
	h := x*0x9e3779b97f4a7c15 + uint64(n)*0xc2b2ae3d27d4eb4f + uint64(phys)*0x165667b19e3779f9
	h ^= h >> 29
	return h * 0x9e3779b97f4a7c15
}

// heapKeys is a take's result being built: heap keys in one buffer.
type heapKeys struct {
	buf []byte
	out [][]byte
}

func (a *heapKeys) add(phys int, key []byte) {
	start := len(a.buf)
	a.buf = AppendHeapKey(a.buf, phys, key)
	a.out = append(a.out, a.buf[start:len(a.buf):len(a.buf)])
}

// DirtyKeys is the number of pairs changed since the last TakeDirty (keys
// and deleted keys), for INFO. A database in walk mode counts its live
// dirty keys, and its listed pairs that have none (looked up).
func (ks *Keyspace) DirtyKeys() int {
	if ks.src.maybeDup {
		ks.compactDirty()
	}
	n := len(ks.src.dirty) // distinct pairs, once compacted
	if !ks.anyWalking() {
		return n
	}
	for _, dd := range ks.src.dbs {
		if dd.walking {
			n += dd.live
		}
	}
	for _, r := range ks.src.dirty {
		if ks.src.dbs[r.phys()].walking && ks.findRef(r) != nil {
			n-- // a live key, counted in live
		}
	}
	return n
}

// anyWalking reports whether a database is in walk mode.
func (ks *Keyspace) anyWalking() bool {
	for i := range ks.src.dbs {
		if ks.src.dbs[i].walking {
			return true
		}
	}
	return false
}
