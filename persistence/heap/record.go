package heap

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Record layout inside a slot. See the package documentation.
const (
	// RecordHeaderSize is the fixed part of a record, before the first
	// overflow page number (when there is one) and the inline bytes.
	RecordHeaderSize = 32
	// MaxKeyLen bounds a key: Redis's 512 MiB.
	MaxKeyLen = 512 << 20
	// MaxValueLen bounds an encoded value. A length field above it is
	// damage, never a reason to allocate.
	MaxValueLen = 1 << 40

	recFlagOverflow = 1 << 0

	recOffFlags    = 0
	recOffKind     = 1
	recOffReserved = 2 // 2 bytes
	recOffKeyLen   = 4
	recOffValueLen = 8
	recOffExpiry   = 16
	recOffKeyLSN   = 24
	recOffOverflow = 32
)

// RecordHead is everything a record says about itself except its bytes:
// what the keyspace index needs at boot.
type RecordHead struct {
	// Kind is the value's type (moond's keyspace.Kind; opaque to the heap).
	Kind uint8
	// Expiry is the absolute expiry time in unix milliseconds, 0 for none.
	Expiry int64
	// KeyLSN is the LSN of the WAL record that produced this version of the
	// key. Never 0. WAL replay applies a record to the key only when its
	// LSN is above this one.
	KeyLSN uint64
	// KeyLen and ValueLen are the full lengths of the key and of the
	// encoded value.
	KeyLen   uint32
	ValueLen uint64
	// Overflow is the first page (in the same file) of the chain that holds
	// the bytes of key‖value that are not inline; NoPage when every byte is
	// inline.
	Overflow uint32
}

// headerSize is the size of the record's header: RecordHeaderSize plus the
// overflow page number when there is a chain.
func (h RecordHead) headerSize() int {
	if h.Overflow != NoPage {
		return RecordHeaderSize + 4
	}
	return RecordHeaderSize
}

// total is the length of key‖value. (A pointer receiver: with a value
// one the compiler copies the head to read two fields, and the copy's
// wide loads of the narrow stores that just wrote it stall the boot's
// record checks.)
func (h *RecordHead) total() uint64 { return uint64(h.KeyLen) + h.ValueLen }

// RecordView is a record as it sits in its page: the head and the inline
// bytes, which alias the page and are valid only until the page changes.
type RecordView struct {
	RecordHead
	// Inline is the first bytes of key‖value; all of them when Overflow is
	// NoPage.
	Inline []byte
}

// Key returns the key when it is wholly inline.
func (v RecordView) Key() ([]byte, bool) {
	if uint64(len(v.Inline)) < uint64(v.KeyLen) {
		return nil, false
	}
	return v.Inline[:v.KeyLen:v.KeyLen], true
}

// Value returns the value when it is wholly inline.
func (v RecordView) Value() ([]byte, bool) {
	if v.Overflow != NoPage {
		return nil, false
	}
	return v.Inline[v.KeyLen:], true
}

// ChainBytes is how many bytes of key‖value live in the overflow chain.
func (v RecordView) ChainBytes() uint64 { return v.total() - uint64(len(v.Inline)) }

// Record is a whole record, key and value included.
type Record struct {
	Key    []byte
	Kind   uint8
	Expiry int64
	KeyLSN uint64
	Value  []byte
}

// ErrNoRecord is returned for a slot (or RecordID) that holds no live
// record.
var ErrNoRecord = errors.New("heap: no record in this slot")

// ErrNoSpace is returned by InsertRecord when the record does not fit in
// the page even after compaction.
var ErrNoSpace = errors.New("heap: record does not fit in the page")

// recordSize is the slot length of a record with head h and n inline bytes.
func recordSize(h RecordHead, n int) int { return h.headerSize() + n }

