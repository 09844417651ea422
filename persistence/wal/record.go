package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Record framing. See the package documentation for the byte layout.
const (
	// RecordHeaderSize is the length, LSN and type fields.
	RecordHeaderSize = 4 + 8 + 1
	// RecordTrailerSize is the CRC32C.
	RecordTrailerSize = 4
	// RecordOverhead is the size of a record with an empty payload, and so
	// the smallest record there is.
	RecordOverhead = RecordHeaderSize + RecordTrailerSize
	// MaxPayload bounds a record's payload: Redis's 512 MiB bulk limit plus
	// 1 MiB for a command's other arguments and their framing. A length
	// field above it is damage, never a reason to allocate.
	MaxPayload = 512<<20 + 1<<20
	// MaxRecordSize is the largest record, framing included.
	MaxRecordSize = MaxPayload + RecordOverhead
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc32c is the checksum of the log: CRC-32C (Castagnoli) as hash/crc32
// computes it (initial value and final complement included).
func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// RecordType says what a record's payload is. Zero is never a valid type,
// so that zero-filled bytes can never decode as a record.
type RecordType uint8

const (
	// RecordData is one write command in deterministic form; its payload is
	// EncodeCommand's (the log itself treats it as opaque bytes).
	RecordData RecordType = 1
	// RecordCheckpoint marks a finished checkpoint (payload defined by the
	// checkpoint package).
	RecordCheckpoint RecordType = 2
	// RecordSeal ends a segment: nothing may follow it in the file, and the
	// next segment's header names its LSN and CRC. Payload: see Seal.
	RecordSeal RecordType = 3
	// RecordPart is a part, not the last, of a logical record too large for
	// one record (see continuation.go): its payload is the first bytes of
	// the logical record's payload, which the next records continue. The
	// last part has the logical record's own type (data) and ends it.
	RecordPart RecordType = 4
	// RecordMark opens every group of a format-2 segment: its payload says
	// up to which offset the segment was durable when the group was written
	// (see mark.go). It takes no LSN of its own: its LSN field holds the
	// LSN of the record after it.
	RecordMark RecordType = 5

	// Types 6..255 are reserved for later formats.
	maxRecordType = RecordMark
)

// Valid reports whether t is a type this version of the format defines.
func (t RecordType) Valid() bool { return t >= RecordData && t <= maxRecordType }

func (t RecordType) String() string {
	switch t {
	case RecordData:
		return "data"
	case RecordCheckpoint:
		return "checkpoint"
	case RecordSeal:
		return "seal"
	case RecordPart:
		return "part"
	case RecordMark:
		return "mark"
	}
	return fmt.Sprintf("RecordType(%d)", uint8(t))
}

// Record is a decoded record. Payload aliases the bytes it was decoded from.
type Record struct {
	LSN     uint64
	Type    RecordType
	Payload []byte
	// CRC is the record's stored (and verified) checksum.
	CRC uint32
}

// Size is the record's encoded size.
func (r Record) Size() int { return RecordSize(len(r.Payload)) }

// RecordSize is the encoded size of a record with a payload of n bytes.
func RecordSize(n int) int { return RecordOverhead + n }

// Errors DecodeRecord returns. ErrIncomplete, ErrTooLarge and ErrChecksum
// describe bytes that are not (or not yet) a record: at the end of a log
// that is a torn tail. ErrInvalidType and ErrZeroLSN describe a record whose
// checksum is right but whose content is not: that is never a torn write.
var (
	ErrIncomplete  = errors.New("wal: incomplete record")
	ErrTooLarge    = errors.New("wal: record length field exceeds the maximum payload")
	ErrChecksum    = errors.New("wal: record checksum mismatch")
	ErrInvalidType = errors.New("wal: unknown record type")
	ErrZeroLSN     = errors.New("wal: record with LSN 0")
)

// AppendRecord appends the record (lsn, typ, payload) to dst and returns the
// extended slice. It allocates only when dst lacks capacity.
//
// It panics when lsn is 0, typ is not a defined type or the payload exceeds
// MaxPayload: callers check what users control (Appender does) and the
// rest are bugs.
func AppendRecord(dst []byte, lsn uint64, typ RecordType, payload []byte) []byte {
	start := len(dst)
	dst = appendRecordHeader(dst, lsn, typ, len(payload))
	dst = append(dst, payload...)
	return finishRecord(dst, start)
}

// appendRecordHeader appends the header of a record with an n-byte payload.
func appendRecordHeader(dst []byte, lsn uint64, typ RecordType, n int) []byte {
	if lsn == 0 {
		panic("wal: record with LSN 0")
	}
	if !typ.Valid() {
		panic(fmt.Sprintf("wal: record of unknown type %d", typ))
	}
	if n < 0 || n > MaxPayload {
		panic(fmt.Sprintf("wal: record payload of %d bytes exceeds %d", n, MaxPayload))
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	dst = binary.LittleEndian.AppendUint64(dst, lsn)
	return append(dst, byte(typ))
}

// finishRecord checks the length field of the record that starts at
// dst[start] against what was appended and appends its CRC.
func finishRecord(dst []byte, start int) []byte {
	n := binary.LittleEndian.Uint32(dst[start:])
	if int(n) != len(dst)-start-RecordHeaderSize {
		panic(fmt.Sprintf("wal: record length field %d, payload written %d", n, len(dst)-start-RecordHeaderSize))
	}
	return binary.LittleEndian.AppendUint32(dst, crc32c(dst[start:]))
}

// DecodeRecord decodes the record at the start of b and returns it with its
// encoded size. It never reads outside b and never allocates: the payload
// aliases b. The checksum is verified before anything else is trusted except
// the length field, which is bounded by MaxPayload and by len(b) first.
func DecodeRecord(b []byte) (Record, int, error) {
	if len(b) < RecordHeaderSize {
		return Record{}, 0, ErrIncomplete
	}
	n := binary.LittleEndian.Uint32(b)
	if n > MaxPayload {
		return Record{}, 0, fmt.Errorf("%w (%d bytes)", ErrTooLarge, n)
	}
	size := RecordSize(int(n))
	if len(b) < size {
		return Record{}, 0, ErrIncomplete
	}
	body := b[:size-RecordTrailerSize]
	stored := binary.LittleEndian.Uint32(b[size-RecordTrailerSize:])
	if got := crc32c(body); got != stored {
		return Record{}, 0, fmt.Errorf("%w (stored %#08x, computed %#08x)", ErrChecksum, stored, got)
	}
	rec := Record{
		LSN:     binary.LittleEndian.Uint64(b[4:]),
		Type:    RecordType(b[12]),
		Payload: b[RecordHeaderSize : size-RecordTrailerSize : size-RecordTrailerSize],
		CRC:     stored,
	}
	if !rec.Type.Valid() {
		return rec, size, fmt.Errorf("%w %d", ErrInvalidType, uint8(rec.Type))
	}
	if rec.LSN == 0 {
		return rec, size, ErrZeroLSN
	}
	return rec, size, nil
}

// recordCRC returns the CRC field of the encoded record rec.
func recordCRC(rec []byte) uint32 {
	return binary.LittleEndian.Uint32(rec[len(rec)-RecordTrailerSize:])
}

// SealReason says why a segment was sealed.
type SealReason uint8

const (
	// SealRotate: the segment reached the size bound.
	SealRotate SealReason = 1
	// SealRecovery: recovery sealed the last segment of a crashed process,
	// after cutting off its torn tail (if any).
	SealRecovery SealReason = 2
	// SealShutdown: the writer closed cleanly.
	SealShutdown SealReason = 3
)

func (r SealReason) String() string {
	switch r {
	case SealRotate:
		return "rotate"
	case SealRecovery:
		return "recovery"
	case SealShutdown:
		return "shutdown"
	}
	return fmt.Sprintf("SealReason(%d)", uint8(r))
}

// Seal is the payload of a seal record.
type Seal struct {
	Reason SealReason
	// Truncated is how many bytes of torn tail recovery cut off before
	// sealing; zero for the other reasons.
	Truncated uint64
	// Digest commits the seal to the segment's content: see DigestUpdate.
	// Because the next segment's header names the seal's CRC, the chain of
	// links covers every record of every sealed segment.
	Digest uint32
}

// SealPayloadSize is the size of an encoded Seal.
const SealPayloadSize = 1 + 8 + 4

// DigestUpdate folds one record's CRC into a segment digest: the digest is
// CRC-32C over the CRC fields (4 bytes, little-endian) of every record of
// the segment before its seal, in order, starting from 0.
func DigestUpdate(digest, recordCRC uint32) uint32 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], recordCRC)
	return digestRecord(digest, b[:])
}

