package keyspace

import (
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"unsafe"
)

// dict is the hash table of one database: byte-string keys to values of
// type V. It is built for what a Redis keyspace needs and a Go map cannot
// give:
//
//   - Updates in place: overwriting a value never copies the key again, and
//     the stored key can be read back (the expires table shares its bytes).
//   - A SCAN cursor that returns every key present for the whole scan at
//     least once, however the table grows or shrinks between calls.
//   - Cheap random picks (RANDOMKEY) and incremental walks (active expiry).
//   - Growth and shrinkage in small steps, never a pause to rehash it all.
//
// The table is linear hashing over small segments. With base = 1<<level,
// segs holds base+split segments; a key whose hash is h lives in segment
// h&(base-1), or h&(2*base-1) when that is below split (segments below
// split have already been split in two at this level). When the average
// segment holds more than splitLoad keys, segment split is split into
// itself and split+base by hash bit level; when it holds fewer than
// mergeLoad, the last split is undone. Each step touches one segment.
//
// A segment keeps its keys dense, in a slot array with no free slot
// between them (a remove moves the last slot into the hole), and the
// 7-bit hash tags of its first segTags keys in the segment header itself,
// which is one cache line: a lookup compares the tags eight at a time and
// reads only the slots whose tag matches, then their keys. The array
// grows by about an eighth, to its allocation's size class, so that a
// slot costs little more than its 40 bytes (an open-addressed array at
// a load that keeps probes short spends 60-70). A segment that has more
// than segTags keys (rare: segments average splitLoad) compares the rest
// by the tag in their kw.
type dict[V any] struct {
	segs    []segment[V]
	level   uint
	split   int
	count   int
	slotMem int64 // bytes of all segments' slot arrays, for memory accounting
	// segsMem is the memory of the segs array when its capacity was
	// segsCap: memory() runs at each eviction check over every database's
	// tables, and the size class lookup is most of its cost.
	segsCap int
	segsMem int64
	seed    maphash.Seed
	hashes  []uint64 // scratch for splits

	// spare holds slot arrays that growth, splits and merges let go of,
	// cleared, by capacity, for the next segment that needs that many
	// slots (slotsFor makes capacities few: size classes). A growing
	// table thus reuses the arrays it outgrew instead of leaving them to
	// the garbage collector: loading a million keys allocated about 290
	// bytes of slot arrays per key without it. spareMem is their memory,
	// bounded by spareLimit.
	spare    map[int][][]slot[V]
	spareMem int64

	// muts counts the changes that may move or free slots: inserts,
	// removes, growth, splits and merges. A slot pointer from find is
	// valid while muts is what it was when find returned it. The owner
	// keeps it growing when it replaces the dict (see dropDB).
	muts uint64
}

// segment is one segment: 64 bytes, a cache line.
type segment[V any] struct {
	slots []slot[V] // the live keys, len(slots) == used
	used  int32
	tags  [segTags / 8]uint64 // byte i is the kw tag of slots[i], for i < min(used, segTags)
}

// segTags is the number of tags a segment header holds.
const segTags = 32

// slot is one key and its value. kp is never nil in a segment's slots: a
// slot is live from insert to remove.
type slot[V any] struct {
	kp unsafe.Pointer // the key's bytes
	kw uint64         // key length | hash tag | the owner's bits (TTL flag, LRU clock)
	v  V
}

// Layout of a slot's kw.
const (
	kwLenMask  = 1<<32 - 1
	kwTagShift = 32
	kwTagMask  = 0x7f << kwTagShift
	kwTTL      = 1 << 39 // the key has an entry in its database's expires table
	kwLRUShift = 40
	kwLRUMask  = (1<<24 - 1) << kwLRUShift
)

// Tuning: average keys per segment that trigger a split or a merge, and
// the fewest slots a segment's array has.
const (
	splitLoad   = 16
	mergeLoad   = 4
	minSegSlots = 4
)

// emptyKey gives the empty key a non-nil address.
var emptyKey byte

func (s *slot[V]) key() string {
	return unsafe.String((*byte)(s.kp), int(s.kw&kwLenMask))
}

func (s *slot[V]) keyBytes() []byte {
	return unsafe.Slice((*byte)(s.kp), int(s.kw&kwLenMask))
}

func newDict[V any](seed maphash.Seed) dict[V] {
	return dict[V]{segs: make([]segment[V], 1), seed: seed}
}

