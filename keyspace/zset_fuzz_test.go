package keyspace

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// FuzzZSetDecode: decode never panics on any bytes; what it accepts is a
// valid set (ordered, no NaN, no repeats) whose encoding is the input, in
// either representation.
func FuzzZSetDecode(f *testing.F) {
	lim := DefaultEncodingLimits()
	f.Add([]byte(encodedZSet("1 a 2 b 3 c")))
	f.Add([]byte(encodedZSet("-inf x inf y")))
	f.Add([]byte{0})
	f.Add([]byte{1, 1, 'a', 0, 0, 0, 0, 0, 0, 0xf8, 0x7f}) // NaN
	f.Add(append(binary.AppendUvarint(nil, 2), bytes.Repeat([]byte{1, 'a', 0, 0, 0, 0, 0, 0, 0, 0}, 2)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, entries := range []int64{0, 2, 128} {
			lim.ZSetMaxListpackEntries = entries
			z, err := decodeZSet(b, &lim)
			if err != nil {
				continue
			}
			if got := z.encode(nil); !bytes.Equal(got, b) {
				t.Fatalf("decode(%x) encodes back as %x", b, got)
			}
			if z.sk != nil && int64(z.card()) <= entries && z.card() > 0 {
				ml := 0
				z.each(0, z.card()-1, false, func(m []byte, _ float64) { ml = max(ml, len(m)) })
				if int64(ml) <= lim.ZSetMaxListpackValue {
					t.Fatalf("a set that fits the listpack limits decoded as a skiplist")
				}
			}
			prevOK := false
			var pm []byte
			var ps float64
			for i := 0; i < z.card(); i++ {
				m, s := z.at(i)
				if math.IsNaN(s) {
					t.Fatal("NaN score accepted")
				}
				if r, ok := z.rank(m); !ok || r != i {
					t.Fatalf("rank of member %d is %d, %v", i, r, ok)
				}
				if prevOK && !zless(ps, pm, s, m) {
					t.Fatal("out of order")
				}
				pm, ps, prevOK = append(pm[:0], m...), s, true
			}
		}
	})
}

func TestZSetDecodeRefusesBadInput(t *testing.T) {
	lim := DefaultEncodingLimits()
	ok := []byte(encodedZSet("1 a 2 b"))
	nan := binary.LittleEndian.AppendUint64([]byte{1, 1, 'a'}, math.Float64bits(math.NaN()))
	bad := map[string][]byte{
		"empty":                            {},
		"count too high":                   append([]byte{3}, ok[1:]...),
		"count too low":                    append([]byte{1}, ok[1:]...),
		"trailing bytes":                   append(append([]byte{}, ok...), 0),
		"truncated":                        ok[:len(ok)-1],
		"NaN":                              nan,
		"duplicate":                        []byte(encodedZSet("1 a") + encodedZSet("1 a")[1:]),
		"out of order":                     append([]byte{2}, append([]byte(encodedZSet("2 b")[1:]), encodedZSet("1 a")[1:]...)...),
		"same score, members out of order": append([]byte{2}, append([]byte(encodedZSet("1 b")[1:]), encodedZSet("1 a")[1:]...)...),
	}
	for name, b := range bad {
		for _, e := range []int64{0, 128} {
			lim.ZSetMaxListpackEntries = e
			if _, err := decodeZSet(b, &lim); err == nil {
				t.Errorf("%s (entries %d): accepted", name, e)
			}
		}
	}
	if _, err := decodeZSet(ok, &lim); err != nil {
		t.Fatal(err)
	}
}
