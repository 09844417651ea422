package keyspace

import (
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// Ported from Redis 7.0's tests/unit/bitfield.tcl; the fuzzing cases check
// against big-integer arithmetic, as the Tcl ones do.

func TestBitfieldBasics(t *testing.T) {
	h := newHarness(t)
	// signed SET and GET basics
	h.script("BITFIELD bits set i8 0 -100", "[(integer) 0]", "BITFIELD bits set i8 0 101", "[(integer) -100]",
		"BITFIELD bits get i8 0", "[(integer) 101]")
	// unsigned SET and GET basics
	h.script("DEL bits", n(1), "BITFIELD bits set u8 0 255", "[(integer) 0]", "BITFIELD bits set u8 0 100", "[(integer) 255]",
		"BITFIELD bits get u8 0", "[(integer) 100]")
	// #<idx> form
	h.script("DEL bits", n(1), "BITFIELD bits set u8 #0 65", "[(integer) 0]", "BITFIELD bits set u8 #1 66", "[(integer) 0]",
		"BITFIELD bits set u8 #2 67", "[(integer) 0]", "GET bits", q("ABC"))
	// basic INCRBY form
	h.script("DEL bits", n(1), "BITFIELD bits set u8 #0 10", "[(integer) 0]",
		"BITFIELD bits incrby u8 #0 100", "[(integer) 110]", "BITFIELD bits incrby u8 #0 100", "[(integer) 210]")
	// chaining of multiple commands
	h.script("DEL bits", n(1), "BITFIELD bits set u8 #0 10", "[(integer) 0]",
		"BITFIELD bits incrby u8 #0 100 incrby u8 #0 100", "[(integer) 110 (integer) 210]")
	// unsigned overflow wrap
	h.script("DEL bits", n(1), "BITFIELD bits set u8 #0 100", "[(integer) 0]",
		"BITFIELD bits overflow wrap incrby u8 #0 257", "[(integer) 101]", "BITFIELD bits get u8 #0", "[(integer) 101]",
		"BITFIELD bits overflow wrap incrby u8 #0 255", "[(integer) 100]", "BITFIELD bits get u8 #0", "[(integer) 100]")
	// unsigned overflow sat
	h.script("DEL bits", n(1), "BITFIELD bits set u8 #0 100", "[(integer) 0]",
		"BITFIELD bits overflow sat incrby u8 #0 257", "[(integer) 255]", "BITFIELD bits get u8 #0", "[(integer) 255]",
		"BITFIELD bits overflow sat incrby u8 #0 -255", "[(integer) 0]", "BITFIELD bits get u8 #0", "[(integer) 0]")
	// signed overflow wrap
	h.script("DEL bits", n(1), "BITFIELD bits set i8 #0 100", "[(integer) 0]",
		"BITFIELD bits overflow wrap incrby i8 #0 257", "[(integer) 101]", "BITFIELD bits get i8 #0", "[(integer) 101]",
		"BITFIELD bits overflow wrap incrby i8 #0 255", "[(integer) 100]", "BITFIELD bits get i8 #0", "[(integer) 100]")
	// signed overflow sat
	h.script("DEL bits", n(1), "BITFIELD bits set u8 #0 100", "[(integer) 0]",
		"BITFIELD bits overflow sat incrby i8 #0 257", "[(integer) 127]", "BITFIELD bits get i8 #0", "[(integer) 127]",
		"BITFIELD bits overflow sat incrby i8 #0 -255", "[(integer) -128]", "BITFIELD bits get i8 #0", "[(integer) -128]")
	// FAIL answers null and writes nothing; the string grew all the same
	h.script("DEL bits", n(1), "BITFIELD bits overflow fail incrby u8 16 300 get u8 16", "[(nil) (integer) 0]",
		"STRLEN bits", n(3), "BITFIELD bits overflow fail set i4 0 8 set i4 0 7 overflow sat set u2 4 5", "[(nil) (integer) 0 (integer) 0]",
		"BITFIELD bits get i4 0 get u2 4", "[(integer) 7 (integer) 3]")
	// a signed SET far enough below the range saturates upwards, as in
	// Redis (its limit max-value wraps in 64 bits); nearer, downwards
	h.script("DEL bits", n(1), "BITFIELD bits overflow sat set i23 70 -9223372036854775808 get i23 70", "[(integer) 0 (integer) 4194303]",
		"BITFIELD bits overflow sat set i23 70 -9223372036850581505 get i23 70", "[(integer) 4194303 (integer) 4194303]",
		"BITFIELD bits overflow sat set i23 70 -9223372036850581504 get i23 70", "[(integer) 4194303 (integer) -4194304]",
		"BITFIELD bits overflow sat set i63 0 -4611686018427387905 get i63 0", "[(integer) 0 (integer) 4611686018427387903]",
		"BITFIELD bits overflow fail set i23 70 -9223372036854775808", "[(nil)]",
		"BITFIELD bits overflow wrap set i23 70 -9223372036854775808 get i23 70", "[(integer) -4194304 (integer) 0]")
	// an unsigned SET of a negative value overflows upwards, as in Redis
	h.script("DEL bits", n(1), "BITFIELD bits overflow sat set u8 0 -1", "[(integer) 0]", "BITFIELD bits get u8 0", "[(integer) 255]",
		"BITFIELD bits overflow wrap set u8 0 -2", "[(integer) 255]", "BITFIELD bits get u8 0", "[(integer) 254]")
	// 64-bit signed fields
	h.script("DEL bits", n(1), "BITFIELD bits set i64 0 9223372036854775807", "[(integer) 0]",
		"BITFIELD bits incrby i64 0 1", "[(integer) -9223372036854775808]",
		"BITFIELD bits overflow sat incrby i64 0 -1", "[(integer) -9223372036854775808]",
		"BITFIELD bits overflow fail incrby i64 0 -9223372036854775808", "[(nil)]",
		"BITFIELD bits overflow sat incrby i64 0 9223372036854775807", "[(integer) -1]",
		"BITFIELD bits overflow sat incrby i64 0 9223372036854775807", "[(integer) 9223372036854775806]",
		"BITFIELD bits overflow sat incrby i64 0 9", "[(integer) 9223372036854775807]")
	// regression for #3221
	h.script("SET bits 1", "OK", "BITFIELD bits get u1 0", "[(integer) 0]")
	// regression for #3564
	for range 10 {
		h.do("DEL", "mystring")
		h.expect("BITFIELD mystring SET i8 0 10 SET i8 64 10 INCRBY i8 10 99900", "[(integer) 0 (integer) 0 (integer) 60]")
	}
}

func TestBitfieldErrorsAndReadOnly(t *testing.T) {
	h := newHarness(t)
	h.do("SET", "bits", "abc")
	typeErr := "(error) " + errBitfieldType
	h.script(
		"BITFIELD bits", "[]",
		"BITFIELD nokey", "[]",
		"BITFIELD bits get", "(error) "+errSyntax,
		"BITFIELD bits get u8", "(error) "+errSyntax,
		"BITFIELD bits set u8 0", "(error) "+errSyntax,
		"BITFIELD bits foo u8 0", "(error) "+errSyntax,
		"BITFIELD bits overflow", "(error) "+errSyntax,
		"BITFIELD bits overflow foo get u8 0", "(error) ERR Invalid OVERFLOW type specified",
		"BITFIELD bits get u64 0", typeErr,
		"BITFIELD bits get i65 0", typeErr,
		"BITFIELD bits get i0 0", typeErr,
		"BITFIELD bits get x8 0", typeErr,
		"BITFIELD bits get i 0", typeErr,
		"BITFIELD bits get I8 0", typeErr,
		"BITFIELD bits get u08 0", typeErr,
		"BITFIELD bits get u8 -1", "(error) "+errBitOffset,
		"BITFIELD bits get u8 #-1", "(error) "+errBitOffset,
		"BITFIELD bits get u8 #", "(error) "+errBitOffset,
		"BITFIELD bits get u8 4294967296", "(error) "+errBitOffset,
		"BITFIELD bits get u8 #536870912", "(error) "+errBitOffset,
		"BITFIELD bits get u8 #2305843009213693951", "(error) "+errBitOffset,
		"BITFIELD bits set u8 0 x", "(error) "+errNotInteger,
		"BITFIELD bits incrby u8 0 1.5", "(error) "+errNotInteger,
		// the first bad op answers, even after good ones; nothing is done
		"BITFIELD bits set u8 0 1 get u99 0", typeErr,
		"GET bits", q("abc"),
		"BITFIELD bits GET u8 0 Get i8 #1 get u4 #5", "[(integer) 97 (integer) 98 (integer) 3]",
		"BITFIELD bits get u8 #1000", "[(integer) 0]",
		"BITFIELD bits get i64 4", "[(integer) 1596015894507552768]", // 0x1626300000000000,
		// BITFIELD_RO
		"BITFIELD_RO bits", "[]",
		"BITFIELD_RO bits get u8 0", "[(integer) 97]",
		"BITFIELD_RO bits overflow sat get u8 8", "[(integer) 98]",
		"BITFIELD_RO bits set u8 0 100 get u8 0", "(error) ERR BITFIELD_RO only supports the GET subcommand",
		"BITFIELD_RO bits incrby u8 0 100", "(error) ERR BITFIELD_RO only supports the GET subcommand",
		"BITFIELD_RO bits get u8", "(error) "+errSyntax,
		"GET bits", q("abc"),
		"BITFIELD_RO nokey get i8 0", "[(integer) 0]",
		"EXISTS nokey", n(0),
	)
}

// bfRange is the range of a field type, as big integers.
func bfRange(signed bool, bits int) (lo, hi *big.Int) {
	one := big.NewInt(1)
	if signed {
		hi = new(big.Int).Lsh(one, uint(bits-1))
		lo = new(big.Int).Neg(hi)
		return lo, hi.Sub(hi, one)
	}
	hi = new(big.Int).Lsh(one, uint(bits))
	return big.NewInt(0), hi.Sub(hi, one)
}

// redisSatSet is what OVERFLOW SAT SET stores in Redis for a signed
// field: the value clamped to the range, except that a value so far below
// it that max-value exceeds an int64 stores the maximum (Redis computes
// that limit in 64 bits, where it wraps: see signedField).
func redisSatSet(v, lo, hi *big.Int) *big.Int {
	switch {
	case v.Cmp(hi) > 0:
		return hi
	case v.Cmp(lo) < 0 && new(big.Int).Sub(hi, v).Cmp(big.NewInt(1<<63-1)) > 0:
		return hi
	case v.Cmp(lo) < 0:
		return lo
	}
	return v
}

// randomBitfieldCase is the fuzzing cases' draw: a type and a value and an
// increment from twice the type's range, clamped to int64.
func randomBitfieldCase(rng *rand.Rand) (typ string, signed bool, bits int, value, incr *big.Int) {
	bits = 1 + rng.IntN(64)
	signed = bits == 64 || rng.IntN(2) == 1
	lo, hi := bfRange(signed, bits)
	span := new(big.Int).Sub(hi, lo)
	span.Add(span, big.NewInt(1)).Mul(span, big.NewInt(2))
	draw := func() *big.Int {
		r := new(big.Int).SetUint64(rng.Uint64())
		r.Lsh(r, 64).Or(r, new(big.Int).SetUint64(rng.Uint64())).Mod(r, span)
		r.Add(r, new(big.Int).Mul(lo, big.NewInt(2)))
		minI, maxI := big.NewInt(-1<<63), big.NewInt(1<<63-1)
		if r.Cmp(maxI) > 0 {
			r.Set(maxI)
		}
		if r.Cmp(minI) < 0 {
			r.Set(minI)
		}
		return r
	}
	typ = "u"
	if signed {
		typ = "i"
	}
	return typ + itoa(bits), signed, bits, draw(), draw()
}

func TestBitfieldOverflowDetectionFuzzing(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(21, 22))
	for range 1000 {
		typ, signed, bits, value, incr := randomBitfieldCase(rng)
		lo, hi := bfRange(signed, bits)
		sum := new(big.Int).Add(value, incr)
		over := value.Cmp(hi) > 0 || value.Cmp(lo) < 0 || sum.Cmp(hi) > 0 || sum.Cmp(lo) < 0
		h.do("DEL", "bits")
		r1 := h.do("BITFIELD", "bits", "overflow", "fail", "set", typ, "0", value.String())
		r2 := h.do("BITFIELD", "bits", "overflow", "fail", "incrby", typ, "0", incr.String())
		failed := r1 == "[(nil)]" || r2 == "[(nil)]"
		if over != failed {
			t.Fatalf("%s %s+%s: replies %s %s, overflow expected: %v", typ, value, incr, r1, r2, over)
		}
	}
}

