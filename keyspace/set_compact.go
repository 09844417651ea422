package keyspace

import (
	"encoding/binary"
	"math"
)

// The two flat representations of a set (set.go): the intset, sorted
// integers of one width, and the listpack, length-prefixed members. Every
// function takes and returns the block's bytes in use (flat); a function
// that changes the block's length may return a new block (resizeFlat).

// isWidth is the smallest intset width that holds v.
func isWidth(v int64) uint8 {
	switch {
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return 2
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 4
	}
	return 8
}

// isGet returns the intset's member at index i.
func isGet(b []byte, i int) int64 {
	w := int(isWidthOf(b))
	off := isHdr + i*w
	switch w {
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(b[off:])))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(b[off:])))
	}
	return int64(binary.LittleEndian.Uint64(b[off:]))
}

func isPut(b []byte, w uint8, i int, v int64) {
	off := isHdr + i*int(w)
	switch w {
	case 2:
		binary.LittleEndian.PutUint16(b[off:], uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b[off:], uint32(v))
	default:
		binary.LittleEndian.PutUint64(b[off:], uint64(v))
	}
}

// isFind returns v's index, or where it would go, and whether it is there.
func isFind(b []byte, v int64) (int, bool) {
	lo, hi := 0, flatCount(b)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if isGet(b, mid) < v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < flatCount(b) && isGet(b, lo) == v
}

// isAdd adds v to the intset, widening it when v needs more bytes.
func isAdd(b []byte, v int64) ([]byte, bool) {
	at, found := isFind(b, v)
	if found {
		return b, false
	}
	n, w := flatCount(b), isWidthOf(b)
	if nw := isWidth(v); nw > w {
		nb := newIntset(nw, n+1)
		for i := range n {
			j := i
			if i >= at {
				j++
			}
			isPut(nb, nw, j, isGet(b, i))
		}
		isPut(nb, nw, at, v)
		return nb, true
	}
	old := len(b)
	b = resizeFlat(b, old+int(w))
	off := isHdr + at*int(w)
	copy(b[off+int(w):], b[off:old])
	isPut(b, w, at, v)
	setFlatCount(b, n+1)
	return b, true
}

// isRemove removes v from the intset.
func isRemove(b []byte, v int64) ([]byte, bool) {
	at, found := isFind(b, v)
	if !found {
		return b, false
	}
	w := int(isWidthOf(b))
	off := isHdr + at*w
	copy(b[off:], b[off+w:])
	n := flatCount(b)
	b = resizeFlat(b, len(b)-w)
	setFlatCount(b, n-1)
	return b, true
}

// lpEntry returns the listpack member at offset off and the next offset.
func lpEntry(b []byte, off int) ([]byte, int) {
	l, k := binary.Uvarint(b[off:])
	start := off + k
	return b[start : start+int(l)], start + int(l)
}

// lpFind returns the offset of member m, or -1. Members shorter than 128
// bytes, whose length is one byte, are skipped by that byte alone.
func lpFind(b []byte, m []byte) int {
	for off := lpHdr; off < len(b); {
		if l := b[off]; l < 0x80 {
			start := off + 1
			if int(l) == len(m) && string(b[start:start+int(l)]) == string(m) {
				return off
			}
			off = start + int(l)
			continue
		}
		e, next := lpEntry(b, off)
		if string(e) == string(m) {
			return off
		}
		off = next
	}
	return -1
}

// lpAt returns the listpack's i-th member.
func lpAt(b []byte, i int) []byte {
	off := lpHdr
	for ; i > 0; i-- {
		_, off = lpEntry(b, off)
	}
	m, _ := lpEntry(b, off)
	return m
}

// lpAppend appends m, which the listpack must not hold.
func lpAppend(b []byte, m []byte) []byte {
	old := len(b)
	b = resizeFlat(b, old+uvarintLen(uint64(len(m)))+len(m))
	off := old + binary.PutUvarint(b[old:], uint64(len(m)))
	copy(b[off:], m)
	setFlatCount(b, flatCount(b)+1)
	return b
}

// lpDeleteAt removes the member at offset off.
func lpDeleteAt(b []byte, off int) []byte {
	_, end := lpEntry(b, off)
	copy(b[off:], b[end:])
	b = resizeFlat(b, len(b)-(end-off))
	setFlatCount(b, flatCount(b)-1)
	return b
}

// intsetToListpack returns a listpack of the intset's members.
func intsetToListpack(b []byte) []byte {
	n := flatCount(b)
	used := lpHdr
	for i := range n {
		l := intLen(isGet(b, i))
		used += uvarintLen(uint64(l)) + l
	}
	lp := newListpack(n, used)
	off := lpHdr
	for i := range n {
		v := isGet(b, i)
		off += binary.PutUvarint(lp[off:], uint64(intLen(v)))
		off += len(appendInt(lp[off:off], v))
	}
	return lp
}
