package keyspace

import (
	"encoding/binary"
	"errors"
	"math/bits"
)

// HyperLogLog values (Redis's hyperloglog.c, re-implemented from its
// description). A HyperLogLog is a string value, byte for byte the one
// Redis 7.0 builds, so that a value written by either server reads the same
// in the other:
//
//	+------+---+-----+----------+----------------------------+
//	| HYLL | E | N/U | Cardin.  | registers                  |
//	+------+---+-----+----------+----------------------------+
//	  4      1   3     8 (LE)     dense: 12288 bytes; sparse: opcodes
//
// E is the encoding (0 dense, 1 sparse), N/U three unused bytes. Cardin.
// is the cached cardinality, little endian; bit 7 of its last byte set
// means the cache is invalid (a register changed since it was computed).
//
// Dense: 16384 registers of 6 bits, register i at bit 6i, low bits first
// (a register spans two bytes when 6i%8 is 4 or 6).
//
// Sparse: run-length opcodes covering the 16384 registers in order:
//
//	ZERO   00xxxxxx           xxxxxx+1 registers (1..64) at 0
//	XZERO  01xxxxxx yyyyyyyy  (xxxxxx<<8|yyyyyyyy)+1 registers (1..16384) at 0
//	VAL    1vvvvvxx           xx+1 registers (1..4) at vvvvv+1 (1..32)
//
// A sparse value becomes dense when a register needs more than 32, or
// when an update would make it longer than hll-sparse-max-bytes (the
// header included), as in Redis; a dense value never turns back.
//
// An element's register and value come from MurmurHash64A (seed
// 0xadc83b19) of its bytes: the low 14 bits pick the register, and the
// value is 1 plus the number of trailing zero bits of the rest (at most
// 51).

const (
	hllP           = 14
	hllQ           = 64 - hllP
	hllRegisters   = 1 << hllP
	hllPMask       = hllRegisters - 1
	hllBits        = 6
	hllRegisterMax = 1<<hllBits - 1
	hllHdrSize     = 16
	hllRegBytes    = (hllRegisters*hllBits + 7) / 8
	hllDenseSize   = hllHdrSize + hllRegBytes

	hllDense       = 0
	hllSparse      = 1
	hllMaxEncoding = 1

	hllSeed = 0xadc83b19
)

// The errors of the HyperLogLog commands, as Redis words them.
const (
	errHLLCorrupt = "INVALIDOBJ Corrupted HLL object detected"
	errNotHLL     = "WRONGTYPE Key is not a valid HyperLogLog string value."
)

// errHLLInvalid is a sparse or dense representation that does not
// describe exactly 16384 registers: INVALIDOBJ to the client.
var errHLLInvalid = errors.New("keyspace: corrupted HyperLogLog")

// hllEmpty is a new HyperLogLog: sparse, one XZERO over every register,
// the cache valid at 0 (Redis's createHLLObject).
var hllEmpty = [hllHdrSize + 2]byte{'H', 'Y', 'L', 'L', hllSparse, 14: 0, 15: 0, 16: 0x40 | (hllRegisters-1)>>8, 17: (hllRegisters - 1) & 0xff}

// newHLL returns the bytes of a new, empty HyperLogLog with room to grow.
func newHLL() []byte {
	b := make([]byte, len(hllEmpty), 64)
	copy(b, hllEmpty[:])
	return b
}

// isHLL reports whether b looks like a HyperLogLog (Redis's
// isHLLObjectOrReply): the magic, a known encoding, and for the dense
// one the exact length. The sparse opcodes are checked as they are read.
func isHLL(b []byte) bool {
	if len(b) < hllHdrSize || string(b[:4]) != "HYLL" || b[4] > hllMaxEncoding {
		return false
	}
	return b[4] != hllDense || len(b) == hllDenseSize
}

// hllValidCache reports whether the cached cardinality in b's header is
// valid, and returns it.
func hllValidCache(b []byte) (uint64, bool) {
	if b[15]&0x80 != 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[8:16]), true
}

// hllSetCache stores card as the cached cardinality.
func hllSetCache(b []byte, card uint64) { binary.LittleEndian.PutUint64(b[8:16], card) }

// hllInvalidateCache marks the cached cardinality stale.
func hllInvalidateCache(b []byte) { b[15] |= 0x80 }

// denseGet reads register i of the dense registers r.
func denseGet(r []byte, i int) uint8 {
	bit := i * hllBits
	b, fb := bit>>3, uint(bit&7)
	if fb <= 8-hllBits { // within one byte
		return r[b] >> fb & hllRegisterMax
	}
	return (r[b]>>fb | r[b+1]<<(8-fb)) & hllRegisterMax
}

// denseSet writes v (at most 63) to register i of the dense registers r.
func denseSet(r []byte, i int, v uint8) {
	bit := i * hllBits
	b, fb := bit>>3, uint(bit&7)
	r[b] = r[b]&^(hllRegisterMax<<fb) | v<<fb
	if fb > 8-hllBits {
		r[b+1] = r[b+1]&^(hllRegisterMax>>(8-fb)) | v>>(8-fb)
	}
}

// denseMax raises register i of r to v if it is lower, and reports whether
// it did.
func denseMax(r []byte, i int, v uint8) bool {
	if denseGet(r, i) >= v {
		return false
	}
	denseSet(r, i, v)
	return true
}

// murmurHash64A is Austin Appleby's 64-bit MurmurHash2 with Redis's
// endian-neutral reading of 8-byte blocks (little endian).
func murmurHash64A(key []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ uint64(len(key))*m
	for len(key) >= 8 {
		k := binary.LittleEndian.Uint64(key)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		key = key[8:]
	}
	if len(key) > 0 {
		for i := len(key) - 1; i >= 0; i-- {
			h ^= uint64(key[i]) << (8 * uint(i))
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// hllPatLen returns the register an element maps to and the value it
// offers it: 1 plus the run of zero bits above the register index.
func hllPatLen(ele []byte) (int, uint8) {
	h := murmurHash64A(ele, hllSeed)
	index := int(h & hllPMask)
	h >>= hllP
	h |= 1 << hllQ // the run ends by bit Q: count <= Q+1
	return index, uint8(bits.TrailingZeros64(h) + 1)
}
