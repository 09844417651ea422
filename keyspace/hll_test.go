package keyspace

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Tests ported from Redis 7.0's tests/unit/hyperloglog.tcl, plus the
// error replies of every command.

// pfaddRandom adds n random elements to key and returns them.
func pfaddRandom(h *harness, rng *rand.Rand, key string, n int) []string {
	eles := make([]string, n)
	for i := range eles {
		eles[i] = strconv.FormatFloat(rng.Float64(), 'g', -1, 64)
	}
	h.do(append([]string{"PFADD", key}, eles...)...)
	return eles
}

// pfcount returns PFCOUNT's integer answer.
func pfcount(t *testing.T, h *harness, keys ...string) int64 {
	t.Helper()
	s := h.do(append([]string{"PFCOUNT"}, keys...)...)
	v, err := strconv.ParseInt(strings.TrimPrefix(s, "(integer) "), 10, 64)
	if err != nil {
		t.Fatalf("PFCOUNT %v: %s", keys, s)
	}
	return v
}

func TestHLLSelfTestPasses(t *testing.T) {
	newHarness(t).expect("PFSELFTEST", "OK")
}

func TestHLLBasics(t *testing.T) {
	h := newHarness(t)
	h.script(
		// PFADD without arguments creates an HLL value.
		"PFADD hll", n(1),
		"EXISTS hll", n(1),
		"TYPE hll", "string",
		"OBJECT ENCODING hll", q("raw"),
		// Approximated cardinality after creation is zero.
		"PFCOUNT hll", n(0),
		// PFADD returns 1 when at least 1 reg was modified, 0 when none.
		"PFADD hll a b c", n(1),
		"PFADD hll a b c", n(0),
		"PFADD hll", n(0),
	)
	// PFADD works with the empty string (regression).
	h.expectArgs(n(1), "PFADD", "hll", "")
	// PFCOUNT returns the approximated cardinality; the cache is
	// invalidated by a PFADD that changed a register.
	h.script(
		"DEL hll", n(1),
		"PFADD hll 1 2 3 4 5", n(1),
		"PFCOUNT hll", n(5),
		"PFADD hll 6 7 8 8 9 10", n(1),
		"PFCOUNT hll", n(10),
		// PFCOUNT of a missing key is 0; several keys are a union.
		"PFCOUNT nokey", n(0),
		"PFCOUNT hll nokey", n(10),
	)
}

func TestHLLCacheWorks(t *testing.T) {
	h := newHarness(t)
	h.script(
		"PFADD hll a b c", n(1),
		"GETRANGE hll 15 15", q("\x80"),
		"PFCOUNT hll", n(3),
		"GETRANGE hll 15 15", q("\x00"),
		"GETRANGE hll 8 8", q("\x03"),
		"PFADD hll a b c", n(0),
		"GETRANGE hll 15 15", q("\x00"),
		"PFADD hll 1 2 3", n(1),
		"GETRANGE hll 15 15", q("\x80"),
	)
}

func TestHLLPromotedFromSparseToDense(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(1, 2))
	h.ks.Limits.HLLSparseMaxBytes = 3000
	for added := 100; added <= 30000; added += 100 {
		pfaddRandom(h, rng, "hll", 100)
		card := pfcount(t, h, "hll")
		if err := abs64(card - int64(added)); float64(err) >= float64(card)/100*5 {
			t.Fatalf("%d added: PFCOUNT %d", added, card)
		}
		enc := h.do("PFDEBUG", "ENCODING", "hll")
		if added < 1000 && enc != "sparse" || added > 10000 && enc != "dense" {
			t.Fatalf("%d added: encoding %s", added, enc)
		}
	}
}

func abs64(x int64) int64 { return max(x, -x) }

