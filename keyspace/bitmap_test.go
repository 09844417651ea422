package keyspace

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Ported from Redis 7.0's tests/unit/bitops.tcl and the SETBIT/GETBIT
// cases of tests/unit/type/string.tcl, with a Go model in place of the Tcl
// procedures that the fuzzing cases compare against.

// modelBit is bit i of s, clear past its end.
func modelBit(s string, i int64) byte {
	if i>>3 >= int64(len(s)) {
		return 0
	}
	return s[i>>3] >> (7 - i&7) & 1
}

// modelRange is Redis's clamping of a start..end range over total units.
func modelRange(start, end, total int64) (int64, int64) {
	if start < 0 {
		start = max(start+total, 0)
	}
	if end < 0 {
		end = max(end+total, 0)
	}
	return start, min(end, total-1)
}

// modelBitCount counts the set bits of s in the range, one bit at a time.
func modelBitCount(s string, start, end int64, isBit bool) int64 {
	if start < 0 && end < 0 && start > end {
		return 0 // Redis's shortcut, ahead of the clamping
	}
	unit := int64(8)
	if isBit {
		unit = 1
	}
	start, end = modelRange(start, end, int64(len(s))*8/unit)
	n := int64(0)
	for i := start * unit; i <= end*unit+unit-1 && start <= end; i++ {
		n += int64(modelBit(s, i))
	}
	return n
}

// modelBitPos is BITPOS by its documentation, one bit at a time: the first
// bit in the range equal to bit; -1 if none, except that a clear bit is
// looked for past the string when no end was given.
func modelBitPos(s string, bit byte, start, end int64, isBit, endGiven bool) int64 {
	unit := int64(8)
	if isBit {
		unit = 1
	}
	start, end = modelRange(start, end, int64(len(s))*8/unit)
	if start > end {
		return -1
	}
	for i := start * unit; i <= end*unit+unit-1; i++ {
		if modelBit(s, i) == bit {
			return i
		}
	}
	if bit == 0 && !endGiven {
		return end*unit + unit
	}
	return -1
}

func bitString(bits string) string {
	b := make([]byte, (len(bits)+7)/8)
	for i, c := range bits {
		if c == '1' {
			b[i/8] |= 0x80 >> (i % 8)
		}
	}
	return string(b)
}

func TestSetBitAndGetBit(t *testing.T) {
	h := newHarness(t)
	// SETBIT against non-existing key
	h.script("DEL mykey", n(0), "SETBIT mykey 1 1", n(0), "GET mykey", q("\x40"), "OBJECT ENCODING mykey", q("raw"))
	// SETBIT against string-encoded key
	h.do("SET", "mykey", "@")
	h.script("SETBIT mykey 2 1", n(0), "GET mykey", q("\x60"), "SETBIT mykey 1 0", n(1), "GET mykey", q("\x20"))
	// SETBIT against integer-encoded key: "1" is 0x31
	h.script("SET mykey 1", "OK", "OBJECT ENCODING mykey", q("int"), "SETBIT mykey 6 1", n(0), "SETBIT mykey 2 0", n(1))
	h.expectArgs(q(bitString("00010011")), "GET", "mykey")
	// SETBIT with out of range bit offset (proto-max-bulk-len bytes at most)
	h.script(
		"SETBIT mykey 4294967296 1", "(error) "+errBitOffset,
		"SETBIT mykey -1 1", "(error) "+errBitOffset,
		"SETBIT mykey abc 1", "(error) "+errBitOffset,
		"SETBIT mykey #1 1", "(error) "+errBitOffset,
	)
	h.ks.MaxBulkLen = 1024
	h.script("SETBIT big 8192 1", "(error) "+errBitOffset, "SETBIT big 8191 1", n(0), "STRLEN big", n(1024))
	h.ks.MaxBulkLen = DefaultMaxBulkLen
	// SETBIT with non-bit argument
	for _, v := range []string{"-1", "2", "10", "20", "x", "1.0"} {
		h.expect("SETBIT mykey 0 "+v, "(error) "+errBitValue)
	}
	// GETBIT against non-existing key
	h.expect("GETBIT mykey 0", n(0))
	// GETBIT against string-encoded key: "`" is 0x60
	h.do("SET", "mykey", "`")
	h.script("GETBIT mykey 0", n(0), "GETBIT mykey 1", n(1), "GETBIT mykey 2", n(1), "GETBIT mykey 3", n(0),
		"GETBIT mykey 8", n(0), "GETBIT mykey 100", n(0), "GETBIT mykey 10000", n(0),
		"GETBIT mykey -1", "(error) "+errBitOffset, "GETBIT mykey 4294967296", "(error) "+errBitOffset)
	// GETBIT against integer-encoded key
	h.script("SET mykey 1", "OK", "GETBIT mykey 2", n(1), "GETBIT mykey 3", n(1), "GETBIT mykey 7", n(1),
		"GETBIT mykey 6", n(0), "GETBIT mykey 8", n(0), "OBJECT ENCODING mykey", q("int"),
		// a SETBIT that changes nothing still makes the string raw, as in Redis
		"SETBIT mykey 2 1", n(1), "OBJECT ENCODING mykey", q("raw"), "GET mykey", q("1"))
}