// digestRecord is DigestUpdate for an encoded record (or its CRC field
// alone): it folds in the record's last four bytes where they already are,
// without copying them anywhere (the hot path must not allocate).
func digestRecord(digest uint32, rec []byte) uint32 {
	return crc32.Update(digest, castagnoli, rec[len(rec)-RecordTrailerSize:])
}

// sealRecordSize is the size of a seal record.
const sealRecordSize = RecordOverhead + SealPayloadSize

// AppendSeal appends the encoded seal payload to dst.
func AppendSeal(dst []byte, s Seal) []byte {
	dst = append(dst, byte(s.Reason))
	dst = binary.LittleEndian.AppendUint64(dst, s.Truncated)
	return binary.LittleEndian.AppendUint32(dst, s.Digest)
}

// ErrBadSeal is returned for a seal record whose payload does not decode.
var ErrBadSeal = errors.New("wal: malformed seal record")

// DecodeSeal decodes a seal record's payload.
func DecodeSeal(p []byte) (Seal, error) {
	if len(p) != SealPayloadSize {
		return Seal{}, fmt.Errorf("%w: payload of %d bytes, want %d", ErrBadSeal, len(p), SealPayloadSize)
	}
	s := Seal{Reason: SealReason(p[0]), Truncated: binary.LittleEndian.Uint64(p[1:]),
		Digest: binary.LittleEndian.Uint32(p[9:])}
	if s.Reason < SealRotate || s.Reason > SealShutdown {
		return Seal{}, fmt.Errorf("%w: reason %d", ErrBadSeal, p[0])
	}
	return s, nil
}
