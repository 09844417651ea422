package shard

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
// Only a reference that may name a pair listed already is marked (refDup):
// that of a key created after some pair was removed since the list was
// last emptied, and that of a grave (which counts as a removal). Every
// other one names a pair that was not listed: it was appended for a key
// whose dirty bit was 0, which no key of a listed pair has (a key created
// since its pair was listed was marked dirty at creation), or for a key
// created while no pair had been removed, so that its pair had no key
// since the list was emptied. No two unmarked references name the same
// pair, and TakeDirty checks only the marked ones' pairs for duplicates
// (see takeByWalk).

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

	graves map[pairKey]heap.RecordID
	far    map[pairKey]heap.RecordID
	seen   map[pairKey]struct{} // scratch of TakeDirty and compactDirty
	verBuf []byte               // Version's encoded value
	dups   map[pairKey]bool     // scratch of TakeDirty
	filter []uint64             // scratch of TakeDirty
	walk   []bool               // scratch of TakeDirty: by physical id, walk the table
	counts []int                // scratch of TakeDirty: listed pairs by physical id
	hint   placeHint            // the slot Version found, for Placed
}

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
	db uint32 // the physical id | refDup
}

// refDup marks a reference that may name a pair listed before it. A
// physical id fits 31 bits (see DecodeHeapKey).
const refDup = 1 << 31

func (r dirtyRef) key() string { return unsafe.String(r.p, int(r.n)) }

func (r dirtyRef) phys() int { return int(r.db &^ refDup) }

func (r dirtyRef) pair() pairKey { return pairKey{r.phys(), r.key()} }

func (r dirtyRef) mayDup() bool { return r.db&refDup != 0 }

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
	return dirtyRef{p: p, n: uint32(len(k)), db: uint32(phys) | refDup}
}

