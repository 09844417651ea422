package keyspace

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"
)

// Ported from Redis's tests/unit/type/string.tcl (the commands moond has),
// with a fake clock instead of sleeps.

func TestSetAndGet(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET x foobar", "OK",
		"GET x", q("foobar"),
		"GET nokey", "(nil)",
	)
	h.expectArgs("OK", "SET", "x", "")
	h.expect("GET x", q(""))
}

func TestVeryBigPayloadInGetSet(t *testing.T) {
	h := newHarness(t)
	buf := strings.Repeat("abcd", 1000000)
	h.expectArgs("OK", "SET", "foo", buf)
	h.expect("GET foo", q(buf))
}

func TestSetManyNumericKeysAndReadThemBack(t *testing.T) {
	h := newHarness(t)
	h.expect("FLUSHDB", "OK")
	for x := 0; x < 10000; x++ {
		k := itoa(x)
		h.expectArgs("OK", "SET", k, k)
	}
	for x := 9999; x >= 0; x-- {
		k := itoa(x)
		h.expectArgs(q(k), "GET", k)
	}
	h.expect("DBSIZE", n(10000))
}

func TestSetNX(t *testing.T) {
	h := newHarness(t)
	h.script(
		// target key missing
		"DEL novar", n(0),
		"SETNX novar foobared", n(1),
		"GET novar", q("foobared"),
		// target key exists
		"SET novar foobared", "OK",
		"SETNX novar blabla", n(0),
		"GET novar", q("foobared"),
		// against a volatile key not yet expired
		"SET x 10", "OK",
		"EXPIRE x 10000", n(1),
		"SETNX x 20", n(0),
		"GET x", q("10"),
	)
}

func TestSetNXAgainstExpiredVolatileKey(t *testing.T) {
	h := newHarness(t)
	for x := 0; x < 9999; x++ {
		h.expectArgs("OK", "SETEX", "key-"+itoa(x), "3600", "value")
	}
	h.script("SET x 10", "OK", "EXPIRE x 1", n(1))
	h.advance(2000)
	h.script("SETNX x 20", n(1), "GET x", q("20"))
}

func TestGetEx(t *testing.T) {
	tests := []struct {
		name  string
		setup []string
		cmd   func(h *harness) string
		check []string // command, reply pairs afterwards
	}{
		{"EX option", []string{"SET foo bar"}, func(h *harness) string { return "GETEX foo EX 10" }, []string{"TTL foo", n(10)}},
		{"PX option", []string{"SET foo bar"}, func(h *harness) string { return "GETEX foo PX 10000" }, []string{"PTTL foo", n(10000)}},
		{"EXAT option", []string{"SET foo bar"}, func(h *harness) string { return "GETEX foo EXAT " + itoa64(h.clock/1000+10) }, []string{"TTL foo", n(10)}},
		{"PXAT option", []string{"SET foo bar"}, func(h *harness) string { return "GETEX foo PXAT " + itoa64(h.clock+10000) }, []string{"PTTL foo", n(10000)}},
		{"PERSIST option", []string{"SET foo bar EX 10"}, func(h *harness) string { return "GETEX foo PERSIST" }, []string{"TTL foo", n(-1)}},
		{"no option", []string{"SET foo bar EX 10"}, func(h *harness) string { return "GETEX foo" }, []string{"TTL foo", n(10), "GETEX foo", q("bar")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			for _, s := range tc.setup {
				h.expect(s, "OK")
			}
			h.expect(tc.cmd(h), q("bar"))
			h.script(tc.check...)
		})
	}
}