func (d *dict[V]) hash(key []byte) uint64 { return maphash.Bytes(d.seed, key) }

func (d *dict[V]) hashString(key string) uint64 { return maphash.String(d.seed, key) }

// tagBits is the part of a hash kept in kw (and in the segment's tags) to
// skip most non-matching slots without touching their keys. It avoids the
// low bits that pick segments.
func tagBits(h uint64) uint64 { return (h >> 25 & 0x7f) << kwTagShift }

// kwTag is the segment tag of a slot's kw.
func kwTag(kw uint64) uint8 { return uint8(kw >> kwTagShift & 0x7f) }

func (d *dict[V]) segIndex(h uint64) int {
	base := uint64(1) << d.level
	i := h & (base - 1)
	if i < uint64(d.split) {
		i = h & (2*base - 1)
	}
	return int(i)
}

// SWAR constants: a byte repeated eight times.
const (
	ones8  = 0x0101010101010101
	highs8 = 0x8080808080808080
)

// tagMatches returns a mask with bit 7 of byte j set where the j-th of the
// tags in w equals the tag repeated in bcast, for the first n (all if n is
// 8 or more). A byte above a match may be flagged too (the subtraction
// borrows): callers check the slot's kw.
func tagMatches(w, bcast uint64, n int) uint64 {
	x := w ^ bcast
	m := (x - ones8) &^ x & highs8
	if n < 8 {
		m &= 1<<(8*uint(n)) - 1
	}
	return m
}

// setTag records tag t of slot i (< segTags) in s's header.
func (s *segment[V]) setTag(i int, t uint8) {
	sh := uint(i&7) * 8
	w := &s.tags[i>>3]
	*w = *w&^(0xff<<sh) | uint64(t)<<sh
}

// tag returns the recorded tag of slot i (< segTags).
func (s *segment[V]) tag(i int) uint8 { return uint8(s.tags[i>>3] >> (uint(i&7) * 8)) }

// lookup returns the segment that holds or would hold key and, if the key
// is there, its slot index (else -1).
func (d *dict[V]) lookup(h uint64, key []byte) (*segment[V], int) {
	s := &d.segs[d.segIndex(h)]
	slots := s.slots
	want := uint64(len(key)) | tagBits(h)
	bcast := ones8 * (want >> kwTagShift)
	for k := 0; k < len(slots) && k < segTags; k += 8 {
		for m := tagMatches(s.tags[k>>3], bcast, len(slots)-k); m != 0; m &= m - 1 {
			j := k + bits.TrailingZeros64(m)>>3
			if sl := &slots[j]; sl.kw&(kwLenMask|kwTagMask) == want && sl.key() == string(key) {
				return s, j
			}
		}
	}
	for j := segTags; j < len(slots); j++ {
		if sl := &slots[j]; sl.kw&(kwLenMask|kwTagMask) == want && sl.key() == string(key) {
			return s, j
		}
	}
	return s, -1
}

// candidate returns the first slot of key's segment whose tag and length
// are key's (likely key's slot), or nil; it reads that slot. Prefetching
// uses it to bring the slot into the cache.
func (d *dict[V]) candidate(h uint64, klen int) *slot[V] {
	s := &d.segs[d.segIndex(h)]
	slots := s.slots
	want := uint64(klen) | tagBits(h)
	bcast := ones8 * (want >> kwTagShift)
	for k := 0; k < len(slots) && k < segTags; k += 8 {
		for m := tagMatches(s.tags[k>>3], bcast, len(slots)-k); m != 0; m &= m - 1 {
			if sl := &slots[k+bits.TrailingZeros64(m)>>3]; sl.kw&(kwLenMask|kwTagMask) == want {
				return sl
			}
		}
	}
	return nil
}

// insertTargets returns, for prefetching, the slots that a lookup and then
// an insert of a key with hash h touch in its segment, from the segment's
// header alone: the first slot whose tag is the key's (nil if none; the
// lookup reads it, and compares its key unless the lengths differ), and
// the slot the insert would fill (nil if the segment must grow first).
func (d *dict[V]) insertTargets(h uint64) (tagged, ins *slot[V]) {
	s := &d.segs[d.segIndex(h)]
	n := min(int(s.used), segTags)
	bcast := ones8 * (tagBits(h) >> kwTagShift)
	for k := 0; k < n; k += 8 {
		if m := tagMatches(s.tags[k>>3], bcast, n-k); m != 0 {
			tagged = &s.slots[k+bits.TrailingZeros64(m)>>3]
			break
		}
	}
	if int(s.used) < cap(s.slots) {
		ins = &s.slots[:s.used+1][s.used]
	}
	return tagged, ins
}

