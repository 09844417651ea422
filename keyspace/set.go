package keyspace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"unsafe"
)

// The set kind (Redis's OBJ_SET). A set value's pointer (value.p) is one of
// three representations, told apart by the first byte they point to:
//
//	setEncIntset    a flat block: a 4-byte header, then the members as
//	                sorted little-endian integers of the smallest width (2, 4
//	                or 8 bytes) that fits them all, as Redis's intset.
//	                Redis's "intset".
//	setEncListpack  a flat block: a 12-byte header, then each member as
//	                uvarint(length) ‖ bytes, in insertion order. Redis's
//	                "listpack" (the 7.2 encoding, see below).
//	setEncHash      a *setTable: a dict of the members. "hashtable".
//
// The intset's header is enc|width<<2 (1) ‖ count (3), little endian: ten
// small integers take 24 bytes (Redis's intset takes 28, in 32). The
// listpack's is enc (1) ‖ 0 (3) ‖ count (4) ‖ used (4), used being the
// block's length in use, header included. A flat block is allocated at
// allocSize(used) bytes, and reallocated whenever a change moves used to
// another size class, so that allocSize(used) is always its exact size:
// heapBytes is O(1) and exact, and a change within a size class is done in
// place. The blocks hold no pointers: the garbage collector never scans
// them. An intset holds at most 2^24-1 members (Redis allows 2^30): past
// that, whatever set-max-intset-entries says, it becomes a hashtable.
//
// Conversions follow Redis 7.2's t_set.c (Redis 7.0 has no listpack sets:
// it answers "hashtable" where this answers "listpack"; the issue asks for
// the 7.2 behaviour): a new set is an intset if its first member is an
// integer and SADD's member count is within set-max-intset-entries, else a
// listpack if within set-max-listpack-entries, else a hashtable; SADD of
// more members than a compact encoding's limit converts first; an intset
// past set-max-intset-entries becomes a hashtable; an intset given a
// non-integer becomes a listpack when it stays within the listpack limits,
// else a hashtable; a listpack past set-max-listpack-entries or given a
// member longer than set-max-listpack-value becomes a hashtable. Nothing
// converts back but a SINTERSTORE result of integers only (Redis's
// maybeConvertToIntset) and a decoded value (setDecode).
const (
	setEncIntset   = 1
	setEncListpack = 2
	setEncHash     = 3

	isHdr   = 4
	lpHdr   = 12
	encMask = 3
)

// setTable is the hashtable representation. enc comes first: it is the
// byte every representation starts with.
type setTable struct {
	enc    uint8
	d      dict[struct{}]
	keyMem int64       // allocSize of every member's string
	ck     *chunkTrack // when stored in chunks (chunk.go)
}

// setSeed hashes the members of every set table.
var setSeed = maphash.MakeSeed()

func setEnc(p unsafe.Pointer) uint8 { return *(*uint8)(p) & encMask }

func setTab(p unsafe.Pointer) *setTable { return (*setTable)(p) }

// flat returns a flat block's bytes in use.
func flat(p unsafe.Pointer) []byte {
	h := unsafe.Slice((*byte)(p), isHdr)
	if h[0]&encMask == setEncIntset {
		return unsafe.Slice((*byte)(p), isHdr+flatCount(h)*int(isWidthOf(h)))
	}
	return unsafe.Slice((*byte)(p), binary.LittleEndian.Uint32(unsafe.Slice((*byte)(p), lpHdr)[8:]))
}

func flatCount(b []byte) int {
	if b[0]&encMask == setEncIntset {
		return int(b[1]) | int(b[2])<<8 | int(b[3])<<16
	}
	return int(binary.LittleEndian.Uint32(b[4:]))
}

func setFlatCount(b []byte, n int) {
	if b[0]&encMask == setEncIntset {
		b[1], b[2], b[3] = byte(n), byte(n>>8), byte(n>>16)
		return
	}
	binary.LittleEndian.PutUint32(b[4:], uint32(n))
}

// isWidthOf is an intset's width.
func isWidthOf(b []byte) uint8 { return b[0] >> 2 }

// newIntset allocates an intset of n members of width w, its members
// left zero.
func newIntset(w uint8, n int) []byte {
	used := isHdr + n*int(w)
	b := make([]byte, allocSize(int64(used)))[:used]
	b[0] = setEncIntset | w<<2
	setFlatCount(b, n)
	return b
}