func TestGetExErrors(t *testing.T) {
	h := newHarness(t)
	h.script(
		"GETEX foo non-existent-option", "(error) ERR syntax error",
		"GETEX", "(error) ERR wrong number of arguments for 'getex' command",
		"SET foo bar", "OK",
		"GETEX foo EX", "(error) ERR syntax error",
		"GETEX foo EX 10 PX 10", "(error) ERR syntax error",
		"GETEX foo EX 10 PERSIST", "(error) ERR syntax error",
		"GETEX foo PERSIST EX 10", "(error) ERR syntax error",
		"GETEX foo KEEPTTL", "(error) ERR syntax error",
		"GETEX foo NX", "(error) ERR syntax error",
		"GETEX foo EX abc", "(error) ERR value is not an integer or out of range",
		"GETEX foo EX 0", "(error) ERR invalid expire time in 'getex' command",
		"GETEX foo EX -1", "(error) ERR invalid expire time in 'getex' command",
		// Big integers (expire.tcl).
		"GETEX foo EX 10000000000000000", "(error) ERR invalid expire time in 'getex' command",
		"GETEX foo EX -9999999999999999", "(error) ERR invalid expire time in 'getex' command",
		// A missing key answers null before the time is looked at.
		"GETEX nokey EX abc", "(nil)",
		"TTL foo", n(-1),
	)
}

func TestGetExAndGetOnExpiredKey(t *testing.T) {
	h := newHarness(t)
	h.expect("SET foo bar PX 1", "OK")
	h.advance(2)
	h.script("GETEX foo", "(nil)", "GET foo", "(nil)")
}

func TestGetExAbsoluteTimeInThePastDeletes(t *testing.T) {
	h := newHarness(t)
	h.expect("SET foo bar", "OK")
	h.expect("GETEX foo EXAT "+itoa64(h.clock/1000-100), q("bar"))
	h.expect("EXISTS foo", n(0))
}

func TestGetDel(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET foo bar", "OK",
		"GETDEL foo", q("bar"),
		"GETDEL foo", "(nil)",
	)
}

func TestMGet(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET foo{t} BAR", "OK",
		"SET bar{t} FOO", "OK",
		"MGET foo{t} bar{t}", `["BAR" "FOO"]`,
		"MGET foo{t} baazz{t} bar{t}", `["BAR" (nil) "FOO"]`,
	)
	h.addFakeObject("myset{t}")
	h.expect("MGET foo{t} baazz{t} bar{t} myset{t}", `["BAR" (nil) "FOO" (nil)]`)
}

func TestGetSet(t *testing.T) {
	h := newHarness(t)
	h.script(
		"DEL foo", n(0),
		"GETSET foo xyz", "(nil)",
		"GET foo", q("xyz"),
		"SET foo bar", "OK",
		"GETSET foo xyz", q("bar"),
		"GET foo", q("xyz"),
		"SET foo bar EX 100", "OK",
		"GETSET foo baz", q("bar"),
		"TTL foo", n(-1),
	)
}

func TestMSet(t *testing.T) {
	h := newHarness(t)
	h.expectArgs("OK", "MSET", "x{t}", "10", "y{t}", "foo bar", "z{t}", "x x x x x x x\n\n\r\n")
	h.expect("MGET x{t} y{t} z{t}", `["10" "foo bar" "x x x x x x x\n\n\r\n"]`)
	h.script(
		"MSET x{t} 10 y{t} foo z{t}", "(error) ERR wrong number of arguments for 'mset' command",
		"MSETNX x{t} 20 y{t} foo z{t}", "(error) ERR wrong number of arguments for 'msetnx' command",
		// same key twice
		"SET x{t} x", "OK",
		"MSET x{t} xxx x{t} yyy", "OK",
		"GET x{t}", q("yyy"),
	)
}

func TestMSetNX(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET x{t} 10", "OK",
		// with an already existing key
		"MSETNX x1{t} xxx y2{t} yyy x{t} 20", n(0),
		"EXISTS x1{t}", n(0),
		"EXISTS y2{t}", n(0),
		// with keys that do not exist
		"MSETNX x1{t} xxx y2{t} yyy", n(1),
		"GET x1{t}", q("xxx"),
		"GET y2{t}", q("yyy"),
		// same key twice, not existing
		"DEL x1{t}", n(1),
		"MSETNX x1{t} xxx x1{t} yyy", n(1),
		"GET x1{t}", q("yyy"),
		// same key twice, existing
		"MSETNX x1{t} xxx x1{t} zzz", n(0),
		"GET x1{t}", q("yyy"),
	)
}

