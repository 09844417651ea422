package keyspace

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// buildSet makes a set of members by SADD's rules under lim.
func buildSet(members []string, lim *EncodingLimits) unsafe.Pointer {
	var p unsafe.Pointer
	for i, m := range members {
		if i == 0 {
			p = newSet([]byte(m), 1, lim)
		}
		p, _ = setAdd(p, []byte(m), lim)
	}
	return p
}

func setStrings(p unsafe.Pointer) []string {
	var out []string
	setEach(p, func(m []byte) { out = append(out, string(m)) })
	slices.Sort(out)
	return out
}

func TestSetCodecRoundTripsEveryEncoding(t *testing.T) {
	lim := DefaultEncodingLimits()
	cases := map[string][]string{
		"intset":    {"-32768", "32767", "0", "-1"},
		"intset4":   {"1", "-2147483648", "2147483647"},
		"intset8":   {"-9223372036854775808", "9223372036854775807", "5"},
		"listpack":  {"a", "", "1", "héllo"},
		"hashtable": append(setSeq(0, 600), "x"),
		"bigints":   setSeq(0, 600),
	}
	wantEnc := map[string]string{"intset": "intset", "intset4": "intset", "intset8": "intset", "listpack": "listpack",
		"hashtable": "hashtable", "bigints": "hashtable"}
	for name, members := range cases {
		p := buildSet(members, &lim)
		if got := setEncodingName(p); got != wantEnc[name] {
			t.Errorf("%s: built as %s", name, got)
		}
		b := setEncode(p, nil)
		q, err := setDecode(b, &lim)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := setEncodingName(q); got != wantEnc[name] {
			t.Errorf("%s: decoded as %s", name, got)
		}
		if !slices.Equal(setStrings(p), setStrings(q)) {
			t.Errorf("%s: decoded %q", name, setStrings(q))
		}
		if setHeapBytes(q) <= 0 {
			t.Errorf("%s: heapBytes %d", name, setHeapBytes(q))
		}
	}
	// Decoding follows the limits of the decoding keyspace.
	small := lim
	small.SetMaxIntsetEntries, small.SetMaxListpackEntries = 2, 2
	q, err := setDecode(setEncode(buildSet([]string{"1", "2", "3"}, &lim), nil), &small)
	if err != nil || setEncodingName(q) != "hashtable" {
		t.Errorf("decoding past the limits: %v, %s", err, setEncodingName(q))
	}
	// An all-integer hashtable decodes as an intset when it fits, as
	// Redis's RDB load does.
	ht := buildSet(append(setSeq(0, 10), "x"), &small)
	tableRemove(setTab(ht), []byte("x"))
	if q, err := setDecode(setEncode(ht, nil), &lim); err != nil || setEncodingName(q) != "intset" {
		t.Errorf("all-integer hashtable: %v, %s", err, setEncodingName(q))
	}
}

func TestSetDecodeRefusesBadInput(t *testing.T) {
	lim := DefaultEncodingLimits()
	good := setEncode(buildSet([]string{"a", "b"}, &lim), nil)
	dup := []byte{setCodecStrings, 2, 1, 'a', 1, 'a'}
	dupInts := []byte{setCodecInts, 2, 2, 2}
	cases := map[string][]byte{
		"empty":          nil,
		"type":           {7, 1, 0},
		"zero count":     {setCodecStrings, 0},
		"count too big":  {setCodecStrings, 100, 1, 'a'},
		"trailing":       append(slices.Clone(good), 0),
		"truncated":      good[:len(good)-1],
		"duplicate":      dup,
		"duplicate ints": dupInts,
		"bad varint":     {setCodecInts, 1, 0x80},
	}
	for name, b := range cases {
		if _, err := setDecode(b, &lim); err == nil {
			t.Errorf("%s: decoded %q", name, b)
		}
	}
}

