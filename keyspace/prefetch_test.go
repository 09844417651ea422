package keyspace

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/moond-db/moond/resp"
)

// BenchmarkPipelineGet runs GETs of random keys of a 1M-key database in
// pipelines of 16, as a client at -P 16 sends them, with and without
// Prefetch over each pipeline first. One op is one GET.
func BenchmarkPipelineGet(b *testing.B) {
	for _, cmd := range []string{"GET", "SET"} {
		for _, pf := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/prefetch=%v", cmd, pf), func(b *testing.B) { benchPipeline(b, cmd, pf) })
		}
	}
}

func benchPipeline(b *testing.B, cmd string, prefetch bool) {
	const n, depth = 1_000_000, 16
	ks, keys := benchKeyspace(n)
	val := make([]byte, 64)
	for _, k := range keys {
		ks.Exec(&Client{}, [][]byte{[]byte("SET"), k, val}, &resp.Writer{})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	batch := make([][]byte, depth)
	args := [][]byte{[]byte(cmd), nil, val}
	if cmd == "GET" {
		args = args[:2]
	}
	var w resp.Writer
	c := &Client{}
	b.ResetTimer()
	for i := 0; i < b.N; i += depth {
		for j := range batch {
			batch[j] = keys[rng.IntN(n)]
		}
		if prefetch {
			ks.Prefetch(0, batch)
		}
		for _, k := range batch {
			args[1] = k
			ks.Exec(c, args, &w)
		}
		w.Reset()
	}
}

// TestPrefetchChangesNothing runs Prefetch over keys of every value form
// (int, immutable string, empty string, mutable string), absent keys, more
// keys than PrefetchMax and databases that do not exist, and checks that
// no key, statistic or LRU clock moved and that the dict's mutation count
// is unchanged.
func TestPrefetchChangesNothing(t *testing.T) {
	h := newHarness(t)
	for i := range prefetchMinKeys {
		h.do("SET", fmt.Sprintf("k%d", i), fmt.Sprint(i))
	}
	h.do("SET", "str", "a string longer than an int")
	h.do("SET", "empty", "")
	h.do("APPEND", "buf", "grown in place")
	h.do("SET", "", "the empty key")
	if !h.ks.WantsPrefetch(0) || h.ks.WantsPrefetch(1) || h.ks.WantsPrefetch(-1) || h.ks.WantsPrefetch(16) {
		t.Fatal("WantsPrefetch answers wrong for the loaded and the empty databases")
	}
	keys := [][]byte{[]byte("str"), []byte("empty"), []byte("buf"), []byte(""), []byte("k7"), []byte("absent"), nil}
	for i := range 2 * PrefetchMax {
		keys = append(keys, fmt.Appendf(nil, "k%d", i*7))
	}
	clock := func(key string) string { return h.do("OBJECT", "IDLETIME", key) }
	h.advance(5000)
	idle := clock("str")
	before, muts := h.ks.Stats(), h.ks.dbs[0].keys.muts
	for _, db := range []int{0, 1, -1, 16} {
		h.ks.Prefetch(db, keys)
		h.ks.Prefetch(db, keys[:1])
		h.ks.Prefetch(db, nil)
	}
	if got := h.ks.Stats(); got != before {
		t.Errorf("stats moved: %+v, then %+v", before, got)
	}
	if m := h.ks.dbs[0].keys.muts; m != muts {
		t.Errorf("muts %d, then %d", muts, m)
	}
	if got := clock("str"); got != idle {
		t.Errorf("OBJECT IDLETIME str: %s, then %s", idle, got)
	}
	for key, want := range map[string]string{"str": "a string longer than an int", "empty": "", "buf": "grown in place", "": "the empty key", "k7": "7"} {
		if got := h.do("GET", key); got != fmt.Sprintf("%q", want) {
			t.Errorf("GET %q = %q, want %q", key, got, want)
		}
	}
}
