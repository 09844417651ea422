package keyspace

import (
	"hash/maphash"
	"unsafe"

	"github.com/moond-db/moond/resp"
)

// The hashtable representation of a hash: the keyspace's own dict
// (dict.go), which gives HSCAN Redis's cursor guarantees, HRANDFIELD cheap
// random picks and growth in small steps. Each field and its value share
// one allocation of a whole size class, the field's bytes first: a slot's
// key points at it, and its value (the dict's V) is the value's length,
// whose bytes follow the field's. A 24-byte slot and one allocation per
// field is about 64 bytes a field for small pairs, less than Redis's
// dictEntry and two sds strings.
//
// A value overwritten by one whose pair needs the same size class is
// written in place; otherwise the pair moves to a new allocation and the
// slot's key pointer follows (the field's bytes, which the dict hashes,
// never change).
type hashTable struct {
	mark byte // hashMarkTable: first, where a listpack has its own mark
	d    dict[uint64]
	data int64       // allocSize of every pair's allocation
	ck   *chunkTrack // when stored in chunks (chunk.go)
}

// hashSeed seeds every hash's dict. A keyspace's own seed is not at hand
// where a hash is decoded; one per process is as good.
var hashSeed = maphash.MakeSeed()

// newHashTable returns an empty table sized for n fields.
func newHashTable(n int) *hashTable {
	t := &hashTable{mark: hashMarkTable, d: newDict[uint64](hashSeed)}
	t.d.reserve(n)
	return t
}

// pairValue returns the value bytes of the pair in sl. An empty value has
// no bytes to point at: the field may end exactly where its allocation
// does, and a pointer past an allocation is invalid (checkptr refuses it).
func pairValue(sl *slot[uint64]) []byte {
	if sl.v == 0 {
		return []byte{}
	}
	flen := int(sl.kw & kwLenMask)
	return unsafe.Slice((*byte)(unsafe.Add(sl.kp, flen)), sl.v)
}

// newPair allocates the pair f, v; it returns the allocation's first byte
// (nil for an empty pair, which needs no memory).
func newPair(f, v []byte) (unsafe.Pointer, int64) {
	size := allocSize(int64(len(f) + len(v)))
	if size == 0 {
		return nil, 0
	}
	b := make([]byte, size)
	copy(b[copy(b, f):], v)
	return unsafe.Pointer(&b[0]), size
}

func (t *hashTable) get(f []byte) ([]byte, bool) {
	sl := t.d.find(t.d.hash(f), f)
	if sl == nil {
		return nil, false
	}
	return pairValue(sl), true
}

// set sets f to v and reports whether f is a new field.
func (t *hashTable) set(f, v []byte) bool {
	h := t.d.hash(f)
	t.ck.mark(h)
	if sl := t.d.find(h, f); sl != nil {
		old := allocSize(int64(len(f)) + int64(sl.v))
		if allocSize(int64(len(f)+len(v))) == old && sl.kp != unsafe.Pointer(&emptyKey) {
			if len(v) > 0 { // an empty value: nothing to copy, and no byte past the field
				copy(unsafe.Slice((*byte)(unsafe.Add(sl.kp, len(f))), len(v)), v)
			}
			sl.v = uint64(len(v))
			return false
		}
		p, size := newPair(f, v)
		if p == nil {
			p = unsafe.Pointer(&emptyKey)
		}
		sl.kp, sl.v = p, uint64(len(v))
		t.data += size - old
		return false
	}
	p, size := newPair(f, v)
	sl := t.d.insert(h, unsafe.String((*byte)(p), len(f)), uint64(len(v)), 0)
	if p != nil {
		sl.kp = p // an empty field's slot points at the pair too, for its value
	}
	t.data += size
	t.trimSpares()
	return true
}

// del deletes f and reports whether it was there.
func (t *hashTable) del(f []byte) bool {
	h := t.d.hash(f)
	s, i := t.d.lookup(h, f)
	if i < 0 {
		return false
	}
	t.ck.mark(h)
	t.data -= allocSize(int64(len(f)) + int64(s.slots[i].v))
	t.d.removeAt(s, i)
	t.trimSpares()
	return true
}

// trimSpares drops the slot arrays the dict keeps for reuse when they are
// a large share of its memory: a dict keeps up to 64 KiB of them, right
// for a database, far too much for each of many small hashes.
func (t *hashTable) trimSpares() {
	if t.d.spareMem > 0 && t.d.spareMem > t.d.slotMem/8 {
		t.d.spare = nil
		t.d.spareMem = 0
	}
}

func (t *hashTable) each(fn func(f, v []byte) bool) {
	for i := range t.d.segs {
		s := &t.d.segs[i]
		for j := range s.slots {
			sl := &s.slots[j]
			if sl.kp != nil && !fn(sl.keyBytes(), pairValue(sl)) {
				return
			}
		}
	}
}

// replyLen is the length of the bulk strings that HGETALL (parts
// withFields|withValues), HKEYS or HVALS write for the table, from the
// slots alone: no pair is read.
func (t *hashTable) replyLen(parts int) int {
	n := 0
	for i := range t.d.segs {
		s := &t.d.segs[i]
		for j := range s.slots {
			sl := &s.slots[j]
			if sl.kp == nil {
				continue
			}
			if parts&withFields != 0 {
				n += resp.BulkLen(int(sl.kw & kwLenMask))
			}
			if parts&withValues != 0 {
				n += resp.BulkLen(int(sl.v))
			}
		}
	}
	return n
}

// memory is the table's footprint: its header, the dict's slot arrays and
// the pairs.
func (t *hashTable) memory() int64 {
	return allocSize(int64(unsafe.Sizeof(hashTable{}))) + t.d.memory() + t.data
}

func (t *hashTable) clone() *hashTable {
	c := newHashTable(t.d.count)
	t.each(func(f, v []byte) bool {
		c.set(f, v)
		return true
	})
	return c
}

// tableDecode builds a hashtable from a heap encoding's body of n pairs,
// already checked to parse (hashDecode), refusing duplicate fields.
func tableDecode(body []byte, n int) (unsafe.Pointer, error) {
	t := newHashTable(n)
	for off := 0; off < len(body); {
		f, next, _ := readHashString(body, off)
		v, next, _ := readHashString(body, next)
		if !t.set(f, v) {
			return nil, errHashDuplicate
		}
		off = next
	}
	return unsafe.Pointer(t), nil
}
