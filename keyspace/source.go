package keyspace

import (
	"fmt"
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

// Layout of entry.loc: two dirty bits (63 and 62), file id (bits 31-61),
// page (bits 7-30), slot (bits 0-6). The dirty bits take turns: one marks
// the pairs changed since the take in progress began (source.cur), the
// other the keys that take has yet to take (source.prev; see take.go). A
// key never has both set. File ids start at 1, so a word whose file field
// is 0 holds no location, except locFar: the location did not fit and
// lives in source.far (a file id of 2^31 or more, which a counter from 1
// never reaches in practice, or a page too far). Files are 64 MiB (16384 pages) but a record whose
// chain is larger gets a file of its own, whose free pages may later hold
// any record's head: a head page at 2^24-1 or beyond needs a file over 64
// GiB (a record that large, or a MaxFileSize above it); a 512 MiB string
// under a 512 MiB key needs 2^18 pages.
const (
	locDirtyA    = 1 << 63
	locDirtyB    = 1 << 62
	locDirtyAny  = locDirtyA | locDirtyB
	locWhere     = locDirtyB - 1 // the location bits
	locFileLimit = 1 << 31       // a file id at or above it does not fit
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

	graves   map[pairKey]heap.RecordID
	far      map[pairKey]heap.RecordID
	seen     map[pairKey]struct{}    // scratch of TakeDirty and compactDirty
	verBuf   []byte                  // Version's encoded value
	chunks   map[pairKey]*pairChunks // the chunk records of pairs whose last version had chunks
	pending  chunkPending            // the chunks of the version Version returned last
	partBuf  []byte                  // Version's chunk values
	partKeys []byte                  // and their heap keys
	partEnds []int                   // where each value ends in partBuf
	parts    []heap.Record           // Version.Parts
	hint     placeHint               // the slot Version found, for Placed
	epoch    uint64                  // 0 or 1: which dirty bit is cur (see cur, prev)
}

// cur is the dirty bit of the pairs changed since the last take began.
func (s *source) cur() uint64 { return locDirtyA >> s.epoch }

// prev is the dirty bit of the keys the take in progress has yet to take
// (none when no take is in progress).
func (s *source) prev() uint64 { return locDirtyB << s.epoch }

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
	if id.Page >= locPageMask || uint64(id.Slot) > locSlotMask || uint64(id.File) >= locFileLimit {
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
	pair := pairKey{phys, unsafeString(key)}
	if sl == nil {
		v.DelLSN = lsn
		ks.src.pending = chunkPending{hk: hk, written: ks.src.pending.written[:0]}
		ks.oldParts(&v, ks.src.chunks[pair])
		return v
	}
	if sl.v.isCold() {
		panic(fmt.Sprintf("keyspace: the checkpoint took cold key %q: a cold key is clean (cold.go)", key))
	}
	when := ks.expiryOf(d, h, sl)
	v.Live = true
	v.Record = heap.Record{Key: hk, Kind: uint8(sl.v.kind()), KeyLSN: lsn}
	if when != -1 {
		v.Record.Expiry = when
	}
	if ks.versionChunks(&v, hk, pair, sl) {
		return v
	}
	if sl.v.kind() == KindString && !sl.v.isInt() {
		v.Record.Value = sl.v.bytes() // the string's own bytes: no copy
	} else {
		ks.src.verBuf = sl.v.appendEncoded(ks.src.verBuf[:0])
		v.Record.Value = ks.src.verBuf
	}
	return v
}

// DeadOld returns the record of the pair hk names when the pair has no
// key and has a record: what Version's Old is for a deleted pair. It
// implements checkpoint.DeadPeeker.
func (ks *Keyspace) DeadOld(hk []byte) (heap.RecordID, bool) {
	phys, key, err := DecodeHeapKey(hk)
	if err != nil || phys >= len(ks.pdbs) {
		return heap.RecordID{}, false
	}
	d := ks.pdbs[phys]
	if d.keys.find(d.keys.hash(key), key) != nil {
		return heap.RecordID{}, false
	}
	id, ok := ks.src.graves[pairKey{phys, unsafeString(key)}]
	return id, ok
}

// Placed records where the pair hk names has its record now: at id, for a
// live version (the key's location; the grave, superseded, is forgotten),
// or nowhere (!live: the grave is forgotten, and the location of a key, if
// one came back since Version). It implements checkpoint.Source.
//
// The checkpoint calls it right after Version for the same key: the slot
// Version found is used again when the table has not changed since and it
// holds the key (see placeHint); any other call looks the key up.
func (ks *Keyspace) Placed(hk []byte, id heap.RecordID, parts []heap.RecordID, live bool) {
	if ks.take.unplaced > 0 {
		ks.take.unplaced--
	}
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
		ks.placedChunks(hk, pairKey{phys, unsafeString(key)}, sl.key(), parts, true)
	case live:
		// Version said live in the same step, so this does not happen;
		// should it, the record must still be freed: it becomes the
		// pair's grave, and the pair is listed.
		k := string(key)
		ks.addGrave(phys, k, id)
		ks.pushDirty(refOfGrave(phys, k))
		ks.src.deaths++
		ks.src.maybeDup = true
		ks.placedChunks(hk, pairKey{phys, k}, k, parts, true)
	default:
		if sl != nil {
			ks.takeLoc(phys, sl)
		}
		ks.placedChunks(hk, pairKey{phys, unsafeString(key)}, "", nil, false)
	}
}

// RedirtyFile handles a heap file that vanished: every warm key whose
// location is in it loses the location and is marked dirty (a cold key
// keeps it: its value went with the file, see cold.go), and so is every pair
// whose grave is in it (the grave is forgotten: there is nothing left to
// free). It returns how many keys and graves it changed.
func (ks *Keyspace) RedirtyFile(file uint32) int {
	n := 0
	for _, d := range ks.pdbs {
		d.keys.each(func(sl *slot[entry]) {
			if sl.v.loc&locWhere == 0 || sl.v.isCold() {
				// A cold key keeps its location: its value is lost with
				// the file, and reading it answers an error (cold.go).
				return
			}
			if id, _ := ks.slotLoc(d.phys, sl); id.File != file {
				return
			}
			ks.takeLoc(d.phys, sl)
			n++
			if sl.v.loc&locDirtyAny == 0 { // a key the take in progress has yet to take is left to it
				sl.v.loc |= ks.src.cur()
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
	n += ks.redirtyChunks(file)
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
	if ks.watched != 0 {
		ks.touchAllWatched(i, -1)
	}
	d := ks.dbs[i]
	if ks.TrackDirty {
		d.keys.each(func(sl *slot[entry]) { ks.removedRaw(d, sl) })
	}
	ks.cold.keys -= d.coldKeys
	muts := d.keys.muts
	*d = *ks.newDB(d.phys)
	d.keys.muts = muts + 1 // slots of the old table are stale (see placeHint)
	ks.src.hint = placeHint{}
}

// dirtyListMemory is the dirty list's memory, for UsedMemory.
func (ks *Keyspace) dirtyListMemory() int64 {
	return allocSize(withHeader(int64(cap(ks.src.dirty)) * int64(unsafe.Sizeof(dirtyRef{}))))
}
