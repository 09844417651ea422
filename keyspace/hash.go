package keyspace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"
)

// Hashes: the object behind a value of KindHash, in one of two
// representations, as Redis keeps them:
//
//   - listpack (hash_listpack.go): one flat allocation holding the
//     field/value pairs in insertion order, scanned linearly. A hash starts
//     so and stays so while it has at most hash-max-listpack-entries fields
//     and no field or value longer than hash-max-listpack-value bytes.
//   - hashtable (hash_table.go): a dict of field -> value, the field and
//     its value sharing one allocation.
//
// A listpack becomes a hashtable when a write breaks a limit, never the
// other way (as in Redis). The value's pointer points either at the
// listpack's bytes or at a hashTable; the first byte of both says which
// (hashMarkListpack, hashMarkTable), so that a small hash costs one
// allocation and no header object.
//
// Heap encoding (objectType.encode/decode, the bytes of a heap record of
// Kind 4 and of MOOND.APPLY PUT's value):
//
//	uvarint(n) ‖ n × ( uvarint(len(field)) ‖ field ‖ uvarint(len(value)) ‖ value )
//
// every uvarint in its shortest form, n >= 1, the fields distinct, in the
// representation's order (a listpack's insertion order). decode refuses
// anything else (a count that does not match, trailing bytes, a duplicate
// field) and builds a listpack or a hashtable as the limits call for.

const (
	hashMarkListpack byte = 0
	hashMarkTable    byte = 1
)

// hashIsTable reports whether the hash object p is a hashtable.
func hashIsTable(p unsafe.Pointer) bool { return *(*byte)(p) == hashMarkTable }

// hashLen is HLEN's answer.
func hashLen(p unsafe.Pointer) int {
	if hashIsTable(p) {
		return (*hashTable)(p).d.count
	}
	return lpOf(p).count()
}

// hashGet returns the value of field f. The bytes alias the hash: they are
// valid until its next change.
func hashGet(p unsafe.Pointer, f []byte) ([]byte, bool) {
	if hashIsTable(p) {
		return (*hashTable)(p).get(f)
	}
	_, _, v, ok := lpOf(p).find(f)
	return v, ok
}

// hashSet sets field f to v in the hash *pp, converting it to a hashtable
// when the limits call for it, and reports whether f is a new field. *pp
// may change (a listpack that grew or was converted).
func hashSet(pp *unsafe.Pointer, f, v []byte, lim *EncodingLimits) bool {
	if !hashIsTable(*pp) {
		if lpFits(lim, f, v) {
			added, ok := lpSet(pp, f, v, lim)
			if ok {
				return added
			}
		}
		*pp = unsafe.Pointer(lpToTable(lpOf(*pp)))
	}
	return (*hashTable)(*pp).set(f, v)
}

// hashDel deletes field f and reports whether it was there. *pp may change
// (a listpack that shrank).
func hashDel(pp *unsafe.Pointer, f []byte) bool {
	if hashIsTable(*pp) {
		return (*hashTable)(*pp).del(f)
	}
	return lpDel(pp, f)
}

// hashEach calls fn for every field and value, in the representation's
// order, until fn returns false. fn must not change the hash.
func hashEach(p unsafe.Pointer, fn func(f, v []byte) bool) {
	if hashIsTable(p) {
		(*hashTable)(p).each(fn)
		return
	}
	lp := lpOf(p)
	for off := lpHeader; off < len(lp); {
		f, v, next := lp.entry(off)
		if !fn(f, v) {
			return
		}
		off = next
	}
}

// newHash builds a hash holding the pairs of args (field, value, field,
// value, ...), later pairs overriding earlier ones, as HSET on a missing
// key does.
func newHash(args [][]byte, lim *EncodingLimits) unsafe.Pointer {
	p := lpEmpty()
	for i := 0; i+1 < len(args); i += 2 {
		hashSet(&p, args[i], args[i+1], lim)
	}
	return p
}

func hashEncoding(p unsafe.Pointer) string {
	if hashIsTable(p) {
		return "hashtable"
	}
	return "listpack"
}

func hashHeapBytes(p unsafe.Pointer) int64 {
	if hashIsTable(p) {
		return (*hashTable)(p).memory()
	}
	return allocSize(int64(len(lpOf(p))))
}

// hashEncode appends the heap encoding (see above) of p to dst.
func hashEncode(p unsafe.Pointer, dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(hashLen(p)))
	hashEach(p, func(f, v []byte) bool {
		dst = binary.AppendUvarint(dst, uint64(len(f)))
		dst = append(dst, f...)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		dst = append(dst, v...)
		return true
	})
	return dst
}

var (
	errHashCount     = errors.New("hash: field count does not match the pairs")
	errHashDuplicate = errors.New("hash: duplicate field")
	errHashVarint    = errors.New("hash: malformed length")
)

// readHashString reads one uvarint-length-prefixed string of b at off,
// checking the uvarint is in its shortest form and the bytes are there.
func readHashString(b []byte, off int) ([]byte, int, error) {
	l, k := binary.Uvarint(b[off:])
	if k <= 0 || k != uvarintLen(l) {
		return nil, 0, errHashVarint
	}
	off += k
	if l > uint64(len(b)-off) {
		return nil, 0, errHashVarint
	}
	end := off + int(l)
	return b[off:end:end], end, nil
}

// hashDecode builds a hash from its heap encoding (see above), copying
// what it keeps, as a listpack when the limits allow it.
func hashDecode(b []byte, lim *EncodingLimits) (unsafe.Pointer, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || k != uvarintLen(n) {
		return nil, errHashVarint
	}
	body := b[k:]
	if n == 0 || n > uint64(len(body))/2 {
		return nil, fmt.Errorf("%w: %d fields in %d bytes", errHashCount, n, len(body))
	}
	small := n <= uint64(max(lim.HashMaxListpackEntries, 0)) && lpHeader+len(body) <= lpMaxBytes
	off := 0
	for range n {
		f, next, err := readHashString(body, off)
		if err != nil {
			return nil, err
		}
		v, next, err := readHashString(body, next)
		if err != nil {
			return nil, err
		}
		if !lpFits(lim, f, v) {
			small = false
		}
		off = next
	}
	if off != len(body) {
		return nil, fmt.Errorf("%w: %d trailing bytes", errHashCount, len(body)-off)
	}
	if small {
		return lpDecode(body, int(n))
	}
	return tableDecode(body, int(n))
}

// hashClone is COPY's deep copy.
func hashClone(p unsafe.Pointer) unsafe.Pointer {
	if hashIsTable(p) {
		return unsafe.Pointer((*hashTable)(p).clone())
	}
	return lpClone(lpOf(p))
}

func init() {
	registerObjectType(KindHash, &objectType{
		encoding:  hashEncoding,
		heapBytes: hashHeapBytes,
		encode:    hashEncode,
		decode:    hashDecode,
		clone:     hashClone,
		chunked:   hashChunked,
	})
}
