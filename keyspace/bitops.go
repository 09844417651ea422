package keyspace

import (
	"encoding/binary"
	"math/bits"
)

// Bit-level helpers of the bitmap commands (cmd_bitmap.go, bitfield.go).
// Bits are numbered as Redis numbers them: bit 0 is the most significant
// bit of the first byte. The loops work on 8-byte words where the data is
// long enough, since a byte at a time is eight times the work.

// popcount returns the number of set bits in b.
func popcount(b []byte) int64 {
	n := 0
	for len(b) >= 32 {
		w := b[:32:32] // a constant length: no bounds checks below
		n += bits.OnesCount64(binary.LittleEndian.Uint64(w)) +
			bits.OnesCount64(binary.LittleEndian.Uint64(w[8:])) +
			bits.OnesCount64(binary.LittleEndian.Uint64(w[16:])) +
			bits.OnesCount64(binary.LittleEndian.Uint64(w[24:]))
		b = b[32:]
	}
	for len(b) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	for _, c := range b {
		n += bits.OnesCount8(c)
	}
	return int64(n)
}

// rangeMask is the mask of the bits from..to (0..7, from <= to) of a byte,
// bit 0 being the most significant.
func rangeMask(from, to int64) byte {
	return 0xff >> from & (0xff << (7 - to))
}

// countRange returns the number of set bits of p among bits first..last
// (inclusive, first <= last < 8*len(p)).
func countRange(p []byte, first, last int64) int64 {
	fb, lb := first>>3, last>>3
	if fb == lb {
		return int64(bits.OnesCount8(p[fb] & rangeMask(first&7, last&7)))
	}
	n := int64(bits.OnesCount8(p[fb] & rangeMask(first&7, 7)))
	n += popcount(p[fb+1 : lb])
	return n + int64(bits.OnesCount8(p[lb]&rangeMask(0, last&7)))
}

// findBit returns the position of the first bit of p equal to bit (0 or 1)
// among bits first..last (inclusive, first <= last < 8*len(p)), or -1.
func findBit(p []byte, first, last int64, bit byte) int64 {
	var flip byte // XORed in, so that the bit looked for reads as 1
	if bit == 0 {
		flip = 0xff
	}
	fb, lb := first>>3, last>>3
	if fb == lb {
		return firstOne(fb, (p[fb]^flip)&rangeMask(first&7, last&7))
	}
	if pos := firstOne(fb, (p[fb]^flip)&rangeMask(first&7, 7)); pos >= 0 {
		return pos
	}
	if pos := findBitWords(p[fb+1:lb], bit); pos >= 0 {
		return (fb+1)<<3 + pos
	}
	return firstOne(lb, (p[lb]^flip)&rangeMask(0, last&7))
}

// firstOne returns the position of the first set bit of c, byte i of the
// string, or -1.
func firstOne(i int64, c byte) int64 {
	if c == 0 {
		return -1
	}
	return i<<3 + int64(bits.LeadingZeros8(c))
}

// findBitWords returns the position of the first bit of p equal to bit, or
// -1, skipping whole words that cannot hold it.
func findBitWords(p []byte, bit byte) int64 {
	var flip uint64
	if bit == 0 {
		flip = ^uint64(0)
	}
	i := 0
	for ; i+8 <= len(p); i += 8 {
		if w := binary.BigEndian.Uint64(p[i:]) ^ flip; w != 0 {
			return int64(i)<<3 + int64(bits.LeadingZeros64(w))
		}
	}
	for ; i < len(p); i++ {
		if pos := firstOne(int64(i), p[i]^byte(flip)); pos >= 0 {
			return pos
		}
	}
	return -1
}

// Operations of BITOP.
const (
	bitAnd = iota
	bitOr
	bitXor
	bitNot
)

// bitopLen is the length of BITOP's result over srcs: the longest's.
func bitopLen(srcs [][]byte) int {
	n := 0
	for _, s := range srcs {
		n = max(n, len(s))
	}
	return n
}

