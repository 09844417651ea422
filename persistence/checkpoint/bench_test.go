package checkpoint

import (
	"fmt"
	"testing"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/runtime"
)

// BenchmarkCheckpointFlush measures a whole checkpoint over a keyspace whose
// every key changed: versions written into pages, FPIs and one WAL barrier
// per batch, the page writes, the heap fsyncs, manifest and control file.
// The WAL is the in-memory fake (its barrier completes at once), so this is
// the heap side's throughput: pages/s and MB/s of heap written.
func BenchmarkCheckpointFlush(b *testing.B) {
	for _, kind := range []runtime.Kind{runtime.KindUring, runtime.KindPool} {
		for _, keys := range []int{10000, 100000} {
			b.Run(fmt.Sprintf("%s/keys=%d", kind, keys), func(b *testing.B) {
				if kind == runtime.KindUring {
					if ok, why, _ := runtime.ProbeUring(); !ok {
						b.Skip(why)
					}
				}
				e := newEnv(b, kind, envOpts{})
				pages := int64(0)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					e.fill("k", keys, 100)
					before := e.stats().PagesFlushed
					b.StartTimer()
					if err := e.wait(e.save()); err != nil {
						b.Fatal(err)
					}
					pages += e.stats().PagesFlushed - before
				}
				secs := b.Elapsed().Seconds()
				b.ReportMetric(float64(pages)/secs, "pages/s")
				b.ReportMetric(float64(pages*heap.PageSize)/secs/1e6, "MB/s")
			})
		}
	}
}