func TestBitCommandsAgainstTheWrongType(t *testing.T) {
	h := newHarness(t)
	h.recordJournal()
	h.addFakeObject("k") // string_test.go
	h.do("SET", "s", "abc")
	wt := "(error) " + errWrongType
	h.script(
		"SETBIT k 0 1", wt,
		"GETBIT k 0", wt,
		"BITCOUNT k", wt,
		"BITCOUNT k 0 1 BIT", wt,
		"BITPOS k 1", wt,
		"BITOP AND dest s k", wt,
		"BITOP NOT dest k", wt,
		"BITFIELD k GET u8 0", wt,
		"BITFIELD k SET u8 0 1", wt,
		"BITFIELD_RO k GET u8 0", wt,
		"EXISTS dest", n(0),
		"TYPE k", "stream",
		// the argument errors come first, as in Redis
		"SETBIT k -1 1", "(error) "+errBitOffset,
		"BITFIELD k SET u8 0 x", "(error) "+errNotInteger,
		"BITPOS k 2", "(error) ERR The bit argument must be 1 or 0.",
	)
	if len(h.records) != 1 { // the SET
		t.Errorf("refused commands journaled %v", h.records[1:])
	}
	// BITOP overwrites a destination of another kind.
	h.script("BITOP OR k s", n(3), "TYPE k", "string", "GET k", q("abc"))
}

func TestSetBitFuzzing(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(1, 2))
	model := []byte{}
	for range 2000 {
		off := rng.IntN(8 * 256)
		v := rng.IntN(2)
		if off/8 >= len(model) {
			model = append(model, make([]byte, off/8+1-len(model))...)
		}
		old := model[off/8] >> (7 - off%8) & 1
		if v == 1 {
			model[off/8] |= 0x80 >> (off % 8)
		} else {
			model[off/8] &^= 0x80 >> (off % 8)
		}
		h.expectArgs(n(int64(old)), "SETBIT", "mykey", itoa(off), itoa(v))
		h.expectArgs(n(int64(v)), "GETBIT", "mykey", itoa(off))
	}
	h.expectArgs(q(string(model)), "GET", "mykey")
}