// TestHLLSparseMaxBytesChanges: the limit applies to the next update, and
// a value is promoted as soon as an update would pass it, at any limit.
func TestHLLSparseMaxBytesChanges(t *testing.T) {
	h := newHarness(t)
	h.script(
		"PFADD hll a b c d e d g h i j k", n(1),
		"PFDEBUG ENCODING hll", "sparse",
	)
	h.ks.Limits.HLLSparseMaxBytes = 30
	h.script(
		"PFADD hll new_element", n(1),
		"PFDEBUG ENCODING hll", "dense",
	)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, limit := range []int64{100, 500, 1000, 3000} {
		h.ks.Limits.HLLSparseMaxBytes = limit
		h.run("DEL hll")
		h.run("PFADD hll")
		for {
			strlen := h.run("STRLEN hll")
			l, _ := strconv.ParseInt(strings.TrimPrefix(strlen, "(integer) "), 10, 64)
			if l > limit {
				h.expect("PFDEBUG ENCODING hll", "dense")
				break
			}
			h.expect("PFDEBUG ENCODING hll", "sparse")
			pfaddRandom(h, rng, "hll", 10)
		}
	}
}

// TestHLLSparseStress: a sparse and a dense HLL of the same elements give
// the same count.
func TestHLLSparseStress(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		h.run("DEL hll1 hll2")
		eles := make([]string, rng.IntN(100))
		for i := range eles {
			eles[i] = strconv.FormatFloat(rng.Float64(), 'g', -1, 64)
		}
		h.script("PFADD hll2", n(1), "PFDEBUG TODENSE hll2", n(1), "PFDEBUG TODENSE hll2", n(0))
		h.do(append([]string{"PFADD", "hll1"}, eles...)...)
		h.do(append([]string{"PFADD", "hll2"}, eles...)...)
		h.expect("PFDEBUG ENCODING hll1", "sparse")
		h.expect("PFDEBUG ENCODING hll2", "dense")
		if a, b := pfcount(t, h, "hll1"), pfcount(t, h, "hll2"); a != b {
			t.Fatalf("%d elements: sparse %d, dense %d", len(eles), a, b)
		}
	}
}

func TestHLLCorruptionIsDetected(t *testing.T) {
	h := newHarness(t)
	h.script(
		// Additional bytes at the tail of a sparse value.
		"PFADD hll a b c", n(1),
		"APPEND hll hello", n(32),
		"PFCOUNT hll", "(error) "+errHLLCorrupt,
		"PFCOUNT hll hll", "(error) "+errHLLCorrupt,
		"PFMERGE d hll", "(error) "+errHLLCorrupt,
		"EXISTS d", n(0),
		"PFDEBUG TODENSE hll", "(error) "+errHLLCorrupt,
		"PFDEBUG GETREG hll", "(error) "+errHLLCorrupt,
		// Broken magic.
		"DEL hll", n(1),
		"PFADD hll a b c", n(1),
		"SETRANGE hll 0 0123", n(27),
		"PFCOUNT hll", "(error) "+errNotHLL,
		// Invalid encoding.
		"DEL hll", n(1),
		"PFADD hll a b c", n(1),
		"SETRANGE hll 4 x", n(27),
		"PFCOUNT hll", "(error) "+errNotHLL,
		// Dense with the wrong length.
		"DEL hll", n(1),
		"PFADD hll a b c", n(1),
	)
	h.expectArgs(n(27), "SETRANGE", "hll", "4", "\x00")
	h.expect("PFCOUNT hll", "(error) "+errNotHLL)
	// A dense value cut short, and one with a register byte changed: the
	// latter is a valid HLL still.
	h.script("DEL hll", n(1), "PFADD hll a", n(1), "PFDEBUG TODENSE hll", n(1), "PFADD hll b", n(1))
	h.expectArgs(n(hllDenseSize), "SETRANGE", "hll", "100", "\xff")
	h.expect("PFADD hll c", n(1))
	h.expect("APPEND hll x", n(hllDenseSize+1))
	h.expect("PFCOUNT hll", "(error) "+errNotHLL)
	// Short strings and integers are not HLLs.
	h.script("SET s HYLL", "OK", "PFCOUNT s", "(error) "+errNotHLL, "SET i 12345", "OK", "PFADD i a", "(error) "+errNotHLL)
}

