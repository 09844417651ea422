package keyspace

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// zsetLP is a sorted set's "listpack" form: its n pairs in order in one
// flat allocation of exactly allocSize(used) bytes (nil when empty), each
//
//	uvarint(len(member) << 1 | float) ‖ member ‖ score
//
// where score is, for an integral score of magnitude below 2^50 (not -0),
// float 0 and uvarint(zigzag(score)): one byte below 64 in magnitude, two
// below 8192, three below 2^20; for any other score, float 1 and the 8
// bytes of the IEEE 754 float64, little endian. Integral scores are the
// common case (counters, timestamps, ranks) and take 1-3 bytes instead of
// 8, as Redis's listpack stores them as integers; the flag costs nothing
// for members shorter than 64 bytes.
//
// Every operation is a walk from the start; the form is kept for sets small
// enough (zset-max-listpack-entries) that the walk is cheap. The header is
// a pointer and two 32-bit counts, so that a zset (zset.go) is 24 bytes.
type zsetLP struct {
	p    *byte
	used uint32 // bytes in use, the whole allocation's size class
	n    uint32 // pairs
}

const (
	// zlpIntLimit bounds the integral scores stored as integers.
	zlpIntLimit = 1 << 50
	// zlpMaxBytes bounds a listpack's bytes (used is 32 bits): an insert
	// past it converts the set to a skiplist.
	zlpMaxBytes = 1 << 30
)

// bytes returns the pairs. The caller must not keep them past a change.
func (l *zsetLP) bytes() []byte {
	if l.p == nil {
		return nil
	}
	return unsafe.Slice(l.p, l.used)
}

func (l *zsetLP) count() int { return int(l.n) }

func (l *zsetLP) heapBytes() int64 { return allocSize(int64(l.used)) }

// resize makes the listpack used bytes long, keeping its first keep
// bytes, in place when the size class stays, and returns the bytes.
func (l *zsetLP) resize(used, keep int) []byte {
	if used == 0 {
		l.p, l.used = nil, 0
		return nil
	}
	if l.p != nil && allocSize(int64(used)) == allocSize(int64(l.used)) {
		l.used = uint32(used)
		return unsafe.Slice(l.p, used)
	}
	nb := make([]byte, allocSize(int64(used)))
	copy(nb, l.bytes()[:keep])
	l.p, l.used = unsafe.SliceData(nb), uint32(used)
	return nb[:used]
}

// zlpFromHeap builds the listpack form of n pairs in the heap layout
// (zset.go).
func zlpFromHeap(body []byte, n int) zsetLP {
	size := 0
	for off := 0; off < len(body); {
		m, s, next := heapZEntry(body, off)
		size += zlpEntrySize(m, s)
		off = next
	}
	var l zsetLP
	b := l.resize(size, 0)
	at := 0
	for off := 0; off < len(body); {
		m, s, next := heapZEntry(body, off)
		at += putZlpEntry(b[at:], m, s)
		off = next
	}
	l.n = uint32(n)
	return l
}

// appendHeap appends the pairs in the heap layout.
func (l *zsetLP) appendHeap(dst []byte) []byte {
	b := l.bytes()
	for off := 0; off < len(b); {
		m, s, next := zlpEntry(b, off)
		dst = appendZEntry(dst, m, s)
		off = next
	}
	return dst
}

// clone returns a copy with its own allocation.
func (l *zsetLP) clone() zsetLP {
	var c zsetLP
	copy(c.resize(int(l.used), 0), l.bytes())
	c.n = l.n
	return c
}

// zlpIntScore reports whether s is stored as an integer, and which.
func zlpIntScore(s float64) (int64, bool) {
	if s <= -zlpIntLimit || s >= zlpIntLimit || s != math.Trunc(s) || s == 0 && math.Signbit(s) {
		return 0, false
	}
	return int64(s), true
}

// zlpScoreSize is the size of a score's encoding.
func zlpScoreSize(s float64) int {
	if i, ok := zlpIntScore(s); ok {
		return uvarintLen(zigzag(i))
	}
	return 8
}

func zigzag(i int64) uint64 { return uint64(i<<1) ^ uint64(i>>63) }

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// zlpEntrySize is the size of a pair's entry.
func zlpEntrySize(m []byte, s float64) int {
	return uvarintLen(uint64(len(m))<<1) + len(m) + zlpScoreSize(s)
}

// putZlpEntry encodes a pair into dst, which has room, and returns its
// size.
func putZlpEntry(dst, m []byte, s float64) int {
	i, isInt := zlpIntScore(s)
	hdr := uint64(len(m)) << 1
	if !isInt {
		hdr |= 1
	}
	k := binary.PutUvarint(dst, hdr)
	k += copy(dst[k:], m)
	if isInt {
		return k + binary.PutUvarint(dst[k:], zigzag(i))
	}
	binary.LittleEndian.PutUint64(dst[k:], math.Float64bits(s))
	return k + 8
}

