package keyspace

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/moond-db/moond/persistence/checkpoint"
	"github.com/moond-db/moond/persistence/heap"
)

// The keyspace as the checkpoint's source (checkpoint.Source).
//
// A heap record belongs to the (database, key) pair its heap key names
// (see heapcodec.go), the database being the physical one (db.phys), not
// the logical index that SWAPDB changes (see cmd_db.go): every pair, and
// every map below, names physical databases. Each key remembers where the
// record of its pair lives, its location, and whether the pair changed
// since the checkpoint last took it, its dirty bit; both live in the key's
// slot (entry.loc).
//
// Whatever takes a key away from its pair (DEL, expiry, RENAME's source,
// MOVE's source, an overwrite by RENAME, COPY or MOVE, FLUSHDB, FLUSHALL)
// never carries the location along: the record stays with the pair, in
// the graves (pair → location), and the pair is marked dirty.
// The checkpoint then frees it (the pair is dead) or supersedes it (the
// pair was re-created: its Version names the grave as Old). So at every
// moment a pair has at most one record that the keyspace knows of, held
// by its key or by its grave, never both. SWAPDB takes no key from its
// pair: it only changes which logical index names each physical database,
// and leaves locations, graves and dirty bits alone (O(1)).
//
// The dirty pairs are a list of references to the keys' own bytes (they
// never change), appended to when a key's dirty bit goes from 0 to 1, when
// a key is created, and when a key that was not dirty is removed. A pair
// that was removed and created again may be listed twice; TakeDirty
// returns each pair once, and the list is compacted when duplicates may
// have made it grow (see compactDirty). With TrackDirty off none of this
// happens: a change costs one test of a field.
//
// The list is only an index of the dirty bits, for a database with few of
// them: when a database's references pass dirtyListRatio of its keys (and
// dirtyListMin), it goes to walk mode (see walkDB) until the next
// TakeDirty. Its references to live keys are dropped, and a key of it that
// becomes dirty or is created only sets its bit; TakeDirty walks its table
// for the keys whose bit is set. A pair with no key still needs a
// reference: those stay, and every key of the database that is removed
// is listed. A loaded dataset, every key of it dirty, thus costs no list.
//
// Only a reference that may name a pair listed already is marked (refDup):
// that of a key created after some pair was removed since the list was
// last emptied, and that of a grave (which counts as a removal). Every
// other one names a pair that was not listed: it was appended for a key
// whose dirty bit was 0, which no key of a listed pair has (a key created
// since its pair was listed was marked dirty at creation), or for a key
// created while no pair had been removed, so that its pair had no key
// since the list was emptied. No two unmarked references name the same
// pair, and TakeDirty checks only the marked ones' pairs for duplicates
// (see takeByWalk); in walk mode it checks all of the database's.
//
// A reference made for a key that leaves its pair (a removal, a grave) is
// marked refGone: the pair may have no key. Another one was made for a
// key that was live and dirty then, and that stayed dirty until it was
// removed, if it was: the key named by the bytes the reference points to
// (a removed key's bytes live on in its references). So it names a live
// key unless that key was removed while dirty, in list mode (a walk mode
// removal lists the pair again), which a filter of those keys' addresses
// records (removedDirty). walkDB thus drops a database's references to
// live keys without looking them up or reading their keys.

// entry is what the keys table holds for a key: its value and the word
// that says where the pair's record lives and whether the pair is dirty.
type entry struct {
	value
	loc uint64
}

// Layout of entry.loc: dirty (bit 63), file id (bits 31-62), page (bits
// 7-30), slot (bits 0-6). File ids start at 1, so a word whose file field
// is 0 holds no location, except locFar: the location did not fit and
// lives in source.far. Files are 64 MiB (16384 pages) but a record whose
// chain is larger gets a file of its own, whose free pages may later hold
// any record's head: a head page at 2^24-1 or beyond needs a file over 64
// GiB (a record that large, or a MaxFileSize above it); a 512 MiB string
// under a 512 MiB key needs 2^18 pages.
const (
	locDirty     = 1 << 63
	locWhere     = locDirty - 1 // the location bits
	locFileShift = 31
	locPageShift = 7
	locPageMask  = 1<<24 - 1
	locSlotMask  = 1<<7 - 1 // heap.MaxSlots is 112
	locFar       = locPageMask<<locPageShift | locSlotMask
)

