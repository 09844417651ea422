package keyspace

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fill makes n string keys named prefix0..prefix(n-1) in the harness's
// database, each with a 1 KiB value (so that values, not the tables, are
// most of the memory, as in the data sets eviction is for).
func (h *harness) fill(prefix string, n int) {
	h.t.Helper()
	val := strings.Repeat("v", 1024)
	for i := range n {
		h.do("SET", prefix+strconv.Itoa(i), val)
	}
}

// survivors counts the keys named prefix0..prefix(n-1) still present.
func (h *harness) survivors(prefix string, n int) int {
	left := 0
	for i := range n {
		if h.do("EXISTS", prefix+strconv.Itoa(i)) == "(integer) 1" {
			left++
		}
	}
	return left
}

func (h *harness) evictTo(policy EvictionPolicy, samples int, limit int64) EvictResult {
	h.ks.SetEviction(Eviction{Policy: policy, Samples: samples, LFULogFactor: 10, LFUDecayTime: 1})
	return h.ks.Evict(limit, time.Hour).Result
}

func TestEvictNoEvictionFailsAndKeepsEveryKey(t *testing.T) {
	h := newHarness(t)
	h.fill("k", 100)
	if r := h.evictTo(NoEviction, 5, h.ks.DatasetMemory()/2); r != EvictFail {
		t.Fatalf("noeviction over the limit: %v, want EvictFail", r)
	}
	if n := h.survivors("k", 100); n != 100 {
		t.Fatalf("%d keys left of 100", n)
	}
	if r := h.evictTo(NoEviction, 5, h.ks.DatasetMemory()); r != EvictOK {
		t.Fatalf("noeviction at the limit: %v, want EvictOK", r)
	}
}

func TestEvictAllKeysLRUTakesTheIdleKeys(t *testing.T) {
	h := newHarness(t)
	h.fill("old", 1000)
	h.clock += 100_000
	h.fill("new", 1000)
	h.clock += 100_000
	// Reading the old keys again makes them the recent ones.
	for i := range 1000 {
		if i%2 == 0 {
			h.do("GET", "old"+strconv.Itoa(i))
		}
	}
	before := h.ks.DatasetMemory()
	if r := h.evictTo(AllKeysLRU, 10, before*2/3); r != EvictOK {
		t.Fatalf("allkeys-lru: %v", r)
	}
	if m := h.ks.DatasetMemory(); m > before*2/3 {
		t.Fatalf("DatasetMemory %d after eviction to %d", m, before*2/3)
	}
	evicted := h.ks.Stats().EvictedKeys
	// The idlest are the odd old keys (200 s), then the new ones (100 s);
	// the even old keys were read just now.
	oddGone, evenGone := 0, 0
	for i := range 1000 {
		if h.do("EXISTS", "old"+strconv.Itoa(i)) == "(integer) 0" {
			if i%2 == 1 {
				oddGone++
			} else {
				evenGone++
			}
		}
	}
	if evicted < 500 || oddGone < 450 || evenGone > int(evicted)/20 {
		t.Fatalf("evicted %d: %d of the 500 idlest keys, %d of the 500 read last; want the idlest first", evicted, oddGone, evenGone)
	}
}

func TestEvictVolatileNeverTakesAKeyWithoutTTL(t *testing.T) {
	for _, p := range []EvictionPolicy{VolatileLRU, VolatileLFU, VolatileRandom, VolatileTTL} {
		t.Run(p.String(), func(t *testing.T) {
			h := newHarness(t)
			h.fill("keep", 500)
			h.fill("ttl", 500)
			for i := range 500 {
				h.do("EXPIRE", "ttl"+strconv.Itoa(i), strconv.Itoa(1000+i))
			}
			r := h.evictTo(p, 5, 0) // everything would have to go
			if r != EvictFail {
				t.Fatalf("with only keys without a TTL left: %v, want EvictFail", r)
			}
			if n := h.survivors("keep", 500); n != 500 {
				t.Fatalf("%d of the 500 keys without a TTL left", n)
			}
			if n := h.survivors("ttl", 500); n != 0 {
				t.Fatalf("%d keys with a TTL left", n)
			}
			if got := h.ks.Stats().EvictedKeys; got != 500 {
				t.Fatalf("evicted_keys %d, want 500", got)
			}
		})
	}
}