func TestBitCount(t *testing.T) {
	h := newHarness(t)
	h.expect("BITCOUNT no-key", n(0))
	h.expect("BITCOUNT no-key 0", n(0)) // 7.0: a missing key answers before the range is read
	for _, vec := range []string{"", "\xaa", "\x00\x00\xff", "foobar", "123"} {
		h.do("SET", "str", vec)
		h.expectArgs(n(modelBitCount(vec, 0, -1, false)), "BITCOUNT", "str")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		s := string(randBytes(rng, rng.IntN(3000)))
		h.do("SET", "str", s)
		h.expectArgs(n(modelBitCount(s, 0, -1, false)), "BITCOUNT", "str")
	}

	s := "foobar"
	h.do("SET", "s", s)
	h.script(
		"BITCOUNT s 0 -1", n(modelBitCount("foobar", 0, 5, false)),
		"BITCOUNT s 1 -2", n(modelBitCount("ooba", 0, 3, false)),
		"BITCOUNT s -2 1", n(0),
		"BITCOUNT s 0 1000", n(modelBitCount("foobar", 0, 5, false)),
		"BITCOUNT s 0 -1 bit", n(modelBitCount(s, 0, -1, true)),
		"BITCOUNT s 10 14 bit", n(modelBitCount(s, 10, 14, true)),
		"BITCOUNT s 3 14 bit", n(modelBitCount(s, 3, 14, true)),
		"BITCOUNT s 3 29 bit", n(modelBitCount(s, 3, 29, true)),
		"BITCOUNT s 10 -34 bit", n(modelBitCount(s, 10, 14, true)),
		"BITCOUNT s 0 1000 bit", n(modelBitCount(s, 0, -1, true)),
		"BITCOUNT s 0 -1 BYTE", n(modelBitCount(s, 0, -1, false)),
		// two negative indexes the wrong way round: 0, before the unit
		// is read and before clamping makes them one unit
		"BITCOUNT s -23 -81", n(0),
		"BITCOUNT s -56 -96 BIT", n(0),
		"BITCOUNT s -15 -65 bits", n(0),
		"BITCOUNT s 0", "(error) "+errSyntax,
		"BITCOUNT s 0 1 hello", "(error) "+errSyntax,
		"BITCOUNT s 0 1 bit 2", "(error) "+errSyntax,
		"BITCOUNT s a 1", "(error) "+errNotInteger,
		"BITCOUNT s 0 b", "(error) "+errNotInteger,
	)
	// Regression for Redis's issue #582: a huge end is clamped.
	h.script("DEL foo", n(0), "SETBIT foo 0 1", n(0), "BITCOUNT foo 0 4294967296", n(1))
	// Misaligned prefix, full words and remainder.
	h.do("SET", "str", "ab")
	h.expect("BITCOUNT str 1 -1", n(3))
	h.do("SET", "str", "__PPxxxxxxxxxxxxxxxxRR__")
	h.expect("BITCOUNT str 2 -3", n(74))
}

func TestBitCountAndBitPosFuzzingAgainstAModel(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 400 {
		var s string
		switch i % 4 {
		case 0:
			s = string(randBytes(rng, rng.IntN(100)))
		case 1:
			s = strings.Repeat("\xff", rng.IntN(40)) + string(randBytes(rng, rng.IntN(3)))
		case 2:
			s = strings.Repeat("\x00", rng.IntN(40)) + string(randBytes(rng, rng.IntN(3)))
		default:
			s = strings.Repeat("\xff", 1+rng.IntN(40))
		}
		h.do("SET", "str", s)
		for range 20 {
			total := int64(len(s)) * 8
			start, end := rng.Int64N(total+20)-total-10, rng.Int64N(total+20)-total-10
			unit := []string{"BIT", "BYTE"}[rng.IntN(2)]
			isBit := unit == "BIT"
			if !isBit {
				start, end = start/8, end/8
			}
			a, b := itoa64(start), itoa64(end)
			h.expectArgs(n(modelBitCount(s, start, end, isBit)), "BITCOUNT", "str", a, b, unit)
			for bit := range byte(2) {
				bs := itoa(int(bit))
				h.expectArgs(n(modelBitPos(s, bit, start, end, isBit, true)), "BITPOS", "str", bs, a, b, unit)
				if !isBit {
					h.expectArgs(n(modelBitPos(s, bit, start, end, false, true)), "BITPOS", "str", bs, a, b)
					h.expectArgs(n(modelBitPos(s, bit, start, -1, false, false)), "BITPOS", "str", bs, a)
					h.expectArgs(n(modelBitPos(s, bit, 0, -1, false, false)), "BITPOS", "str", bs)
				}
			}
		}
	}
}

