package keyspace

import (
	"strconv"
	"unsafe"
)

// Kind is the Redis data type of a value, as TYPE names it.
type Kind uint8

// The kinds of value. A kind other than string exists once its file
// registers its objectType (object.go).
const (
	KindString Kind = iota
	KindList
	KindSet
	KindZSet
	KindHash
	KindStream
)

var kindNames = [...]string{"string", "list", "set", "zset", "hash", "stream"}

// String returns the name TYPE replies with.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// value is a key's value in 16 bytes and at most one pointer. Its forms:
//
//	p == &intMark       a string in Redis's "int" encoding: w is the integer.
//	tag(w) == tagBytes  an immutable byte string: p is its first byte (nil
//	                    when empty) and w's low 48 bits its length; bit 48
//	                    (ownedBit) says its key owns its memory, which SET
//	                    may overwrite in place. Redis reports it as
//	                    "embstr" up to 44 bytes, "raw" beyond.
//	tag(w) == tagBuf    a mutable byte string ("raw") that APPEND and
//	                    SETRANGE grow in place, amortized like an sds: p is a
//	                    *[]byte.
//	tag(w) >= tagObject a value of kind Kind(tag(w)-tagObject): p is the
//	                    kind's object.
//
// The int form must be tested first: it uses all 64 bits of w.
type value struct {
	p unsafe.Pointer
	w uint64
}

// intMark is the address that marks the int form.
var intMark byte

const (
	tagShift = 56
	lenMask  = 1<<48 - 1
	// ownedBit marks an immutable string whose bytes newStringValue
	// allocated, a whole size class for the key alone: overwriteString
	// may reuse that memory. Other immutable strings (a constant, a string
	// another part of the program made) must be left alone.
	ownedBit  = 1 << 48
	tagBytes  = 0
	tagBuf    = 1
	tagObject = 16

	// embstrLimit is OBJ_ENCODING_EMBSTR_SIZE_LIMIT: the longest string
	// Redis stores in one allocation with its object header.
	embstrLimit = 44
)

func intValue(n int64) value {
	return value{p: unsafe.Pointer(&intMark), w: uint64(n)}
}

// bytesValue wraps s, which must never change, as an immutable string.
func bytesValue(s string) value {
	if len(s) == 0 {
		return value{}
	}
	return value{p: unsafe.Pointer(unsafe.StringData(s)), w: uint64(len(s))}
}

// bufValue wraps b as a mutable string that owns b.
func bufValue(b []byte) value {
	bp := new([]byte)
	*bp = b
	return value{p: unsafe.Pointer(bp), w: tagBuf << tagShift}
}

// objectValue wraps the object of a non-string kind.
func objectValue(k Kind, obj unsafe.Pointer) value {
	return value{p: obj, w: uint64(tagObject+k) << tagShift}
}

// newStringValue copies b into a value the way Redis's tryObjectEncoding
// stores a SET argument: a canonical decimal of at most 20 characters that
// fits an int64 becomes an integer, anything else a byte string.
func newStringValue(b []byte) value {
	if n, ok := intForm(b); ok {
		return intValue(n)
	}
	if len(b) == 0 {
		return value{}
	}
	// The allocation is asked for at its full size class, so that
	// overwriteString may later use all of it whatever the allocator's own
	// classes are.
	a := make([]byte, allocSize(int64(len(b))))
	copy(a, b)
	return value{p: unsafe.Pointer(unsafe.SliceData(a)), w: uint64(len(b)) | ownedBit}
}

// intForm reports whether b is stored as an integer: a canonical decimal
// of at most 20 characters that fits an int64.
func intForm(b []byte) (int64, bool) {
	if len(b) > 20 {
		return 0, false
	}
	return parseInt(b)
}