func TestEvictVolatileTTLTakesTheSoonestFirst(t *testing.T) {
	h := newHarness(t)
	h.fill("k", 1000)
	for i := range 1000 {
		h.do("EXPIRE", "k"+strconv.Itoa(i), strconv.Itoa(1000+i))
	}
	before := h.ks.DatasetMemory()
	if r := h.evictTo(VolatileTTL, 10, before/2); r != EvictOK {
		t.Fatalf("volatile-ttl: %v", r)
	}
	soonGone := 1000 - h.survivors("k", 500)
	lateGone := 1000 - h.survivors("k", 1000) - soonGone
	if soonGone < lateGone*4 {
		t.Fatalf("%d keys of the sooner half gone, %d of the later: want mostly the sooner", soonGone, lateGone)
	}
}

func TestEvictAllKeysRandomReachesTheLimit(t *testing.T) {
	h := newHarness(t)
	for db := range 3 {
		h.do("SELECT", strconv.Itoa(db))
		h.fill("k", 300)
	}
	limit := h.ks.DatasetMemory() / 3
	if r := h.evictTo(AllKeysRandom, 5, limit); r != EvictOK {
		t.Fatalf("allkeys-random: %v", r)
	}
	if m := h.ks.DatasetMemory(); m > limit {
		t.Fatalf("DatasetMemory %d over %d", m, limit)
	}
	for db := range 3 { // it visits the databases in turn
		h.do("SELECT", strconv.Itoa(db))
		if n := h.survivors("k", 300); n == 300 || n == 0 {
			t.Fatalf("db %d: %d of 300 keys left; want some evicted from each", db, n)
		}
	}
}

func TestEvictAllKeysLFUKeepsTheFrequentKeys(t *testing.T) {
	h := newHarness(t)
	h.ks.SetEviction(Eviction{Policy: AllKeysLFU, Samples: 10, LFULogFactor: 10, LFUDecayTime: 1})
	h.fill("k", 1000)
	for round := range 50 {
		_ = round
		for i := range 100 {
			h.do("GET", "k"+strconv.Itoa(i))
		}
	}
	if f := h.do("OBJECT", "FREQ", "k1"); f == "(integer) 5" || strings.HasPrefix(f, "(error)") {
		t.Fatalf("OBJECT FREQ of a key read 50 times: %s", f)
	}
	if f := h.do("OBJECT", "FREQ", "k500"); f != "(integer) 5" {
		t.Fatalf("OBJECT FREQ of a key never read: %s, want LFU_INIT_VAL 5", f)
	}
	if r := h.ks.Evict(h.ks.DatasetMemory()/2, time.Hour).Result; r != EvictOK {
		t.Fatalf("allkeys-lfu: %v", r)
	}
	if n := h.survivors("k", 100); n < 95 {
		t.Fatalf("%d of the 100 frequently read keys left", n)
	}
	// The counter decays by one per lfu-decay-time minutes.
	h.clock += 3 * 60_000
	if f := h.do("OBJECT", "FREQ", "k500"); f != "(integer) 2" && h.do("EXISTS", "k500") == "(integer) 1" {
		t.Fatalf("OBJECT FREQ after 3 minutes: %s, want 2", f)
	}
}

func TestObjectFreqAndIdletimeFollowThePolicy(t *testing.T) {
	h := newHarness(t)
	h.do("SET", "k", "v")
	h.clock += 7_000
	if got := h.do("OBJECT", "IDLETIME", "k"); got != "(integer) 7" {
		t.Fatalf("IDLETIME %s, want 7", got)
	}
	if got := h.do("OBJECT", "FREQ", "k"); !strings.HasPrefix(got, "(error) ERR An LFU maxmemory policy is not selected") {
		t.Fatalf("FREQ under noeviction: %s", got)
	}
	h.ks.SetEviction(Eviction{Policy: VolatileLFU, Samples: 5, LFULogFactor: 10, LFUDecayTime: 1})
	if got := h.do("OBJECT", "IDLETIME", "k"); !strings.HasPrefix(got, "(error) ERR An LFU maxmemory policy is selected") {
		t.Fatalf("IDLETIME under volatile-lfu: %s", got)
	}
}

func TestEvictionIsJournaledAsADeletion(t *testing.T) {
	h := newHarness(t)
	h.fill("k", 50)
	h.recordJournal()
	if r := h.evictTo(AllKeysRandom, 5, 0); r != EvictFail {
		t.Fatalf("evicting everything: %v, want EvictFail once nothing is left", r)
	}
	if len(h.records) != 50 {
		t.Fatalf("%d journal records for 50 evictions", len(h.records))
	}
	for _, r := range h.records {
		if len(r.args) != 2 || r.args[0] != "DEL" || !strings.HasPrefix(r.args[1], "k") {
			t.Fatalf("journal record %v, want DEL key", r.args)
		}
	}
	if n := h.survivors("k", 50); n != 0 {
		t.Fatalf("%d keys left", n)
	}
}