// FuzzSetDecode: decode never panics, and whatever it accepts encodes
// and decodes back to the same members, with no duplicates.
func FuzzSetDecode(f *testing.F) {
	lim := DefaultEncodingLimits()
	small := lim
	small.SetMaxIntsetEntries, small.SetMaxListpackEntries, small.SetMaxListpackValue = 3, 3, 4
	for _, ms := range [][]string{{"1", "2"}, {"a", "b", "1"}, setSeq(0, 20), {"-9223372036854775808"}} {
		f.Add(setEncode(buildSet(ms, &lim), nil))
	}
	f.Add([]byte{setCodecInts, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, l := range []*EncodingLimits{&lim, &small} {
			p, err := setDecode(b, l)
			if err != nil {
				continue
			}
			members := setStrings(p)
			if len(members) != setCard(p) || len(slices.Compact(slices.Clone(members))) != len(members) {
				t.Fatalf("%q: members %q, card %d", b, members, setCard(p))
			}
			for _, m := range members {
				if !setIsMember(p, []byte(m)) {
					t.Fatalf("%q: %q is not a member", b, m)
				}
			}
			q, err := setDecode(setEncode(p, nil), l)
			if err != nil || !slices.Equal(setStrings(q), members) {
				t.Fatalf("%q: round trip: %v", b, err)
			}
		}
	})
}

func TestSetIntsetWidths(t *testing.T) {
	lim := DefaultEncodingLimits()
	p := buildSet([]string{"5", "1", "3"}, &lim)
	if b := flat(p); isWidthOf(b) != 2 || len(b) != isHdr+6 {
		t.Fatalf("width %d, used %d", isWidthOf(b), len(b))
	}
	p, _ = setAdd(p, []byte("-70000"), &lim)
	p, _ = setAdd(p, []byte("9999999999"), &lim)
	if b := flat(p); isWidthOf(b) != 8 {
		t.Fatalf("width %d", isWidthOf(b))
	}
	want := []int64{-70000, 1, 3, 5, 9999999999}
	var got []int64
	b := flat(p)
	for i := range flatCount(b) {
		got = append(got, isGet(b, i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("members %v", got)
	}
	// Ten small integers fit 24 bytes (Redis: 28, in 32).
	ten := buildSet(setSeq(0, 10), &lim)
	if setHeapBytes(ten) != 24 {
		t.Errorf("ten small integers take %d bytes", setHeapBytes(ten))
	}
}

func TestSetsWithTheKeyCommands(t *testing.T) {
	h := newSetHarness(t)
	h.do("SADD", "a", "1", "2", "3")
	h.do("SADD", "b", "x", "y")
	h.do(append([]string{"SADD", "c"}, setSeq(0, 600)...)...)
	h.script(
		"TYPE a", "set",
		"TYPE c", "set",
		"OBJECT ENCODING a", q("intset"),
		"OBJECT ENCODING b", q("listpack"),
		"OBJECT ENCODING c", q("hashtable"),
		"COPY a a2", n(1),
		"SADD a2 4", n(1),
		"SCARD a", n(3),
		"COPY c c2", n(1),
		"SREM c2 0", n(1),
		"SCARD c", n(600),
		"SCARD c2", n(599),
		"RENAME b b2", "OK",
		"SMEMBERS b2", `["x" "y"]`,
		"MOVE b2 1", n(1),
		"EXISTS b2", n(0),
		"GET a", "(error) "+errWrongType,
		"APPEND a x", "(error) "+errWrongType,
		"DEL a", n(1),
		"EXPIRE c 10", n(1),
	)
	h.do("SET", "str", "x")
	var scanned []string
	for _, f := range strings.Fields(strings.NewReplacer("[", "", "]", "").Replace(h.run("SCAN 0 TYPE set COUNT 100"))) {
		k, _ := strconv.Unquote(f)
		scanned = append(scanned, k)
	}
	expectMembers(t, "SCAN TYPE set", setSorted(scanned[1:]), "c", "a2", "c2")
	h.selectDB(1)
	h.expect("SMEMBERS b2", `["x" "y"]`)
	h.selectDB(0)
	h.advance(11000)
	h.expect("SCARD c", n(0))
	// The heap codec through the keyspace: appendEncoded and decodeValue.
	sl, _ := h.ks.lookup(0, []byte("c2"))
	enc := sl.v.appendEncoded(nil)
	v, err := h.ks.decodeValue(KindSet, enc)
	if err != nil || v.kind() != KindSet || !slices.Equal(setStrings(v.p), setStrings(sl.v.p)) || len(v.appendEncoded(nil)) != len(enc) {
		t.Errorf("heap round trip: %v", err)
	}
	if n, k := binary.Uvarint(enc[1:]); k <= 0 || n != 599 {
		t.Errorf("count %d", n)
	}
}
