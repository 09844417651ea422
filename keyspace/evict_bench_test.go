package keyspace

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/moond-db/moond/resp"
)

// BenchmarkSetEvicting is bench-evict's row in one process: SET of random
// keys of a million ("key:" and 12 digits, as redis-benchmark -r writes
// them) with 100-byte values, under allkeys-lru and a limit of 100 MiB,
// about half of what the million keys take, each SET followed by the
// eviction run the server makes after a write (server.worker.exec). The
// keyspace is filled past its limit first, so that nearly every SET of a
// new key evicts one.
func BenchmarkSetEvicting(b *testing.B) {
	const (
		keys  = 1_000_000
		limit = 100 << 20
	)
	ks := NewKeyspace(16, func() int64 { return startClock })
	ks.SetEviction(Eviction{Policy: AllKeysLRU, Samples: 5, LFULogFactor: 10, LFUDecayTime: 1})
	var w resp.Writer
	c := &Client{}
	key := []byte("key:000000000000")
	args := [][]byte{[]byte("SET"), key, []byte(strings.Repeat("x", 100))}
	rng := rand.New(rand.NewPCG(1, 2))
	set := func() {
		for j, v := len(key)-1, rng.IntN(keys); j >= 4; j, v = j-1, v/10 {
			key[j] = byte('0' + v%10)
		}
		ks.Exec(c, args, &w)
		w.Reset()
		ks.Evict(limit, 500*time.Microsecond)
	}
	for range 2 * keys {
		set()
	}
	if ks.Stats().EvictedKeys == 0 {
		b.Fatal("nothing evicted while filling")
	}
	evicted := ks.Stats().EvictedKeys
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		set()
	}
	b.ReportMetric(float64(ks.Stats().EvictedKeys-evicted)/float64(b.N), "evictions/op")
}