// TestHLLFuzzedCorruptionIsAlwaysDetected: random bytes written over a
// sparse or dense value never crash a command; every reply is a count,
// OK or one of the two errors (Redis's "Fuzzing dense/sparse encoding").
func TestHLLFuzzedCorruptionIsAlwaysDetected(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 1000 {
		h.run("DEL hll")
		pfaddRandom(h, rng, "hll", rng.IntN(2000))
		if i%2 == 0 {
			h.run("PFDEBUG TODENSE hll")
		}
		l, _ := strconv.Atoi(strings.TrimPrefix(h.run("STRLEN hll"), "(integer) "))
		for range 1 + rng.IntN(5) {
			b := make([]byte, 1+rng.IntN(3))
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
			off := hllHdrSize + rng.IntN(l-hllHdrSize)
			h.do("SETRANGE", "hll", strconv.Itoa(off), string(b))
		}
		for _, cmd := range [][]string{{"PFCOUNT", "hll"}, {"PFADD", "hll", "x", "y"}, {"PFCOUNT", "hll", "hll"}, {"PFMERGE", "m", "hll"}} {
			got := h.do(cmd...)
			if !strings.HasPrefix(got, "(integer)") && got != "OK" && got != "(error) "+errHLLCorrupt && got != "(error) "+errNotHLL {
				t.Fatalf("%v after corruption: %s", cmd, got)
			}
		}
	}
}

func TestHLLTypeChecking(t *testing.T) {
	h := newHarness(t)
	h.ks.Limits.SetMaxIntsetEntries = 512
	h.script(
		"SET foo bar", "OK",
		"PFADD foo 1", "(error) "+errNotHLL,
		"PFCOUNT foo", "(error) "+errNotHLL,
		"PFMERGE bar foo", "(error) "+errNotHLL,
		"PFMERGE foo bar", "(error) "+errNotHLL,
		"PFDEBUG ENCODING foo", "(error) "+errNotHLL,
		"EXISTS bar", n(0),
	)
	// Keys of another kind answer the ordinary WRONGTYPE, where the
	// keyspace has such kinds.
	if objectTypes[KindSet] != nil {
		h.script(
			"SADD set a", n(1),
			"PFADD set a", "(error) "+errWrongType,
			"PFCOUNT set", "(error) "+errWrongType,
			"PFCOUNT set foo", "(error) "+errWrongType,
			"PFMERGE set", "(error) "+errWrongType,
		)
	}
}

func TestHLLMerge(t *testing.T) {
	h := newHarness(t)
	h.script(
		// PFMERGE results on the cardinality of union of sets.
		"PFADD hll1 a b c", n(1),
		"PFADD hll2 b c d", n(1),
		"PFADD hll3 c d e", n(1),
		"PFMERGE hll hll1 hll2 hll3", "OK",
		"PFCOUNT hll", n(5),
		// Missing sources create an empty destination.
		"PFMERGE dest nokey1 nokey2", "OK",
		"EXISTS dest", n(1),
		"PFCOUNT dest", n(0),
		"PFMERGE dest2", "OK",
		"PFCOUNT dest2", n(0),
		// The destination is one of the sources.
		"PFMERGE hll1 hll2", "OK",
		"PFCOUNT hll1", n(4),
		// The destination keeps its TTL.
		"PEXPIRE hll1 100000", n(1),
		"PFMERGE hll1 hll3", "OK",
		"PTTL hll1", n(100000),
		"PFCOUNT hll1", n(5),
	)
	// A dense input makes the destination dense.
	h.script("PFDEBUG TODENSE hll3", n(1), "PFMERGE d2 hll2 hll3", "OK", "PFDEBUG ENCODING d2", "dense",
		"PFMERGE d3 hll2", "OK", "PFDEBUG ENCODING d3", "sparse", "PFCOUNT d2", n(4))
}

