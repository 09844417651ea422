package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/moond-db/moond/persistence/heap"
)

func TestSetJournalForms(t *testing.T) {
	h := newSetHarness(t)
	h.recordJournal()
	put := func(key string, members ...string) string {
		// The PUT op's value is the heap encoding of the set.
		var p unsafe.Pointer
		for i, m := range members {
			if i == 0 {
				p = newSet([]byte(m), len(members), &h.ks.Limits)
			}
			p, _ = setAdd(p, []byte(m), &h.ks.Limits)
		}
		return "0: MOOND.APPLY PUT 0 " + key + " 2 " + string(setEncode(p, nil)) + " 0"
	}
	steps := []struct {
		line string
		want []string
	}{
		{"SADD s a b a", []string{"0: SADD s a b"}},
		{"SADD s a b", nil},
		{"SADD s c a", []string{"0: SADD s c"}},
		{"SREM s x", nil},
		{"SREM s a x b", []string{"0: SREM s a b"}},
		{"SREM nokey a", nil},
		{"SADD t 1 2 3", []string{"0: SADD t 1 2 3"}},
		{"SMOVE s t c", []string{"0: MOOND.APPLY CMD 0 3 SREM s c CMD 0 3 SADD t c"}},
		{"SMOVE s t c", nil},
		{"SMOVE t t 1", nil},
		{"SINTERSTORE d t", []string{put("d", "1", "2", "3", "c")}},
		{"SUNIONSTORE d t nokey", []string{put("d", "1", "2", "3", "c")}},
		{"SDIFFSTORE d t t", []string{"0: DEL d"}},
		{"SDIFFSTORE d t t", nil},
		{"SINTERSTORE d nokey t", nil},
		{"SPOP nokey", nil},
		{"SPOP t 0", nil},
		{"SPOP t 10", []string{"0: DEL t"}},
		{"SADD one x", []string{"0: SADD one x"}},
		{"SPOP one", []string{"0: SREM one x"}},
	}
	for _, s := range steps {
		if got := h.journaled(s.line); !slices.Equal(got, s.want) {
			t.Errorf("%s:\n got %q\nwant %q", s.line, got, s.want)
		}
	}
	// SPOP with a count logs the members it popped.
	h.do("SADD", "p", "a", "b", "c", "d")
	recs := h.journaled("SPOP p 3")
	left := h.smembers("p")
	if len(recs) != 1 || len(left) != 1 {
		t.Fatalf("SPOP p 3: %q, left %q", recs, left)
	}
	popped := strings.Fields(strings.TrimPrefix(recs[0], "0: SREM p "))
	expectMembers(t, "popped and left", setSorted(append(popped, left...)), "a", "b", "c", "d")
	recs = h.journaled("SPOP p")
	if len(recs) != 1 || recs[0] != "0: SREM p "+left[0] {
		t.Errorf("SPOP p: %q", recs)
	}
}

// setState lists every set of a keyspace as "db/key" -> sorted members,
// and every other key as its TYPE.
func setState(t *testing.T, h *harness) map[string]string {
	t.Helper()
	out := map[string]string{}
	saved := h.c.DB
	for i, d := range h.ks.dbs {
		var keys []string
		d.keys.each(func(sl *slot[entry]) { keys = append(keys, sl.key()) })
		h.selectDB(i)
		for _, k := range keys {
			v := h.do("TYPE", k)
			if v == "set" {
				v = strings.Join(h.smembers(k), ",")
			}
			out[fmt.Sprintf("%d/%q", i, k)] = v
		}
	}
	h.selectDB(saved)
	return out
}

// TestSetJournalReplayRebuildsTheSameSets runs random set commands, then
// replays their journal into a fresh keyspace and compares every set.
func TestSetJournalReplayRebuildsTheSameSets(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			src := newSetHarness(t)
			src.ks.Limits.SetMaxIntsetEntries, src.ks.Limits.SetMaxListpackEntries = 12, 6
			src.recordJournal()
			rng := rand.New(rand.NewPCG(seed, 99))
			for range 5000 {
				src.do(randomSetCommand(rng)...)
			}
			dst := newSetHarness(t)
			dst.ks.Loading = true
			for _, r := range src.records {
				dst.selectDB(r.db)
				if got := dst.do(r.args...); strings.HasPrefix(got, "(error)") {
					t.Fatalf("replaying %q: %s", r.args, got)
				}
			}
			dst.ks.Loading = false
			a, b := setState(t, src), setState(t, dst)
			if len(a) == 0 {
				t.Fatal("no keys left: the test checks nothing")
			}
			for k, v := range a {
				if b[k] != v {
					t.Errorf("%s: %s, replayed %s", k, v, b[k])
				}
			}
			if len(a) != len(b) {
				t.Errorf("%d keys, %d replayed", len(a), len(b))
			}
		})
	}
}

