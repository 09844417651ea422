package rdb

import (
	"hash/crc64"
	"math/rand/v2"
	"testing"
)

// TestCRC64MatchesBytewise: the eight-bytes-at-a-time CRC equals
// hash/crc64's over the same table (a byte at a time below 2 KB), for
// every length up to 300 and pieces of any split, as a loader feeds it.
func TestCRC64MatchesBytewise(t *testing.T) {
	ref := crc64.MakeTable(jonesReflected)
	rng := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, 300)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	for n := range len(b) + 1 {
		want := ^crc64.Update(^uint64(0), ref, b[:n])
		if got := CRC64(0, b[:n]); got != want {
			t.Fatalf("%d bytes: %#x, want %#x", n, got, want)
		}
		cut := rng.IntN(n + 1)
		if got := CRC64(CRC64(0, b[:cut]), b[cut:n]); got != want {
			t.Fatalf("%d bytes cut at %d: %#x, want %#x", n, cut, got, want)
		}
	}
}
