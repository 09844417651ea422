package keyspace

import (
	"encoding/binary"
	"math/bits"
)

// TakeDirty: how the checkpoint takes the dirty pairs (see source.go), by
// walking a database's table or by looking each listed pair up.

// takeWalkRatio: TakeDirty walks a database's table, rather than looking
// up each listed key of it, when the database has fewer than this many
// keys per listed pair. A walk costs about 10 ns a key (the slots, read in
// order); a lookup of a listed key in a large table misses the cache two
// or three times (over 150 ns). A variable for the tests.
var takeWalkRatio = 16

// TakeDirty returns the heap keys of the pairs that changed since the last
// call, live or deleted, each once, and forgets them: their keys' dirty
// bits are cleared. It implements checkpoint.Source. The slices are the
// caller's, and share one allocation.
//
// The first call also returns every key that was made while TrackDirty
// was off and has no heap location.
//
// It runs on the shard's loop, all at once: its cost is a pause of the
// shard. How each database's pairs are taken is planTake's choice.
// Every database leaves walk mode.
func (ks *Keyspace) TakeDirty() [][]byte {
	ks.sweepUntracked()
	refs := ks.src.dirty
	plan := ks.planTake(refs)
	// Every pair returned has a reference of its own name in the list or
	// is a live dirty key of a database in walk mode, so this much room
	// is enough.
	size, n := 0, len(refs)
	for _, r := range refs {
		size += uvarintLen(uint64(r.phys())) + int(r.n)
	}
	for phys, dd := range ks.src.dbs {
		if dd.walking {
			size += dd.live*uvarintLen(uint64(phys)) + dd.liveLen
			n += dd.live
		}
	}
	a := heapKeys{buf: make([]byte, 0, size), out: make([][]byte, 0, n)}
	ks.takeByWalk(&a, refs, plan)
	ks.takeByLookup(&a, refs, plan)
	clear(refs)
	if cap(refs) > 1<<16 {
		refs = nil
	}
	ks.src.dirty = refs[:0]
	ks.src.deaths = 0
	ks.src.maybeDup = false
	ks.src.compactAt = 1024
	clear(ks.src.dbs) // no key is dirty: list mode, nothing listed
	clear(ks.src.removedDirty)
	return a.out
}

// How TakeDirty takes a database's pairs (see planTake).
const (
	// takeLookup: each listed pair looked up (takeByLookup).
	takeLookup = iota
	// takeWalk: the listed pairs taken as listed, and the table walked to
	// clear the dirty bits (takeByWalk).
	takeWalk
	// takeWalkMode: walk mode; the listed pairs taken as listed, each
	// once, and the table walked for the dirty keys of the other pairs
	// (takeByWalk).
	takeWalkMode
	// takeWalkModeLookup: walk mode; the listed pairs with no key taken
	// (looked up: takeByLookup), and the table walked for the dirty keys
	// (takeByWalk).
	takeWalkModeLookup
)

// planTake decides, for each physical database, how TakeDirty takes its
// pairs, and returns the plans by physical id. In list mode it walks the
// table rather than look up each listed pair when the database has fewer
// than takeWalkRatio keys per listed pair. In walk mode it walks the
// table, and looks up each listed pair rather than check every dirty key
// against the listed ones (a set, and a filter in front of it) when there
// are fewer than 1/takeWalkRatio as many listed pairs as dirty keys.
func (ks *Keyspace) planTake(refs []dirtyRef) []uint8 {
	if len(ks.src.plan) != len(ks.pdbs) {
		ks.src.plan = make([]uint8, len(ks.pdbs))
		ks.src.counts = make([]int, len(ks.pdbs))
	}
	plan, counts := ks.src.plan, ks.src.counts
	clear(counts)
	for _, r := range refs {
		counts[r.phys()]++
	}
	for phys, d := range ks.pdbs {
		dd := &ks.src.dbs[phys]
		switch {
		case dd.walking && counts[phys]*takeWalkRatio < dd.live:
			plan[phys] = takeWalkModeLookup
		case dd.walking:
			plan[phys] = takeWalkMode
		case counts[phys] > 0 && counts[phys]*takeWalkRatio >= d.keys.count:
			plan[phys] = takeWalk
		default:
			plan[phys] = takeLookup
		}
	}
	return plan
}

