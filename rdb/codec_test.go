package rdb

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestCRC64Vector(t *testing.T) {
	if got := CRC64(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x", got)
	}
	// Continuing a CRC over a split input gives the CRC of the whole.
	if got := CRC64(CRC64(0, []byte("1234")), []byte("56789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64 in two parts = %#x", got)
	}
}

func TestLenRoundTrip(t *testing.T) {
	cases := []struct {
		n    uint64
		size int
	}{{0, 1}, {63, 1}, {64, 2}, {16383, 2}, {16384, 5}, {1<<32 - 1, 5}, {1 << 32, 9}, {math.MaxUint64, 9}}
	for _, c := range cases {
		b := AppendLen(nil, c.n)
		if len(b) != c.size {
			t.Errorf("AppendLen(%d) is %d bytes, want %d", c.n, len(b), c.size)
		}
		r := &reader{b: b}
		n, special, err := r.readLen()
		if err != nil || special || n != c.n || r.left() != 0 {
			t.Errorf("readLen(AppendLen(%d)) = %d, %v, %v, %d left", c.n, n, special, err, r.left())
		}
	}
	// Longer forms than needed still read; a bad 10xxxxxx byte does not.
	r := &reader{b: []byte{0x80, 0, 0, 0, 5}}
	if n, _, err := r.readLen(); err != nil || n != 5 {
		t.Errorf("32-bit 5 = %d, %v", n, err)
	}
	for _, b := range [][]byte{{0x82}, {0x40}, {0x80, 0, 0}, {0x81, 0}, {}} {
		r := &reader{b: b}
		if _, _, err := r.readLen(); !errors.Is(err, ErrFormat) {
			t.Errorf("readLen(%x) = %v, want ErrFormat", b, err)
		}
	}
}

func TestStringEncodings(t *testing.T) {
	cases := []struct {
		s    string
		want []byte
	}{
		{"0", []byte{0xc0, 0}},
		{"-1", []byte{0xc0, 0xff}},
		{"127", []byte{0xc0, 127}},
		{"128", []byte{0xc1, 128, 0}},
		{"-32768", []byte{0xc1, 0, 0x80}},
		{"32768", []byte{0xc2, 0, 0x80, 0, 0}},
		{"2147483647", []byte{0xc2, 0xff, 0xff, 0xff, 0x7f}},
		{"-2147483648", []byte{0xc2, 0, 0, 0, 0x80}},
		{"2147483648", append([]byte{10}, "2147483648"...)},
		{"007", append([]byte{3}, "007"...)},
		{"-0", append([]byte{2}, "-0"...)},
		{"+1", append([]byte{2}, "+1"...)},
		{" 1", append([]byte{2}, " 1"...)},
		{"", []byte{0}},
		{"hello", append([]byte{5}, "hello"...)},
	}
	for _, c := range cases {
		b := AppendString(nil, []byte(c.s))
		if !bytes.Equal(b, c.want) {
			t.Errorf("AppendString(%q) = %x, want %x", c.s, b, c.want)
		}
		r := &reader{b: b}
		s, err := r.readString()
		if err != nil || string(s) != c.s || r.left() != 0 {
			t.Errorf("readString(%x) = %q, %v", b, s, err)
		}
	}
	for _, n := range []int64{0, -1, 1 << 40, math.MinInt64, math.MaxInt64} {
		r := &reader{b: AppendInt(nil, n)}
		s, err := r.readString()
		if err != nil || string(s) != strconv.FormatInt(n, 10) {
			t.Errorf("AppendInt(%d) reads back %q, %v", n, s, err)
		}
	}
	long := bytes.Repeat([]byte{0, 0xff, 'x'}, 10000)
	r := &reader{b: AppendString(nil, long)}
	if s, err := r.readString(); err != nil || !bytes.Equal(s, long) {
		t.Errorf("a 30000-byte binary string does not read back: %v", err)
	}
	for _, b := range [][]byte{{0xc4}, {0xc0}, {0xc1, 1}, {0xc2, 1, 2, 3}, {5, 'a'}, {0xc3, 2, 5, 0}} {
		r := &reader{b: b}
		if _, err := r.readString(); !errors.Is(err, ErrFormat) {
			t.Errorf("readString(%x) = %v, want ErrFormat", b, err)
		}
	}
}