func TestStrlen(t *testing.T) {
	h := newHarness(t)
	h.script(
		"STRLEN notakey", n(0),
		"SET myinteger -555", "OK",
		"STRLEN myinteger", n(4),
	)
	h.expectArgs("OK", "SET", "mystring", "foozzz0123456789 baz")
	h.expect("STRLEN mystring", n(20))
}

func TestSetRange(t *testing.T) {
	h := newHarness(t)
	h.script(
		// against a missing key
		"DEL mykey", n(0),
		"SETRANGE mykey 0 foo", n(3),
		"GET mykey", q("foo"),
		"DEL mykey", n(1),
	)
	h.expectArgs(n(0), "SETRANGE", "mykey", "0", "")
	h.script(
		"EXISTS mykey", n(0),
		"SETRANGE mykey 1 foo", n(4),
		"GET mykey", q("\x00foo"),
		// against a string-encoded key
		"SET mykey foo", "OK",
		"SETRANGE mykey 0 b", n(3),
		"GET mykey", q("boo"),
		"SET mykey foo", "OK",
	)
	h.expectArgs(n(3), "SETRANGE", "mykey", "0", "")
	h.script(
		"GET mykey", q("foo"),
		"SET mykey foo", "OK",
		"SETRANGE mykey 1 b", n(3),
		"GET mykey", q("fbo"),
		"SET mykey foo", "OK",
		"SETRANGE mykey 4 bar", n(7),
		"GET mykey", q("foo\x00bar"),
	)
}

func TestSetRangeAgainstIntegerEncodedKey(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET mykey 1234", "OK",
		"OBJECT ENCODING mykey", q("int"),
		"SETRANGE mykey 0 2", n(4),
		"OBJECT ENCODING mykey", q("raw"),
		"GET mykey", q("2234"),
		// no change of encoding when nothing is set
		"SET mykey 1234", "OK",
	)
	h.expectArgs(n(4), "SETRANGE", "mykey", "0", "")
	h.script(
		"OBJECT ENCODING mykey", q("int"),
		"GET mykey", q("1234"),
		"SET mykey 1234", "OK",
		"SETRANGE mykey 1 3", n(4),
		"OBJECT ENCODING mykey", q("raw"),
		"GET mykey", q("1334"),
		"SET mykey 1234", "OK",
		"SETRANGE mykey 5 2", n(6),
		"OBJECT ENCODING mykey", q("raw"),
		"GET mykey", q("1234\x002"),
	)
}

func TestSetRangeErrors(t *testing.T) {
	h := newHarness(t)
	h.addFakeObject("mylist")
	h.script(
		"SETRANGE mylist 0 bar", "(error) "+errWrongType,
		"SETRANGE mykey 536870908 world", "(error) ERR string exceeds maximum allowed size (proto-max-bulk-len)",
		"SET mykey hello", "OK",
		"SETRANGE mykey -1 world", "(error) ERR offset is out of range",
		"SETRANGE mykey 536870908 world", "(error) ERR string exceeds maximum allowed size (proto-max-bulk-len)",
		"SETRANGE mykey abc world", "(error) ERR value is not an integer or out of range",
		// huge offsets
		"SETRANGE K 9223372036854775807 A", "(error) ERR string exceeds maximum allowed size (proto-max-bulk-len)",
		"SETRANGE K 2147483647 A", "(error) ERR string exceeds maximum allowed size (proto-max-bulk-len)",
		"GET mykey", q("hello"),
	)
}