// Every slot number fits locSlotMask.
var _ [locSlotMask + 1 - heap.MaxSlots]struct{}

// source is the keyspace's checkpoint-source state.
type source struct {
	dirty     []dirtyRef
	compactAt int  // compact the list when it reaches this length
	deaths    int  // pairs removed since the list was emptied: they may be listed
	maybeDup  bool // the list may name a pair twice
	swept     bool // keys made while tracking was off were marked dirty

	dbs          []dbDirty  // by physical id: each database's share
	removedDirty addrFilter // the keys removed dirty in list mode

	graves map[pairKey]heap.RecordID
	far    map[pairKey]heap.RecordID
	seen   map[pairKey]struct{} // scratch of TakeDirty and compactDirty
	verBuf []byte               // Version's encoded value
	dups   map[pairKey]bool     // scratch of TakeDirty
	filter []uint64             // scratch of TakeDirty
	plan   []uint8              // scratch of TakeDirty: by physical id, how to take (planTake)
	counts []int                // scratch of TakeDirty: listed pairs by physical id
	hint   placeHint            // the slot Version found, for Placed
}

// dbDirty is a database's share of the dirty state.
type dbDirty struct {
	listed  int  // its references in the list
	live    int  // its live keys whose dirty bit is set
	liveLen int  // their keys' total length
	hidden  bool // a key of it was removed dirty in list mode (see removedDirty)
	walking bool // walk mode: a key that becomes dirty is not listed
}

// addrFilter is a one-hash Bloom filter of key addresses (slot.kp), of
// 1<<addrFilterLg bits (8 KiB), made on first use. A removed key's
// address is not reused while a reference points to its bytes, but for
// a key moved to another database (MOVE shares the bytes): a false
// positive.
type addrFilter []uint64

const addrFilterLg = 16

func addrBit(p unsafe.Pointer) uint64 {
	return uint64(uintptr(p)) * 0x9e3779b97f4a7c15 >> (64 - addrFilterLg)
}

func (f *addrFilter) add(p unsafe.Pointer) {
	if *f == nil {
		*f = make(addrFilter, 1<<addrFilterLg/64)
	}
	h := addrBit(p)
	(*f)[h/64] |= 1 << (h % 64)
}

func (f addrFilter) has(p unsafe.Pointer) bool {
	if f == nil {
		return false
	}
	h := addrBit(p)
	return f[h/64]&(1<<(h%64)) != 0
}

// dirtyListRatio and dirtyListMin: a database goes to walk mode when its
// references in the dirty list pass 1/dirtyListRatio of its keys and
// number at least dirtyListMin, the ratio at which TakeDirty prefers to
// walk its table anyway (takeWalkRatio). The list then costs at most 1
// byte a key beyond 16 KiB a database. Variables for the tests.
var (
	dirtyListRatio = 16
	dirtyListMin   = 1024
)

// placeHint is the slot Version found for a key, so that Placed, which the
// checkpoint calls next for the same key, need not look it up again. It is
// good while its database's table has not changed since (keys.muts), and
// Placed checks that the slot holds the key it is given.
type placeHint struct {
	d    *db
	sl   *slot[entry]
	muts uint64
}

// takeHint returns the slot of key in d that Version left, if it is still
// valid and holds key, and forgets the hint.
func (ks *Keyspace) takeHint(d *db, key []byte) *slot[entry] {
	h := ks.src.hint
	ks.src.hint = placeHint{}
	if h.sl == nil || h.d != d || h.muts != d.keys.muts || h.sl.kp == nil || h.sl.key() != string(key) {
		return nil
	}
	return h.sl
}

// pairKey names a (physical database, key) pair in the maps. key aliases
// a key's stored bytes when it is kept, or the caller's when it is only
// looked up.
type pairKey struct {
	db  int
	key string
}

// dirtyRef is an entry of the dirty list: a pair (physical database),
// whose key bytes are a stored key's (immutable).
type dirtyRef struct {
	p  *byte
	n  uint32
	db uint32 // the physical id | refDup | refGone
}

// refDup marks a reference that may name a pair listed before it, and
// refGone one made for a key that left its pair. A physical id fits 30
// bits (see maxDatabases).
const (
	refDup  = 1 << 31
	refGone = 1 << 30
)

// Every physical id fits a reference.
var _ [refGone - maxDatabases]struct{}

func (r dirtyRef) key() string { return unsafe.String(r.p, int(r.n)) }

