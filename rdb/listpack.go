package rdb

import (
	"encoding/binary"
	"strconv"
)

// Listpacks (Redis's listpack.c), the blob inside RDB_TYPE_HASH_LISTPACK,
// RDB_TYPE_ZSET_LISTPACK and the packed nodes of RDB_TYPE_LIST_QUICKLIST_2:
//
//	total bytes (uint32 LE) ‖ entry count (uint16 LE, 65535: unknown) ‖
//	entries ‖ 0xff
//
// Each entry is its encoding and data, then backlen: the length of the
// encoding and data, written so that it reads backwards (7 bits a byte,
// the last byte holding the low bits, every byte but the first with its
// high bit set). The encodings, by the first byte:
//
//	0xxxxxxx             a 7-bit unsigned integer
//	10xxxxxx             a string of up to 63 bytes
//	110xxxxx + 1 byte    a 13-bit signed integer
//	1110xxxx + 1 byte    a string of up to 4095 bytes (length big-endian)
//	11110000 + 4 bytes   a string, its length uint32 LE
//	11110001..11110100   a signed integer of 16, 24, 32 or 64 bits, LE
//	11111111             the end

const (
	lpHeaderSize   = 6
	lpEnd          = 0xff
	lpUnknownCount = 65535
)

// listpackEntries returns the entries of the listpack lp, strings aliasing
// lp and integers in their decimal form, after checking the whole of it:
// the header's size and count, every entry and its backlen inside the
// blob, the end byte last.
func listpackEntries(lp []byte) ([][]byte, error) {
	if len(lp) < lpHeaderSize+1 {
		return nil, formatErr("listpack of %d bytes", len(lp))
	}
	if binary.LittleEndian.Uint32(lp) != uint32(len(lp)) {
		return nil, formatErr("listpack header says %d bytes, has %d", binary.LittleEndian.Uint32(lp), len(lp))
	}
	count := int(binary.LittleEndian.Uint16(lp[4:]))
	var out [][]byte
	p := lpHeaderSize
	for {
		if p >= len(lp) {
			return nil, formatErr("listpack without its end byte")
		}
		if lp[p] == lpEnd {
			break
		}
		e, size, err := lpEntry(lp[p:])
		if err != nil {
			return nil, err
		}
		var bl [5]byte
		back := lpBacklen(bl[:0], size)
		if len(back) > len(lp)-p-size || string(lp[p+size:p+size+len(back)]) != string(back) {
			return nil, formatErr("listpack entry with a bad backlen at byte %d", p)
		}
		out = append(out, e)
		p += size + len(back)
	}
	if p != len(lp)-1 {
		return nil, formatErr("listpack with %d bytes after its end", len(lp)-1-p)
	}
	if count != lpUnknownCount && count != len(out) {
		return nil, formatErr("listpack header says %d entries, has %d", count, len(out))
	}
	return out, nil
}

// lpEntry decodes the entry at the start of b: its value and the size of
// its encoding and data (backlen excluded).
func lpEntry(b []byte) ([]byte, int, error) {
	c := b[0]
	var v int64
	var size int
	switch {
	case c&0x80 == 0:
		return strconv.AppendInt(nil, int64(c&0x7f), 10), 1, nil
	case c&0xc0 == 0x80:
		return lpString(b, 1, int(c&0x3f))
	case c&0xe0 == 0xc0:
		if len(b) < 2 {
			return nil, 0, formatErr("truncated listpack integer")
		}
		u := int64(c&0x1f)<<8 | int64(b[1])
		if u >= 1<<12 {
			u -= 1 << 13
		}
		v, size = u, 2
	case c&0xf0 == 0xe0:
		if len(b) < 2 {
			return nil, 0, formatErr("truncated listpack string length")
		}
		return lpString(b, 2, int(c&0x0f)<<8|int(b[1]))
	case c == 0xf0:
		if len(b) < 5 {
			return nil, 0, formatErr("truncated listpack string length")
		}
		n := binary.LittleEndian.Uint32(b[1:])
		if uint64(n) > uint64(len(b)-5) {
			return nil, 0, formatErr("listpack string runs past the end")
		}
		return lpString(b, 5, int(n))
	case c >= 0xf1 && c <= 0xf4:
		width := [...]int{2, 3, 4, 8}[c-0xf1]
		if len(b) < 1+width {
			return nil, 0, formatErr("truncated listpack integer")
		}
		var u uint64
		for i := width; i >= 1; i-- {
			u = u<<8 | uint64(b[i])
		}
		shift := 64 - 8*uint(width)
		v, size = int64(u<<shift)>>shift, 1+width
	default:
		return nil, 0, formatErr("bad listpack encoding byte %#x", c)
	}
	return strconv.AppendInt(nil, v, 10), size, nil
}

// lpString returns the string of n bytes after the hdr bytes of b's entry.
func lpString(b []byte, hdr, n int) ([]byte, int, error) {
	if n > len(b)-hdr {
		return nil, 0, formatErr("listpack string runs past the end")
	}
	return b[hdr : hdr+n : hdr+n], hdr + n, nil
}

// lpBacklen appends the backlen of an entry of size l, in the number of
// bytes Redis's lpEncodeBacklen gives it (one more than needed at the
// boundaries 16383, 2097151 and 268435455, as it does).
func lpBacklen(dst []byte, l int) []byte {
	n := 5
	switch {
	case l <= 127:
		n = 1
	case l < 16383:
		n = 2
	case l < 2097151:
		n = 3
	case l < 268435455:
		n = 4
	}
	for i := n - 1; i >= 0; i-- {
		b := byte(l >> (7 * uint(i)) & 0x7f)
		if i != n-1 {
			b |= 0x80
		}
		dst = append(dst, b)
	}
	return dst
}