func TestGetRange(t *testing.T) {
	h := newHarness(t)
	h.addFakeObject("lkey1")
	h.script(
		"GETRANGE mykey 0 -1", q(""),
		"GETRANGE lkey1 0 -1", "(error) "+errWrongType,
		"GETRANGE mykey a 1", "(error) ERR value is not an integer or out of range",
	)
	ranges := []struct{ start, end, str, integer string }{
		{"0", "3", "Hell", "1234"},
		{"0", "-1", "Hello World", "1234"},
		{"-4", "-1", "orld", "1234"},
		{"5", "3", "", ""},
		{"5", "5000", " World", ""},
		{"3", "5000", "lo World", "4"},
		{"-5000", "10000", "Hello World", "1234"},
		{"0", "-100", "H", "1"},
		{"1", "-100", "", ""},
		{"-1", "-100", "", ""},
		{"-100", "-99", "H", "1"},
		{"-100", "-100", "H", "1"},
		{"-100", "-101", "", ""},
		{"0", "2", "Hel", "123"},
		{"-3", "-1", "rld", "234"},
		{"0", "4294967297", "Hello World", "1234"},
	}
	h.expectArgs("OK", "SET", "mykey", "Hello World")
	h.expectArgs("OK", "SET", "myint", "1234")
	for _, r := range ranges {
		h.expectArgs(q(r.str), "GETRANGE", "mykey", r.start, r.end)
		h.expectArgs(q(r.integer), "GETRANGE", "myint", r.start, r.end)
	}
}

func TestGetRangeFuzzing(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		bin := randBytes(rng, rng.IntN(1025))
		h.expectArgs("OK", "SET", "bin", string(bin))
		start, end := rng.IntN(1500), rng.IntN(1500)
		want := ""
		if e := min(end, len(bin)-1); start <= e {
			want = string(bin[start : e+1])
		}
		h.expectArgs(q(want), "GETRANGE", "bin", itoa(start), itoa(end))
	}
}

func TestSubstr(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET key abcde", "OK",
		"SUBSTR key 0 0", q("a"),
		"SUBSTR key 0 3", q("abcd"),
		"SUBSTR key -4 -1", q("bcde"),
		"SUBSTR key -1 -3", q(""),
		"SUBSTR key 7 8", q(""),
		"SUBSTR nokey 0 1", q(""),
	)
}

func TestExtendedSetSyntaxErrors(t *testing.T) {
	h := newHarness(t)
	for _, line := range []string{
		"SET foo bar non-existing-option",
		"SET foo bar NX XX",
		"SET foo bar XX NX",
		"SET foo bar EX",
		"SET foo bar EX 10 PX 100",
		"SET foo bar PX 100 EXAT 100",
		"SET foo bar KEEPTTL EX 10",
		"SET foo bar EX 10 KEEPTTL",
		"SET foo bar PERSIST",
	} {
		h.expect(line, "(error) ERR syntax error")
	}
	h.expect("EXISTS foo", n(0))
	// An expiry option may repeat: the last one wins.
	h.script("SET foo bar EX 10 EX 20", "OK", "TTL foo", n(20))
}

func TestExtendedSetInvalidExpireTime(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET foo bar EX 0", "(error) ERR invalid expire time in 'set' command",
		"SET foo bar PX -5", "(error) ERR invalid expire time in 'set' command",
		"SET foo bar EX 10000000000000000", "(error) ERR invalid expire time in 'set' command",
		"SET foo bar EX -9999999999999999", "(error) ERR invalid expire time in 'set' command",
		"SET foo bar PX 9223372036854775807", "(error) ERR invalid expire time in 'set' command",
		"SET foo bar EX ten", "(error) ERR value is not an integer or out of range",
		"SETEX z -10 foo", "(error) ERR invalid expire time in 'setex' command",
		"PSETEX z 0 foo", "(error) ERR invalid expire time in 'psetex' command",
		"EXISTS foo z", n(0),
		// An absolute time in the far future is fine.
		"SET foo bar PXAT 9223372036854775807", "OK",
	)
}

func TestExtendedSetNXAndXX(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET foo 1 NX", "OK",
		"SET foo 2 NX", "(nil)",
		"GET foo", q("1"),
		"DEL foo", n(1),
		"SET foo 1 XX", "(nil)",
		"SET foo bar", "OK",
		"SET foo 2 XX", "OK",
		"GET foo", q("2"),
	)
}

