package keyspace

import "unsafe"

// Spare string buffers. Under eviction nearly every SET of a new key
// makes a key leave: the evicted key's value bytes become garbage and the
// new key's value is allocated, so the collector runs in proportion to
// the write rate. An evicted string value that its key owned alone
// (ownedBit) is kept here instead, by allocation size, and the next new
// string of that size takes it. It is safe for the reason overwriteString
// is: a string's bytes are referenced only by its key's slot between
// commands, and eviction runs between commands.

// spareStringsMax bounds the buffers kept, all sizes together.
const spareStringsMax = 256

// spareStrings holds the buffers, by allocation size.
type spareStrings struct {
	bySize map[int64][]unsafe.Pointer
	n      int
}

// keepSpare keeps the bytes of v, a value that is leaving the keyspace,
// for reuse, if v is a string its key owned alone and there is room.
func (ks *Keyspace) keepSpare(v value) {
	sp := &ks.spare
	if sp.n >= spareStringsMax || v.isInt() || v.tag() != tagBytes || v.w&ownedBit == 0 {
		return
	}
	size := allocSize(int64(v.w & lenMask))
	if sp.bySize == nil {
		sp.bySize = make(map[int64][]unsafe.Pointer)
	}
	sp.bySize[size] = append(sp.bySize[size], v.p)
	sp.n++
}

// spareString is newStringValue in a kept buffer of the right size, if
// there is one.
func (ks *Keyspace) spareString(b []byte) (value, bool) {
	sp := &ks.spare
	if sp.n == 0 || len(b) == 0 {
		return value{}, false
	}
	size := allocSize(int64(len(b)))
	list := sp.bySize[size]
	if len(list) == 0 {
		return value{}, false
	}
	if _, ok := intForm(b); ok {
		return value{}, false
	}
	p := list[len(list)-1]
	list[len(list)-1] = nil
	sp.bySize[size] = list[:len(list)-1]
	sp.n--
	copy(unsafe.Slice((*byte)(p), len(b)), b)
	return value{p: p, w: uint64(len(b)) | ownedBit}, true
}