// overwriteString stores b in the memory of old, an immutable string the
// caller's key owns alone (made by newStringValue: ownedBit), when b needs
// an allocation of the same size (newStringValue allocates whole size
// classes, so b fits) and is not an integer. It returns the new value, or
// false with old untouched.
//
// Overwriting a value with one of the same size is what SET mostly does;
// done in place it allocates nothing, so a write-heavy workload leaves the
// garbage collector nothing to collect, and the heap stays the size of the
// data. It is safe because a string's bytes are referenced only by its
// key's slot between commands: replies, WAL and journal records, heap
// pages and COPY's copy take copies, and readers of the bytes within a
// command (GET's reply for SET ... GET) are done before the write.
func overwriteString(old value, b []byte) (value, bool) {
	if old.isInt() || old.tag() != tagBytes || old.w&ownedBit == 0 || len(b) == 0 {
		return value{}, false
	}
	if allocSize(int64(len(b))) != allocSize(int64(old.w&lenMask)) {
		return value{}, false
	}
	if _, ok := intForm(b); ok {
		return value{}, false
	}
	copy(unsafe.Slice((*byte)(old.p), len(b)), b)
	return value{p: old.p, w: uint64(len(b)) | ownedBit}, true
}

func (v value) isInt() bool { return v.p == unsafe.Pointer(&intMark) }

func (v value) tag() uint64 { return v.w >> tagShift }

func (v value) kind() Kind {
	if v.isInt() || v.tag() < tagObject {
		return KindString
	}
	return Kind(v.tag() - tagObject)
}

func (v value) intVal() int64 { return int64(v.w) }

// bytes returns the bytes of a string in the bytes or buffer form. The
// caller must not modify them.
func (v value) bytes() []byte {
	switch v.tag() {
	case tagBytes:
		if v.p == nil {
			return nil
		}
		return unsafe.Slice((*byte)(v.p), v.w&lenMask)
	case tagBuf:
		return *(*[]byte)(v.p)
	}
	panic("keyspace: bytes of a non-string value")
}

// buf returns the slice a mutable string owns.
func (v value) buf() *[]byte { return (*[]byte)(v.p) }

// appendTo appends a string value's bytes to dst: the decimal digits of an
// integer, the bytes of the other forms.
func (v value) appendTo(dst []byte) []byte {
	if v.isInt() {
		return strconv.AppendInt(dst, v.intVal(), 10)
	}
	return append(dst, v.bytes()...)
}

// strLen is STRLEN's answer for a string value.
func (v value) strLen() int {
	if v.isInt() {
		return intLen(v.intVal())
	}
	return len(v.bytes())
}

// encoding is OBJECT ENCODING's answer.
func (v value) encoding() string {
	switch {
	case v.isInt():
		return "int"
	case v.tag() == tagBytes && v.w&lenMask <= embstrLimit:
		return "embstr"
	case v.tag() <= tagBuf:
		return "raw"
	}
	return v.objType().encoding(v.p)
}

// refcount is OBJECT REFCOUNT's answer. Redis shares the objects of the
// integers 0..9999 and reports them with INT_MAX; every other value has one
// owner.
func (v value) refcount() int64 {
	if v.isInt() && v.intVal() >= 0 && v.intVal() < 10000 {
		return 2147483647
	}
	return 1
}

// heapBytes estimates the heap memory the value holds beyond its 16 bytes.
func (v value) heapBytes() int64 {
	switch {
	case v.isInt():
		return 0
	case v.tag() == tagBytes:
		return allocSize(int64(v.w & lenMask))
	case v.tag() == tagBuf:
		return allocSize(24) + allocSize(int64(cap(*v.buf())))
	case v.isCold():
		return 0 // in the heap, not in memory (cold.go)
	}
	return v.objType().heapBytes(v.p)
}

// intLen is the number of characters of n in decimal.
func intLen(n int64) int {
	l := 1
	if n < 0 {
		l++
		if n == -1<<63 {
			return 20
		}
		n = -n
	}
	for n >= 10 {
		n /= 10
		l++
	}
	return l
}