func TestExtendedSetGet(t *testing.T) {
	tests := []struct {
		name       string
		prev       string // "" for none
		cmd        string
		reply, now string
	}{
		{"GET", "bar", "SET foo bar2 GET", q("bar"), q("bar2")},
		{"GET with no previous value", "", "SET foo bar GET", "(nil)", q("bar")},
		{"GET with XX", "bar", "SET foo baz GET XX", q("bar"), q("baz")},
		{"GET with XX and no previous value", "", "SET foo bar GET XX", "(nil)", "(nil)"},
		{"GET with NX", "", "SET foo bar GET NX", "(nil)", q("bar")},
		{"GET with NX and previous value", "bar", "SET foo baz GET NX", q("bar"), q("bar")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if tc.prev != "" {
				h.expect("SET foo "+tc.prev, "OK")
			}
			h.expect(tc.cmd, tc.reply)
			h.expect("GET foo", tc.now)
		})
	}
}

func TestExtendedSetGetWithWrongType(t *testing.T) {
	h := newHarness(t)
	h.addFakeObject("foo")
	h.expect("SET foo bar GET", "(error) "+errWrongType)
	h.expect("TYPE foo", "stream")
}

func TestExtendedSetExpiryOptions(t *testing.T) {
	tests := []struct{ name, cmd, check, want string }{
		{"EX", "SET foo bar ex 10", "TTL foo", n(10)},
		{"PX", "SET foo bar px 10000", "TTL foo", n(10)},
		{"EXAT", "SET foo bar exat " + itoa64(startClock/1000+10), "TTL foo", n(10)},
		{"PXAT", "SET foo bar pxat " + itoa64(startClock+10000), "TTL foo", n(10)},
		{"several options", "SET foo bar xx px 10000", "TTL foo", n(10)},
		{"KEEPTTL", "SET foo bar2 KEEPTTL", "TTL foo", n(100)},
		{"plain SET removes the TTL", "SET foo bar2", "TTL foo", n(-1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.expect("SET foo val EX 100", "OK")
			h.expect(tc.cmd, "OK")
			h.expect(tc.check, tc.want)
		})
	}
}

func TestSetKeepTTLOnMissingKeySetsNoTTL(t *testing.T) {
	h := newHarness(t)
	h.script("SET foo bar KEEPTTL", "OK", "TTL foo", n(-1))
}

// The LCS strings of string.tcl.
const (
	rna1   = "CACCTTCCCAGGTAACAAACCAACCAACTTTCGATCTCTTGTAGATCTGTTCTCTAAACGAACTTTAAAATCTGTGTGGCTGTCACTCGGCTGCATGCTTAGTGCACTCACGCAGTATAATTAATAACTAATTACTGTCGTTGACAGGACACGAGTAACTCGTCTATCTTCTGCAGGCTGCTTACGGTTTCGTCCGTGTTGCAGCCGATCATCAGCACATCTAGGTTTCGTCCGGGTGTG"
	rna2   = "ATTAAAGGTTTATACCTTCCCAGGTAACAAACCAACCAACTTTCGATCTCTTGTAGATCTGTTCTCTAAACGAACTTTAAAATCTGTGTGGCTGTCACTCGGCTGCATGCTTAGTGCACTCACGCAGTATAATTAATAACTAATTACTGTCGTTGACAGGACACGAGTAACTCGTCTATCTTCTGCAGGCTGCTTACGGTTTCGTCCGTGTTGCAGCCGATCATCAGCACATCTAGGTTT"
	rnaLCS = "ACCTTCCCAGGTAACAAACCAACCAACTTTCGATCTCTTGTAGATCTGTTCTCTAAACGAACTTTAAAATCTGTGTGGCTGTCACTCGGCTGCATGCTTAGTGCACTCACGCAGTATAATTAATAACTAATTACTGTCGTTGACAGGACACGAGTAACTCGTCTATCTTCTGCAGGCTGCTTACGGTTTCGTCCGTGTTGCAGCCGATCATCAGCACATCTAGGTTT"
)