func TestBitPos(t *testing.T) {
	h := newHarness(t)
	h.script(
		// against wrong arguments and missing keys
		"BITPOS str 2", "(error) ERR The bit argument must be 1 or 0.",
		"BITPOS str x", "(error) "+errNotInteger,
		"BITPOS str 0", n(0),
		"BITPOS str 1", n(-1),
		"BITPOS str 0 1 2 bit", n(0),
	)
	// bit=0 with string less than 1 word works
	h.do("SET", "str", "\xff\xf0\x00")
	h.expect("BITPOS str 0", n(12))
	// bit=1 with string less than 1 word works
	h.do("SET", "str", "\x00\x0f\x00")
	h.expect("BITPOS str 1", n(12))
	// bit=0 starting at unaligned address
	h.do("SET", "str", "\xff\xf0\x00")
	h.expect("BITPOS str 0 1", n(12))
	// bit=1 starting at unaligned address
	h.do("SET", "str", "\x00\x0f\xff")
	h.expect("BITPOS str 1 1", n(12))
	// bit=0 unaligned+full word+reminder
	s := "\xff\xff\xff" + strings.Repeat("\xff", 8*3) + "\x0f"
	h.do("SET", "str", s)
	for i := 0; i < 7; i++ {
		h.expectArgs(n(216), "BITPOS", "str", "0", itoa(i))
	}
	// bit=1 unaligned+full word+reminder
	h.do("SET", "str", "\x00\x00\x00"+strings.Repeat("\x00", 8*3)+"\xf0")
	for i := 0; i < 7; i++ {
		h.expectArgs(n(216), "BITPOS", "str", "1", itoa(i))
	}
	// bit=1 returns -1 if string is all 0 bits
	h.do("SET", "str", "")
	h.expect("BITPOS str 1", n(-1))
	h.expect("BITPOS str 0", n(-1)) // an empty string is an empty range
	for j := 0; j < 20; j++ {
		h.do("SET", "str", strings.Repeat("\x00", j))
		h.expect("BITPOS str 1", n(-1))
	}
	// bit=0 works with intervals
	h.do("SET", "str", "\xff\x00\xff")
	h.script(
		"BITPOS str 0 0 -1", n(8), "BITPOS str 0 1 -1", n(8), "BITPOS str 0 2 -1", n(-1),
		"BITPOS str 0 2 200", n(-1), "BITPOS str 0 1 1", n(8),
		"BITPOS str 0 0 -1 bit", n(8), "BITPOS str 0 8 -1 bit", n(8), "BITPOS str 0 16 -1 bit", n(-1),
		"BITPOS str 0 16 200 bit", n(-1), "BITPOS str 0 8 8 bit", n(8),
	)
	h.do("SET", "str", "\x00\xff\x00")
	h.script(
		"BITPOS str 0 0 -1", n(0), "BITPOS str 0 1 -1", n(16), "BITPOS str 0 2 -1", n(16),
		"BITPOS str 0 2 200", n(16), "BITPOS str 0 1 1", n(-1),
		"BITPOS str 0 0 -1 bit", n(0), "BITPOS str 0 8 -1 bit", n(16), "BITPOS str 0 16 -1 bit", n(16),
		"BITPOS str 0 16 200 bit", n(16), "BITPOS str 0 8 8 bit", n(-1),
	)
	// bit=1 works with intervals
	h.script(
		"BITPOS str 1 0 -1", n(8), "BITPOS str 1 1 -1", n(8), "BITPOS str 1 2 -1", n(-1),
		"BITPOS str 1 2 200", n(-1), "BITPOS str 1 1 1", n(8),
		"BITPOS str 1 0 -1 bit", n(8), "BITPOS str 1 8 -1 bit", n(8), "BITPOS str 1 16 -1 bit", n(-1),
		"BITPOS str 1 16 200 bit", n(-1), "BITPOS str 1 8 8 bit", n(8),
	)
	// bit=0 changes behavior if end is given
	h.do("SET", "str", "\xff\xff\xff")
	h.script("BITPOS str 0", n(24), "BITPOS str 0 0", n(24), "BITPOS str 0 0 -1", n(-1), "BITPOS str 0 0 -1 bit", n(-1))
	// a range in bits across bytes
	h.do("SET", "str", "\xff\xff\x7f")
	h.script("BITPOS str 0 3 17 bit", n(16), "BITPOS str 0 3 15 bit", n(-1), "BITPOS str 1 17 -1 bit", n(17))
	// syntax
	h.script("BITPOS str 0 1 2 byte x", "(error) "+errSyntax, "BITPOS str 0 1 2 pit", "(error) "+errSyntax,
		"BITPOS str 0 a", "(error) "+errNotInteger, "BITPOS str 0 1 b", "(error) "+errNotInteger)
}

