package keyspace

import (
	"bytes"
	"math"
	"testing"
)

// TestZSetListpackScoresRoundTrip checks that the listpack keeps every
// score exactly, the integral ones in their short form and the others
// (fractions, -0, infinities, magnitudes from 2^50) as float64 bytes, and
// that its heap encoding is the 8-byte layout whatever the form.
func TestZSetListpackScoresRoundTrip(t *testing.T) {
	scores := []float64{0, math.Copysign(0, -1), 1, -1, 63, 64, -64, -65, 5000, 1.5, -2.25,
		zlpIntLimit - 1, -(zlpIntLimit - 1), zlpIntLimit, -zlpIntLimit, 1e300, -1e300,
		math.Inf(1), math.Inf(-1), math.SmallestNonzeroFloat64, 123456789012}
	lim := DefaultEncodingLimits()
	z := &zset{}
	var want []byte
	for i, s := range scores {
		z.insert([]byte{'m', byte('a' + i)}, s, &lim)
	}
	if z.sk != nil {
		t.Fatal("a set of few short members is not a listpack")
	}
	z.each(0, z.card()-1, false, func(m []byte, s float64) { want = appendZEntry(want, m, s) })
	for i, s := range scores {
		got, ok := z.score([]byte{'m', byte('a' + i)})
		if !ok || math.Float64bits(got) != math.Float64bits(s) {
			t.Errorf("score %d: got %v (%v), want %v", i, got, ok, s)
		}
		_, short := zlpIntScore(s)
		if wantShort := s == math.Trunc(s) && math.Abs(s) < zlpIntLimit && !(s == 0 && math.Signbit(s)); short != wantShort {
			t.Errorf("score %v: short form %v, want %v", s, short, wantShort)
		}
	}
	enc := z.encode(nil)
	if !bytes.Equal(enc[uvarintLen(uint64(len(scores))):], want) {
		t.Fatal("the heap encoding of the listpack is not its pairs in the 8-byte layout")
	}
	d, err := decodeZSet(enc, &lim)
	if err != nil || d.sk != nil || !bytes.Equal(d.lp.bytes(), z.lp.bytes()) || d.card() != z.card() {
		t.Fatalf("decode: %v, skiplist %v, same bytes %v", err, d != nil && d.sk != nil, d != nil && bytes.Equal(d.lp.bytes(), z.lp.bytes()))
	}
	if z.heapBytes() != zsetStructBytes+allocSize(int64(len(z.lp.bytes()))) {
		t.Fatalf("heapBytes %d, want the header and the listpack's size class", z.heapBytes())
	}
	for i := range scores {
		if !z.remove([]byte{'m', byte('a' + i)}) {
			t.Fatalf("remove %d", i)
		}
		if z.heapBytes() != zsetStructBytes+allocSize(int64(len(z.lp.bytes()))) {
			t.Fatalf("after %d removes: heapBytes %d, listpack %d bytes", i+1, z.heapBytes(), len(z.lp.bytes()))
		}
	}
	if z.card() != 0 || z.lp.p != nil {
		t.Fatalf("emptied: card %d, allocation kept %v", z.card(), z.lp.p != nil)
	}
}

// TestZSetListpackIsCompact checks the figure the memory goal rests on: 10
// members of 8 bytes with integral scores below 10,000 take 112 bytes of
// listpack (10 x 9 for the members, 2 bytes for a score below 8192, 3
// above) and a 24-byte header.
func TestZSetListpackIsCompact(t *testing.T) {
	lim := DefaultEncodingLimits()
	z := &zset{}
	for j := range 10 {
		z.insert([]byte("member0"+string(rune('0'+j))), float64(999+j*1000), &lim)
	}
	if got := z.heapBytes(); got != 24+112 {
		t.Fatalf("heapBytes %d, want 136", got)
	}
}
