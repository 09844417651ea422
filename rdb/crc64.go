package rdb

import "encoding/binary"

// Redis's CRC-64 (crc64.c): the Jones polynomial, reflected, with an
// initial value of 0 and no final xor. Its check value: CRC64 of
// "123456789" is 0xe9c6d914c4b8d9ca.
//
// It is computed eight bytes at a time (slicing by 8, as Redis's
// crcspeed does): hash/crc64 does that only for its own two polynomials,
// and for any other goes a byte at a time below 2 KB, which is what a
// replica's load hands it, key by key and value by value.

// jonesReflected is the Jones polynomial 0xad93d23594c935a9, bit-reversed.
const jonesReflected = 0x95ac9329ac4bc9b5

// jonesTables[0] is the byte-at-a-time table; jonesTables[k][b] is the
// CRC of byte b followed by k zero bytes.
var jonesTables = makeSlicingTables(jonesReflected)

func makeSlicingTables(poly uint64) *[8][256]uint64 {
	t := new([8][256]uint64)
	for i := range 256 {
		crc := uint64(i)
		for range 8 {
			if crc&1 == 1 {
				crc = crc>>1 ^ poly
			} else {
				crc >>= 1
			}
		}
		t[0][i] = crc
	}
	for i := range 256 {
		crc := t[0][i]
		for k := 1; k < 8; k++ {
			crc = t[0][crc&0xff] ^ crc>>8
			t[k][i] = crc
		}
	}
	return t
}

// CRC64 continues Redis's CRC-64 crc over p (crc 0 to start).
func CRC64(crc uint64, p []byte) uint64 {
	t := jonesTables
	for ; len(p) >= 8; p = p[8:] {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = t[7][crc&0xff] ^ t[6][crc>>8&0xff] ^ t[5][crc>>16&0xff] ^ t[4][crc>>24&0xff] ^
			t[3][crc>>32&0xff] ^ t[2][crc>>40&0xff] ^ t[1][crc>>48&0xff] ^ t[0][crc>>56]
	}
	for _, c := range p {
		crc = t[0][byte(crc)^c] ^ crc>>8
	}
	return crc
}