func TestBitfieldOverflowWrapAndSatFuzzing(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(23, 24))
	for range 1000 {
		typ, signed, bits, value, incr := randomBitfieldCase(rng)
		lo, hi := bfRange(signed, bits)
		mod := new(big.Int).Lsh(big.NewInt(1), uint(bits))
		wrap := func(x *big.Int) *big.Int {
			r := new(big.Int).Sub(x, lo)
			r.Mod(r, mod)
			return r.Add(r, lo)
		}
		sat := func(x *big.Int) *big.Int {
			switch {
			case x.Cmp(hi) > 0:
				return hi
			case x.Cmp(lo) < 0:
				return lo
			}
			return x
		}
		h.do("DEL", "bits")
		h.do("BITFIELD", "bits", "overflow", "wrap", "set", typ, "0", value.String())
		h.do("BITFIELD", "bits", "overflow", "wrap", "incrby", typ, "0", incr.String())
		want := wrap(new(big.Int).Add(wrap(value), incr))
		if got := h.do("BITFIELD", "bits", "get", typ, "0"); got != "[(integer) "+want.String()+"]" {
			t.Fatalf("WRAP %s %s+%s = %s, want %s", typ, value, incr, got, want)
		}
		// SAT: an unsigned SET of a negative value saturates upwards in
		// Redis (the value reads as a huge unsigned one).
		setV := value
		if !signed && value.Sign() < 0 {
			setV = new(big.Int).Add(value, new(big.Int).Lsh(big.NewInt(1), 64))
		}
		h.do("DEL", "bits")
		h.do("BITFIELD", "bits", "overflow", "sat", "set", typ, "0", value.String())
		want = sat(new(big.Int).Add(redisSatSet(setV, lo, hi), incr))
		if got := h.do("BITFIELD", "bits", "overflow", "sat", "incrby", typ, "0", incr.String()); got != "[(integer) "+want.String()+"]" {
			t.Fatalf("SAT %s %s+%s = %s, want %s", typ, value, incr, got, want)
		}
	}
}

