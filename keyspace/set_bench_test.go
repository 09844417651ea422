package keyspace

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/moond-db/moond/resp"
)

// benchSets holds n sets "key:000000000000".. of the members members(i).
func benchSets(n int, members func(i int) []string) (*Keyspace, [][]byte) {
	ks := NewKeyspace(16, func() int64 { return startClock })
	keys := make([][]byte, n)
	var w resp.Writer
	c := &Client{}
	for i := range keys {
		keys[i] = []byte("key:" + pad12(i))
		args := [][]byte{[]byte("SADD"), keys[i]}
		for _, m := range members(i) {
			args = append(args, []byte(m))
		}
		ks.Exec(c, args, &w)
		w.Reset()
	}
	return ks, keys
}

func setTenInts(int) []string { return setSeq(0, 10) }

func setTenStrings(int) []string {
	out := make([]string, 10)
	for i := range out {
		out[i] = "member:" + strconv.Itoa(i)
	}
	return out
}

func BenchmarkSAdd(b *testing.B) {
	b.Run("intset", func(b *testing.B) {
		ks, keys := benchSets(100000, setTenInts)
		benchSetCommand(b, ks, keys, "SADD", func(i int) string { return strconv.Itoa(i / len(keys) % 20) })
	})
	b.Run("listpack", func(b *testing.B) {
		ks, keys := benchSets(100000, setTenStrings)
		benchSetCommand(b, ks, keys, "SADD", func(i int) string { return "member:" + strconv.Itoa(i/len(keys)%20) })
	})
	b.Run("hashtable", func(b *testing.B) {
		// redis-benchmark's SADD: random members into one set.
		ks, keys := benchSets(1, func(int) []string { return []string{"x"} })
		members := make([]string, 1<<16)
		for i := range members {
			members[i] = "element:" + pad12(i*7919%100000)
		}
		benchSetCommand(b, ks, keys, "SADD", func(i int) string { return members[i&(len(members)-1)] })
	})
}

func BenchmarkSIsMember(b *testing.B) {
	b.Run("intset", func(b *testing.B) {
		ks, keys := benchSets(100000, setTenInts)
		benchSetCommand(b, ks, keys, "SISMEMBER", func(i int) string { return strconv.Itoa(i % 20) })
	})
	b.Run("listpack", func(b *testing.B) {
		ks, keys := benchSets(100000, setTenStrings)
		benchSetCommand(b, ks, keys, "SISMEMBER", func(i int) string { return "member:" + strconv.Itoa(i%20) })
	})
	b.Run("hashtable", func(b *testing.B) {
		ks, keys := benchSets(1, func(int) []string { return setSeq(0, 100000) })
		benchSetCommand(b, ks, keys, "SISMEMBER", func(i int) string { return strconv.Itoa(i % 200000) })
	})
}

// benchSetCommand runs cmd key member over keys, the members made before
// the timing.
func benchSetCommand(b *testing.B, ks *Keyspace, keys [][]byte, cmd string, member func(i int) string) {
	members := make([][]byte, 4096)
	for i := range members {
		members[i] = []byte(member(i))
	}
	var w resp.Writer
	c := &Client{}
	args := [][]byte{[]byte(cmd), nil, nil}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		args[1] = keys[i%len(keys)]
		args[2] = members[i%len(members)]
		ks.Exec(c, args, &w)
		w.Reset()
	}
}

// BenchmarkSInter: SINTER of two 100k-member sets that share half their
// members, reply included.
func BenchmarkSInter(b *testing.B) {
	ks, keys := benchSets(2, func(k int) []string {
		out := make([]string, 100000)
		for i := range out {
			out[i] = "m:" + strconv.Itoa(i+k*50000)
		}
		return out
	})
	var w resp.Writer
	c := &Client{}
	args := [][]byte{[]byte("SINTER"), keys[0], keys[1]}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ks.Exec(c, args, &w)
		w.Reset()
	}
}

// BenchmarkSetMemory reports the keyspace's memory estimate (what
// used_memory counts) and the Go heap's growth, per key, for 1M sets of 10
// small integers, and per member for one set of 1M members (each load
// runs once, whatever b.N).
func BenchmarkSetMemory(b *testing.B) {
	measure := func(b *testing.B, n, per int, members func(int) []string) {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		ks, keys := benchSets(n, members)
		runtime.GC()
		runtime.ReadMemStats(&m1)
		held := int64(len(keys)) * int64(24+allocSize(16)) // the benchmark's own key slices
		for b.Loop() {
		}
		b.ReportMetric(float64(ks.UsedMemory())/float64(per), "estimate-B/elem")
		b.ReportMetric(float64(int64(m1.HeapAlloc-m0.HeapAlloc)-held)/float64(per), "heap-B/elem")
		runtime.KeepAlive(ks)
	}
	b.Run("1M-sets-of-10-ints", func(b *testing.B) { measure(b, 1000000, 1000000, setTenInts) })
	b.Run("one-set-of-1M", func(b *testing.B) {
		measure(b, 1, 1000000, func(int) []string { return setSeq(0, 1000000) })
	})
}
