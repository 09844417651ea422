package checkpoint

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
)

// Payload sizes.
const (
	// FPISize is the payload of a full-page image: kind, file id, page
	// number, then the page.
	FPISize = 1 + 4 + 4 + heap.PageSize
	// EndSize is the payload of a checkpoint-end record: kind, redo LSN.
	EndSize = 1 + 8
)

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

// Recyclable returns, of the WAL segments whose first LSNs are firsts
// (ascending), those whose every record is below redo: segment i qualifies
// when segment i+1 starts at or below redo. The last segment never does.
func Recyclable(firsts []uint64, redo uint64) []uint64 {
	var out []uint64
	for i := 0; i+1 < len(firsts); i++ {
		if firsts[i+1] > redo {
			break
		}
		out = append(out, firsts[i])
	}
	return out
}
