package record

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/moond-db/moond/persistence/heap"
)

// Payload kinds of wal.RecordCheckpoint records: the first payload byte.
const (
	// KindFPI is a full-page image: the bytes of a heap page logged before
	// the page's first write in a checkpoint cycle, so that recovery can
	// repair a torn write of it.
	KindFPI byte = 1
	// KindEnd marks a checkpoint that reached its finalize step.
	KindEnd byte = 2
	// KindDBMap is the shard's map from logical database numbers to the
	// physical ones heap keys name (SWAPDB permutes it), logged at a
	// checkpoint's redo point when it is not the identity (see
	// Options.BeginRecord): recovery starts from it.
	KindDBMap byte = 3
	// KindGap is the first record of a log opened again after CONFIG SET
	// appendonly no then yes: the keyspace changed while nothing was
	// logged, so the records after it hold only on top of a checkpoint
	// that began after it. Recovery from a redo point below it stops
	// applying data records there (see Gap).
	KindGap byte = 4
	// KindRedo is the state replay needs as of the redo point, logged
	// there (see Options.BeginRecord) once the shard wrote a part of a txn
	// across shards: the highest txid whose part lies below the redo point
	// (persistence/txnlog's mark) and the database map (empty: the
	// identity). It replaces KindDBMap on such a shard.
	KindRedo byte = 5
)

// Payload sizes.
const (
	// FPISize is the payload of a full-page image: kind, file id, page
	// number, then the page.
	FPISize = 1 + 4 + 4 + heap.PageSize
	// EndSize is the payload of a checkpoint-end record: kind, redo LSN.
	EndSize = 1 + 8
)

// GapSize is the payload of a gap record: the kind alone.
const GapSize = 1

// AppendGap appends the payload of a gap record to dst.
func AppendGap(dst []byte) []byte { return append(dst, KindGap) }

// IsGap reports whether payload is a gap record's.
func IsGap(payload []byte) bool { return len(payload) == GapSize && payload[0] == KindGap }

// ErrPayload is a checkpoint record payload that does not decode.
var ErrPayload = errors.New("checkpoint: bad checkpoint record payload")

// AppendFPI appends the full-page image payload of page p (sealed with its
// CRC) to dst.
func AppendFPI(dst []byte, p *heap.Page) []byte {
	dst = append(dst, KindFPI)
	dst = binary.LittleEndian.AppendUint32(dst, p.File())
	dst = binary.LittleEndian.AppendUint32(dst, p.Number())
	n := len(dst)
	dst = append(dst, make([]byte, heap.PageSize)...)
	p.EncodeInto(dst[n:])
	return dst
}

// DecodeFPI returns the page a full-page image payload names and its image
// (aliasing payload). The image is not validated: recovery checks it with
// heap.CheckPage before it replaces anything.
func DecodeFPI(payload []byte) (heap.PageID, []byte, error) {
	if len(payload) != FPISize || payload[0] != KindFPI {
		return heap.PageID{}, nil, fmt.Errorf("%w: not a full-page image (%d bytes)", ErrPayload, len(payload))
	}
	id := heap.PageID{
		File: binary.LittleEndian.Uint32(payload[1:]),
		Page: binary.LittleEndian.Uint32(payload[5:]),
	}
	return id, payload[9:], nil
}

// AppendEnd appends the checkpoint-end payload for redo to dst.
func AppendEnd(dst []byte, redo uint64) []byte {
	dst = append(dst, KindEnd)
	return binary.LittleEndian.AppendUint64(dst, redo)
}

// DecodeEnd returns the redo LSN of a checkpoint-end payload.
func DecodeEnd(payload []byte) (uint64, error) {
	if len(payload) != EndSize || payload[0] != KindEnd {
		return 0, fmt.Errorf("%w: not a checkpoint-end record (%d bytes)", ErrPayload, len(payload))
	}
	return binary.LittleEndian.Uint64(payload[1:]), nil
}

// AppendDBMap appends the payload of a database map: for each logical
// database, its physical number.
func AppendDBMap(dst []byte, m []int) []byte {
	return appendDBMapBody(append(dst, KindDBMap), m)
}

func appendDBMapBody(dst []byte, m []int) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	for _, p := range m {
		dst = binary.AppendUvarint(dst, uint64(p))
	}
	return dst
}

// AppendRedo appends the payload of a redo-point record: the txn mark, then
// the database map (nil for the identity).
func AppendRedo(dst []byte, mark uint64, m []int) []byte {
	dst = append(dst, KindRedo)
	dst = binary.AppendUvarint(dst, mark)
	return appendDBMapBody(dst, m)
}

// DecodeRedo returns the txn mark and the database map (nil for the
// identity) of a KindRedo payload.
func DecodeRedo(payload []byte) (uint64, []int, error) {
	if len(payload) == 0 || payload[0] != KindRedo {
		return 0, nil, fmt.Errorf("%w: not a redo-point record", ErrPayload)
	}
	mark, k := binary.Uvarint(payload[1:])
	if k <= 0 {
		return 0, nil, fmt.Errorf("%w: redo-point record: bad mark", ErrPayload)
	}
	m, err := decodeDBMapBody(payload[1+k:])
	if err != nil || len(m) == 0 {
		return mark, nil, err
	}
	return mark, m, nil
}

// DecodeDBMap returns the database map of a KindDBMap payload. It checks
// the encoding, not that the map is a permutation (the keyspace does).
func DecodeDBMap(payload []byte) ([]int, error) {
	if len(payload) == 0 || payload[0] != KindDBMap {
		return nil, fmt.Errorf("%w: not a database map", ErrPayload)
	}
	return decodeDBMapBody(payload[1:])
}

func decodeDBMapBody(b []byte) ([]int, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("%w: database map: bad length", ErrPayload)
	}
	b = b[k:]
	m := make([]int, n)
	for i := range m {
		v, k := binary.Uvarint(b)
		if k <= 0 || v > 1<<31 {
			return nil, fmt.Errorf("%w: database map: bad entry %d", ErrPayload, i)
		}
		m[i], b = int(v), b[k:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: database map: %d trailing bytes", ErrPayload, len(b))
	}
	return m, nil
}
