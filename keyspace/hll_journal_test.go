package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestHLLJournalForms(t *testing.T) {
	h := newHarness(t)
	h.recordJournal()
	steps := []struct {
		line string
		want []string
	}{
		{"PFADD k", []string{"0: PFADD k"}},
		{"PFADD k", nil},
		{"PFADD k a b c", []string{"0: PFADD k a b c"}},
		{"PFADD k a b c", nil},
		{"PFADD k a d b", []string{"0: PFADD k d"}},
		{"PFCOUNT k", nil},
		{"PFCOUNT k nokey", nil},
		{"PFDEBUG ENCODING k", nil},
		{"PFDEBUG DECODE k", nil},
		{"PFDEBUG TODENSE k", []string{"0: PFDEBUG TODENSE k"}},
		{"PFDEBUG TODENSE k", nil},
		{"PFADD k2 x", []string{"0: PFADD k2 x"}},
		{"PFDEBUG GETREG k2", []string{"0: PFDEBUG TODENSE k2"}},
		{"PFDEBUG GETREG k2", nil},
		{"SET s notanhll", []string{"0: SET s notanhll"}},
		{"PFADD s a", nil},
		{"PFMERGE s k", nil},
		{"APPEND k2 x", []string{"0: APPEND k2 x"}},
		{"PFADD k2 zz", nil},
	}
	for _, s := range steps {
		if got := h.journaled(s.line); !slices.Equal(got, s.want) {
			t.Errorf("%s: journaled %q, want %q", s.line, got, s.want)
		}
	}
	// A PFADD that turns the value dense logs the value.
	h.ks.Limits.HLLSparseMaxBytes = 30
	got := h.journaled("PFADD p a b c d e f g h")
	if len(got) != 1 || !strings.HasPrefix(got[0], "0: MOOND.APPLY PUT 0 p 0 HYLL") || len(got[0]) < hllDenseSize {
		t.Errorf("PFADD promoting: journaled %.60q", got)
	}
	// PFMERGE logs the value it wrote, with the destination's expiry.
	h.run("PEXPIRE k 50000")
	h.selectDB(2)
	got = h.journaled("PFMERGE m")
	want := fmt.Sprintf("2: MOOND.APPLY PUT 2 m 0 %s 0", hllEmptyInvalid())
	h.ks.Limits.HLLSparseMaxBytes = 3000
	if len(got) != 1 || got[0] != want {
		t.Errorf("PFMERGE m: journaled %q, want %q", got, want)
	}
	h.selectDB(0)
	h.run("PFADD k3 q")
	got = h.journaled("PFMERGE k k3")
	if len(got) != 1 || !strings.HasPrefix(got[0], "0: MOOND.APPLY PUT 0 k 0 HYLL") ||
		!strings.HasSuffix(got[0], " "+strconv.FormatInt(h.clock+50000, 10)) {
		t.Errorf("PFMERGE k k3: journaled %.60q...", got)
	}
}

// hllEmptyInvalid is a new HLL after a write: its cache marked stale.
func hllEmptyInvalid() string {
	b := hllEmpty
	b[15] |= 0x80
	return string(b[:])
}

// TestHLLJournalReplayRebuildsTheSameRegisters runs random HLL commands
// (with strings, deletions and expirations mixed in, and the sparse limit
// changing), replays the journal into an empty keyspace and compares every
// key: the same strings, and for HLLs the same bytes but for the cached
// cardinality, which PFCOUNT fills without a record (cmd_hll.go).
func TestHLLJournalReplayRebuildsTheSameRegisters(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			src := newHarness(t)
			src.recordJournal()
			rng := rand.New(rand.NewPCG(seed, 99))
			for range 3000 {
				runRandomHLLCommand(src, rng)
			}
			dst := newHarness(t)
			dst.clock = src.clock + 3600_000
			dst.ks.Loading = true
			for _, r := range src.records {
				dst.selectDB(r.db)
				if got := dst.do(r.args...); strings.HasPrefix(got, "(error)") {
					t.Fatalf("replaying %.80q: %s", r.args, got)
				}
			}
			dst.ks.Loading = false
			compareHLLKeyspaces(t, src.ks, dst.ks, src.clock)
		})
	}
}