// TestBitfieldFieldsAtEveryAlignment writes fields of every width at every
// bit alignment among random bytes and checks that the bits around them are
// left alone and that GET reads back what SET stored.
func TestBitfieldFieldsAtEveryAlignment(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(25, 26))
	for bits := 1; bits <= 64; bits++ {
		for off := 0; off < 16; off++ {
			base := randBytes(rng, 12)
			h.do("SET", "f", string(base))
			typ, val := "i"+itoa(bits), rng.Int64()
			if bits < 64 {
				val = signExtend(uint64(val), bits)
			}
			h.do("BITFIELD", "f", "SET", typ, itoa(off), itoa64(val))
			if got := h.do("BITFIELD", "f", "GET", typ, itoa(off)); got != "[(integer) "+itoa64(val)+"]" {
				t.Fatalf("%s at %d: GET %s after SET %d", typ, off, got, val)
			}
			want := []byte(string(base))
			for i := 0; i < bits; i++ {
				pos := off + i
				want[pos/8] &^= 0x80 >> (pos % 8)
				if uint64(val)>>(bits-1-i)&1 == 1 {
					want[pos/8] |= 0x80 >> (pos % 8)
				}
			}
			h.expectArgs(q(string(want)), "GET", "f")
		}
	}
	if strings.Contains(h.do("OBJECT", "ENCODING", "f"), "embstr") {
		t.Error("a string written by BITFIELD is not raw")
	}
}
