package rdb

import (
	"encoding/binary"
	"math"
)

// lpBuild builds a listpack of entries, each a string or an int64, in
// the encoding Redis's lpAppend would pick for it.
func lpBuild(entries ...any) []byte {
	lp := make([]byte, lpHeaderSize)
	for _, e := range entries {
		var enc []byte
		switch v := e.(type) {
		case int64:
			switch {
			case v >= 0 && v <= 127:
				enc = []byte{byte(v)}
			case v >= -4096 && v <= 4095:
				u := uint16(v) & 0x1fff
				enc = []byte{0xc0 | byte(u>>8), byte(u)}
			case v >= math.MinInt16 && v <= math.MaxInt16:
				enc = binary.LittleEndian.AppendUint16([]byte{0xf1}, uint16(v))
			case v >= -1<<23 && v < 1<<23:
				u := uint32(v)
				enc = []byte{0xf2, byte(u), byte(u >> 8), byte(u >> 16)}
			case v >= math.MinInt32 && v <= math.MaxInt32:
				enc = binary.LittleEndian.AppendUint32([]byte{0xf3}, uint32(v))
			default:
				enc = binary.LittleEndian.AppendUint64([]byte{0xf4}, uint64(v))
			}
		case string:
			switch n := len(v); {
			case n < 64:
				enc = append([]byte{0x80 | byte(n)}, v...)
			case n < 4096:
				enc = append([]byte{0xe0 | byte(n>>8), byte(n)}, v...)
			default:
				enc = append(binary.LittleEndian.AppendUint32([]byte{0xf0}, uint32(n)), v...)
			}
		default:
			panic("lpBuild: entry of an unknown type")
		}
		lp = append(lp, enc...)
		lp = lpBacklen(lp, len(enc))
	}
	lp = append(lp, lpEnd)
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	n := len(entries)
	if n > lpUnknownCount {
		n = lpUnknownCount
	}
	binary.LittleEndian.PutUint16(lp[4:], uint16(n))
	return lp
}

// isBuild builds an intset of width-byte integers.
func isBuild(width int, vs ...int64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(width))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vs)))
	for _, v := range vs {
		switch width {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	return b
}

// rawString is the raw string encoding of s, never an integer.
func rawString(s []byte) []byte {
	return append(AppendLen(nil, uint64(len(s))), s...)
}
