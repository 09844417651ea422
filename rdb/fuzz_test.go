package rdb

import (
	"bytes"
	"testing"
)

// The fuzz targets: every decoder takes untrusted bytes, returns an error
// for what it refuses, and never panics; what one accepts writes and reads
// back the same.

func FuzzDecodeObject(f *testing.F) {
	for _, p := range redisDumps(f) {
		f.Add(p[:len(p)-footerLen])
	}
	f.Add([]byte{TypeListQuicklist2, 2, nodePacked, 7, 7, 0, 0, 0, 0, 0, 0xff, nodePlain, 1, 'a'})
	f.Add(append([]byte{TypeSetIntset}, rawString(isBuild(2, 1, 2))...))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, rest, err := DecodeObject(b)
		if err != nil {
			return
		}
		if len(rest) > len(b) {
			t.Fatal("rest longer than the input")
		}
		again, _, err := DecodeObject(AppendObject(nil, &o))
		if err != nil {
			t.Fatalf("re-encoded object does not decode: %v", err)
		}
		if describe(again) != describe(o) {
			t.Fatalf("round trip changed the object: %s, %s", describe(o), describe(again))
		}
	})
}

func FuzzDecodePayload(f *testing.F) {
	for _, p := range redisDumps(f) {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		_, _ = Restore(p)
	})
}

func FuzzDecodeLZF(f *testing.F) {
	f.Add([]byte{2, 'a', 'b', 'c', 0xe0, 0, 2}, uint16(12))
	f.Add([]byte{0, 'z', 0x20, 0}, uint16(4))
	f.Fuzz(func(t *testing.T, in []byte, n uint16) {
		out, err := lzfDecompress(in, uint64(n))
		if err == nil && len(out) != int(n) {
			t.Fatalf("%d bytes out, %d claimed", len(out), n)
		}
	})
}

func FuzzDecodeListpack(f *testing.F) {
	f.Add(lpBuild())
	f.Add(lpBuild("a", int64(1), int64(-5000), string(bytes.Repeat([]byte("x"), 300)), int64(1<<40)))
	f.Fuzz(func(t *testing.T, lp []byte) {
		es, err := listpackEntries(lp)
		if err == nil && len(es) > len(lp) {
			t.Fatalf("%d entries from %d bytes", len(es), len(lp))
		}
	})
}

func FuzzDecodeIntset(f *testing.F) {
	f.Add(isBuild(2, -1, 5))
	f.Add(isBuild(8, -1<<40, 1<<40))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = intsetMembers(b)
	})
}

func FuzzLZFRoundTrip(f *testing.F) {
	f.Add([]byte("abcabcabcabcabcabcabcabcabc"))
	f.Add(bytes.Repeat([]byte{0}, 1000))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) <= 4 {
			return
		}
		c := lzfCompress(in, len(in)-4)
		if c == nil {
			return
		}
		if len(c) > len(in)-4 {
			t.Fatalf("%d bytes compressed to %d", len(in), len(c))
		}
		out, err := lzfDecompress(c, uint64(len(in)))
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