// takeByWalk takes the pairs of the databases whose plan is a walk. The
// listed pairs are taken in the list's order, with no lookup: every key
// of a listed pair has its dirty bit set and, in list mode, every key
// whose bit is set is listed, so a walk of the table clears the bits.
// Without duplicates (!maybeDup) each reference is a pair of its own;
// otherwise each unmarked reference is, unless a marked one names the
// same pair (see refDup), and only the marked ones' pairs are kept in a
// set. In walk mode (takeWalkMode) every reference's pair is kept in the
// set, and the walk takes each key whose bit is set and whose pair is not
// in it; with takeWalkModeLookup the walk takes every key whose bit is
// set, and takeByLookup the listed pairs that have no key.
func (ks *Keyspace) takeByWalk(a *heapKeys, refs []dirtyRef, plan []uint8) {
	var dups map[pairKey]bool // the marked references' pairs, and walk mode's: taken yet?
	if ks.src.maybeDup || ks.anyWalking() {
		for _, r := range refs {
			if p := plan[r.phys()]; p == takeWalk && ks.src.maybeDup && r.mayDup() || p == takeWalkMode {
				if dups == nil {
					dups = ks.src.dups
					if dups == nil {
						dups = make(map[pairKey]bool)
						ks.src.dups = dups
					}
				}
				dups[r.pair()] = false
			}
		}
	}
	// A one-hash Bloom filter of dups' pairs, about 16 bits a pair, spares
	// most references a lookup in dups.
	var filter []uint64
	var shift uint
	if len(dups) > 0 {
		lg := min(max(bits.Len(uint(len(dups)))+4, 12), 24)
		if cap(ks.src.filter) < 1<<lg/64 {
			ks.src.filter = make([]uint64, 1<<lg/64)
		}
		filter, shift = ks.src.filter[:1<<lg/64], uint(64-lg)
		clear(filter)
		for p := range dups {
			h := pairSig(p.db, p.key) >> shift
			filter[h/64] |= 1 << (h % 64)
		}
	}
	for _, r := range refs {
		phys := r.phys()
		if p := plan[phys]; p != takeWalk && p != takeWalkMode {
			continue
		}
		if filter != nil {
			if h := pairSig(phys, r.key()) >> shift; filter[h/64]&(1<<(h%64)) != 0 {
				p := r.pair()
				if taken, ok := dups[p]; ok {
					if taken {
						continue
					}
					dups[p] = true
				}
			}
		}
		a.add(phys, unsafeBytes(r.key()))
	}
	w := walkTaker{a: a, dups: dups}
	for phys, d := range ks.pdbs {
		switch plan[phys] {
		case takeLookup:
			continue
		case takeWalk:
			for si := range d.keys.segs {
				slots := d.keys.segs[si].slots
				for i := range slots {
					if sl := &slots[i]; sl.v.loc&locDirty != 0 { // a free slot's loc is 0
						sl.v.loc &^= locDirty
					}
				}
			}
			continue
		case takeWalkMode:
			w.filter, w.shift = filter, shift
		case takeWalkModeLookup:
			w.filter = nil // no pair of it is in dups
		}
		w.phys = phys
		for si := range d.keys.segs {
			slots := d.keys.segs[si].slots
			for i := range slots {
				if sl := &slots[i]; sl.v.loc&locDirty != 0 {
					sl.v.loc &^= locDirty
					w.batch[w.n] = sl
					if w.n++; w.n == len(w.batch) {
						w.take()
					}
				}
			}
		}
		w.take()
	}
	if len(dups) > 1<<16 {
		ks.src.dups, ks.src.filter = nil, nil
	} else {
		clear(dups)
	}
}

// walkTaker takes the dirty keys a walk of a table in walk mode finds,
// but those whose pair the list gave (in dups, when there is a filter), a
// batch at a time. Keys lie in memory in the order they were made, not
// the table's: reading each misses the cache. A first loop reads a byte
// of each key of the batch, loads that do not depend on one another,
// which the processor overlaps, so that the copies find the keys in the
// cache.
type walkTaker struct {
	a      *heapKeys
	dups   map[pairKey]bool
	filter []uint64
	shift  uint
	phys   int
	n      int
	batch  [64]*slot[entry]
	sink   byte
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
		if w.filter != nil {
			if h := pairSig(w.phys, sl.key()) >> w.shift; w.filter[h/64]&(1<<(h%64)) != 0 {
				if _, ok := w.dups[pairKey{w.phys, sl.key()}]; ok {
					continue // taken from the list
				}
			}
		}
		w.a.add(w.phys, sl.keyBytes())
	}
	clear(batch)
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

// pairSig is a hash of a pair for takeByWalk's filter: of its database,
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

// takeByLookup takes the listed pairs of the databases whose plan is a
// lookup, each looked up: a live key's dirty bit says whether its pair
// was taken already, and a set holds the deleted pairs taken when the
// list may name a pair twice. In walk mode (takeWalkModeLookup) a pair
// whose key is live is the walk's to take (its bit is set).
func (ks *Keyspace) takeByLookup(a *heapKeys, refs []dirtyRef, plan []uint8) {
	for _, r := range refs {
		p := plan[r.phys()]
		if p != takeLookup && p != takeWalkModeLookup {
			continue
		}
		if sl := ks.findRef(r); sl != nil {
			if p == takeWalkModeLookup || sl.v.loc&locDirty == 0 {
				continue
			}
			sl.v.loc &^= locDirty
		} else if ks.src.maybeDup {
			if ks.src.seen == nil {
				ks.src.seen = make(map[pairKey]struct{})
			}
			p := r.pair()
			if _, ok := ks.src.seen[p]; ok {
				continue
			}
			ks.src.seen[p] = struct{}{}
		}
		a.add(r.phys(), unsafeBytes(r.key()))
	}
	clear(ks.src.seen)
}

// heapKeys is TakeDirty's result being built: heap keys in one buffer.
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