func (r dirtyRef) phys() int { return int(r.db &^ (refDup | refGone)) }

func (r dirtyRef) pair() pairKey { return pairKey{r.phys(), r.key()} }

func (r dirtyRef) mayDup() bool { return r.db&refDup != 0 }

func (r dirtyRef) gone() bool { return r.db&refGone != 0 }

func refOf(d *db, sl *slot[entry]) dirtyRef {
	return dirtyRef{p: (*byte)(sl.kp), n: uint32(sl.kw & kwLenMask), db: uint32(d.phys)}
}

// refOfGrave is the reference of the pair (phys, k) whose record is a
// grave: marked, the pair may be listed (a key of it may exist again).
func refOfGrave(phys int, k string) dirtyRef {
	p := unsafe.StringData(k)
	if p == nil {
		p = &emptyKey
	}
	return dirtyRef{p: p, n: uint32(len(k)), db: uint32(phys) | refDup | refGone}
}

// unsafeString views b as a string for a lookup that does not keep it.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// packLoc returns id's location bits and whether they fit.
func packLoc(id heap.RecordID) (uint64, bool) {
	if id.File == 0 {
		panic(fmt.Sprintf("keyspace: heap location %v names file 0", id))
	}
	if id.Page >= locPageMask || uint64(id.Slot) > locSlotMask {
		return 0, false
	}
	return uint64(id.File)<<locFileShift | uint64(id.Page)<<locPageShift | uint64(id.Slot), true
}

func unpackLoc(loc uint64) heap.RecordID {
	return heap.RecordID{
		File: uint32(loc >> locFileShift),
		Page: uint32(loc >> locPageShift & locPageMask),
		Slot: uint16(loc & locSlotMask),
	}
}

// slotLoc returns the location of the key in sl, physical database phys.
func (ks *Keyspace) slotLoc(phys int, sl *slot[entry]) (heap.RecordID, bool) {
	loc := sl.v.loc & locWhere
	switch loc {
	case 0:
		return heap.RecordID{}, false
	case locFar:
		id, ok := ks.src.far[pairKey{phys, sl.key()}]
		if !ok {
			panic("keyspace: a key's far heap location is missing")
		}
		return id, true
	}
	return unpackLoc(loc), true
}

// setLoc stores id as the location of the key in sl, physical database
// phys.
func (ks *Keyspace) setLoc(phys int, sl *slot[entry], id heap.RecordID) {
	ks.takeLoc(phys, sl)
	bits, ok := packLoc(id)
	if !ok {
		if ks.src.far == nil {
			ks.src.far = make(map[pairKey]heap.RecordID)
		}
		ks.src.far[pairKey{phys, sl.key()}] = id
		bits = locFar
	}
	sl.v.loc |= bits
}

// takeLoc removes the location of the key in sl and returns it.
func (ks *Keyspace) takeLoc(phys int, sl *slot[entry]) (heap.RecordID, bool) {
	id, ok := ks.slotLoc(phys, sl)
	if ok {
		if sl.v.loc&locWhere == locFar {
			delete(ks.src.far, pairKey{phys, sl.key()})
		}
		sl.v.loc &^= locWhere
	}
	return id, ok
}

// addGrave keeps id as the record of the pair (phys, k), whose key left
// it. k must be a stored key's string (it is kept).
func (ks *Keyspace) addGrave(phys int, k string, id heap.RecordID) {
	if ks.src.graves == nil {
		ks.src.graves = make(map[pairKey]heap.RecordID)
	}
	p := pairKey{phys, k}
	if old, ok := ks.src.graves[p]; ok {
		panic(fmt.Sprintf("keyspace: pair (%d, %q) has two heap records, %v and %v", phys, k, old, id))
	}
	ks.src.graves[p] = id
}

// changed marks the key in sl, of database d, dirty: it changed in place.
// This is the hot path: a key already dirty costs a test.
func (ks *Keyspace) changed(d *db, sl *slot[entry]) {
	if ks.TrackDirty && sl.v.loc&locDirty == 0 {
		ks.becameDirty(d, sl)
	}
}

// becameDirty is changed's slow path, kept out of line so that changed
// inlines.
//
//go:noinline
func (ks *Keyspace) becameDirty(d *db, sl *slot[entry]) {
	sl.v.loc |= locDirty
	if ks.dirtied(d, sl) {
		ks.pushDirty(refOf(d, sl))
	}
}