func TestBitPosFuzzingUsingSetBit(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(7, 8))
	// bit=1: the lowest set bit so far
	h.do("DEL", "str")
	maxPos := int64(-1)
	first := int64(1 << 62)
	for range 1000 {
		pos := rng.Int64N(1024 * 8)
		h.do("SETBIT", "str", itoa64(pos), "1")
		first, maxPos = min(first, pos), max(maxPos, pos)
		h.expectArgs(n(first), "BITPOS", "str", "1")
	}
	// bit=0: the lowest clear bit of a string being filled with ones
	h.do("SET", "str", strings.Repeat("\xff", 512))
	firstZero := int64(512 * 8)
	for range 1000 {
		pos := rng.Int64N(512 * 8)
		h.do("SETBIT", "str", itoa64(pos), "0")
		firstZero = min(firstZero, pos)
		h.expectArgs(n(firstZero), "BITPOS", "str", "0")
	}
}

func TestBitOp(t *testing.T) {
	h := newHarness(t)
	// NOT (empty string)
	h.do("SET", "s", "")
	h.expect("BITOP not dest s", n(0))
	h.expect("GET dest", "(nil)")
	// NOT (known string)
	h.do("SET", "s", "\xaa\x00\xff\x55")
	h.expect("BITOP not dest s", n(4))
	h.expectArgs(q("\x55\xff\x00\xaa"), "GET", "dest")
	// where dest and target are the same key
	h.expect("BITOP not s s", n(4))
	h.expectArgs(q("\x55\xff\x00\xaa"), "GET", "s")
	// AND|OR|XOR don't change the string with single input key
	h.do("SET", "a", "\x01\x02\xff")
	for _, op := range []string{"and", "or", "xor"} {
		h.expectArgs(n(3), "BITOP", op, "res", "a")
		h.expectArgs(q("\x01\x02\xff"), "GET", "res")
	}
	// missing key is considered a stream of zero
	h.expect("BITOP and res1 no-suck-key a", n(3))
	h.expect("BITOP or res2 no-suck-key a no-such-key", n(3))
	h.expect("BITOP xor res3 no-such-key a", n(3))
	h.expectArgs(q("\x00\x00\x00"), "GET", "res1")
	h.expectArgs(q("\x01\x02\xff"), "GET", "res2")
	h.expectArgs(q("\x01\x02\xff"), "GET", "res3")
	// shorter keys are zero-padded to the key with max length
	h.do("SET", "a", "\x01\x02\xff\xff")
	h.do("SET", "b", "\x01\x02\xff")
	h.expect("BITOP and res1 a b", n(4))
	h.expect("BITOP or res2 a b", n(4))
	h.expect("BITOP xor res3 a b", n(4))
	h.expectArgs(q("\x01\x02\xff\x00"), "GET", "res1")
	h.expectArgs(q("\x01\x02\xff\xff"), "GET", "res2")
	h.expectArgs(q("\x00\x00\x00\xff"), "GET", "res3")
	// with integer encoded source objects
	h.script("SET a 1", "OK", "SET b 2", "OK", "BITOP xor dest a b a", n(1), "GET dest", q("2"))
	// with empty string after non empty string (issue #529)
	h.do("FLUSHDB")
	h.do("SET", "a", strings.Repeat("\x00", 32))
	h.expect("BITOP or x a b", n(32))
	// errors
	h.script(
		"BITOP foo dest a", "(error) "+errSyntax,
		"BITOP NOT dest a b", "(error) ERR BITOP NOT must be called with a single source key.",
		"BITOP AND dest", "(error) "+errArity("bitop"),
	)
	// an empty result deletes the destination, and its TTL goes with a new value
	h.script("SET dest x", "OK", "BITOP or dest none1 none2", n(0), "EXISTS dest", n(0),
		"SET dest x EX 100", "OK", "BITOP or dest a", n(32), "TTL dest", n(-1), "OBJECT ENCODING dest", q("raw"))
}

