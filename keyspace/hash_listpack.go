package keyspace

import (
	"bytes"
	"encoding/binary"
	"unsafe"
)

// The listpack representation of a hash: one allocation of
//
//	[0]     hashMarkListpack
//	[1:5]   used, the bytes in use, header included (uint32, little endian)
//	[5:9]   count, the number of fields (uint32, little endian)
//	[9:used] the pairs in insertion order, each
//	        uvarint(len(field)) ‖ field ‖ uvarint(len(value)) ‖ value
//
// (the pairs are the heap encoding's body, so encoding copies them). The
// allocation is always allocSize(used) bytes, a whole size class: a change
// that keeps used within the same class is made in place (a memmove of the
// pairs after it), any other moves the listpack to an allocation of the
// new class, so that the memory figure is allocSize(used) exactly.

const (
	lpHeader = 9
	// lpMaxBytes bounds a listpack, as Redis's lpSafeToAdd does (1 GiB):
	// a hash that would grow past it becomes a hashtable.
	lpMaxBytes = 1 << 30
)

// listpack is a hash's listpack, len(lp) == used.
type listpack []byte

// lpOf views the listpack at p.
func lpOf(p unsafe.Pointer) listpack {
	used := binary.LittleEndian.Uint32(unsafe.Slice((*byte)(p), lpHeader)[1:5])
	return unsafe.Slice((*byte)(p), used)
}

func (lp listpack) count() int { return int(binary.LittleEndian.Uint32(lp[5:9])) }

func (lp listpack) setCount(n int) { binary.LittleEndian.PutUint32(lp[5:9], uint32(n)) }

// lpAlloc returns a listpack of used bytes (header set, pairs zero) in an
// allocation of its whole size class.
func lpAlloc(used int) listpack {
	b := make([]byte, allocSize(int64(used)))
	b[0] = hashMarkListpack
	binary.LittleEndian.PutUint32(b[1:5], uint32(used))
	return b[:used]
}

// lpEmpty is a listpack with no fields, where newHash starts.
func lpEmpty() unsafe.Pointer { return unsafe.Pointer(&lpAlloc(lpHeader)[0]) }

// lpFits reports whether a pair may be stored in a listpack under lim.
func lpFits(lim *EncodingLimits, f, v []byte) bool {
	return int64(len(f)) <= lim.HashMaxListpackValue && int64(len(v)) <= lim.HashMaxListpackValue
}

// entryLen is the size of a pair's entry.
func entryLen(f, v []byte) int {
	return uvarintLen(uint64(len(f))) + len(f) + uvarintLen(uint64(len(v))) + len(v)
}

// entry parses the pair at off and returns it and the offset of the next.
func (lp listpack) entry(off int) (f, v []byte, next int) {
	l, k := binary.Uvarint(lp[off:])
	off += k
	f = lp[off : off+int(l) : off+int(l)]
	off += int(l)
	l, k = binary.Uvarint(lp[off:])
	off += k
	v = lp[off : off+int(l) : off+int(l)]
	return f, v, off + int(l)
}

// find returns the offsets of field f's entry and of the one after it, and
// its value.
func (lp listpack) find(f []byte) (off, next int, v []byte, ok bool) {
	for off = lpHeader; off < len(lp); off = next {
		var fld []byte
		fld, v, next = lp.entry(off)
		if bytes.Equal(fld, f) {
			return off, next, v, true
		}
	}
	return 0, 0, nil, false
}

// putEntry writes the pair at b's start.
func putEntry(b []byte, f, v []byte) {
	n := binary.PutUvarint(b, uint64(len(f)))
	n += copy(b[n:], f)
	n += binary.PutUvarint(b[n:], uint64(len(v)))
	copy(b[n:], v)
}

// splice replaces lp[off:end] with a gap of n bytes (whose content the
// caller writes) and returns the listpack, in place when its size class
// stays the same, else in a new allocation.
func (lp listpack) splice(off, end, n int) listpack {
	used := len(lp) - (end - off) + n
	if allocSize(int64(used)) == allocSize(int64(len(lp))) {
		full := unsafe.Slice(&lp[0], allocSize(int64(len(lp))))
		copy(full[off+n:used], lp[end:])
		binary.LittleEndian.PutUint32(full[1:5], uint32(used))
		return listpack(full[:used])
	}
	nl := lpAlloc(used)
	copy(nl[5:], lp[5:off])
	copy(nl[off+n:], lp[end:])
	return nl
}

// lpSet sets f to v in the listpack *pp. It returns ok false, changing
// nothing, when the pair cannot join the listpack under lim (one field too
// many, or a listpack past lpMaxBytes): the caller converts the hash.
func lpSet(pp *unsafe.Pointer, f, v []byte, lim *EncodingLimits) (added, ok bool) {
	lp := lpOf(*pp)
	off, next, old, found := lp.find(f)
	count := lp.count()
	if !found {
		count++
	}
	// As Redis's hashTypeSet, any write checks the count: a listpack left
	// above a lowered hash-max-listpack-entries converts at its next write.
	if int64(count) > lim.HashMaxListpackEntries {
		return false, false
	}
	if found && len(old) == len(v) {
		copy(old, v) // the same length: the bytes change, nothing moves
		return false, true
	}
	n := entryLen(f, v)
	if !found {
		off, next = len(lp), len(lp)
	}
	if len(lp)-(next-off)+n > lpMaxBytes {
		return false, false
	}
	lp = lp.splice(off, next, n)
	putEntry(lp[off:], f, v)
	if !found {
		lp.setCount(lp.count() + 1)
	}
	*pp = unsafe.Pointer(&lp[0])
	return !found, true
}

// lpDel deletes f from the listpack *pp and reports whether it was there.
func lpDel(pp *unsafe.Pointer, f []byte) bool {
	lp := lpOf(*pp)
	off, next, _, found := lp.find(f)
	if !found {
		return false
	}
	lp = lp.splice(off, next, 0)
	lp.setCount(lp.count() - 1)
	*pp = unsafe.Pointer(&lp[0])
	return true
}

// lpToTable builds the hashtable holding lp's pairs.
func lpToTable(lp listpack) *hashTable {
	t := newHashTable(lp.count())
	for off := lpHeader; off < len(lp); {
		f, v, next := lp.entry(off)
		t.set(f, v)
		off = next
	}
	return t
}

// lpClone copies a listpack.
func lpClone(lp listpack) unsafe.Pointer {
	nl := lpAlloc(len(lp))
	copy(nl, lp)
	return unsafe.Pointer(&nl[0])
}

// lpDecode builds a listpack from a heap encoding's body of n pairs,
// already checked to parse (hashDecode), refusing duplicate fields.
func lpDecode(body []byte, n int) (unsafe.Pointer, error) {
	lp := lpAlloc(lpHeader + len(body))
	copy(lp[lpHeader:], body)
	lp.setCount(n)
	var seen map[string]struct{}
	if n > 16 {
		seen = make(map[string]struct{}, n)
	}
	for off := lpHeader; off < len(lp); {
		f, _, next := lp.entry(off)
		if seen != nil {
			if _, dup := seen[string(f)]; dup {
				return nil, errHashDuplicate
			}
			seen[string(f)] = struct{}{}
		} else if _, _, _, dup := listpack(lp[:off]).find(f); dup {
			return nil, errHashDuplicate
		}
		off = next
	}
	return unsafe.Pointer(&lp[0]), nil
}