// putRecord writes the record (h, inlineKey‖inlineValue) into b, which is
// exactly recordSize(h, len(inlineKey)+len(inlineValue)) bytes.
func putRecord(b []byte, h RecordHead, inlineKey, inlineValue []byte) {
	var flags byte
	if h.Overflow != NoPage {
		flags |= recFlagOverflow
	}
	b[recOffFlags] = flags
	b[recOffKind] = h.Kind
	binary.LittleEndian.PutUint16(b[recOffReserved:], 0)
	binary.LittleEndian.PutUint32(b[recOffKeyLen:], h.KeyLen)
	binary.LittleEndian.PutUint64(b[recOffValueLen:], h.ValueLen)
	binary.LittleEndian.PutUint64(b[recOffExpiry:], uint64(h.Expiry))
	binary.LittleEndian.PutUint64(b[recOffKeyLSN:], h.KeyLSN)
	off := RecordHeaderSize
	if h.Overflow != NoPage {
		binary.LittleEndian.PutUint32(b[recOffOverflow:], h.Overflow)
		off += 4
	}
	off += copy(b[off:], inlineKey)
	off += copy(b[off:], inlineValue)
	if off != len(b) {
		panic(fmt.Sprintf("heap: record of %d bytes written into %d", off, len(b)))
	}
}

// checkHead validates a record head against the inline bytes it comes with
// (n of them), for a record in page number no.
func checkHead(h *RecordHead, n int, no uint32) error {
	switch {
	case h.KeyLSN == 0:
		return errors.New("record with key LSN 0")
	case h.KeyLen > MaxKeyLen:
		return fmt.Errorf("key length %d exceeds %d", h.KeyLen, MaxKeyLen)
	case h.ValueLen > MaxValueLen:
		return fmt.Errorf("value length %d exceeds %d", h.ValueLen, uint64(MaxValueLen))
	case h.Overflow == NoPage && uint64(n) != h.total():
		return fmt.Errorf("inline record holds %d bytes of a %d-byte key and value", n, h.total())
	case h.Overflow != NoPage && uint64(n) >= h.total():
		return fmt.Errorf("record with an overflow chain holds all %d bytes inline", h.total())
	case h.Overflow != NoPage && h.Overflow == no:
		return fmt.Errorf("record's overflow chain starts at its own page %d", no)
	}
	return nil
}

// decodeRecord decodes the record in slot bytes b of page number no into
// *v, in place (the boot scan decodes straight into the list it hands on).
// It never reads outside b and does not allocate unless it fails; after a
// failure *v holds part of the record.
func decodeRecord(b []byte, no uint32, v *RecordView) error {
	if len(b) < RecordHeaderSize {
		return fmt.Errorf("record of %d bytes is shorter than its header", len(b))
	}
	flags := b[recOffFlags]
	if flags&^recFlagOverflow != 0 || binary.LittleEndian.Uint16(b[recOffReserved:]) != 0 {
		return fmt.Errorf("record with unknown flags %#x or nonzero reserved bytes", flags)
	}
	h := &v.RecordHead
	h.Kind = b[recOffKind]
	h.KeyLen = binary.LittleEndian.Uint32(b[recOffKeyLen:])
	h.ValueLen = binary.LittleEndian.Uint64(b[recOffValueLen:])
	h.Expiry = int64(binary.LittleEndian.Uint64(b[recOffExpiry:]))
	h.KeyLSN = binary.LittleEndian.Uint64(b[recOffKeyLSN:])
	h.Overflow = NoPage
	hdr := RecordHeaderSize
	if flags&recFlagOverflow != 0 {
		if len(b) < RecordHeaderSize+4 {
			return fmt.Errorf("overflow record of %d bytes is shorter than its header", len(b))
		}
		h.Overflow = binary.LittleEndian.Uint32(b[recOffOverflow:])
		if h.Overflow == NoPage {
			return errors.New("record flagged overflow without a first page")
		}
		hdr += 4
	}
	v.Inline = b[hdr:len(b):len(b)]
	return checkHead(h, len(v.Inline), no)
}