func TestLZF(t *testing.T) {
	// "abcabcabcabc": a literal "abc", then a back reference of 9 bytes
	// at distance 3 (control 7<<5 | 0, extra length 0, offset 2).
	in := []byte{2, 'a', 'b', 'c', 0xe0, 0, 2}
	out, err := lzfDecompress(in, 12)
	if err != nil || string(out) != "abcabcabcabc" {
		t.Fatalf("lzfDecompress = %q, %v", out, err)
	}
	// A short back reference: length 1+2, distance 1, overlapping.
	out, err = lzfDecompress([]byte{0, 'z', 0x20, 0}, 4)
	if err != nil || string(out) != "zzzz" {
		t.Fatalf("lzfDecompress overlap = %q, %v", out, err)
	}
	bad := []struct {
		in []byte
		n  uint64
	}{
		{in, 11},                      // longer than claimed
		{in, 13},                      // shorter than claimed
		{[]byte{5, 'a'}, 6},           // literal past the end
		{[]byte{0x20, 0}, 3},          // back reference before the start
		{[]byte{0, 'a', 0xe0}, 10},    // truncated long reference
		{[]byte{0, 'a', 0x20}, 4},     // truncated offset
		{[]byte{0, 'a'}, 1 << 40},     // impossible ratio
		{[]byte{}, 1},                 // nothing to decompress
		{[]byte{0, 'a', 0x3f, 0}, 50}, // offset beyond the output
	}
	for _, c := range bad {
		if _, err := lzfDecompress(c.in, c.n); !errors.Is(err, ErrFormat) {
			t.Errorf("lzfDecompress(%x, %d) = %v, want ErrFormat", c.in, c.n, err)
		}
	}
	// Through the string encoding.
	enc := append([]byte{0xc3}, AppendLen(nil, uint64(len(in)))...)
	enc = append(append(enc, AppendLen(nil, 12)...), in...)
	r := &reader{b: enc}
	if s, err := r.readString(); err != nil || string(s) != "abcabcabcabc" {
		t.Fatalf("LZF string = %q, %v", s, err)
	}
}

func TestListpack(t *testing.T) {
	big := string(bytes.Repeat([]byte("q"), 5000))
	mid := string(bytes.Repeat([]byte("m"), 200))
	entries := []any{"", "a", int64(0), int64(127), int64(128), int64(-1), int64(4095), int64(-4096),
		int64(4096), int64(-32768), int64(32768), int64(-1 << 23), int64(1<<23 - 1), int64(1 << 23),
		int64(math.MinInt32), int64(math.MaxInt32 + 1), int64(math.MinInt64), int64(math.MaxInt64), mid, big}
	lp := lpBuild(entries...)
	got, err := listpackEntries(lp)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(entries) {
		t.Fatalf("%d entries, want %d", len(got), len(entries))
	}
	for i, e := range entries {
		want := ""
		switch v := e.(type) {
		case int64:
			want = strconv.FormatInt(v, 10)
		case string:
			want = v
		}
		if string(got[i]) != want {
			t.Errorf("entry %d = %.20q, want %.20q", i, got[i], want)
		}
	}
	// An unknown count (65535) is counted.
	unk := bytes.Clone(lp)
	unk[4], unk[5] = 0xff, 0xff
	if got, err := listpackEntries(unk); err != nil || len(got) != len(entries) {
		t.Errorf("unknown count: %d entries, %v", len(got), err)
	}
	empty := lpBuild()
	if got, err := listpackEntries(empty); err != nil || len(got) != 0 {
		t.Errorf("empty listpack: %v, %v", got, err)
	}
	small := lpBuild("ab", int64(5))
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(small)) }
	bad := map[string][]byte{
		"short":          {7, 0, 0, 0, 0, 0},
		"total":          mutate(func(b []byte) []byte { b[0]++; return b }),
		"count":          mutate(func(b []byte) []byte { b[4] = 3; return b }),
		"backlen":        mutate(func(b []byte) []byte { b[lpHeaderSize+3]++; return b }),
		"no end":         mutate(func(b []byte) []byte { b[len(b)-1] = 1; return b }),
		"after end":      mutate(func(b []byte) []byte { b = append(b, 0); b[0]++; return b }),
		"bad encoding":   mutate(func(b []byte) []byte { b[lpHeaderSize] = 0xf5; return b }),
		"string too big": mutate(func(b []byte) []byte { b[lpHeaderSize] = 0x80 | 60; return b }),
	}
	for name, b := range bad {
		if _, err := listpackEntries(b); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: listpackEntries = %v, want ErrFormat", name, err)
		}
	}
}

