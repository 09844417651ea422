package rdb

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// redisDumps are DUMP payloads redis-server 7.0.15 produced
// (testdata/redis70_dumps.json), by name.
func redisDumps(t testing.TB) map[string][]byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/redis70_dumps.json")
	if err != nil {
		t.Fatal(err)
	}
	var hexes map[string]string
	if err := json.Unmarshal(raw, &hexes); err != nil {
		t.Fatal(err)
	}
	out := make(map[string][]byte, len(hexes))
	for name, h := range hexes {
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}

// describe renders an Object canonically (sets, hashes and sorted sets
// sorted), for comparisons.
func describe(o Object) string {
	switch o.Kind {
	case KindString:
		return fmt.Sprintf("string %q", o.String)
	case KindList:
		return fmt.Sprintf("list %q", o.Members)
	case KindSet:
		ms := slices.Clone(o.Members)
		slices.SortFunc(ms, bytes.Compare)
		return fmt.Sprintf("set %q", ms)
	}
	var pairs []string
	for i, m := range o.Members {
		if o.Kind == KindZSet {
			pairs = append(pairs, fmt.Sprintf("%q=%v", m, o.Scores[i]))
		} else {
			pairs = append(pairs, fmt.Sprintf("%q=%q", m, o.Values[i]))
		}
	}
	slices.Sort(pairs)
	return fmt.Sprintf("kind %d %s", o.Kind, strings.Join(pairs, " "))
}

func TestRedisDumps(t *testing.T) {
	dumps := redisDumps(t)
	var listLarge, hashLarge [][]byte
	for i := range 2000 {
		listLarge = append(listLarge, []byte(fmt.Sprintf("elem-%d-%s", i, strings.Repeat("y", 50))))
	}
	var hashValues [][]byte
	for i := range 1000 {
		hashLarge = append(hashLarge, []byte(fmt.Sprintf("f%d", i)))
		hashValues = append(hashValues, []byte(fmt.Sprintf("v%d", i)))
	}
	var zm [][]byte
	var zs []float64
	for i := range 300 {
		zm = append(zm, []byte(fmt.Sprintf("m%d", i)))
		zs = append(zs, float64(i)*1.5)
	}
	var ints [][]byte
	for i := range 600 {
		ints = append(ints, []byte(strconv.Itoa(i)))
	}
	bs := func(ss ...string) [][]byte {
		var out [][]byte
		for _, s := range ss {
			out = append(out, []byte(s))
		}
		return out
	}
	want := map[string]Object{
		"string-10":       {Kind: KindString, String: []byte("0123456789")},
		"string-1000-lzf": {Kind: KindString, String: bytes.Repeat([]byte("abcdefghij"), 100)},
		"string-int16":    {Kind: KindString, String: []byte("12345")},
		"string-int8":     {Kind: KindString, String: []byte("-7")},
		"string-int32":    {Kind: KindString, String: []byte("2147483647")},
		"string-int64":    {Kind: KindString, String: []byte("9223372036854775807")},
		"list-small":      {Kind: KindList, Members: bs("a", "b", "", "12", "-5000", "100000", "1234567890123", strings.Repeat("x", 100))},
		"list-large":      {Kind: KindList, Members: listLarge},
		"list-plain":      {Kind: KindList, Members: bs(strings.Repeat("z", 10000))},
		"set-intset":      {Kind: KindSet, Members: bs("1", "2", "-3", "100000", "70000000000")},
		"set-hashtable":   {Kind: KindSet, Members: bs("a", "b", "", "c")},
		"set-large-ints":  {Kind: KindSet, Members: ints},
		"zset-listpack": {Kind: KindZSet, Members: bs("a", "b", "c", "d", "", "e"),
			Scores: []float64{1, 2.5, math.Inf(-1), math.Inf(1), 0, 3}},
		"zset-skiplist":  {Kind: KindZSet, Members: zm, Scores: zs},
		"hash-listpack":  {Kind: KindHash, Members: bs("f", "", "n", "big"), Values: bs("v", "empty", "123", strings.Repeat("x", 60))},
		"hash-hashtable": {Kind: KindHash, Members: hashLarge, Values: hashValues},
	}
	for name, p := range dumps {
		o, err := Restore(p)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if name == "hll-sparse" {
			if o.Kind != KindString || !bytes.HasPrefix(o.String, []byte("HYLL")) {
				t.Errorf("hll-sparse: %s", describe(o))
			}
		} else if w, ok := want[name]; !ok {
			t.Errorf("%s: no expectation", name)
		} else if describe(o) != describe(w) {
			t.Errorf("%s:\n got %.300s\nwant %.300s", name, describe(o), describe(w))
		}
		// Written again in the plain encodings, it reads back the same.
		o2, err := Restore(Dump(&o))
		if err != nil || describe(o2) != describe(o) {
			t.Errorf("%s: round trip: %v", name, err)
		}
	}
}