func TestEvictStopsAtItsTimeLimit(t *testing.T) {
	h := newHarness(t)
	h.fill("k", 2000)
	h.ks.SetEviction(Eviction{Policy: AllKeysLRU, Samples: 5})
	if r := h.ks.Evict(0, 0).Result; r != EvictRunning {
		t.Fatalf("with no time: %v, want EvictRunning", r)
	}
	if got := h.ks.Stats().EvictedKeys; got != 16 {
		t.Fatalf("evicted %d keys before looking at the clock; want 16", got)
	}
}

func TestEvictionPoolStaysSorted(t *testing.T) {
	h := newHarness(t)
	scoreOf := map[string]uint64{}
	for i, s := range []uint64{5, 3, 9, 1, 7, 7, 2, 8, 6, 4, 10, 12, 11, 0, 15, 14, 13, 20, 19, 18} {
		key := fmt.Sprint("key", i)
		scoreOf[key] = s
		h.ks.poolInsert(0, []byte(key), s)
		prev := uint64(0)
		seenFree := false
		bufs := map[uint8]bool{}
		for k, e := range h.ks.evict.pool {
			bufs[e.buf] = true
			if got := string(h.ks.evict.keys[e.buf]); e.used && scoreOf[got] != e.score {
				t.Fatalf("after %d inserts: entry %d scored %d holds %q, inserted with %d", i+1, k, e.score, got, scoreOf[got])
			}
			switch {
			case !e.used:
				seenFree = true
			case seenFree:
				t.Fatalf("after %d inserts: a used entry at %d after a free one", i+1, k)
			case e.score < prev:
				t.Fatalf("after %d inserts: scores not ascending at %d", i+1, k)
			default:
				prev = e.score
			}
		}
		if len(bufs) != evictPoolSize {
			t.Fatalf("after %d inserts: the entries name %d key buffers, want each of %d once", i+1, len(bufs), evictPoolSize)
		}
	}
	// Full, holding the 16 best of the 20 scores: the worst kept is 4.
	if e := h.ks.evict.pool[0]; !e.used || e.score != 4 {
		t.Fatalf("pool[0] = %+v, want score 4", e)
	}
}

// Evicted keys' string buffers are reused by new values of their size,
// and no value ever reads another's bytes: every key present holds what
// its last SET wrote.
func TestEvictedBuffersAreReusedWithoutAliasing(t *testing.T) {
	h := newHarness(t)
	h.ks.SetEviction(Eviction{Policy: AllKeysRandom, Samples: 5})
	model := map[string]string{}
	rng := rand.New(rand.NewPCG(7, 9))
	reused := 0
	for i := range 20000 {
		k := "k" + strconv.Itoa(rng.IntN(3000))
		v := strings.Repeat(string(rune('a'+i%26)), 100+rng.IntN(40)) + strconv.Itoa(i)
		before := h.ks.spare.n
		h.do("SET", k, v)
		if h.ks.spare.n < before {
			reused++
		}
		model[k] = v
		h.ks.Evict(200<<10, time.Hour)
		if i%97 == 0 {
			for mk, mv := range model {
				switch got := h.do("GET", mk); got {
				case "(nil)":
					delete(model, mk) // evicted
				case strconv.Quote(mv):
				default:
					t.Fatalf("after %d SETs: GET %s = %.40s..., want %.40s...", i+1, mk, got, mv)
				}
			}
		}
	}
	if reused == 0 {
		t.Fatal("no SET reused an evicted key's buffer")
	}
	if h.ks.spare.n > spareStringsMax {
		t.Fatalf("%d spare buffers kept, over %d", h.ks.spare.n, spareStringsMax)
	}
}

// TestEvictReportsHowLongItEvicted checks Evicted.Took (the latency
// monitor's eviction-cycle): the time of a call that evicted, none for a
// call with nothing to evict.
func TestEvictReportsHowLongItEvicted(t *testing.T) {
	h := newHarness(t)
	h.fill("k", 100)
	h.ks.SetEviction(Eviction{Policy: AllKeysRandom, Samples: 5, LFULogFactor: 10, LFUDecayTime: 1})
	if ev := h.ks.Evict(h.ks.DatasetMemory(), time.Hour); ev.Took != 0 {
		t.Errorf("a call under the limit took %v, want 0", ev.Took)
	}
	if ev := h.ks.Evict(h.ks.DatasetMemory()/2, time.Hour); ev.Result != EvictOK || ev.Took <= 0 {
		t.Errorf("a call that evicted: %v, took %v; want EvictOK and a positive time", ev.Result, ev.Took)
	}
}