// unsafeString views b as a string for a lookup that does not keep it.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// packLoc returns id's location bits and whether they fit.
func packLoc(id heap.RecordID) (uint64, bool) {
	if id.File == 0 {
		panic(fmt.Sprintf("shard: heap location %v names file 0", id))
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
			panic("shard: a key's far heap location is missing")
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
		panic(fmt.Sprintf("shard: pair (%d, %q) has two heap records, %v and %v", phys, k, old, id))
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
	ks.pushDirty(refOf(d, sl))
}

// created marks a new key dirty. Its pair may already be listed, from a
// key of the same name that was removed since the list was emptied.
func (ks *Keyspace) created(d *db, sl *slot[entry]) {
	sl.v.loc |= locDirty
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
	if id, ok := ks.takeLoc(d.phys, sl); ok {
		ks.addGrave(d.phys, sl.key(), id)
	}
	if sl.v.loc&locDirty == 0 {
		sl.v.loc |= locDirty // the key is still there: a compaction must see it listed
		ks.pushDirty(refOf(d, sl))
	}
	ks.src.deaths++
}

func (ks *Keyspace) pushDirty(r dirtyRef) {
	ks.src.dirty = append(ks.src.dirty, r)
	if len(ks.src.dirty) >= ks.src.compactAt {
		ks.compactDirty()
	}
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
				ks.src.dirty = append(ks.src.dirty, refOf(d, sl))
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
// shard. The listed pairs of a database that has few of them are looked
// up (see takeByLookup); those of the others are taken without a lookup
// (see takeByWalk).
func (ks *Keyspace) TakeDirty() [][]byte {
	ks.sweepUntracked()
	refs := ks.src.dirty
	walk := ks.planTake(refs)
	// Every pair returned has a reference of its own name in the list,
	// so this much room is enough.
	size := 0
	for _, r := range refs {
		size += uvarintLen(uint64(r.phys())) + int(r.n)
	}
	a := heapKeys{buf: make([]byte, 0, size), out: make([][]byte, 0, len(refs))}
	ks.takeByWalk(&a, refs, walk)
	ks.takeByLookup(&a, refs, walk)
	clear(refs)
	if cap(refs) > 1<<16 {
		refs = nil
	}
	ks.src.dirty = refs[:0]
	ks.src.deaths = 0
	ks.src.maybeDup = false
	ks.src.compactAt = 1024
	return a.out
}

// planTake decides, for each physical database, whether TakeDirty walks
// its table (see takeWalkRatio), and returns the decisions by physical id.
func (ks *Keyspace) planTake(refs []dirtyRef) []bool {
	if len(ks.src.walk) != len(ks.pdbs) {
		ks.src.walk = make([]bool, len(ks.pdbs))
		ks.src.counts = make([]int, len(ks.pdbs))
	}
	walk, counts := ks.src.walk, ks.src.counts
	clear(counts)
	for _, r := range refs {
		counts[r.phys()]++
	}
	for phys, d := range ks.pdbs {
		walk[phys] = counts[phys] > 0 && counts[phys]*takeWalkRatio >= d.keys.count
	}
	return walk
}

// takeByWalk takes the listed pairs of the databases walk names, in the
// list's order, with no lookup: every key of a listed pair has its dirty
// bit set and every key whose bit is set is listed, so a walk of the table
// clears the bits. Without duplicates (!maybeDup) each reference is a pair
// of its own; otherwise each unmarked reference is, unless a marked one
// names the same pair (see refDup), and only the marked ones' pairs are
// kept in a set.
func (ks *Keyspace) takeByWalk(a *heapKeys, refs []dirtyRef, walk []bool) {
	var dups map[pairKey]bool // the marked references' pairs: taken yet?
	if ks.src.maybeDup {
		for _, r := range refs {
			if r.mayDup() && walk[r.phys()] {
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
		if !walk[phys] {
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
	if len(dups) > 1<<16 {
		ks.src.dups, ks.src.filter = nil, nil
	} else {
		clear(dups)
	}
	for phys, d := range ks.pdbs {
		if !walk[phys] {
			continue
		}
		for si := range d.keys.segs {
			slots := d.keys.segs[si].slots
			for i := range slots {
				if sl := &slots[i]; sl.v.loc&locDirty != 0 { // a free slot's loc is 0
					sl.v.loc &^= locDirty
				}
			}
		}
	}
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

// takeByLookup takes the listed pairs of the databases walk does not
// name, each looked up: a live key's dirty bit says whether its pair was
// taken already, and a set holds the deleted pairs taken when the list may
// name a pair twice.
func (ks *Keyspace) takeByLookup(a *heapKeys, refs []dirtyRef, walk []bool) {
	for _, r := range refs {
		if walk[r.phys()] {
			continue
		}
		if sl := ks.findRef(r); sl != nil {
			if sl.v.loc&locDirty == 0 {
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
// and deleted keys), for INFO.
func (ks *Keyspace) DirtyKeys() int {
	if ks.src.maybeDup {
		ks.compactDirty()
	}
	return len(ks.src.dirty)
}

func (ks *Keyspace) lastLSN() uint64 {
	if ks.LastLSN == nil {
		return 0
	}
	return ks.LastLSN()
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
				ks.src.dirty = append(ks.src.dirty, refOf(d, sl))
			}
		})
	}
	for p, id := range ks.src.graves {
		if id.File == file {
			delete(ks.src.graves, p)
			ks.src.dirty = append(ks.src.dirty, refOfGrave(p.db, p.key))
			ks.src.deaths++
			ks.src.maybeDup = true
			n++
		}
	}
	ks.compactDirty()
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

// removedRaw is removed without the compaction check, for walks of a
// table: compaction looks keys up, and must see a consistent keyspace.
func (ks *Keyspace) removedRaw(d *db, sl *slot[entry]) {
	if id, ok := ks.takeLoc(d.phys, sl); ok {
		ks.addGrave(d.phys, sl.key(), id)
	}
	if sl.v.loc&locDirty == 0 {
		sl.v.loc |= locDirty
		ks.src.dirty = append(ks.src.dirty, refOf(d, sl))
	}
	ks.src.deaths++
}
