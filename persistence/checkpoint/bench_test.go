package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/runtime"
)

// BenchmarkCheckpointFlush measures a whole checkpoint over a keyspace whose
// every key changed: versions written into pages, FPIs and one WAL barrier
// per batch, the page writes, the heap fsyncs, manifest and control file:
// pages/s and MB/s of heap written.
//
// wal=fake is the in-memory fake WAL (its barrier completes at once, page
// writes one by one): the heap side alone. wal=real is the shard's
// wal.Writer under appendfsync everysec: each batch's FPIs, its WAL write
// and fdatasync, and its page writes go out as one linked chain.
func BenchmarkCheckpointFlush(b *testing.B) {
	for _, kind := range []runtime.Kind{runtime.KindUring, runtime.KindPool} {
		for _, walKind := range []string{"fake", "real"} {
			for _, keys := range []int{10000, 100000} {
				b.Run(fmt.Sprintf("%s/wal=%s/keys=%d", kind, walKind, keys), func(b *testing.B) {
					benchFlush(b, kind, walKind != "fake", keys)
				})
			}
		}
	}
}

func benchFlush(b *testing.B, kind runtime.Kind, realWAL bool, keys int) {
	if kind == runtime.KindUring {
		if ok, why, _ := runtime.ProbeUring(); !ok {
			b.Skip(why)
		}
	}
	e := newEnv(b, kind, envOpts{})
	if realWAL {
		e.useRealWAL(wal.FsyncEverysec)
	}
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
}

// useRealWAL replaces the fake WAL with a wal.Writer in a directory of the
// environment, under policy, as the shard wires it.
func (e *env) useRealWAL(policy wal.FsyncPolicy) {
	walDir := filepath.Join(e.dir, "wal")
	if err := os.MkdirAll(walDir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	e.on(func() {
		app := wal.NewAppender(wal.AppenderOptions{NextLSN: 1})
		w := wal.NewWriter(e.loop, e.loop.Backend(), app, walDir, policy)
		lb := &LogBarrier{App: app, Writer: w, Loop: e.loop, Force: w.Sync}
		w.OnProgress = lb.Progress
		e.loop.BeforeWait(w.Kick)
		e.src.w = lb
		e.m.o.WAL = lb
	})
}