func TestBitOpFuzzingAgainstAModel(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(9, 10))
	for _, op := range []string{"and", "or", "xor", "not"} {
		for range 30 {
			h.do("FLUSHALL")
			numvec := 1 + rng.IntN(10)
			if op == "not" {
				numvec = 1
			}
			var vecs []string
			args := []string{"BITOP", op, "target"}
			for j := range numvec {
				s := string(randBytes(rng, rng.IntN(1000)))
				vecs = append(vecs, s)
				args = append(args, "vector_"+itoa(j))
				h.do("SET", "vector_"+itoa(j), s)
			}
			want := modelBitOp(op, vecs)
			h.expectArgs(n(int64(len(want))), args...)
			if len(want) == 0 {
				h.expect("GET target", "(nil)")
			} else {
				h.expectArgs(q(want), "GET", "target")
			}
		}
	}
}

// modelBitOp is BITOP one byte at a time.
func modelBitOp(op string, vecs []string) string {
	maxLen := 0
	for _, v := range vecs {
		maxLen = max(maxLen, len(v))
	}
	out := make([]byte, maxLen)
	at := func(v string, i int) byte {
		if i < len(v) {
			return v[i]
		}
		return 0
	}
	for i := range out {
		b := at(vecs[0], i)
		if op == "not" {
			b = ^b
		}
		for _, v := range vecs[1:] {
			switch op {
			case "and":
				b &= at(v, i)
			case "or":
				b |= at(v, i)
			case "xor":
				b ^= at(v, i)
			}
		}
		out[i] = b
	}
	return string(out)
}

// TestBitOpReusesTheDestination: a BITOP into a key that holds a mutable
// string of a fitting capacity computes into its memory, allocating
// nothing; a COPY made before keeps the old value, the TTL goes, and a
// destination that is also a source is not overwritten while it is read.
func TestBitOpReusesTheDestination(t *testing.T) {
	h := newHarness(t)
	a, b := strings.Repeat("\x0f", 100), strings.Repeat("\x3c", 90)
	h.do("SET", "a", a)
	h.do("SET", "b", b)
	h.script("BITOP OR d a b", n(100), "COPY d d2", n(1), "EXPIRE d 100", n(1), "BITOP AND d a b", n(100), "TTL d", n(-1))
	h.expectArgs(q(modelBitOp("or", []string{a, b})), "GET", "d2")
	h.expectArgs(q(modelBitOp("and", []string{a, b})), "GET", "d")
	h.script("BITOP XOR d d a", n(100))
	h.expectArgs(q(modelBitOp("xor", []string{modelBitOp("and", []string{a, b}), a})), "GET", "d")
	h.script("BITOP NOT d b", n(90))
	h.expectArgs(q(modelBitOp("not", []string{b})), "GET", "d")

	args := [][]byte{[]byte("BITOP"), []byte("XOR"), []byte("d"), []byte("a"), []byte("b")}
	if allocs := testing.AllocsPerRun(100, func() {
		h.w.Reset()
		h.ks.Exec(&h.c, args, &h.w)
	}); allocs > 0 {
		t.Errorf("a BITOP into a reusable destination allocates %.1f times", allocs)
	}
	h.expectArgs(q(modelBitOp("xor", []string{a, b})), "GET", "d")
}