// bitopInto computes BITOP op over srcs into res, of bitopLen(srcs)
// bytes, whatever res held before: a missing key is an empty string, and
// shorter strings are padded with zero bytes. NOT takes exactly one
// source. res must not overlap a source.
func bitopInto(op int, srcs [][]byte, res []byte) {
	minLen := len(srcs[0])
	for _, s := range srcs {
		minLen = min(minLen, len(s))
	}
	switch op {
	case bitNot:
		notInto(res, srcs[0])
	case bitAnd:
		// Past the shortest source every byte is ANDed with a zero pad.
		copy(res, srcs[0][:minLen])
		clear(res[minLen:])
		for _, s := range srcs[1:] {
			combineInto(res[:minLen], s, bitAnd)
		}
	default:
		// OR and XOR start from the first source, zero-padded.
		n := copy(res, srcs[0])
		clear(res[n:])
		for _, s := range srcs[1:] {
			combineInto(res[:len(s)], s, op)
		}
	}
}

// The loops below work 32 bytes at a time: four independent 8-byte words
// per round, on subslices of a constant length so that the compiler drops
// the bounds checks. That is about three times the speed of one word per
// round.

// notInto stores the complement of src in dst (as long as src).
func notInto(dst, src []byte) {
	le := binary.LittleEndian
	dst = dst[:len(src)]
	for len(src) >= 32 {
		d, s := dst[:32:32], src[:32:32]
		le.PutUint64(d, ^le.Uint64(s))
		le.PutUint64(d[8:], ^le.Uint64(s[8:]))
		le.PutUint64(d[16:], ^le.Uint64(s[16:]))
		le.PutUint64(d[24:], ^le.Uint64(s[24:]))
		dst, src = dst[32:], src[32:]
	}
	for i := range src {
		dst[i] = ^src[i]
	}
}

// combineInto applies dst = dst op src (AND, OR or XOR) over len(dst)
// bytes, src being at least as long. Each operation has its own loop, so
// that the loop does one operation and no branch.
func combineInto(dst, src []byte, op int) {
	src = src[:len(dst)]
	switch op {
	case bitAnd:
		andInto(dst, src)
	case bitOr:
		orInto(dst, src)
	default:
		xorInto(dst, src)
	}
}

func andInto(dst, src []byte) {
	le := binary.LittleEndian
	for len(dst) >= 32 && len(src) >= 32 {
		d, s := dst[:32:32], src[:32:32]
		le.PutUint64(d, le.Uint64(d)&le.Uint64(s))
		le.PutUint64(d[8:], le.Uint64(d[8:])&le.Uint64(s[8:]))
		le.PutUint64(d[16:], le.Uint64(d[16:])&le.Uint64(s[16:]))
		le.PutUint64(d[24:], le.Uint64(d[24:])&le.Uint64(s[24:]))
		dst, src = dst[32:], src[32:]
	}
	for i := range dst {
		dst[i] &= src[i]
	}
}

func orInto(dst, src []byte) {
	le := binary.LittleEndian
	for len(dst) >= 32 && len(src) >= 32 {
		d, s := dst[:32:32], src[:32:32]
		le.PutUint64(d, le.Uint64(d)|le.Uint64(s))
		le.PutUint64(d[8:], le.Uint64(d[8:])|le.Uint64(s[8:]))
		le.PutUint64(d[16:], le.Uint64(d[16:])|le.Uint64(s[16:]))
		le.PutUint64(d[24:], le.Uint64(d[24:])|le.Uint64(s[24:]))
		dst, src = dst[32:], src[32:]
	}
	for i := range dst {
		dst[i] |= src[i]
	}
}

func xorInto(dst, src []byte) {
	le := binary.LittleEndian
	for len(dst) >= 32 && len(src) >= 32 {
		d, s := dst[:32:32], src[:32:32]
		le.PutUint64(d, le.Uint64(d)^le.Uint64(s))
		le.PutUint64(d[8:], le.Uint64(d[8:])^le.Uint64(s[8:]))
		le.PutUint64(d[16:], le.Uint64(d[16:])^le.Uint64(s[16:]))
		le.PutUint64(d[24:], le.Uint64(d[24:])^le.Uint64(s[24:]))
		dst, src = dst[32:], src[32:]
	}
	for i := range dst {
		dst[i] ^= src[i]
	}
}