func TestLCS(t *testing.T) {
	h := newHarness(t)
	h.expectArgs("OK", "SET", "virus1{t}", rna1)
	h.expectArgs("OK", "SET", "virus2{t}", rna2)
	h.expect("LCS virus1{t} virus2{t}", q(rnaLCS))
	h.expect("LCS virus1{t} virus2{t} LEN", n(int64(len(rnaLCS))))
	h.expect("LCS virus1{t} virus2{t} IDX",
		`["matches" [[[(integer) 238 (integer) 238] [(integer) 239 (integer) 239]] [[(integer) 236 (integer) 236] [(integer) 238 (integer) 238]] [[(integer) 229 (integer) 230] [(integer) 236 (integer) 237]] [[(integer) 224 (integer) 224] [(integer) 235 (integer) 235]] [[(integer) 1 (integer) 222] [(integer) 13 (integer) 234]]] "len" (integer) 227]`)
	h.expect("LCS virus1{t} virus2{t} IDX WITHMATCHLEN",
		`["matches" [[[(integer) 238 (integer) 238] [(integer) 239 (integer) 239] (integer) 1] [[(integer) 236 (integer) 236] [(integer) 238 (integer) 238] (integer) 1] [[(integer) 229 (integer) 230] [(integer) 236 (integer) 237] (integer) 2] [[(integer) 224 (integer) 224] [(integer) 235 (integer) 235] (integer) 1] [[(integer) 1 (integer) 222] [(integer) 13 (integer) 234] (integer) 222]] "len" (integer) 227]`)
	h.expect("LCS virus1{t} virus2{t} IDX WITHMATCHLEN MINMATCHLEN 5",
		`["matches" [[[(integer) 1 (integer) 222] [(integer) 13 (integer) 234] (integer) 222]] "len" (integer) 227]`)
}

func TestLCSEdgesAndErrors(t *testing.T) {
	h := newHarness(t)
	h.addFakeObject("l")
	h.script(
		"LCS a b", q(""),
		"LCS a b LEN", n(0),
		"LCS a b IDX", `["matches" [] "len" (integer) 0]`,
		"SET a ohmytext", "OK",
		"SET b mynewtext", "OK",
		"LCS a b", q("mytext"),
		"LCS a b LEN", n(6),
		"LCS a b IDX MINMATCHLEN 4 WITHMATCHLEN", `["matches" [[[(integer) 4 (integer) 7] [(integer) 5 (integer) 8] (integer) 4]] "len" (integer) 6]`,
		"LCS a b LEN IDX", "(error) ERR If you want both the length and indexes, please just use IDX.",
		"LCS a b FOO", "(error) ERR syntax error",
		"LCS a b MINMATCHLEN", "(error) ERR syntax error",
		"LCS a b MINMATCHLEN x", "(error) ERR value is not an integer or out of range",
		"LCS a l", "(error) ERR The specified keys must contain string values",
		"SET n 12345", "OK",
		"SET m 2x4", "OK",
		"LCS n m", q("24"),
	)
}

func TestLCSInRESP3IsAMap(t *testing.T) {
	h := newHarness(t)
	h.w.Proto = 3
	h.script("SET a ab", "OK", "SET b ab", "OK")
	h.w.Reset()
	h.ks.Exec(&h.c, [][]byte{[]byte("LCS"), []byte("a"), []byte("b"), []byte("IDX")}, &h.w)
	want := "%2\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:0\r\n:1\r\n*2\r\n:0\r\n:1\r\n$3\r\nlen\r\n:2\r\n"
	if got := string(h.w.Buf); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestAppend(t *testing.T) {
	h := newHarness(t)
	h.script(
		"APPEND foo bar", n(3),
		"APPEND foo baz", n(6),
		"GET foo", q("barbaz"),
		"STRLEN foo", n(6),
	)
	h.addFakeObject("l")
	h.expect("APPEND l x", "(error) "+errWrongType)
	h.ks.MaxBulkLen = 8
	h.expect("APPEND foo abc", "(error) ERR string exceeds maximum allowed size (proto-max-bulk-len)")
	h.expect("APPEND foo ab", n(8))
}

func TestAppendBasicsAndFuzzing(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(3, 4))
	var want []byte
	for range 1000 {
		b := randBytes(rng, rng.IntN(10))
		want = append(want, b...)
		h.expectArgs(n(int64(len(want))), "APPEND", "x", string(b))
	}
	h.expectArgs(q(string(want)), "GET", "x")
}