// touch reads the first and the last word of s, so that both cache lines
// a slot may span are brought in (a 40-byte slot spans two half the time).
func (s *slot[V]) touch() uint64 {
	p := unsafe.Pointer(s)
	return *(*uint64)(p) + *(*uint64)(unsafe.Add(p, unsafe.Sizeof(*s)-8))
}

// find returns key's slot, or nil. The pointer is valid until the next
// insert or remove on this dict (while muts is unchanged).
func (d *dict[V]) find(h uint64, key []byte) *slot[V] {
	s, i := d.lookup(h, key)
	if i < 0 {
		return nil
	}
	return &s.slots[i]
}

// insert adds key, which the dict must not hold, with value v and the
// owner's kw bits extra, and returns its slot (valid until the next insert
// or remove). The dict keeps key: its bytes must never change.
func (d *dict[V]) insert(h uint64, key string, v V, extra uint64) *slot[V] {
	if len(key) > kwLenMask {
		panic("keyspace: key longer than 4 GiB")
	}
	d.count++
	d.muts++
	if d.count > splitLoad*len(d.segs) {
		d.splitOne()
	}
	s := &d.segs[d.segIndex(h)]
	if int(s.used) == cap(s.slots) {
		d.resize(s, int(s.used)+1)
	}
	kp := unsafe.Pointer(unsafe.StringData(key))
	if len(key) == 0 {
		kp = unsafe.Pointer(&emptyKey)
	}
	return s.push(&slot[V]{kp: kp, kw: uint64(len(key)) | tagBits(h) | extra, v: v})
}

// push appends a slot to s, which has room, and returns it.
func (s *segment[V]) push(from *slot[V]) *slot[V] {
	i := int(s.used)
	s.slots = s.slots[:i+1]
	sl := &s.slots[i]
	*sl = *from
	if i < segTags {
		s.setTag(i, kwTag(from.kw))
	}
	s.used++
	return sl
}

// removeAt deletes the key in slot i of s, as found by lookup: the last
// slot moves into its place.
func (d *dict[V]) removeAt(s *segment[V], i int) {
	d.muts++
	last := int(s.used) - 1
	if i != last {
		s.slots[i] = s.slots[last]
		if i < segTags {
			s.setTag(i, kwTag(s.slots[i].kw))
		}
	}
	s.slots[last] = slot[V]{}
	s.slots = s.slots[:last]
	s.used--
	d.count--
	if c := cap(s.slots); c > minSegSlots && int(s.used)*4 < c {
		d.resize(s, int(s.used))
	}
	if len(d.segs) > 1 && d.count < mergeLoad*len(d.segs) {
		d.mergeOne()
	}
}

// remove deletes key if present and reports whether it was.
func (d *dict[V]) remove(h uint64, key []byte) bool {
	s, i := d.lookup(h, key)
	if i < 0 {
		return false
	}
	d.removeAt(s, i)
	return true
}

// slotsFor is the capacity a segment's array gets when it must hold n
// keys: an eighth more, so that a run of inserts reallocates O(log n)
// times, and at least minSegSlots, rounded up to fill the allocation's
// size class.
func slotsFor[V any](n int) int {
	want := max(minSegSlots, n+n/8)
	size := int64(unsafe.Sizeof(slot[V]{}))
	return int((allocSize(withHeader(int64(want)*size)) - mallocHeader(int64(want)*size)) / size)
}

// mallocHeader is the per-object header the Go allocator (1.22 and later)
// puts in front of an object that holds pointers and is larger than 512
// bytes, such as a segment's slots.
func mallocHeader(n int64) int64 {
	if n > 512 {
		return 8
	}
	return 0
}

func withHeader(n int64) int64 { return n + mallocHeader(n) }

// slotsMem is the memory the allocator gives a slot array (of its
// capacity).
func slotsMem[V any](slots []slot[V]) int64 {
	return allocSize(withHeader(int64(cap(slots)) * int64(unsafe.Sizeof(slot[V]{}))))
}