var setTestKeys = []string{"s0", "s1", "s2", "s3", "str"}

// randomMember draws from a pool that crosses every threshold: small and
// large integers, short and long strings.
func randomSetMember(rng *rand.Rand) string {
	switch rng.IntN(5) {
	case 0:
		return strconv.Itoa(rng.IntN(40))
	case 1:
		return strconv.FormatInt(rng.Int64N(1<<40)-1<<39, 10)
	case 2:
		return string(rune('a' + rng.IntN(20)))
	case 3:
		return strings.Repeat("L", 30+rng.IntN(5))
	}
	return strconv.Itoa(rng.IntN(8)) + "x"
}

func randomSetCommand(rng *rand.Rand) []string {
	key := func() string { return setTestKeys[rng.IntN(len(setTestKeys))] }
	members := func() []string {
		out := make([]string, 1+rng.IntN(4))
		for i := range out {
			out[i] = randomSetMember(rng)
		}
		return out
	}
	switch rng.IntN(14) {
	case 0, 1, 2:
		return append([]string{"SADD", key()}, members()...)
	case 3:
		return append([]string{"SREM", key()}, members()...)
	case 4:
		return []string{"SPOP", key()}
	case 5:
		return []string{"SPOP", key(), strconv.Itoa(rng.IntN(5))}
	case 6:
		return []string{"SMOVE", key(), key(), randomSetMember(rng)}
	case 7:
		return []string{"SINTERSTORE", key(), key(), key()}
	case 8:
		return []string{"SUNIONSTORE", key(), key(), key()}
	case 9:
		return []string{"SDIFFSTORE", key(), key(), key()}
	case 10:
		return []string{"SET", "str", "x"}
	case 11:
		return []string{"DEL", key()}
	case 12:
		return []string{"SRANDMEMBER", key(), strconv.Itoa(rng.IntN(7) - 3)}
	}
	return []string{"COPY", key(), key(), "REPLACE"}
}

// TestSetReplayOverAFuzzyHeap: SMOVE's one record changes two keys; over a
// heap that holds the destination after the record and the source before
// it, replay applies the SREM and skips the SADD, as the per-key LSN rule
// says, and the sets come back exactly.
func TestSetReplayOverAFuzzyHeap(t *testing.T) {
	lim := DefaultEncodingLimits()
	setRec := func(key string, lsn uint64, members ...string) heap.Record {
		return heap.Record{Key: hk(0, key), Kind: uint8(KindSet), KeyLSN: lsn, Value: setEncode(buildSet(members, &lim), nil)}
	}
	// The history: SADD s a b (9), SADD d x (10), SMOVE s d b (11),
	// SADD d c (12), SREM s a (13). The heap took s at 10, d at 12.
	dir := t.TempDir()
	_, files := writeHeap(t, dir, nil, setRec("s", 10, "a", "b"), setRec("d", 12, "x", "b", "c"))
	ks := NewKeyspace(16, func() int64 { return startClock })
	bootHeap(t, ks, dir, files, 11)
	replay(t, ks,
		walRecord{11, 0, []string{"MOOND.APPLY", "CMD", "0", "3", "SREM", "s", "b", "CMD", "0", "3", "SADD", "d", "b"}},
		walRecord{12, 0, []string{"SADD", "d", "c"}},
		walRecord{13, 0, []string{"SREM", "s", "a"}},
	)
	ks.EndLoad()
	if sl, _ := ks.lookup(0, []byte("s")); sl != nil {
		t.Errorf("s survived: %q", setStrings(sl.v.p))
	}
	sl, _ := ks.lookup(0, []byte("d"))
	if sl == nil || !slices.Equal(setStrings(sl.v.p), []string{"b", "c", "x"}) {
		t.Fatalf("d recovered wrong")
	}
	if got := setEncodingName(sl.v.p); got != "listpack" {
		t.Errorf("d decoded as %s", got)
	}
}
