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
//	[9:used] the pairs in insertion order, each a header, the field's
//	        bytes and the value's: the header is one byte
//	        len(field)<<4 | len(value) when the field has at most 14 bytes
//	        and the value at most 15 (so it is below lpLongEntry), else
//	        lpLongEntry ‖ uvarint(len(field)) ‖ uvarint(len(value)).
//
// Small pairs (the common case) thus cost one byte beyond their bytes,
// fewer than Redis's listpack spends (two per element). The
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

// lpLongEntry is the first byte of a pair whose lengths do not fit the
// one-byte header.
const lpLongEntry = 0xff

// smallPair reports whether a pair takes the one-byte header.
func smallPair(f, v []byte) bool { return len(f) <= 14 && len(v) <= 15 }

// entryLen is the size of a pair's entry.
func entryLen(f, v []byte) int {
	if smallPair(f, v) {
		return 1 + len(f) + len(v)
	}
	return 1 + uvarintLen(uint64(len(f))) + uvarintLen(uint64(len(v))) + len(f) + len(v)
}

// entry parses the pair at off and returns it and the offset of the next.
func (lp listpack) entry(off int) (f, v []byte, next int) {
	var fl, vl int
	if h := lp[off]; h != lpLongEntry {
		fl, vl = int(h>>4), int(h&15)
		off++
	} else {
		l, k := binary.Uvarint(lp[off+1:])
		off += 1 + k
		fl = int(l)
		l, k = binary.Uvarint(lp[off:])
		off += k
		vl = int(l)
	}
	f = lp[off : off+fl : off+fl]
	off += fl
	v = lp[off : off+vl : off+vl]
	return f, v, off + vl
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
	n := 1
	if smallPair(f, v) {
		b[0] = byte(len(f)<<4 | len(v))
	} else {
		b[0] = lpLongEntry
		n += binary.PutUvarint(b[n:], uint64(len(f)))
		n += binary.PutUvarint(b[n:], uint64(len(v)))
	}
	n += copy(b[n:], f)
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
	size := lpHeader
	for off := 0; off < len(body); {
		f, next, _ := readHashString(body, off)
		v, next, _ := readHashString(body, next)
		size += entryLen(f, v)
		off = next
	}
	lp := lpAlloc(size)
	at := lpHeader
	for off := 0; off < len(body); {
		f, next, _ := readHashString(body, off)
		v, next, _ := readHashString(body, next)
		putEntry(lp[at:], f, v)
		at += entryLen(f, v)
		off = next
	}
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