// zlpEntry decodes the pair at off of b, which must be one, and returns
// the offset of the next. Members shorter than 64 bytes and scores of one
// or two bytes (integers of magnitude below 8192) take the short paths.
func zlpEntry(b []byte, off int) (m []byte, s float64, next int) {
	start := off + 1
	hdr := uint64(b[off])
	if hdr >= 0x80 {
		var k int
		hdr, k = binary.Uvarint(b[off:])
		start = off + k
	}
	end := start + int(hdr>>1)
	m = b[start:end:end]
	if hdr&1 != 0 {
		return m, math.Float64frombits(binary.LittleEndian.Uint64(b[end:])), end + 8
	}
	c := uint64(b[end])
	if c < 0x80 {
		return m, float64(unzigzag(c)), end + 1
	}
	if c2 := uint64(b[end+1]); c2 < 0x80 {
		return m, float64(unzigzag(c&0x7f | c2<<7)), end + 2
	}
	u, k := binary.Uvarint(b[end:])
	return m, float64(unzigzag(u)), end + k
}

// heapZEntry decodes the pair at off of pairs in the heap layout, which
// must be one, and returns the offset of the next.
func heapZEntry(b []byte, off int) (m []byte, s float64, next int) {
	n, k := binary.Uvarint(b[off:])
	start := off + k
	end := start + int(n)
	return b[start:end], math.Float64frombits(binary.LittleEndian.Uint64(b[end:])), end + 8
}

// zlpEntryChecked is heapZEntry for untrusted bytes.
func zlpEntryChecked(b []byte, off int) (m []byte, s float64, next int, ok bool) {
	n, k := binary.Uvarint(b[off:])
	if k <= 0 || k != uvarintLen(n) || n > uint64(len(b)-off-k) || uint64(len(b)-off-k)-n < 8 {
		return nil, 0, 0, false
	}
	start := off + k
	end := start + int(n)
	return b[start:end], math.Float64frombits(binary.LittleEndian.Uint64(b[end:])), end + 8, true
}

// find returns the offset of member's pair and its score, or -1.
func (l *zsetLP) find(member []byte) (off int, s float64, rank int) {
	b := l.bytes()
	for off, rank = 0, 0; off < len(b); rank++ {
		m, sc, next := zlpEntry(b, off)
		if string(m) == string(member) {
			return off, sc, rank
		}
		off = next
	}
	return -1, 0, -1
}

func (l *zsetLP) score(member []byte) (float64, bool) {
	off, s, _ := l.find(member)
	return s, off >= 0
}

func (l *zsetLP) rank(member []byte) (int, bool) {
	off, _, r := l.find(member)
	return r, off >= 0
}

func (l *zsetLP) countWhile(before func(m []byte, s float64) bool) int {
	b := l.bytes()
	i := 0
	for off := 0; off < len(b); i++ {
		m, s, next := zlpEntry(b, off)
		if !before(m, s) {
			break
		}
		off = next
	}
	return i
}

func (l *zsetLP) each(start, end int, rev bool, fn func(m []byte, s float64)) {
	b := l.bytes()
	if !rev {
		off := 0
		for i := 0; i <= end; i++ {
			m, s, next := zlpEntry(b, off)
			if i >= start {
				fn(m, s)
			}
			off = next
		}
		return
	}
	// Pairs have no back links: note the offsets of the range, then walk
	// them backwards.
	var small [32]int
	offs := small[:0]
	off := 0
	for i := 0; i <= end; i++ {
		if i >= start {
			offs = append(offs, off)
		}
		_, _, off = zlpEntry(b, off)
	}
	for i := len(offs) - 1; i >= 0; i-- {
		m, s, _ := zlpEntry(b, offs[i])
		fn(m, s)
	}
}

// fitsOneMore reports whether a pair of member and score may be added
// within zlpMaxBytes.
func (l *zsetLP) fitsOneMore(member []byte, score float64) bool {
	return int(l.used)+zlpEntrySize(member, score) <= zlpMaxBytes
}

// insert adds member, which must be absent, in its place.
func (l *zsetLP) insert(member []byte, score float64) {
	old := l.bytes()
	at := 0
	for at < len(old) {
		m, s, next := zlpEntry(old, at)
		if zless(score, member, s, m) {
			break
		}
		at = next
	}
	size := zlpEntrySize(member, score)
	oldLen := len(old)
	b := l.resize(oldLen+size, at)
	copy(b[at+size:], old[at:oldLen])
	putZlpEntry(b[at:], member, score)
	l.n++
}

// remove deletes member's pair.
func (l *zsetLP) remove(member []byte) bool {
	off, _, _ := l.find(member)
	if off < 0 {
		return false
	}
	old := l.bytes()
	_, _, next := zlpEntry(old, off)
	size := next - off
	oldLen := len(old)
	if allocSize(int64(oldLen-size)) == allocSize(int64(oldLen)) {
		copy(old[off:], old[next:])
		l.resize(oldLen-size, oldLen-size)
	} else {
		b := l.resize(oldLen-size, off)
		copy(b[off:], old[next:])
	}
	l.n--
	return true
}
