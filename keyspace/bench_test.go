package keyspace

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/resp"
)

// benchKeyspace holds keys "key:000000000000".."key:<n-1>" with 3-byte
// values, as redis-benchmark writes them.
func benchKeyspace(n int) (*Keyspace, [][]byte) {
	ks := NewKeyspace(16, func() int64 { return startClock })
	keys := make([][]byte, n)
	var w resp.Writer
	c := &Client{}
	for i := range keys {
		keys[i] = []byte("key:" + pad12(i))
		ks.Exec(c, [][]byte{[]byte("SET"), keys[i], []byte("xxx")}, &w)
		w.Reset()
	}
	return ks, keys
}

func pad12(i int) string {
	s := strconv.Itoa(i)
	for len(s) < 12 {
		s = "0" + s
	}
	return s
}

func BenchmarkGet(b *testing.B) {
	ks, keys := benchKeyspace(100000)
	var w resp.Writer
	c := &Client{}
	args := [][]byte{[]byte("GET"), nil}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		args[1] = keys[i%len(keys)]
		ks.Exec(c, args, &w)
		w.Reset()
	}
}

func BenchmarkSetExisting(b *testing.B) {
	ks, keys := benchKeyspace(100000)
	var w resp.Writer
	c := &Client{}
	args := [][]byte{[]byte("SET"), nil, []byte("yyy")}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		args[1] = keys[i%len(keys)]
		ks.Exec(c, args, &w)
		w.Reset()
	}
}

// BenchmarkSetExistingTracked is BenchmarkSetExisting with dirty tracking
// on (persistence): the keys are already dirty, so a SET costs a test.
func BenchmarkSetExistingTracked(b *testing.B) {
	ks, keys := benchKeyspace(100000)
	ks.TrackDirty = true
	setLastLSN(ks, func() uint64 { return 1 })
	var w resp.Writer
	c := &Client{}
	args := [][]byte{[]byte("SET"), nil, []byte("yyy")}
	for _, k := range keys {
		args[1] = k
		ks.Exec(c, args, &w)
		w.Reset()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		args[1] = keys[i%len(keys)]
		ks.Exec(c, args, &w)
		w.Reset()
	}
}

func BenchmarkSetNew(b *testing.B) { benchSetNew(b, false) }

// BenchmarkSetNewTracked is BenchmarkSetNew with dirty tracking on
// (persistence), as a load between checkpoints: every key is new, so
// dirty.
func BenchmarkSetNewTracked(b *testing.B) { benchSetNew(b, true) }

func benchSetNew(b *testing.B, tracked bool) {
	ks := NewKeyspace(16, func() int64 { return startClock })
	ks.TrackDirty = tracked
	setLastLSN(ks, func() uint64 { return 1 })
	var w resp.Writer
	c := &Client{}
	args := [][]byte{[]byte("SET"), nil, []byte("xxx")}
	key := []byte("key:000000000000")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		for j, v := len(key)-1, i; j >= 4; j, v = j-1, v/10 {
			key[j] = byte('0' + v%10)
		}
		args[1] = key
		ks.Exec(c, args, &w)
		w.Reset()
	}
}

func BenchmarkIncr(b *testing.B) {
	ks := NewKeyspace(16, func() int64 { return startClock })
	var w resp.Writer
	c := &Client{}
	args := [][]byte{[]byte("INCR"), []byte("counter")}
	b.ReportAllocs()
	for b.Loop() {
		ks.Exec(c, args, &w)
		w.Reset()
	}
}

// BenchmarkMemoryPerKey reports the heap bytes one small string key costs
// (redis-benchmark's shape: 16-byte keys, 3-byte values), measured by the
// runtime and as UsedMemory estimates it. Redis 7.0 spends about 80-90 on
// the same (dictEntry, key sds, embstr object, bucket pointer).
func BenchmarkMemoryPerKey(b *testing.B) { benchMemoryPerKey(b, false) }

// BenchmarkMemoryPerKeyTracked is BenchmarkMemoryPerKey with dirty
// tracking on (persistence), before any checkpoint: every key is dirty.
func BenchmarkMemoryPerKeyTracked(b *testing.B) { benchMemoryPerKey(b, true) }

func benchMemoryPerKey(b *testing.B, tracked bool) {
	const n = 1_000_000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte("key:" + pad12(i))
	}
	args := [][]byte{[]byte("SET"), nil, []byte("xxx")}
	for b.Loop() {
		before := heapAlloc()
		ks := NewKeyspace(16, func() int64 { return startClock })
		ks.TrackDirty = tracked
		setLastLSN(ks, func() uint64 { return 1 })
		var w resp.Writer
		c := &Client{}
		for _, k := range keys {
			args[1] = k
			ks.Exec(c, args, &w)
			w.Reset()
		}
		b.ReportMetric(float64(heapAlloc()-before)/n, "heap-B/key")
		b.ReportMetric(float64(ks.UsedMemory())/n, "used-B/key")
		runtime.KeepAlive(ks)
	}
}

func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// BenchmarkCheckpointSource measures what a checkpoint asks of the
// keyspace per key: TakeDirty, then Version and Placed for each key
// (100000 keys, all dirty).
func BenchmarkCheckpointSource(b *testing.B) { benchCheckpointSource(b, 100000) }

// BenchmarkCheckpointSource1M is BenchmarkCheckpointSource with 1M keys,
// the size at which a checkpoint's cost shows in serving latency.
func BenchmarkCheckpointSource1M(b *testing.B) { benchCheckpointSource(b, 1000000) }