// dirtied counts the live key in sl, of database d, whose dirty bit was
// just set, and reports whether it must be listed (not in walk mode).
func (ks *Keyspace) dirtied(d *db, sl *slot[entry]) bool {
	dd := &ks.src.dbs[d.phys]
	dd.live++
	dd.liveLen += int(sl.kw & kwLenMask)
	return !dd.walking
}

// created marks a new key dirty. Its pair may already be listed, from a
// key of the same name that was removed since the list was emptied.
func (ks *Keyspace) created(d *db, sl *slot[entry]) {
	sl.v.loc |= locDirty
	if !ks.dirtied(d, sl) {
		return
	}
	r := refOf(d, sl)
	if ks.src.deaths > 0 {
		ks.src.maybeDup = true
		r.db |= refDup
	}
	ks.pushDirty(r)
}

// removed is called for the key in sl, of database d, before it leaves
// its pair: its location goes to the pair's grave and the pair is listed.
func (ks *Keyspace) removed(d *db, sl *slot[entry]) {
	if r, ok := ks.leaving(d, sl); ok {
		ks.pushDirty(r)
	}
}

// removedRaw is removed without the compaction and walk mode checks, for
// walks of a table: compaction looks keys up, and must see a consistent
// keyspace.
func (ks *Keyspace) removedRaw(d *db, sl *slot[entry]) {
	if r, ok := ks.leaving(d, sl); ok {
		ks.listRef(r)
	}
}

// leaving is removed but for the listing: it returns the reference to
// list, if the pair needs one.
func (ks *Keyspace) leaving(d *db, sl *slot[entry]) (dirtyRef, bool) {
	if id, ok := ks.takeLoc(d.phys, sl); ok {
		ks.addGrave(d.phys, sl.key(), id)
	}
	ks.src.deaths++
	r := refOf(d, sl)
	r.db |= refGone
	if sl.v.loc&locDirty == 0 {
		sl.v.loc |= locDirty // the key is still there: a compaction must see it listed
		return r, true
	}
	dd := &ks.src.dbs[d.phys]
	dd.live--
	dd.liveLen -= int(sl.kw & kwLenMask)
	if !dd.walking {
		// Listed already, by a reference that now names a pair that may
		// have no key.
		dd.hidden = true
		ks.src.removedDirty.add(sl.kp)
		return r, false
	}
	// In walk mode the pair may be unlisted, or listed by a reference
	// that names a key removed before.
	r.db |= refDup
	ks.src.maybeDup = true
	return r, true
}

// listRef appends r to the dirty list, with no check.
func (ks *Keyspace) listRef(r dirtyRef) {
	ks.src.dirty = append(ks.src.dirty, r)
	ks.src.dbs[r.phys()].listed++
}

// pushDirty lists r, then compacts the list or puts r's database in walk
// mode if it is time to.
func (ks *Keyspace) pushDirty(r dirtyRef) {
	ks.listRef(r)
	if len(ks.src.dirty) >= ks.src.compactAt {
		ks.compactDirty()
	}
	ks.checkWalk(r.phys())
}

// checkWalk puts the database of physical id phys in walk mode if its
// references in the list have passed the bound (see dirtyListRatio).
func (ks *Keyspace) checkWalk(phys int) {
	dd := &ks.src.dbs[phys]
	if !dd.walking && dd.listed >= dirtyListMin && dd.listed*dirtyListRatio > ks.pdbs[phys].keys.count {
		ks.walkDB(phys)
	}
}

// walkDB puts the database of physical id phys in walk mode: it drops the
// database's references to live keys (whose dirty bits are set: TakeDirty
// walks the table for them), and releases the list's memory if it is
// mostly free. The references that may name a pair with no key stay:
// those marked refGone, and those whose key removedDirty may hold (a
// live key's kept by mistake is taken once all the same).
func (ks *Keyspace) walkDB(phys int) {
	dd := &ks.src.dbs[phys]
	dd.walking = true
	refs := ks.src.dirty
	j, kept := 0, 0
	for _, r := range refs {
		if r.phys() == phys {
			if !r.gone() && (!dd.hidden || !ks.src.removedDirty.has(unsafe.Pointer(r.p))) {
				continue
			}
			kept++
		}
		refs[j] = r
		j++
	}
	clear(refs[j:])
	refs = refs[:j]
	if cap(refs) > 2*j+256 {
		refs = append(make([]dirtyRef, 0, j+j/2+16), refs...)
	}
	ks.src.dirty = refs
	dd.listed = kept
	ks.src.compactAt = 2*j + 1024
}