// resize moves s's keys to a fresh array sized for need keys (none when
// need is 0).
func (d *dict[V]) resize(s *segment[V], need int) {
	d.muts++
	old := s.slots
	s.slots = nil
	if need > 0 {
		s.slots = d.newSlots(need)[:len(old)]
		copy(s.slots, old)
	}
	d.slotMem += slotsMem(s.slots) - slotsMem(old)
	d.freeSlots(old)
}

// newSlots returns an empty slot array (length 0) with room for need
// keys, from the spares when one of the right capacity is there.
func (d *dict[V]) newSlots(need int) []slot[V] {
	n := slotsFor[V](need)
	if list := d.spare[n]; len(list) > 0 {
		a := list[len(list)-1]
		list[len(list)-1] = nil
		d.spare[n] = list[:len(list)-1]
		d.spareMem -= slotsMem(a)
		return a
	}
	return make([]slot[V], 0, n)
}

// freeSlots takes back an array no segment uses any more: it becomes a
// spare, cleared so that it keeps no key or value alive, if the spares
// stay within spareLimit, else garbage.
func (d *dict[V]) freeSlots(a []slot[V]) {
	if cap(a) == 0 {
		return
	}
	mem := slotsMem(a)
	if d.spareMem+mem > d.spareLimit() || len(d.spare[cap(a)]) >= maxSparePerLen {
		return
	}
	a = a[:cap(a)]
	clear(a)
	if d.spare == nil {
		d.spare = make(map[int][][]slot[V])
	}
	d.spare[cap(a)] = append(d.spare[cap(a)], a[:0])
	d.spareMem += mem
}

// maxSparePerLen bounds the spares of one capacity. Frees and needs of a
// capacity alternate quickly while a table grows; without a bound the
// small capacities a young table used would pile up and fill spareLimit
// with arrays that a grown table no longer asks for.
const maxSparePerLen = 32

// spareLimit bounds the spares' memory: 1/16 of the table's slot arrays,
// and at least 64 KiB, so that a table shrunk by deletes does not keep
// what it no longer needs.
func (d *dict[V]) spareLimit() int64 { return max(64<<10, d.slotMem/16) }

// splitOne splits segment split into itself and split+base.
func (d *dict[V]) splitOne() {
	d.muts++
	base := 1 << d.level
	old := d.segs[d.split]
	d.hashes = d.hashes[:0]
	hi := 0
	for i := range old.slots {
		h := d.hashString(old.slots[i].key())
		d.hashes = append(d.hashes, h)
		if h&uint64(base) != 0 {
			hi++
		}
	}
	lo := len(d.hashes) - hi
	var los, his segment[V]
	if lo > 0 {
		los.slots = d.newSlots(lo)
	}
	if hi > 0 {
		his.slots = d.newSlots(hi)
	}
	for i := range old.slots {
		if d.hashes[i]&uint64(base) != 0 {
			his.push(&old.slots[i])
		} else {
			los.push(&old.slots[i])
		}
	}
	d.slotMem += slotsMem(los.slots) + slotsMem(his.slots) - slotsMem(old.slots)
	d.freeSlots(old.slots)
	d.segs[d.split] = los
	d.segs = append(d.segs, his)
	if d.split++; d.split == base {
		d.level++
		d.split = 0
	}
}

// mergeOne undoes the last split: the last segment rejoins its sibling.
func (d *dict[V]) mergeOne() {
	d.muts++
	if d.split == 0 {
		d.level--
		d.split = 1 << d.level
	}
	d.split--
	last := len(d.segs) - 1
	lo, hi := &d.segs[d.split], d.segs[last]
	d.segs[last] = segment[V]{}
	d.segs = d.segs[:last]
	if need := int(lo.used + hi.used); need > cap(lo.slots) {
		d.resize(lo, need)
	}
	for i := range hi.slots {
		lo.push(&hi.slots[i])
	}
	d.slotMem -= slotsMem(hi.slots)
	d.freeSlots(hi.slots)
	if cap(d.segs) > 64 && len(d.segs) < cap(d.segs)/4 {
		d.segs = append([]segment[V](nil), d.segs...)
	}
}

// each calls fn for every key. fn must not insert or remove.
func (d *dict[V]) each(fn func(*slot[V])) {
	for i := range d.segs {
		d.segs[i].each(fn)
	}
}

func (s *segment[V]) each(fn func(*slot[V])) {
	for i := range s.slots {
		if s.slots[i].kp != nil {
			fn(&s.slots[i])
		}
	}
}