func TestObjectRoundTrip(t *testing.T) {
	bin := []byte{0, 1, 2, 0xff, '\r', '\n'}
	objs := []Object{
		{Kind: KindString},
		{Kind: KindString, String: bin},
		{Kind: KindString, String: []byte("-123")},
		{Kind: KindList, Members: [][]byte{{}, bin, []byte("1"), []byte("1")}},
		{Kind: KindSet, Members: [][]byte{{}, bin, []byte("7")}},
		{Kind: KindZSet, Members: [][]byte{{}, bin}, Scores: []float64{math.Inf(-1), 0.1}},
		{Kind: KindHash, Members: [][]byte{{}, bin}, Values: [][]byte{bin, {}}},
	}
	for _, o := range objs {
		got, err := Restore(Dump(&o))
		if err != nil || describe(got) != describe(o) {
			t.Errorf("%s: got %s, %v", describe(o), describe(got), err)
		}
	}
}

func TestPayloadFooter(t *testing.T) {
	p := Dump(&Object{Kind: KindString, String: []byte("x")})
	if _, err := Restore(p); err != nil {
		t.Fatal(err)
	}
	bad := map[string][]byte{
		"short":    p[:9],
		"checksum": append(bytes.Clone(p[:len(p)-1]), p[len(p)-1]^1),
		"body":     append([]byte{p[0], p[1] ^ 1}, p[2:]...),
		"version":  AppendFooter(append(AppendObject(nil, &Object{Kind: KindString}), 0)[:2], 0),
	}
	// A later version with a correct checksum.
	v11 := AppendObject(nil, &Object{Kind: KindString, String: []byte("x")})
	v11 = append(v11, 11, 0)
	v11 = append(v11, make([]byte, 8)...)
	crc := CRC64(0, v11[:len(v11)-8])
	for i := range 8 {
		v11[len(v11)-8+i] = byte(crc >> (8 * i))
	}
	bad["version"] = v11
	for name, b := range bad {
		if _, err := Restore(b); !errors.Is(err, ErrPayload) {
			t.Errorf("%s: %v, want ErrPayload", name, err)
		}
	}
	// An older version is accepted, as Redis does.
	old := AppendObject(nil, &Object{Kind: KindString, String: []byte("x")})
	old = append(old, 9, 0)
	old = append(old, make([]byte, 8)...)
	crc = CRC64(0, old[:len(old)-8])
	for i := range 8 {
		old[len(old)-8+i] = byte(crc >> (8 * i))
	}
	if _, err := Restore(old); err != nil {
		t.Errorf("version 9: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	str := func(s string) []byte { return rawString([]byte(s)) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	nan := AppendBinaryDouble(nil, math.NaN())
	one := AppendBinaryDouble(nil, 1)
	bad := map[string][]byte{
		"no type":                   {},
		"unknown type":              {6},
		"ziplist hash":              {13, 0},
		"truncated string":          {TypeString, 5, 'a'},
		"empty list":                {TypeList, 0},
		"list count lies":           {TypeList, 0x80, 0xff, 0xff, 0xff, 0xff, 0},
		"empty set":                 {TypeSet, 0},
		"set duplicate":             cat([]byte{TypeSet, 2}, str("a"), str("a")),
		"set int duplicate":         cat([]byte{TypeSet, 2}, AppendString(nil, []byte("1")), str("1")),
		"empty intset":              cat([]byte{TypeSetIntset}, rawString(isBuild(2))),
		"bad intset":                cat([]byte{TypeSetIntset}, rawString(isBuild(2, 3, 1))),
		"zset nan":                  cat([]byte{TypeZSet2, 1}, str("a"), nan),
		"zset duplicate":            cat([]byte{TypeZSet2, 2}, str("a"), one, str("a"), one),
		"zset truncated":            cat([]byte{TypeZSet2, 1}, str("a"), one[:4]),
		"zset decimal nan":          cat([]byte{TypeZSet, 1}, str("a"), []byte{253}),
		"zset decimal junk":         cat([]byte{TypeZSet, 1}, str("a"), []byte{2, 'x', 'y'}),
		"empty zset":                {TypeZSet2, 0},
		"zset lp odd":               cat([]byte{TypeZSetListpack}, rawString(lpBuild("a", int64(1), "b"))),
		"zset lp score":             cat([]byte{TypeZSetListpack}, rawString(lpBuild("a", "x"))),
		"zset lp nan":               cat([]byte{TypeZSetListpack}, rawString(lpBuild("a", "nan"))),
		"zset lp empty":             cat([]byte{TypeZSetListpack}, rawString(lpBuild())),
		"zset lp duplicate":         cat([]byte{TypeZSetListpack}, rawString(lpBuild("a", int64(1), "a", int64(2)))),
		"empty hash":                {TypeHash, 0},
		"hash duplicate":            cat([]byte{TypeHash, 2}, str("f"), str("1"), str("f"), str("2")),
		"hash truncated":            cat([]byte{TypeHash, 1}, str("f")),
		"hash lp odd":               cat([]byte{TypeHashListpack}, rawString(lpBuild("f"))),
		"hash lp duplicate":         cat([]byte{TypeHashListpack}, rawString(lpBuild("f", "1", "f", "2"))),
		"hash lp bad":               cat([]byte{TypeHashListpack}, str("garbage")),
		"quicklist empty":           {TypeListQuicklist2, 0},
		"quicklist all empty nodes": cat([]byte{TypeListQuicklist2, 1, nodePacked}, rawString(lpBuild())),
		"quicklist container":       cat([]byte{TypeListQuicklist2, 1, 3}, str("x")),
		"quicklist empty plain":     cat([]byte{TypeListQuicklist2, 1, nodePlain}, str("")),
		"quicklist bad listpack":    cat([]byte{TypeListQuicklist2, 1, nodePacked}, str("xxxxxxxx")),
		"quicklist count lies":      cat([]byte{TypeListQuicklist2, 40, nodePlain}, str("x")),
	}
	for name, b := range bad {
		if _, _, err := DecodeObject(b); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: DecodeObject = %v, want ErrFormat", name, err)
		}
	}
	// A quicklist with an empty packed node among others skips it.
	b := cat([]byte{TypeListQuicklist2, 3, nodePacked}, rawString(lpBuild()),
		[]byte{nodePacked}, rawString(lpBuild("a", int64(-2))), []byte{nodePlain}, str("big"))
	o, rest, err := DecodeObject(b)
	if err != nil || len(rest) != 0 || describe(o) != `list ["a" "-2" "big"]` {
		t.Errorf("quicklist with an empty node: %s, %v", describe(o), err)
	}
	// The older decimal-score sorted set.
	b = cat([]byte{TypeZSet, 3}, str("a"), []byte{3, '1', '.', '5'}, str("b"), []byte{254}, str("c"), []byte{255})
	o, _, err = DecodeObject(b)
	if err != nil || describe(o) != `kind 3 "a"=1.5 "b"=+Inf "c"=-Inf` {
		t.Errorf("RDB_TYPE_ZSET: %s, %v", describe(o), err)
	}
}