// findRef returns the slot of the key a dirty reference names, or nil.
func (ks *Keyspace) findRef(r dirtyRef) *slot[entry] {
	d := ks.pdbs[r.phys()]
	key := unsafeBytes(r.key())
	return d.keys.find(d.keys.hash(key), key)
}

// dedupeDirty drops the references that name a pair named before, in
// place, and returns the rest. It clears the dirty bit of every live key
// it keeps: the bit marks the pair as seen.
func (ks *Keyspace) dedupeDirty() []dirtyRef {
	refs := ks.src.dirty
	j := 0
	for _, r := range refs {
		if sl := ks.findRef(r); sl != nil {
			if sl.v.loc&locDirty == 0 {
				continue
			}
			sl.v.loc &^= locDirty
		} else {
			if ks.src.seen == nil {
				ks.src.seen = make(map[pairKey]struct{})
			}
			p := r.pair()
			if _, ok := ks.src.seen[p]; ok {
				continue
			}
			ks.src.seen[p] = struct{}{}
		}
		refs[j] = r
		j++
	}
	clear(refs[j:])
	clear(ks.src.seen)
	return refs[:j]
}

// compactDirty drops duplicate references from the dirty list when there
// may be some, and sets the length at which it is looked at again: twice
// what is left, so that compaction costs O(1) per reference.
func (ks *Keyspace) compactDirty() {
	if ks.src.maybeDup {
		refs := ks.dedupeDirty()
		for _, r := range refs {
			if sl := ks.findRef(r); sl != nil {
				sl.v.loc |= locDirty
			}
		}
		ks.src.dirty = refs
		ks.src.maybeDup = false
		for i := range ks.src.dbs {
			ks.src.dbs[i].listed = 0
		}
		for _, r := range refs {
			ks.src.dbs[r.phys()].listed++
		}
	}
	ks.src.compactAt = 2*len(ks.src.dirty) + 1024
}

// sweepUntracked marks dirty, once, every key that is neither dirty nor
// located: keys made while TrackDirty was off, which the heap does not
// hold. It runs before the first TakeDirty.
func (ks *Keyspace) sweepUntracked() {
	if ks.src.swept {
		return
	}
	ks.src.swept = true
	for _, d := range ks.pdbs {
		d.keys.each(func(sl *slot[entry]) {
			if sl.v.loc == 0 {
				sl.v.loc = locDirty
				if ks.dirtied(d, sl) {
					ks.listRef(refOf(d, sl))
				}
			}
		})
	}
	ks.src.compactAt = 2*len(ks.src.dirty) + 1024
}

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

func (ks *Keyspace) lastLSN() uint64 {
	if ks.Log == nil {
		return 0
	}
	return ks.Log.LastLSN()
}

// Version returns the current state of the pair that the heap key hk
// names (its database is a physical id, whatever logical index SWAPDB
// gave it). It implements checkpoint.Source.
//
// A live key's Record has the kind, the absolute expiry (0 for none), the
// encoded value and KeyLSN = LastLSN(). A deleted pair has DelLSN =
// LastLSN(). Old is the pair's record: its key's location or its grave.
// The Record's slices alias hk, the key's value and a buffer of the
// keyspace, valid until the next keyspace call.
//
// A key whose time has come but that was not deleted yet is live, with its
// expiry in the past (it expires again once loaded). It must not count as
// deleted: the checkpoint frees a deleted pair's record at once, and only
// a DEL in the WAL above the redo point keeps an older version of the key
// (one whose deferred free had not reached the disk) from coming back
// after a crash; an expiry that no command has acted on has no DEL yet.
func (ks *Keyspace) Version(hk []byte) checkpoint.Version {
	lsn := ks.lastLSN()
	phys, key, err := DecodeHeapKey(hk)
	if err != nil || phys >= len(ks.pdbs) {
		return checkpoint.Version{DelLSN: lsn}
	}
	var v checkpoint.Version
	d := ks.pdbs[phys]
	h := d.keys.hash(key)
	sl := d.keys.find(h, key)
	ks.src.hint = placeHint{d: d, sl: sl, muts: d.keys.muts}
	if sl != nil {
		v.Old, v.HasOld = ks.slotLoc(phys, sl)
	}
	if !v.HasOld && len(ks.src.graves) > 0 {
		v.Old, v.HasOld = ks.src.graves[pairKey{phys, unsafeString(key)}]
	}
	if sl == nil {
		v.DelLSN = lsn
		return v
	}
	when := ks.expiryOf(d, h, sl)
	v.Live = true
	var enc []byte
	if sl.v.kind() == KindString && !sl.v.isInt() {
		enc = sl.v.bytes() // the string's own bytes: no copy
	} else {
		ks.src.verBuf = sl.v.appendEncoded(ks.src.verBuf[:0])
		enc = ks.src.verBuf
	}
	v.Record = heap.Record{Key: hk, Kind: uint8(sl.v.kind()), KeyLSN: lsn, Value: enc}
	if when != -1 {
		v.Record.Expiry = when
	}
	return v
}