func TestAppendModifiesTheEncodingFromIntToRaw(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET foo 1", "OK",
		"OBJECT ENCODING foo", q("int"),
		"APPEND foo 2", n(2),
		"GET foo", q("12"),
		"OBJECT ENCODING foo", q("raw"),
		"SET bar 12", "OK",
		"OBJECT ENCODING bar", q("int"),
		"GET bar", q("12"),
	)
}

func TestAppendKeepsTTL(t *testing.T) {
	h := newHarness(t)
	h.script("SET foo bar EX 100", "OK", "APPEND foo x", n(4), "TTL foo", n(100))
}

func TestEncodings(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET a 12345", "OK",
		"OBJECT ENCODING a", q("int"),
		"SET a -9223372036854775808", "OK",
		"OBJECT ENCODING a", q("int"),
		"SET a 9223372036854775808", "OK",
		"OBJECT ENCODING a", q("embstr"),
		"SET a 012", "OK",
		"OBJECT ENCODING a", q("embstr"),
		"GET a", q("012"),
		"SET a +1", "OK",
		"OBJECT ENCODING a", q("embstr"),
		"SET a -0", "OK",
		"OBJECT ENCODING a", q("embstr"),
		"SET a "+strings.Repeat("x", 44), "OK",
		"OBJECT ENCODING a", q("embstr"),
		"SET a "+strings.Repeat("x", 45), "OK",
		"OBJECT ENCODING a", q("raw"),
		"OBJECT ENCODING nokey", "(nil)",
	)
}

// addFakeObject stores a value of another kind under key, for WRONGTYPE:
// a stream, a kind no command builds yet, with a stand-in objectType.
func (h *harness) addFakeObject(key string) {
	d := h.ks.dbs[h.c.DB]
	k := []byte(key)
	hh := d.keys.hash(k)
	d.keys.remove(hh, k)
	h.ks.addKey(d, hh, k, "", objectValue(KindStream, unsafe.Pointer(new(int))))
}

func init() {
	registerObjectType(KindStream, &objectType{
		encoding:  func(unsafe.Pointer) string { return "stream" },
		heapBytes: func(unsafe.Pointer) int64 { return 8 },
		encode:    func(_ unsafe.Pointer, dst []byte) []byte { return append(dst, "fake"...) },
		decode: func([]byte, *EncodingLimits) (unsafe.Pointer, error) {
			return nil, errors.New("the test's stand-in stream has no encoding")
		},
		clone: func(unsafe.Pointer) unsafe.Pointer { return unsafe.Pointer(new(int)) },
	})
}

func TestWrongTypeAgainstANonStringKind(t *testing.T) {
	h := newHarness(t)
	h.addFakeObject("l")
	for _, line := range []string{
		"GET l", "GETSET l x", "GETDEL l", "GETEX l", "GETEX l PERSIST", "STRLEN l",
		"APPEND l x", "SETRANGE l 0 x", "GETRANGE l 0 1", "INCR l", "DECR l",
		"INCRBY l 1", "DECRBY l 1", "INCRBYFLOAT l 1.5", "SET l x GET",
	} {
		h.expect(line, "(error) WRONGTYPE Operation against a key holding the wrong kind of value")
	}
	h.script(
		"TYPE l", "stream",
		"EXISTS l", n(1),
		"MGET l", "[(nil)]",
		"EXPIRE l 100", n(1),
		"TTL l", n(100),
		"RENAME l l2", "OK",
		"TYPE l2", "stream",
		"SET l2 x", "OK",
		"TYPE l2", "string",
	)
}

func TestSetDoesNotKeepArgumentBuffers(t *testing.T) {
	h := newHarness(t)
	key, val := []byte("key"), []byte("value")
	h.ks.Exec(&h.c, [][]byte{[]byte("SET"), key, val}, &h.w)
	copy(key, "xxx")
	copy(val, "zzzzz")
	h.expect("GET key", q("value"))
	h.expect("KEYS *", `["key"]`)
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	return b
}

func itoa(i int) string { return itoa64(int64(i)) }

func itoa64(i int64) string { return strings.TrimPrefix(n(i), "(integer) ") }