func TestIntset(t *testing.T) {
	for _, w := range []int{2, 4, 8} {
		vs := []int64{-5, 0, 7, 300}
		got, err := intsetMembers(isBuild(w, vs...))
		if err != nil || len(got) != len(vs) {
			t.Fatalf("width %d: %q, %v", w, got, err)
		}
		for i, v := range vs {
			if string(got[i]) != strconv.FormatInt(v, 10) {
				t.Errorf("width %d member %d = %s", w, i, got[i])
			}
		}
	}
	if got, _ := intsetMembers(isBuild(8, math.MinInt64, math.MaxInt64)); string(got[0]) != "-9223372036854775808" {
		t.Errorf("int64 intset: %q", got)
	}
	bad := map[string][]byte{
		"short":     {2, 0, 0},
		"width":     isBuild(3),
		"order":     isBuild(2, 5, 1),
		"duplicate": isBuild(4, 1, 1),
		"size":      append(isBuild(2, 1), 0),
		"count":     isBuild(2, 1)[:9],
	}
	for name, b := range bad {
		if _, err := intsetMembers(b); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: intsetMembers = %v, want ErrFormat", name, err)
		}
	}
}

func TestLZFCompress(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 5000)
	for i := range random {
		random[i] = byte(rng.IntN(256))
	}
	cases := map[string][]byte{
		"zeros":     make([]byte, 100000),
		"pattern":   bytes.Repeat([]byte("abcdefghij"), 1000),
		"text":      []byte(strings.Repeat("the quick brown fox jumps over the lazy dog ", 50)),
		"far":       append(append(bytes.Clone(random[:100]), make([]byte, 9000)...), random[:100]...),
		"random":    random,
		"short":     []byte("aaaaaaaaaaaaaaaaaaaaaa"),
		"literal33": []byte("0123456789abcdefghijklmnopqrstuvwxyz"),
	}
	for name, in := range cases {
		c := lzfCompress(in, len(in)-4)
		if name == "random" || name == "literal33" {
			if c != nil {
				t.Errorf("%s: compressed %d bytes to %d", name, len(in), len(c))
			}
			continue
		}
		if c == nil {
			t.Errorf("%s: not compressed", name)
			continue
		}
		out, err := lzfDecompress(c, uint64(len(in)))
		if err != nil || !bytes.Equal(out, in) {
			t.Errorf("%s: does not decompress back: %v", name, err)
		}
		// Through the string encoding, as Redis writes it.
		b := AppendString(nil, in)
		if b[0] != 0xc3 {
			t.Errorf("%s: AppendString did not compress", name)
		}
		r := &reader{b: b}
		if s, err := r.readString(); err != nil || !bytes.Equal(s, in) || r.left() != 0 {
			t.Errorf("%s: AppendString does not read back: %v", name, err)
		}
	}
	if b := AppendString(nil, []byte("aaaaaaaaaaaaaaaaaaaa")); b[0] != 20 {
		t.Errorf("a string of 20 bytes was compressed: %x", b)
	}
}
