package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/server/config"
	"github.com/redis/go-redis/v9"
)

// TestPowerLossKeepsTxnsAcrossShardsWhole: writers put generation g on a
// key of each of two shards in one transaction (MSET, or MULTI SET SET
// EXEC) while checkpoints run every 50 ms; the power fails (vfs.PowerLoss:
// what no completed fdatasync covered may be kept, lost, zeroed or torn)
// and moond boots from what the disk holds. Every pair must hold one
// generation; under appendfsync always, at least the last one
// acknowledged before the power failed. Under everysec the loss of
// acknowledged writes of the last second is allowed, half a transaction
// is not (shard/txnsync.go: without its sync of every shard's WAL before a
// checkpoint writes, 30 runs of this test find halves).
func TestPowerLossKeepsTxnsAcrossShardsWhole(t *testing.T) {
	runs := 12 // MOOND_POWERLOSS_RUNS for more
	if n, err := strconv.Atoi(os.Getenv("MOOND_POWERLOSS_RUNS")); err == nil && n > 0 {
		runs = n
	}
	for _, fsync := range []string{"always", "everysec"} {
		t.Run(fsync, func(t *testing.T) {
			for run := range runs {
				powerLossRun(t, fsync, []string{"uring", "pool"}[run%2], uint64(run))
			}
		})
	}
}

// plWriter is one writer's pair and progress.
type plWriter struct {
	k0, k1     string
	multi      bool
	sent, ackd atomic.Int64
}

func powerLossRun(t *testing.T, fsync, backend string, seed uint64) {
	cfg := config.Default()
	cfg.Port, cfg.Shards, cfg.IOBackend, cfg.Dir = 0, 2, backend, t.TempDir()
	cfg.AppendFsync, cfg.CheckpointTimeout = fsync, 50*time.Millisecond
	s := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	pl := vfs.NewPowerLoss()
	s.wrapBackend = func(_ *runtime.Loop, be runtime.Backend) runtime.Backend { return pl.Backend(be) }
	startLoaded(t, s)

	ws := make([]*plWriter, 6)
	for i := range ws {
		w := &plWriter{multi: i%2 == 1}
		for j := 0; w.k0 == "" || w.k1 == ""; j++ {
			k := fmt.Sprintf("pl%d-%d-%d", seed, i, j)
			if shardOfSlot(KeySlot([]byte(k)), 2) == 0 {
				w.k0 = k
			} else {
				w.k1 = k
			}
		}
		ws[i] = w
	}
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true, PoolSize: len(ws), MaxRetries: -1,
		ReadTimeout: 2 * time.Second})
	defer c.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			ctx := context.Background()
			for g := int64(1); ; g++ {
				select {
				case <-stop:
					return
				default:
				}
				w.sent.Store(g)
				var err error
				if w.multi {
					_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
						p.Set(ctx, w.k0, g, 0)
						p.Set(ctx, w.k1, g, 0)
						return nil
					})
				} else {
					err = c.MSet(ctx, w.k0, g, w.k1, g).Err()
				}
				if err != nil {
					return
				}
				w.ackd.Store(g)
			}
		})
	}
	deadline := time.Now().Add(20 * time.Second)
	rng := rand.New(rand.NewPCG(seed, 11))
	want := int64(20 + rng.IntN(60))
	for !plAllAcked(ws, want) {
		if time.Now().After(deadline) {
			t.Fatalf("writers did not get %d acknowledgements each", want)
		}
		time.Sleep(time.Millisecond)
	}
	// The power fails: every loop stops where it is, and the disk is what
	// the model says it could be.
	acked := make([]int64, len(ws))
	release := freezeLoops(t, s)
	for i, w := range ws {
		acked[i] = w.ackd.Load()
	}
	image := filepath.Join(t.TempDir(), "image")
	rep, err := pl.Crash(rng, cfg.Dir, image)
	close(release)
	close(stop)
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	s.Stop()

	cfg2 := cfg
	cfg2.Dir = image
	s2 := New(cfg2, slog.New(slog.NewTextHandler(io.Discard, nil)))
	startLoaded(t, s2)
	c2 := redis.NewClient(&redis.Options{Addr: s2.Addr(), DisableIdentity: true})
	defer c2.Close()
	for i, w := range ws {
		vals, err := c2.MGet(context.Background(), w.k0, w.k1).Result()
		if err != nil {
			t.Fatal(err)
		}
		g0, g1 := plGen(t, vals[0]), plGen(t, vals[1])
		if g0 != g1 {
			t.Errorf("%s %s seed %d (crash %+v): writer %d (multi %v): half a transaction: %s=%d %s=%d (acknowledged %d, sent %d)",
				fsync, backend, seed, rep, i, w.multi, w.k0, g0, w.k1, g1, acked[i], w.sent.Load())
		}
		if fsync == "always" && g0 < acked[i] {
			t.Errorf("%s %s seed %d: writer %d: generation %d after the power loss, %d acknowledged", fsync, backend, seed, i, g0, acked[i])
		}
		if g0 > w.sent.Load() {
			t.Errorf("%s %s seed %d: writer %d: generation %d never sent", fsync, backend, seed, i, g0)
		}
	}
}

// freezeLoops stops every shard's loop where it is (each runs a function
// that waits) and returns what lets them go on.
func freezeLoops(t *testing.T, s *Server) chan struct{} {
	release := make(chan struct{})
	var in sync.WaitGroup
	for _, w := range s.workers {
		in.Add(1)
		if err := w.loop.Post(func() { in.Done(); <-release }); err != nil {
			t.Fatal(err)
		}
	}
	in.Wait()
	return release
}

func plAllAcked(ws []*plWriter, n int64) bool {
	for _, w := range ws {
		if w.ackd.Load() < n {
			return false
		}
	}
	return true
}

func plGen(t *testing.T, v any) int64 {
	if v == nil {
		return 0
	}
	g, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
	if err != nil {
		t.Fatalf("value %v: %v", v, err)
	}
	return g
}