// TestHLLCountUnion: PFCOUNT of several keys is the union's cardinality,
// within 5% (Redis's "PFCOUNT multiple-keys merge returns cardinality of
// union" #1 and #2).
func TestHLLCountUnion(t *testing.T) {
	h := newHarness(t)
	for x := 1; x < 3000; x++ {
		h.do("PFADD", "hll1", "foo-"+itoa(x))
		h.do("PFADD", "hll2", "bar-"+itoa(x))
		h.do("PFADD", "hll3", "zap-"+itoa(x))
		card := pfcount(t, h, "hll1", "hll2", "hll3")
		if err := abs64(card - int64(3*x)); float64(err) > float64(card)/100*5 {
			t.Fatalf("x=%d: union count %d", x, card)
		}
	}
	rng := rand.New(rand.NewPCG(9, 10))
	real := map[int]bool{}
	h.run("DEL hll1 hll2 hll3")
	for x := 1; x < 3000; x++ {
		for _, k := range []string{"hll1", "hll2", "hll3"} {
			r := rng.IntN(5000)
			h.do("PFADD", k, itoa(r))
			real[r] = true
		}
		card := pfcount(t, h, "hll1", "hll2", "hll3")
		if err := abs64(card - int64(len(real))); float64(err) > float64(card)/100*5 {
			t.Fatalf("x=%d: union count %d of %d", x, card, len(real))
		}
	}
}

func TestHLLDebug(t *testing.T) {
	h := newHarness(t)
	h.script(
		"PFADD hll 1 2 3", n(1),
		"PFDEBUG ENCODING hll", "sparse",
		"PFDEBUG NOSUCH hll", "(error) ERR Unknown PFDEBUG subcommand 'NOSUCH'",
		"PFDEBUG GETREG nokey", "(error) ERR The specified key does not exist",
		"PFDEBUG GETREG", "(error) ERR wrong number of arguments for 'pfdebug' command",
		"PFDEBUG ENCODING hll x", "(error) ERR wrong number of arguments for 'pfdebug' command",
		"PFADD", "(error) ERR wrong number of arguments for 'pfadd' command",
		"PFCOUNT", "(error) ERR wrong number of arguments for 'pfcount' command",
		"PFMERGE", "(error) ERR wrong number of arguments for 'pfmerge' command",
		"PFSELFTEST x", "(error) ERR wrong number of arguments for 'pfselftest' command",
	)
	dec := h.run("PFDEBUG DECODE hll")
	if !strings.HasPrefix(dec, `"Z:`) || strings.Count(dec, "v:") != 3 {
		t.Errorf("PFDEBUG DECODE: %s", dec)
	}
	regs := h.run("PFDEBUG GETREG hll")
	if got := strings.Count(regs, "(integer)"); got != hllRegisters {
		t.Fatalf("PFDEBUG GETREG: %d registers", got)
	}
	if nonZero := hllRegisters - strings.Count(regs, "(integer) 0"); nonZero != 3 {
		t.Errorf("PFDEBUG GETREG: %d registers set after 3 elements", nonZero)
	}
	h.script(
		"PFDEBUG ENCODING hll", "dense",
		"PFDEBUG DECODE hll", "(error) ERR HLL encoding is not sparse",
		"PFCOUNT hll", n(3),
		"STRLEN hll", n(hllDenseSize),
	)
}

// TestHLLRegistersAndHash checks the building blocks against values
// computed by hand: MurmurHash64A with Redis's seed, and the dense
// register layout.
func TestHLLRegistersAndHash(t *testing.T) {
	if got := murmurHash64A(nil, 0); got != 0 {
		t.Errorf("murmur of nothing, seed 0: %#x", got)
	}
	var r [hllRegBytes]byte
	for i := range hllRegisters {
		denseSet(r[:], i, uint8(i%64))
	}
	for i := range hllRegisters {
		if got := denseGet(r[:], i); got != uint8(i%64) {
			t.Fatalf("register %d: %d", i, got)
		}
	}
	// Register 1 is bits 6..11: the two top bits of byte 0, the four low
	// bits of byte 1.
	var s [hllRegBytes]byte
	denseSet(s[:], 1, 0x3f)
	if s[0] != 0xc0 || s[1] != 0x0f || s[2] != 0 {
		t.Errorf("register 1 at 63: % x", s[:3])
	}
	for i := range 100 {
		idx, count := hllPatLen([]byte(fmt.Sprint(i)))
		if idx < 0 || idx >= hllRegisters || count < 1 || count > hllQ+1 {
			t.Fatalf("element %d: register %d count %d", i, idx, count)
		}
	}
}