// Placed records where the pair hk names has its record now: at id, for a
// live version (the key's location; the grave, superseded, is forgotten),
// or nowhere (!live: the grave is forgotten, and the location of a key, if
// one came back since Version). It implements checkpoint.Source.
//
// The checkpoint calls it right after Version for the same key: the slot
// Version found is used again when the table has not changed since and it
// holds the key (see placeHint); any other call looks the key up.
func (ks *Keyspace) Placed(hk []byte, id heap.RecordID, live bool) {
	phys, key, err := DecodeHeapKey(hk)
	if err != nil || phys >= len(ks.pdbs) {
		ks.src.hint = placeHint{}
		return
	}
	if len(ks.src.graves) > 0 {
		delete(ks.src.graves, pairKey{phys, unsafeString(key)})
	}
	d := ks.pdbs[phys]
	sl := ks.takeHint(d, key)
	if sl == nil {
		sl = d.keys.find(d.keys.hash(key), key)
	}
	switch {
	case live && sl != nil:
		ks.setLoc(phys, sl, id)
	case live:
		// Version said live in the same step, so this does not happen;
		// should it, the record must still be freed: it becomes the
		// pair's grave, and the pair is listed.
		k := string(key)
		ks.addGrave(phys, k, id)
		ks.pushDirty(refOfGrave(phys, k))
		ks.src.deaths++
		ks.src.maybeDup = true
	case sl != nil:
		ks.takeLoc(phys, sl)
	}
}

// RedirtyFile handles a heap file that vanished: every key whose location
// is in it loses the location and is marked dirty, and so is every pair
// whose grave is in it (the grave is forgotten: there is nothing left to
// free). It returns how many keys and graves it changed.
func (ks *Keyspace) RedirtyFile(file uint32) int {
	n := 0
	for _, d := range ks.pdbs {
		d.keys.each(func(sl *slot[entry]) {
			if sl.v.loc&locWhere == 0 {
				return
			}
			if id, _ := ks.slotLoc(d.phys, sl); id.File != file {
				return
			}
			ks.takeLoc(d.phys, sl)
			n++
			if sl.v.loc&locDirty == 0 {
				sl.v.loc |= locDirty
				if ks.dirtied(d, sl) {
					ks.listRef(refOf(d, sl))
				}
			}
		})
	}
	for p, id := range ks.src.graves {
		if id.File == file {
			delete(ks.src.graves, p)
			ks.listRef(refOfGrave(p.db, p.key))
			ks.src.deaths++
			ks.src.maybeDup = true
			n++
		}
	}
	ks.compactDirty()
	for phys := range ks.pdbs {
		ks.checkWalk(phys)
	}
	return n
}

// dropDB empties the database at logical index i (FLUSHDB, FLUSHALL):
// with tracking, every key leaves its pair first (O(keys), as Redis's
// flush is). The database keeps its physical id.
func (ks *Keyspace) dropDB(i int) {
	d := ks.dbs[i]
	if ks.TrackDirty {
		d.keys.each(func(sl *slot[entry]) { ks.removedRaw(d, sl) })
	}
	muts := d.keys.muts
	*d = *ks.newDB(d.phys)
	d.keys.muts = muts + 1 // slots of the old table are stale (see placeHint)
	ks.src.hint = placeHint{}
}

// dirtyListMemory is the dirty list's memory, for UsedMemory.
func (ks *Keyspace) dirtyListMemory() int64 {
	return allocSize(withHeader(int64(cap(ks.src.dirty)) * int64(unsafe.Sizeof(dirtyRef{}))))
}
