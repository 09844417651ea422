package keyspace

import (
	"encoding/binary"
	"math"
)

// zsetLP is a sorted set's "listpack" form: its n pairs in order in one
// byte slice, each uvarint(len(member)) ‖ member ‖ score (8 bytes, IEEE
// 754, little endian): the heap encoding without its count (zset.go). Every
// operation is a walk from the start; the form is kept for sets small
// enough (zset-max-listpack-entries) that the walk is cheap.
type zsetLP struct {
	b []byte
	n int
}

func (l *zsetLP) heapBytes() int64 { return allocSize(int64(cap(l.b))) }

// entry decodes the pair at off, which must be one, and returns the
// offset of the next.
func (l *zsetLP) entry(off int) (m []byte, s float64, next int) {
	n, k := binary.Uvarint(l.b[off:])
	start := off + k
	end := start + int(n)
	return l.b[start:end], math.Float64frombits(binary.LittleEndian.Uint64(l.b[end:])), end + 8
}

// zlpEntryChecked is entry for untrusted bytes.
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
	for off, rank = 0, 0; off < len(l.b); rank++ {
		m, sc, next := l.entry(off)
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
	i := 0
	for off := 0; off < len(l.b); i++ {
		m, s, next := l.entry(off)
		if !before(m, s) {
			break
		}
		off = next
	}
	return i
}

func (l *zsetLP) each(start, end int, rev bool, fn func(m []byte, s float64)) {
	if !rev {
		off := 0
		for i := 0; i <= end; i++ {
			m, s, next := l.entry(off)
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
		_, _, off = l.entry(off)
	}
	for i := len(offs) - 1; i >= 0; i-- {
		m, s, _ := l.entry(offs[i])
		fn(m, s)
	}
}

// insert adds member, which must be absent, in its place.
func (l *zsetLP) insert(member []byte, score float64) {
	at := 0
	for at < len(l.b) {
		m, s, next := l.entry(at)
		if zless(score, member, s, m) {
			break
		}
		at = next
	}
	size := uvarintLen(uint64(len(member))) + len(member) + 8
	need := len(l.b) + size
	if need > cap(l.b) {
		nb := make([]byte, len(l.b), allocSize(int64(need)))
		copy(nb, l.b)
		l.b = nb
	}
	l.b = l.b[:need]
	copy(l.b[at+size:], l.b[at:need-size])
	appendZEntry(l.b[at:at], member, score)
	l.n++
}

// remove deletes member's pair.
func (l *zsetLP) remove(member []byte) bool {
	off, _, _ := l.find(member)
	if off < 0 {
		return false
	}
	_, _, next := l.entry(off)
	l.b = append(l.b[:off], l.b[next:]...)
	l.n--
	return true
}