var hllKeys = []string{"h0", "h1", "h2", "h3", "{t}a", "{t}b"}

// runRandomHLLCommand runs one random command over a few keys: PFADD of
// few or many elements, PFCOUNT, PFMERGE, PFDEBUG TODENSE, damaging
// writes, DEL, EXPIRE, and changes of hll-sparse-max-bytes.
func runRandomHLLCommand(h *harness, rng *rand.Rand) {
	key := func() string { return hllKeys[rng.IntN(len(hllKeys))] }
	var args []string
	switch r := rng.IntN(100); {
	case r < 50:
		args = []string{"PFADD", key()}
		for range rng.IntN(1 + rng.IntN(300)) {
			args = append(args, strconv.Itoa(rng.IntN(100000)))
		}
	case r < 60:
		args = []string{"PFCOUNT", key()}
	case r < 65:
		args = []string{"PFCOUNT", key(), key(), key()}
	case r < 75:
		args = []string{"PFMERGE", key(), key(), key()}
	case r < 78:
		args = []string{"PFDEBUG", "TODENSE", key()}
	case r < 80:
		args = []string{"SETRANGE", key(), strconv.Itoa(hllHdrSize + rng.IntN(40)), string(rune('A' + rng.IntN(60)))}
	case r < 83:
		args = []string{"DEL", key()}
	case r < 86:
		args = []string{"PEXPIRE", key(), strconv.Itoa(1 + rng.IntN(5000))}
	case r < 88:
		h.ks.Limits.HLLSparseMaxBytes = []int64{30, 300, 3000}[rng.IntN(3)]
		return
	case r < 90:
		args = []string{"SET", key(), "plain"}
	default:
		h.advance(int64(rng.IntN(1000)))
		return
	}
	h.do(args...)
}

// compareHLLKeyspaces is compareKeyspaces with HLL values compared but
// for their cached cardinality.
func compareHLLKeyspaces(t *testing.T, a, b *Keyspace, now int64) {
	t.Helper()
	da, db := dumpKeyspace(a, now), dumpKeyspace(b, now)
	if len(da) == 0 {
		t.Fatal("the random run left no keys: the test checks nothing")
	}
	hlls := 0
	for k, v := range da {
		w, ok := db[k]
		if !ok {
			t.Errorf("key %s: missing from the replay", k)
			continue
		}
		if strings.HasPrefix(v, `"HYLL`) {
			hlls++
			v, w = maskHLLCache(v), maskHLLCache(w)
		}
		if v != w {
			t.Errorf("key %s:\n live   %.200s\n replay %.200s", k, v, w)
		}
	}
	for k := range db {
		if _, ok := da[k]; !ok {
			t.Errorf("key %s: only in the replay", k)
		}
	}
	if hlls == 0 {
		t.Error("no HyperLogLog left to compare")
	}
}

// maskHLLCache blanks the cached cardinality of a dumped HLL value.
func maskHLLCache(dumped string) string {
	i := strings.LastIndex(dumped, " @")
	s, err := strconv.Unquote(dumped[:i])
	if err != nil || len(s) < hllHdrSize {
		return dumped
	}
	b := []byte(s)
	clear(b[8:16])
	return strconv.Quote(string(b)) + dumped[i:]
}

// TestHLLReplayThroughReplay replays HLL records through Replay, the
// recovery path, with a key position other than 1 (PFDEBUG).
func TestHLLReplayThroughReplay(t *testing.T) {
	src := newHarness(t)
	src.recordJournal()
	src.script("PFADD h a b c", n(1), "PFDEBUG TODENSE h", n(1), "PFADD h d", n(1), "PFMERGE m h", "OK")
	dst := newHarness(t)
	var recs []walRecord
	for i, r := range src.records {
		recs = append(recs, walRecord{lsn: uint64(i + 1), db: r.db, args: r.args})
	}
	replay(t, dst.ks, recs...)
	compareHLLKeyspaces(t, src.ks, dst.ks, src.clock)
	dst.expect("PFDEBUG ENCODING h", "dense")
	dst.expect("PFCOUNT m", n(4))
}