// dirtyAll makes every key dirty again, as SETs between checkpoints do.
func dirtyAll(ks *Keyspace, keys [][]byte) {
	var w resp.Writer
	c := &Client{}
	args := [][]byte{[]byte("SET"), nil, []byte("yyy")}
	for _, k := range keys {
		args[1] = k
		ks.Exec(c, args, &w)
		w.Reset()
	}
}

func benchCheckpointSource(b *testing.B, n int) {
	ks, keys := benchKeyspace(n)
	ks.TrackDirty = true
	setLastLSN(ks, func() uint64 { return 7 })
	ks.TakeDirty() // the keys made untracked: the first call lists them all
	var take, write time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		dirtyAll(ks, keys)
		runtime.GC()
		b.StartTimer()
		t0 := time.Now()
		hks := ks.TakeDirty()
		t1 := time.Now()
		for i, hk := range hks {
			v := ks.Version(hk)
			ks.Placed(hk, heap.RecordID{File: 1, Page: uint32(i / 64), Slot: uint16(i % 64)}, nil, v.Live)
		}
		take += t1.Sub(t0)
		write += time.Since(t1)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
	b.ReportMetric(float64(take.Nanoseconds())/float64(b.N)/1e6, "take-ms")
	b.ReportMetric(float64(write.Nanoseconds())/float64(b.N*len(keys)), "write-ns/key")
}

// BenchmarkTakeDirty1M measures TakeDirty alone on 1M dirty keys: one
// synchronous call on the shard's loop, so its duration (ms/call) is a
// stall of every client of the shard. Churn: 1% of the keys were also
// deleted and created again (the list may name a pair twice). Few: only
// 1% of the keys are dirty.
// Random: the keys are made dirty in a random order, as a real workload
// does, rather than the order they were made (which is their order in
// memory).
func BenchmarkTakeDirty1M(b *testing.B) {
	b.Run("set", func(b *testing.B) { benchTakeDirty(b, 1, false, false) })
	b.Run("random", func(b *testing.B) { benchTakeDirty(b, 1, false, true) })
	b.Run("churn", func(b *testing.B) { benchTakeDirty(b, 1, true, false) })
	b.Run("few", func(b *testing.B) { benchTakeDirty(b, 100, false, false) })
}

func benchTakeDirty(b *testing.B, every int, churn, random bool) {
	const n = 1000000
	ks, keys := benchKeyspace(n)
	ks.TrackDirty = true
	setLastLSN(ks, func() uint64 { return 7 })
	ks.TakeDirty() // the keys made untracked: the first call lists them all
	var dirty, gone [][]byte
	for i, k := range keys {
		if i%every == 0 {
			dirty = append(dirty, k)
		}
		if churn && i%100 == 0 {
			gone = append(gone, k)
		}
	}
	if random {
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(dirty), func(i, j int) { dirty[i], dirty[j] = dirty[j], dirty[i] })
	}
	var w resp.Writer
	c := &Client{}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		for _, k := range gone {
			ks.Exec(c, [][]byte{[]byte("DEL"), k}, &w)
			w.Reset()
		}
		dirtyAll(ks, dirty)
		runtime.GC()
		b.StartTimer()
		if got := len(ks.TakeDirty()); got != len(dirty) {
			b.Fatalf("TakeDirty returned %d keys, want %d", got, len(dirty))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/call")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(dirty)), "ns/key")
}

// BenchmarkVersionPlaced measures Version then Placed of one key, as the
// checkpoint calls them for each key it writes (1M keys, so that the
// lookups miss the cache as they do in a large keyspace). allocs/op is
// allocations per key.
func BenchmarkVersionPlaced(b *testing.B) {
	const n = 1000000
	ks, keys := benchKeyspace(n)
	ks.TrackDirty = true
	setLastLSN(ks, func() uint64 { return 7 })
	hks := ks.TakeDirty()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		j := i % len(hks)
		v := ks.Version(hks[j])
		ks.Placed(hks[j], heap.RecordID{File: 1, Page: uint32(j / 64), Slot: uint16(j % 64)}, nil, v.Live)
	}
	runtime.KeepAlive(keys)
}

// BenchmarkWalkModeSwitch1M measures the SET that puts a database of 1M
// keys in walk mode (see walkDB): its 62500 references to live keys are
// dropped from the dirty list (plain), or, after a key was deleted while
// dirty, looked up first (hidden). ns/op is that one SET, a stall of the
// shard.
func BenchmarkWalkModeSwitch1M(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchWalkModeSwitch(b, false) })
	b.Run("hidden", func(b *testing.B) { benchWalkModeSwitch(b, true) })
}

func benchWalkModeSwitch(b *testing.B, hidden bool) {
	const n = 1000000
	ks, keys := benchKeyspace(n)
	ks.TrackDirty = true
	setLastLSN(ks, func() uint64 { return 7 })
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	var w resp.Writer
	c := &Client{}
	do := func(args ...[]byte) {
		ks.Exec(c, args, &w)
		w.Reset()
	}
	set, del, v := []byte("SET"), []byte("DEL"), []byte("yyy")
	for b.Loop() {
		b.StopTimer()
		ks.TakeDirty()
		i := 0
		if hidden {
			do(set, keys[0], v)
			do(del, keys[0])
			do(set, keys[0], v)
			i++
		}
		for (ks.src.dbs[0].listed+1)*dirtyListRatio <= ks.pdbs[0].keys.count {
			do(set, keys[i], v)
			i++
		}
		runtime.GC()
		b.StartTimer()
		do(set, keys[i], v)
		b.StopTimer()
		if !ks.src.dbs[0].walking {
			b.Fatal("no walk mode")
		}
		b.StartTimer()
	}
}
