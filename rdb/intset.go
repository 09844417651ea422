package rdb

import (
	"encoding/binary"
	"strconv"
)

// Intsets (Redis's intset.c), the blob inside RDB_TYPE_SET_INTSET:
//
//	encoding (uint32 LE: 2, 4 or 8, the bytes of each integer) ‖
//	count (uint32 LE) ‖ count integers of that width, LE, ascending
//
// intsetMembers returns the members in decimal, after checking the size
// matches, and the integers strictly ascend (no member twice).
func intsetMembers(b []byte) ([][]byte, error) {
	if len(b) < 8 {
		return nil, formatErr("intset of %d bytes", len(b))
	}
	width := binary.LittleEndian.Uint32(b)
	if width != 2 && width != 4 && width != 8 {
		return nil, formatErr("intset of %d-byte integers", width)
	}
	n := uint64(binary.LittleEndian.Uint32(b[4:]))
	body := b[8:]
	if n*uint64(width) != uint64(len(body)) {
		return nil, formatErr("intset of %d integers in %d bytes", n, len(body))
	}
	out := make([][]byte, 0, n)
	var prev int64
	for i := range int(n) {
		e := body[i*int(width):]
		var v int64
		switch width {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(e)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(e)))
		default:
			v = int64(binary.LittleEndian.Uint64(e))
		}
		if i > 0 && v <= prev {
			return nil, formatErr("intset out of order at %d", i)
		}
		prev = v
		out = append(out, strconv.AppendInt(nil, v, 10))
	}
	return out, nil
}
