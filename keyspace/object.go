package keyspace

import (
	"fmt"
	"unsafe"
)

// Objects: the values of the kinds other than strings. A value of such a
// kind holds a pointer to the kind's own structure (value.p) and its Kind in
// the tag (objectValue); everything the rest of the keyspace needs of it
// goes through the kind's objectType, registered by the file that
// implements the kind (cmd_hash.go, cmd_set.go, ...) in an init function.
//
// The contract every kind keeps:
//   - heapBytes is O(1): the object keeps its own count, adjusted as it
//     changes, so that memory accounting never walks a large value.
//   - A command that changes an object in place first calls
//     Keyspace.changedObject (dirty tracking and the memory figure), and
//     deletes the key when the object becomes empty: Redis never keeps an
//     empty hash, set, list or sorted set.
//   - encode and decode are inverses for every object a command can build,
//     and decode checks its input: it comes from a heap record or a WAL
//     record that a damaged disk may have changed, so it returns an error,
//     never panics, and never builds an object that breaks the kind's
//     invariants (it is fuzzed for that).
type objectType struct {
	// encoding is OBJECT ENCODING's answer, in Redis's names (listpack,
	// hashtable, intset, ...).
	encoding func(p unsafe.Pointer) string
	// heapBytes is the memory the object holds, as allocSize estimates it.
	heapBytes func(p unsafe.Pointer) int64
	// encode appends the object's heap encoding (heapcodec.go) to dst.
	encode func(p unsafe.Pointer, dst []byte) []byte
	// decode builds an object from its heap encoding, copying what it
	// keeps, with the keyspace's encoding limits deciding its
	// representation.
	decode func(b []byte, lim *EncodingLimits) (unsafe.Pointer, error)
	// clone is COPY's deep copy.
	clone func(p unsafe.Pointer) unsafe.Pointer
	// chunked is set for a kind whose large values are stored in chunks
	// (chunk.go).
	chunked *chunkedKind
}

// objectTypes holds the registered kinds, by Kind.
var objectTypes [KindStream + 1]*objectType

// registerObjectType makes k a kind values may have. It runs at init.
func registerObjectType(k Kind, t *objectType) {
	if k == KindString || int(k) >= len(objectTypes) || objectTypes[k] != nil {
		panic("keyspace: bad object type registration for " + k.String())
	}
	objectTypes[k] = t
}

// objType returns the objectType of an object value.
func (v value) objType() *objectType {
	t := objectTypes[v.kind()]
	if t == nil {
		panic("keyspace: value of unregistered kind " + v.kind().String())
	}
	return t
}

// isObject reports whether v is a value of a kind other than string.
func (v value) isObject() bool { return !v.isInt() && v.tag() >= tagObject }

// decodeObject builds a value of kind k from its heap encoding.
func decodeObject(k Kind, b []byte, lim *EncodingLimits) (value, error) {
	if int(k) >= len(objectTypes) || objectTypes[k] == nil {
		return value{}, fmt.Errorf("keyspace: cannot decode a value of kind %d (%s)", uint8(k), k)
	}
	p, err := objectTypes[k].decode(b, lim)
	if err != nil {
		return value{}, fmt.Errorf("keyspace: decoding a %s: %w", k, err)
	}
	return objectValue(k, p), nil
}

// changedObject is called by a command about to change the object of the
// key in sl in place: the key becomes dirty for the next checkpoint. It
// returns the object's memory before the change, for objectResized.
func (ks *Keyspace) changedObject(d *db, sl *slot[entry]) int64 {
	ks.changed(d, sl)
	return sl.v.heapBytes()
}

// objectResized accounts for an in-place change of the object in sl,
// which held before bytes (changedObject's result).
func (ks *Keyspace) objectResized(d *db, sl *slot[entry], before int64) {
	d.dataBytes += sl.v.heapBytes() - before
}

// EncodingLimits are the thresholds past which a compact encoding turns
// into a table, Redis's parameters of the same names (CONFIG SET-able; a
// change applies to values as they are next written, as in Redis).
type EncodingLimits struct {
	HashMaxListpackEntries int64 // hash-max-listpack-entries
	HashMaxListpackValue   int64 // hash-max-listpack-value
	SetMaxIntsetEntries    int64 // set-max-intset-entries
	SetMaxListpackEntries  int64 // set-max-listpack-entries
	SetMaxListpackValue    int64 // set-max-listpack-value
	HLLSparseMaxBytes      int64 // hll-sparse-max-bytes
	ZSetMaxListpackEntries int64 // zset-max-listpack-entries
	ZSetMaxListpackValue   int64 // zset-max-listpack-value
	ListMaxListpackSize    int64 // list-max-listpack-size (negative: a byte limit, -1 4 KiB ... -5 64 KiB)
}

// DefaultEncodingLimits are Redis's defaults.
func DefaultEncodingLimits() EncodingLimits {
	return EncodingLimits{
		HashMaxListpackEntries: 128,
		HashMaxListpackValue:   64,
		SetMaxIntsetEntries:    512,
		SetMaxListpackEntries:  128,
		SetMaxListpackValue:    64,
		HLLSparseMaxBytes:      3000,
		ZSetMaxListpackEntries: 128,
		ZSetMaxListpackValue:   64,
		ListMaxListpackSize:    -2,
	}
}
