package keyspace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The heap codec: how a key and its value are stored in a heap record
// (persistence/heap) and in MOOND.APPLY's PUT operations.
//
// A heap key names the database and the key: uvarint(db) ‖ key, the
// uvarint in its shortest form, so that a (database, key) pair has exactly
// one heap key. The database is the physical id (db.phys, see cmd_db.go),
// which SWAPDB does not change, not the logical index that SELECT and the
// journal use: a key keeps its heap key across SWAPDB. A record belongs
// to the pair its heap key names.
//
// A value is its Kind (heap.Record.Kind = uint8(Kind)) and encoded bytes:
//
//	KindString  the string's bytes (the int encoding as its decimal digits)
//
// Every other kind's encoding is documented with its objectType, in the
// file that implements the kind; a kind with no registered type cannot be
// decoded (an error).

// AppendHeapKey appends the heap key of key in the database of physical
// id phys to dst.
func AppendHeapKey(dst []byte, phys int, key []byte) []byte {
	if phys < 0 {
		panic("keyspace: heap key of a negative database")
	}
	dst = binary.AppendUvarint(dst, uint64(phys))
	return append(dst, key...)
}

// errHeapKey is the error of a heap key that does not decode.
var errHeapKey = errors.New("keyspace: malformed heap key")

// DecodeHeapKey splits a heap key into its database (a physical id) and
// key. The key aliases hk. A database number that is not in its shortest uvarint form,
// or that does not fit an int32, is an error.
func DecodeHeapKey(hk []byte) (db int, key []byte, err error) {
	v, n := binary.Uvarint(hk)
	if n <= 0 || v > math.MaxInt32 || n != uvarintLen(v) {
		return 0, nil, fmt.Errorf("%w (%d bytes)", errHeapKey, len(hk))
	}
	return int(v), hk[n:], nil
}

// uvarintLen is the length of v's shortest uvarint.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// appendEncoded appends v's encoded bytes to dst.
func (v value) appendEncoded(dst []byte) []byte {
	if v.isObject() {
		return v.objType().encode(v.p, dst)
	}
	return v.appendTo(dst)
}

// decodeValue builds the value of kind k from its encoded bytes, copying
// them. A string gets the representation SET would give it: the int
// encoding when it qualifies, else an immutable byte string. Other kinds
// take the representation the keyspace's encoding limits call for.
func (ks *Keyspace) decodeValue(k Kind, b []byte) (value, error) {
	if k == KindString {
		return newStringValue(b), nil
	}
	return decodeObject(k, b, &ks.Limits)
}
