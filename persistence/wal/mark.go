package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A sync mark (RecordMark) opens every group of a format-2 segment. Its
// payload is one little-endian uint64, Q: "every byte of this segment
// before offset Q was made durable by an fdatasync (or the creation's
// fsync, for the header) that completed before this group was written".
// It is how recovery tells a power loss from lost acknowledged writes:
//
//   - A power loss may leave the bytes written after the last completed
//     fdatasync as any mix of old, new, zeroed and torn pages, so the valid
//     prefix of the last segment may stop at damage P with valid records,
//     even whole groups, after it. If no readable mark claims Q > P, the
//     damage lies beyond the last durable point and recovery cuts the tail
//     at P, as it cuts an ordinary torn tail: nothing there was
//     acknowledged under appendfsync always.
//   - A readable mark after P that claims Q > P proves that bytes covered by
//     a completed fdatasync are damaged: that is lost acknowledged history
//     and recovery refuses (MidChainTearError).
//
// A mark's LSN field holds the LSN of the record after it (the group's
// first record); it consumes no LSN, is not passed to Visit, is not counted
// in ScanResult.Records and is not folded into the segment digest: its Q is
// filled in when the group is taken for writing (Appender.Take), after the
// digest of the records around it was computed. A mark is checked by its
// own CRC, and must claim SegmentHeaderSize <= Q <= its own offset, never
// less than an earlier mark of the segment.

// MarkPayloadSize is the size of a sync mark's payload.
const MarkPayloadSize = 8

// markRecordSize is the size of a sync mark record.
const markRecordSize = RecordOverhead + MarkPayloadSize

// ErrBadMark is reported for a sync mark that is malformed or claims what
// its place in the segment makes impossible.
var ErrBadMark = errors.New("wal: bad sync mark")

// appendMark appends a sync mark with LSN field lsn and a zero Q to dst;
// fillMark sets Q before the group is written.
func appendMark(dst []byte, lsn uint64) []byte {
	start := len(dst)
	dst = appendRecordHeader(dst, lsn, RecordMark, MarkPayloadSize)
	dst = binary.LittleEndian.AppendUint64(dst, 0)
	return finishRecord(dst, start)
}

// fillMark sets the Q of the encoded sync mark at the start of b and its
// CRC.
func fillMark(b []byte, q int64) {
	if RecordType(b[12]) != RecordMark || binary.LittleEndian.Uint32(b) != MarkPayloadSize {
		panic("wal: a group does not start with a sync mark")
	}
	binary.LittleEndian.PutUint64(b[RecordHeaderSize:], uint64(q))
	binary.LittleEndian.PutUint32(b[markRecordSize-RecordTrailerSize:], crc32c(b[:markRecordSize-RecordTrailerSize]))
}

// decodeMark checks a decoded sync mark found at offset off of a segment
// whose marks so far claimed prev, and returns its Q.
func decodeMark(rec Record, off, prev int64) (int64, error) {
	if len(rec.Payload) != MarkPayloadSize {
		return 0, fmt.Errorf("%w: %d-byte payload at offset %d", ErrBadMark, len(rec.Payload), off)
	}
	q := binary.LittleEndian.Uint64(rec.Payload)
	if q < SegmentHeaderSize || q > uint64(off) || int64(q) < prev {
		return 0, fmt.Errorf("%w at offset %d: durable through offset %d, the earlier marks say %d", ErrBadMark, off, q, prev)
	}
	return int64(q), nil
}

// markQ returns the Q of a sync mark that decoded with a valid CRC, without
// the checks of decodeMark (for marks found past damage).
func markQ(rec Record) (int64, bool) {
	if len(rec.Payload) != MarkPayloadSize {
		return 0, false
	}
	return int64(binary.LittleEndian.Uint64(rec.Payload)), true
}