// newListpack allocates a listpack of used bytes (header included) that
// holds n members (the caller writes them).
func newListpack(n, used int) []byte {
	b := make([]byte, allocSize(int64(used)))[:used]
	b[0] = setEncListpack
	setFlatCount(b, n)
	binary.LittleEndian.PutUint32(b[8:], uint32(used))
	return b
}

// resizeFlat returns a block for b's contents grown or shrunk to used
// bytes: b itself when the size class is the same, else a copy.
func resizeFlat(b []byte, used int) []byte {
	if allocSize(int64(used)) == allocSize(int64(len(b))) {
		b = unsafe.Slice(unsafe.SliceData(b), used)
	} else {
		nb := make([]byte, allocSize(int64(used)))[:used]
		copy(nb, b[:min(len(b), used)])
		b = nb
	}
	if b[0]&encMask == setEncListpack {
		binary.LittleEndian.PutUint32(b[8:], uint32(used))
	}
	return b
}

func ptrOf(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

// setCard is SCARD's answer.
func setCard(p unsafe.Pointer) int {
	if setEnc(p) == setEncHash {
		return setTab(p).d.count
	}
	return flatCount(flat(p))
}

func setEncodingName(p unsafe.Pointer) string {
	switch setEnc(p) {
	case setEncIntset:
		return "intset"
	case setEncListpack:
		return "listpack"
	}
	return "hashtable"
}

func setHeapBytes(p unsafe.Pointer) int64 {
	if setEnc(p) == setEncHash {
		t := setTab(p)
		return allocSize(int64(unsafe.Sizeof(setTable{}))) + t.d.memory() + t.keyMem
	}
	return allocSize(int64(len(flat(p))))
}

// setIsMember is SISMEMBER's test. It allocates nothing.
func setIsMember(p unsafe.Pointer, m []byte) bool {
	switch setEnc(p) {
	case setEncIntset:
		v, ok := parseInt(m)
		if !ok {
			return false
		}
		_, found := isFind(flat(p), v)
		return found
	case setEncListpack:
		return lpFind(flat(p), m) >= 0
	}
	t := setTab(p)
	return t.d.find(t.d.hash(m), m) != nil
}

// setEach calls fn with every member; m is valid only during the call.
// fn must not change the set.
func setEach(p unsafe.Pointer, fn func(m []byte)) {
	switch setEnc(p) {
	case setEncIntset:
		b := flat(p)
		var buf [20]byte
		for i := range flatCount(b) {
			fn(appendInt(buf[:0], isGet(b, i)))
		}
	case setEncListpack:
		b := flat(p)
		for off := lpHdr; off < len(b); {
			m, next := lpEntry(b, off)
			fn(m)
			off = next
		}
	default:
		setTab(p).d.each(func(sl *slot[struct{}]) { fn(sl.keyBytes()) })
	}
}

// setMembers returns copies of the members.
func setMembers(p unsafe.Pointer) [][]byte {
	out := make([][]byte, 0, setCard(p))
	setEach(p, func(m []byte) { out = append(out, append([]byte(nil), m...)) })
	return out
}

// setAdd adds m, converting the set as Redis does, and returns the set's
// (possibly new) pointer and whether m was added.
func setAdd(p unsafe.Pointer, m []byte, lim *EncodingLimits) (unsafe.Pointer, bool) {
	switch setEnc(p) {
	case setEncIntset:
		b := flat(p)
		if v, ok := parseInt(m); ok {
			nb, added := isAdd(b, v)
			if added && int64(flatCount(nb)) > intsetMax(lim) {
				return setToTable(ptrOf(nb), 0), true
			}
			return ptrOf(nb), added
		}
		if intsetFitsListpack(b, len(m), lim) {
			lp := intsetToListpack(b)
			return ptrOf(lpAppend(lp, m)), true
		}
		np := setToTable(p, 1)
		tableAdd(setTab(np), m)
		return np, true
	case setEncListpack:
		b := flat(p)
		if lpFind(b, m) >= 0 {
			return p, false
		}
		if int64(flatCount(b)) < lim.SetMaxListpackEntries && int64(len(m)) <= lim.SetMaxListpackValue {
			return ptrOf(lpAppend(b, m)), true
		}
		np := setToTable(p, 1)
		tableAdd(setTab(np), m)
		return np, true
	}
	return p, tableAdd(setTab(p), m)
}

// intsetFitsListpack is Redis's test for turning an intset given a
// non-integer of length n into a listpack rather than a hashtable.
func intsetFitsListpack(b []byte, n int, lim *EncodingLimits) bool {
	cnt := flatCount(b)
	longest := 0
	if cnt > 0 {
		longest = max(intLen(isGet(b, 0)), intLen(isGet(b, cnt-1)))
	}
	return int64(cnt) < lim.SetMaxListpackEntries && int64(n) <= lim.SetMaxListpackValue &&
		int64(longest) <= lim.SetMaxListpackValue
}

// intsetMax is the most members an intset may hold (Redis caps it at 2^30,
// this header at 2^24-1).
func intsetMax(lim *EncodingLimits) int64 { return min(lim.SetMaxIntsetEntries, 1<<24-1) }

// setRemove removes m and returns the set's (possibly new) pointer and
// whether m was there. It never converts; the caller deletes an empty set.
func setRemove(p unsafe.Pointer, m []byte) (unsafe.Pointer, bool) {
	switch setEnc(p) {
	case setEncIntset:
		v, ok := parseInt(m)
		if !ok {
			return p, false
		}
		nb, removed := isRemove(flat(p), v)
		return ptrOf(nb), removed
	case setEncListpack:
		b := flat(p)
		off := lpFind(b, m)
		if off < 0 {
			return p, false
		}
		return ptrOf(lpDeleteAt(b, off)), true
	}
	return p, tableRemove(setTab(p), m)
}

// setConvertForHint is setTypeMaybeConvert: a compact set that SADD is
// about to give n members converts first when n is past its limit.
func setConvertForHint(p unsafe.Pointer, n int, lim *EncodingLimits) unsafe.Pointer {
	switch setEnc(p) {
	case setEncIntset:
		if int64(n) > intsetMax(lim) {
			return setToTable(p, n)
		}
	case setEncListpack:
		if int64(n) > lim.SetMaxListpackEntries {
			return setToTable(p, n)
		}
	}
	return p
}

// newSet is setTypeCreate: an empty set fit for first as its first member
// and about hint members in all.
func newSet(first []byte, hint int, lim *EncodingLimits) unsafe.Pointer {
	if _, ok := parseInt(first); ok && int64(hint) <= intsetMax(lim) {
		return ptrOf(newIntset(2, 0))
	}
	if int64(hint) <= lim.SetMaxListpackEntries {
		return ptrOf(newListpack(0, lpHdr))
	}
	return newTable(hint)
}

// newTable returns an empty hashtable sized for hint members.
func newTable(hint int) unsafe.Pointer {
	t := &setTable{enc: setEncHash, d: newDict[struct{}](setSeed)}
	t.d.reserve(hint)
	return unsafe.Pointer(t)
}

// setToTable converts a compact set to a hashtable sized for its members
// plus extra.
func setToTable(p unsafe.Pointer, extra int) unsafe.Pointer {
	np := newTable(setCard(p) + extra)
	t := setTab(np)
	setEach(p, func(m []byte) { tableAdd(t, m) })
	return np
}

func tableAdd(t *setTable, m []byte) bool {
	h := t.d.hash(m)
	if t.d.find(h, m) != nil {
		return false
	}
	t.d.insert(h, string(m), struct{}{}, 0)
	t.ck.mark(h)
	t.keyMem += allocSize(int64(len(m)))
	return true
}

// tableTrim drops the slot arrays the table's dict keeps for reuse when
// they exceed an eighth of its slots: the dict allows every table 64 KiB
// of them, which suits a database but would add a third to a set of a
// thousand members, and a keyspace may hold many such sets.
func tableTrim(t *setTable) {
	if t.d.spareMem > t.d.slotMem/8 {
		t.d.spare, t.d.spareMem = nil, 0
	}
}

// setTrim is tableTrim for a set of any representation.
func setTrim(p unsafe.Pointer) {
	if setEnc(p) == setEncHash {
		tableTrim(setTab(p))
	}
}

func tableRemove(t *setTable, m []byte) bool {
	h := t.d.hash(m)
	if !t.d.remove(h, m) {
		return false
	}
	t.ck.mark(h)
	t.keyMem -= allocSize(int64(len(m)))
	return true
}

// tableRandom returns a member of a non-empty table. In a table of a few
// segments the pick is uniform: a random slot of a random segment, as if
// every segment had as many slots as the widest, tried again when empty
// (dict.random prefers members after long runs of empty slots, which
// SRANDMEMBER's distribution would show on a small set). A larger table
// takes dict.random's pick, which is O(1) and, over many segments, close
// to uniform, as Redis's own pick is.
func tableRandom(t *setTable) []byte {
	segs := t.d.segs
	if len(segs) <= 64 {
		widest := 0
		for i := range segs {
			widest = max(widest, len(segs[i].slots))
		}
		for range 256 {
			s := &segs[rand.IntN(len(segs))]
			if i := rand.IntN(widest); i < len(s.slots) && s.slots[i].kp != nil {
				return s.slots[i].keyBytes()
			}
		}
	}
	return t.d.random().keyBytes()
}

// setRandom returns a random member of a non-empty set, as bytes valid
// until the set changes or *buf is reused (an intset's member is written
// to *buf; the others alias the set).
func setRandom(p unsafe.Pointer, buf *[]byte) []byte {
	switch setEnc(p) {
	case setEncIntset:
		b := flat(p)
		*buf = appendInt((*buf)[:0], isGet(b, rand.IntN(flatCount(b))))
		return *buf
	case setEncListpack:
		b := flat(p)
		return lpAt(b, rand.IntN(flatCount(b)))
	}
	return tableRandom(setTab(p))
}

// setClone is COPY's deep copy.
func setClone(p unsafe.Pointer) unsafe.Pointer {
	if setEnc(p) != setEncHash {
		b := flat(p)
		nb := make([]byte, allocSize(int64(len(b))))[:len(b)]
		copy(nb, b)
		return ptrOf(nb)
	}
	np := newTable(setCard(p))
	t := setTab(np)
	setEach(p, func(m []byte) { tableAdd(t, m) })
	return np
}

func appendInt(dst []byte, v int64) []byte { return intValue(v).appendTo(dst) }

// The heap encoding of a set (objectType.encode/decode, and MOOND.APPLY
// PUT's value):
//
//	type(1) ‖ uvarint(count) ‖ members
//
// type 0: every member is an integer, written as a varint (zigzag), in
// ascending order (an intset's); type 1: each member is uvarint(length) ‖
// bytes. count is at least 1 and no member appears twice. Decoding
// rebuilds the representation Redis's RDB load would pick under the
// keyspace's limits: an intset when every member is an integer and there
// are at most set-max-intset-entries; else a listpack when within
// set-max-listpack-entries and -value; else a hashtable.
const (
	setCodecInts    = 0
	setCodecStrings = 1
)

func setEncode(p unsafe.Pointer, dst []byte) []byte {
	n := setCard(p)
	if setEnc(p) == setEncIntset {
		dst = append(dst, setCodecInts)
		dst = binary.AppendUvarint(dst, uint64(n))
		b := flat(p)
		for i := range n {
			dst = binary.AppendVarint(dst, isGet(b, i))
		}
		return dst
	}
	dst = append(dst, setCodecStrings)
	dst = binary.AppendUvarint(dst, uint64(n))
	setEach(p, func(m []byte) {
		dst = binary.AppendUvarint(dst, uint64(len(m)))
		dst = append(dst, m...)
	})
	return dst
}

var errSetCodec = errors.New("malformed set encoding")

func setDecode(b []byte, lim *EncodingLimits) (unsafe.Pointer, error) {
	if len(b) < 2 || b[0] > setCodecStrings {
		return nil, fmt.Errorf("%w: bad type or length (%d bytes)", errSetCodec, len(b))
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || n == 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("%w: bad count", errSetCodec)
	}
	rest := b[1+k:]
	var p unsafe.Pointer
	var buf [20]byte
	for i := range n {
		var m []byte
		if b[0] == setCodecInts {
			v, k := binary.Varint(rest)
			if k <= 0 {
				return nil, fmt.Errorf("%w: truncated integer", errSetCodec)
			}
			m, rest = appendInt(buf[:0], v), rest[k:]
		} else {
			l, k := binary.Uvarint(rest)
			if k <= 0 || l > uint64(len(rest)-k) {
				return nil, fmt.Errorf("%w: truncated member", errSetCodec)
			}
			m, rest = rest[k:k+int(l)], rest[k+int(l):]
		}
		if i == 0 {
			p = newSet(m, int(n), lim)
		}
		var added bool
		if p, added = setAdd(p, m, lim); !added {
			return nil, fmt.Errorf("%w: duplicate member", errSetCodec)
		}
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errSetCodec, len(rest))
	}
	setTrim(p)
	return p, nil
}

func init() {
	registerObjectType(KindSet, &objectType{
		encoding:  setEncodingName,
		heapBytes: setHeapBytes,
		encode:    setEncode,
		decode:    setDecode,
		clone:     setClone,
		chunked:   setChunked,
	})
}
