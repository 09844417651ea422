package keyspace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestZSetJournalForms(t *testing.T) {
	h := newHarness(t)
	h.recordJournal()
	steps := []struct {
		line string
		want []string
	}{
		{"ZADD z 1 a 2 b", []string{"0: ZADD z 1 a 2 b"}},
		{"ZADD z 1 a 3 b 0.1 c", []string{"0: ZADD z 3 b 0.1 c"}},
		{"ZADD z NX 5 a 5 d", []string{"0: ZADD z 5 d"}},
		{"ZADD z XX 7 a 7 e", []string{"0: ZADD z 7 a"}},
		{"ZADD z GT 6 a 8 b", []string{"0: ZADD z 8 b"}},
		{"ZADD z LT 9 a", nil},
		{"ZADD z INCR 0.5 a", []string{"0: ZADD z 7.5 a"}},
		{"ZADD z INCR 0 a", nil},
		{"ZADD z XX 1 nope", nil},
		{"ZADD nokey XX 1 a", nil},
		{"ZINCRBY z 2.5 a", []string{"0: ZADD z 10 a"}},
		{"ZINCRBY z inf a", []string{"0: ZADD z inf a"}},
		{"ZINCRBY z -inf a", nil},
		{"ZADD z -inf a", []string{"0: ZADD z -inf a"}},
		{"ZADD z 0.30000000000000004 f", []string{"0: ZADD z 0.30000000000000004 f"}},
		{"ZREM z nope a", []string{"0: ZREM z a"}},
		{"ZREM z nope", nil},
		{"ZPOPMIN z", []string{"0: ZREM z c"}},
		{"ZPOPMAX z 2", []string{"0: ZREM z d b"}},
		{"ZRANGE z 0 -1", nil},
		{"ZREMRANGEBYRANK z 0 0", []string{"0: DEL z"}},
		{"ZADD z 1 a 2 b 3 c", []string{"0: ZADD z 1 a 2 b 3 c"}},
		{"ZREMRANGEBYSCORE z (1 2", []string{"0: ZREM z b"}},
		{"ZREMRANGEBYSCORE z 10 20", nil},
		{"ZREMRANGEBYLEX z - +", []string{"0: DEL z"}},
		{"ZADD z 1 a 2 b 3 c", []string{"0: ZADD z 1 a 2 b 3 c"}},
		{"ZMPOP 2 nokey z MAX COUNT 10", []string{"0: DEL z"}},
		{"ZMPOP 1 z MAX", nil},
		{"ZADD z 1 a 2 b", []string{"0: ZADD z 1 a 2 b"}},
		{"ZADD y 2 b 3 c", []string{"0: ZADD y 2 b 3 c"}},
		{"ZUNIONSTORE u 2 z y", []string{"0: MOOND.APPLY PUT 0 u 3 " + encodedZSet("1 a 3 c 4 b") + " 0"}},
		{"ZINTERSTORE u 2 z nokey", []string{"0: DEL u"}},
		{"ZINTERSTORE u 2 z nokey", nil},
		{"ZDIFFSTORE u 2 z y", []string{"0: MOOND.APPLY PUT 0 u 3 " + encodedZSet("1 a") + " 0"}},
		{"ZRANGESTORE u y 0 0", []string{"0: MOOND.APPLY PUT 0 u 3 " + encodedZSet("2 b") + " 0"}},
		{"ZRANGESTORE u y 5 6", []string{"0: DEL u"}},
		{"ZUNION 2 z y", nil},
	}
	for _, s := range steps {
		if got := h.journaled(s.line); !slices.Equal(got, s.want) {
			t.Errorf("%s: journal %q, want %q", s.line, got, s.want)
		}
	}
}

// encodedZSet is the heap encoding of a set given as "score member ...",
// in order.
func encodedZSet(items string) string {
	f := strings.Fields(items)
	z := &zset{}
	lim := DefaultEncodingLimits()
	for i := 0; i < len(f); i += 2 {
		s, _ := parseScore([]byte(f[i]))
		z.insert([]byte(f[i+1]), s, &lim)
	}
	return string(z.encode(nil))
}

func TestZSetJournalScoresRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 10000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) {
			continue
		}
		back, ok := parseScore(formatScore(nil, f))
		if !ok || back != f {
			t.Fatalf("%v formats as %q, parses back as %v (%v)", f, formatScore(nil, f), back, ok)
		}
	}
}

// zsetDump lists every sorted set of a keyspace by its content.
func zsetDump(ks *Keyspace) map[string]string {
	out := map[string]string{}
	for i, d := range ks.dbs {
		d.keys.each(func(sl *slot[entry]) {
			if sl.v.kind() == KindZSet {
				out[fmt.Sprintf("%d/%s", i, sl.key())] = fmt.Sprintf("%x", zsetAt(sl).encode(nil))
			}
		})
	}
	return out
}

// TestZSetJournalReplayRebuildsTheSameSets replays the journal of a random
// run (the model test's commands, over both encodings) into an empty
// keyspace, with Loading set, and compares the sets.
func TestZSetJournalReplayRebuildsTheSameSets(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			src := newHarness(t)
			src.ks.Limits.ZSetMaxListpackEntries = 5
			src.recordJournal()
			r := rand.New(rand.NewPCG(seed, 42))
			m := zmodel{}
			for range 3000 {
				args, _ := randomZCommand(m, r)
				src.do(args...)
			}
			dst := newHarness(t)
			dst.ks.Loading = true
			for _, rec := range src.records {
				dst.selectDB(rec.db)
				if got := dst.do(rec.args...); strings.HasPrefix(got, "(error)") {
					t.Fatalf("replaying %q: %s", rec.args, got)
				}
			}
			a, b := zsetDump(src.ks), zsetDump(dst.ks)
			if len(a) == 0 {
				t.Fatal("the run left no sets")
			}
			if !mapsEqual(a, b) {
				t.Fatalf("replay differs:\n%v\n%v", a, b)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestZSetReplayThroughMoondApply: a *STORE record replays (its PUT
// decodes the heap encoding) and a record never refuses at replay what the
// live command took.
func TestZSetReplayThroughMoondApply(t *testing.T) {
	src := newHarness(t)
	src.recordJournal()
	src.script(
		"ZADD a 1 x 2 y 3 z", n(3),
		"ZADD b 5 y", n(1),
		"ZUNIONSTORE c 2 a b WEIGHTS 2 1 AGGREGATE MAX", n(3),
		"ZINTERSTORE d 2 a b", n(1),
		"COPY c e", n(1),
		"RENAME d f", "OK",
		"MOVE e 2", n(1),
	)
	dst := newHarness(t)
	dst.ks.Loading = true
	for _, rec := range src.records {
		dst.selectDB(rec.db)
		if got := dst.do(rec.args...); strings.HasPrefix(got, "(error)") {
			t.Fatalf("replaying %q: %s", rec.args, got)
		}
	}
	if a, b := zsetDump(src.ks), zsetDump(dst.ks); !mapsEqual(a, b) || len(a) != 5 {
		t.Fatalf("replay differs:\n%v\n%v", a, b)
	}
	dst.ks.Loading = false
	dst.script("ZRANGE c 0 -1 WITHSCORES", words("x 2 y 5 z 6"), "ZRANGE f 0 -1 WITHSCORES", words("y 7"))
}
