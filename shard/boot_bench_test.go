package shard

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/runtime/looptest"
)

// BenchmarkBoot measures Open over a checkpointed shard of N keys of 64
// bytes (SET key:%012d), with no WAL to replay above the redo point: the
// cost of loading the heap into the keyspace. MOOND_BOOT_KEYS sets N
// (default 200000; the restart goal is stated for 1000000).
func BenchmarkBoot(b *testing.B) {
	n := 200_000
	if v, err := strconv.Atoi(os.Getenv("MOOND_BOOT_KEYS")); err == nil && v > 0 {
		n = v
	}
	dir := b.TempDir()
	l := runtime.NewLoop(runtime.Config{Backend: runtime.KindPool, CPU: -1})
	if err := l.Start(); err != nil {
		b.Fatal(err)
	}
	defer l.Stop()
	o := testOptions(dir, "no")
	o.PageCacheSize = 256 << 20
	var s *Shard
	var err error
	looptest.On(b, l, func() { s, err = Open(l, o) })
	if err != nil {
		b.Fatal(err)
	}
	value := []byte(strings.Repeat("v", 64))
	const batch = 10_000
	for i := 0; i < n; i += batch {
		looptest.On(b, l, func() {
			var out resp.Writer
			args := [][]byte{[]byte("SET"), nil, value}
			spec := keyspace.Lookup(args[0])
			for j := i; j < min(i+batch, n); j++ {
				args[1] = fmt.Appendf(args[1][:0], "key:%012d", j)
				out.Reset()
				s.Exec(&keyspace.Client{}, spec, args, &out)
			}
		})
	}
	save(b, l, s)
	closeShard(b, l, s)
	b.ResetTimer()
	for range b.N {
		looptest.On(b, l, func() { s, err = Open(l, o) })
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if got := s.Keyspace().DBInfo(0).Keys; got != int64(n) {
			b.Fatalf("%d keys after the boot, want %d", got, n)
		}
		closeShard(b, l, s)
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
}
