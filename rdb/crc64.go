package rdb

import "hash/crc64"

// Redis's CRC-64 (crc64.c): the Jones polynomial, reflected, with an
// initial value of 0 and no final xor. hash/crc64 computes the same
// reflected CRC but inverts the value on the way in and out, so the
// inversions are undone around it. Its check value: CRC64 of "123456789"
// is 0xe9c6d914c4b8d9ca.

// jonesReflected is the Jones polynomial 0xad93d23594c935a9, bit-reversed.
const jonesReflected = 0x95ac9329ac4bc9b5

var jonesTable = crc64.MakeTable(jonesReflected)

// CRC64 continues Redis's CRC-64 crc over p (crc 0 to start).
func CRC64(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, jonesTable, p)
}