// scan visits the keys at cursor, calls fn for each (fn must not insert or
// remove), and returns the next cursor; 0 means the walk is complete.
//
// The cursor is Redis's reverse-binary cursor (dictScan), over segment
// indices. Write m = base-1. The cursor names segment c&m; when that segment
// has been split at this level, its sibling c&m+base holds the rest of what
// it held, and both are visited in the same step, exactly as dictScan
// visits a bucket of the small table and its expansion in the large one
// during a rehash. The cursor then advances by incrementing its low level
// bits in reversed order. Visited segments are thus always those whose
// index, bit-reversed over level bits, is below the reversed cursor; a
// split or a level change never moves a key from an unvisited index to a
// visited one, so every key present for the whole walk is returned. Merges
// can make the walk return some keys twice, never miss one.
func (d *dict[V]) scan(cursor uint64, fn func(*slot[V])) uint64 {
	s1, s2, next := d.scanSegs(cursor)
	s1.each(fn)
	if s2 != nil {
		s2.each(fn)
	}
	return next
}

// scanSegs is scan's step without the calls: it returns the segments at
// cursor (the second is nil unless the first was split at this level) and
// the next cursor. The checkpoint's take walks tables with it (take.go).
func (d *dict[V]) scanSegs(cursor uint64) (*segment[V], *segment[V], uint64) {
	m := uint64(1)<<d.level - 1
	b := cursor & m
	var s2 *segment[V]
	if b < uint64(d.split) {
		s2 = &d.segs[b+m+1]
	}
	cursor |= ^m
	return &d.segs[b], s2, bits.Reverse64(bits.Reverse64(cursor) + 1)
}

// random returns a key picked at random, or nil when the dict is empty. The
// pick is not exactly uniform (keys in less crowded segments are a little
// likelier), as Redis's is not either.
func (d *dict[V]) random() *slot[V] {
	if d.count == 0 {
		return nil
	}
	for tries := 0; ; tries++ {
		var s *segment[V]
		if tries < 64 {
			s = &d.segs[rand.IntN(len(d.segs))]
		} else {
			s = &d.segs[tries%len(d.segs)] // a sparse table: walk it
		}
		if s.used > 0 {
			return &s.slots[rand.IntN(int(s.used))]
		}
	}
}

// memory is the table's own footprint in bytes, keys and values excluded.
// Segments' slot arrays fill their size classes (see slotsFor); each larger
// than 512 bytes also carries the allocator's header. Spare arrays count:
// the table holds them.
func (d *dict[V]) memory() int64 {
	if c := cap(d.segs); c != d.segsCap {
		d.segsCap, d.segsMem = c, allocSize(withHeader(int64(c)*int64(unsafe.Sizeof(segment[V]{}))))
	}
	return d.slotMem + d.spareMem + d.segsMem
}

// reserve sizes an empty dict for n keys at once: as many segments as
// splitting would have made (a power of two, so that every segment covers
// an equal share of the hashes), each with slots for its share. Loading n
// keys then neither splits nor rebuilds (but for the few segments the
// hash gives more than their share), which is most of what growing a
// table costs: every split and rebuild hashes its keys again, and reading
// a key's bytes for that is a cache miss. A dict that holds keys is left
// as it is.
func (d *dict[V]) reserve(n int) {
	if d.count != 0 || n <= splitLoad {
		return
	}
	level := uint(bits.Len(uint((n - 1) / splitLoad)))
	base := 1 << level
	share := (n + base - 1) / base
	d.freeSlots(d.segs[0].slots)
	d.slotMem = 0
	d.segs = make([]segment[V], base)
	// One allocation for every segment's slots rather than one each: a
	// large array comes zeroed from the operating system, where base
	// small ones would each be allocated, typed and cleared (a sixth of a
	// million-key boot). A segment that outgrows its share later gets an
	// array of its own, and its share becomes a spare like any other.
	per := slotsFor[V](share)
	all := make([]slot[V], base*per)
	prefault(unsafe.Pointer(unsafe.SliceData(all)), uintptr(len(all))*unsafe.Sizeof(all[0])) // see prefault
	for i := range d.segs {
		d.segs[i].slots = all[i*per : i*per : (i+1)*per]
		d.slotMem += slotsMem(d.segs[i].slots)
	}
	d.level, d.split = level, 0
	d.muts++
}
