package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestRestartKeepsEveryWrite(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		for _, fsync := range []string{"always", "everysec", "no"} {
			t.Run(backend+"/"+fsync, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				s := startServerIn(t, dir, backend, 2, "--appendfsync", fsync)
				c := s.client(2)
				ctx := ctx(t)
				for i := 0; i < 200; i++ {
					k := "k" + strconv.Itoa(i)
					c.Set(ctx, k, i, 0)
					c.Incr(ctx, "ctr")
				}
				c.Set(ctx, "ttl", "x", time.Hour)
				c3 := redis.NewClient(&redis.Options{Addr: s.addr(), DB: 3, DisableIdentity: true})
				defer c3.Close()
				c3.Set(ctx, "in-db3", "x", 0)
				c.Del(ctx, "k7", "k8")
				c.Append(ctx, "k9", "-more")
				if err := s.stop(); err != nil {
					t.Fatal(err)
				}
				s2 := startServerIn(t, dir, backend, 2)
				c2 := s2.client(2)
				for i := 0; i < 200; i++ {
					want := strconv.Itoa(i)
					switch i {
					case 7, 8:
						want = ""
					case 9:
						want = "9-more"
					}
					if got, _ := c2.Get(ctx, "k"+strconv.Itoa(i)).Result(); got != want {
						t.Fatalf("after restart k%d = %q, want %q", i, got, want)
					}
				}
				if v, _ := c2.Get(ctx, "ctr").Int(); v != 200 {
					t.Fatalf("ctr = %d after restart, want 200", v)
				}
				if ttl, _ := c2.TTL(ctx, "ttl").Result(); ttl <= 0 {
					t.Fatalf("TTL lost across restart: %v", ttl)
				}
				c23 := redis.NewClient(&redis.Options{Addr: s2.addr(), DB: 3, DisableIdentity: true})
				defer c23.Close()
				if v, _ := c23.Get(ctx, "in-db3").Result(); v != "x" {
					t.Fatalf("db 3 lost across restart: %q", v)
				}
			})
		}
	}
}

// writerLog is what one writer knows: which SETs were acknowledged, and how
// many INCRs it sent and had acknowledged.
type writerLog struct {
	acked     map[string]string
	sentIncr  int64
	ackedIncr int64
}

// TestKill9UnderPipelinedLoadLosesNoAcknowledgedWrite runs 8 pipelined
// writers (SET and INCR), kills the server with SIGKILL while they write,
// restarts it, and checks that every acknowledged write is back and no INCR
// was applied twice; several cycles in a row. Under appendfsync always an
// acknowledged write is durable; under everysec it is at least in the
// kernel's page cache, which a killed process does not lose.
func TestKill9UnderPipelinedLoadLosesNoAcknowledgedWrite(t *testing.T) {
	for _, mode := range []string{"uring/always", "pool/always", "uring/everysec", "pool/everysec"} {
		backend, fsync, _ := strings.Cut(mode, "/")
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			const writers = 8
			logs := make([]*writerLog, writers)
			for i := range logs {
				logs[i] = &writerLog{acked: map[string]string{}}
			}
			seq := 0
			for cycle := 0; cycle < 3; cycle++ {
				s := startServerIn(t, dir, backend, 2, "--appendfsync", fsync)
				verifyAcknowledged(t, s, logs, cycle)
				var acks atomic.Int64
				stop := make(chan struct{})
				var wg sync.WaitGroup
				for w := 0; w < writers; w++ {
					wg.Add(1)
					go func(w int) {
						defer wg.Done()
						runWriter(s, w, logs[w], &seq, cycle, &acks, stop)
					}(w)
				}
				// Kill once the writers have had plenty acknowledged.
				deadline := time.Now().Add(30 * time.Second)
				for acks.Load() < 400 && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				if acks.Load() < 400 {
					t.Fatalf("cycle %d: only %d pipelines acknowledged in 30s", cycle, acks.Load())
				}
				s.kill9()
				close(stop)
				wg.Wait()
			}
			s := startServerIn(t, dir, backend, 2, "--appendfsync", fsync)
			verifyAcknowledged(t, s, logs, 3)
		})
	}
}

func runWriter(s *server, w int, log *writerLog, seq *int, cycle int, acks *atomic.Int64, stop chan struct{}) {
	c := redis.NewClient(&redis.Options{Addr: s.addr(), PoolSize: 1, MaxRetries: -1, DisableIdentity: true})
	defer c.Close()
	ctx := ctx(s.t)
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		pipe := c.Pipeline()
		keys := make([]string, 8)
		for j := range keys {
			keys[j] = fmt.Sprintf("w%d:c%d:%d:%d", w, cycle, i, j)
			pipe.Set(ctx, keys[j], keys[j], 0)
			pipe.Incr(ctx, fmt.Sprintf("ctr:%d", w))
		}
		log.sentIncr += 8
		if _, err := pipe.Exec(ctx); err != nil {
			return // the server died under us: these are not acknowledged
		}
		for _, k := range keys {
			log.acked[k] = k
		}
		log.ackedIncr += 8
		acks.Add(1)
	}
}

func verifyAcknowledged(t *testing.T, s *server, logs []*writerLog, cycle int) {
	t.Helper()
	c := s.client(2)
	ctx := ctx(t)
	for w, log := range logs {
		keys := make([]string, 0, len(log.acked))
		for k := range log.acked {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for start := 0; start < len(keys); start += 500 {
			end := min(start+500, len(keys))
			vals, err := c.MGet(ctx, keys[start:end]...).Result()
			if err != nil {
				t.Fatalf("cycle %d: MGET: %v", cycle, err)
			}
			for i, v := range vals {
				if v != keys[start+i] {
					t.Fatalf("cycle %d: acknowledged %s = %v after kill -9\n%s", cycle, keys[start+i], v, s.log.String())
				}
			}
		}
		got, err := c.Get(ctx, fmt.Sprintf("ctr:%d", w)).Int64()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		if got < log.ackedIncr || got > log.sentIncr {
			t.Fatalf("cycle %d: ctr:%d = %d, acknowledged %d, sent %d: an INCR was lost or applied twice", cycle, w, got, log.ackedIncr, log.sentIncr)
		}
		// What survived is now the history: unacknowledged INCRs that made
		// it are as good as acknowledged, the others never happened.
		log.ackedIncr, log.sentIncr = got, got
	}
}

// segments lists a shard's WAL segment files, oldest first.
func segments(t *testing.T, dir string, shard int) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf("shard-%03d", shard), "wal", "wal-*.log"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

// fillSegments writes enough to a 1-shard server with small segments that
// its WAL spans several of them, then kills it.
func fillSegments(t *testing.T, backend string) string {
	t.Helper()
	dir := t.TempDir()
	s := startServerIn(t, dir, backend, 1, "--wal-segment-size", "65536")
	c := s.client(2)
	ctx := ctx(t)
	val := strings.Repeat("v", 1000)
	for i := 0; i < 300; i++ {
		if err := c.Set(ctx, "key"+strconv.Itoa(i), val, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Killed rather than stopped: a clean stop runs the shutdown
	// checkpoint, which recycles the segments these tests damage. Every
	// SET above was acknowledged, so it is in the kernel's page cache.
	s.kill9()
	if n := len(segments(t, dir, 0)); n < 3 {
		t.Fatalf("only %d segments", n)
	}
	return dir
}

func TestMidChainTearRefusesToBootWithExit70(t *testing.T) {
	dir := fillSegments(t, "uring")
	segs := segments(t, dir, 0)
	damaged := segs[1]
	f, err := os.OpenFile(damaged, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("XXXXXXXX"), 5000) // inside a record in a segment that is not the last
	f.Close()

	s := launch(t, dir, "uring", 1)
	if code := s.exitCode(); code != 70 {
		t.Fatalf("exit code %d, want 70\n%s", code, s.log.String())
	}
	out := s.log.String()
	for _, want := range []string{filepath.Base(damaged), "--wal-salvage", "MOOND_WAL_SALVAGE=1"} {
		if !strings.Contains(out, want) {
			t.Errorf("refusal does not name %q:\n%s", want, out)
		}
	}

	s2 := startServerIn(t, dir, "uring", 1, "--wal-salvage")
	if !strings.Contains(s2.log.String(), "WAL salvage skipped damaged history") {
		t.Fatalf("salvage did not report what it skipped:\n%s", s2.log.String())
	}
	c := s2.client(2)
	if v, _ := c.Get(ctx(t), "key0").Result(); len(v) != 1000 {
		t.Fatalf("key0 before the damage is gone after salvage")
	}
}

// TestMissingHistoryRefusesToBootWithExit70: a WAL whose oldest segment
// is gone (the redo point lies before what is left) lost acknowledged
// writes; boot refuses with the damaged log's status, 70, like a tear,
// and says what to do.
func TestMissingHistoryRefusesToBootWithExit70(t *testing.T) {
	dir := fillSegments(t, "uring")
	first := segments(t, dir, 0)[0]
	if err := os.Remove(first); err != nil {
		t.Fatal(err)
	}
	s := launch(t, dir, "uring", 1)
	if code := s.exitCode(); code != 70 {
		t.Fatalf("exit code %d, want 70\n%s", code, s.log.String())
	}
	for _, want := range []string{"below the redo point is missing", "restore the missing segments"} {
		if !strings.Contains(s.log.String(), want) {
			t.Errorf("refusal does not say %q:\n%s", want, s.log.String())
		}
	}
}

func TestTornTailIsRepairedAcrossTwoCrashes(t *testing.T) {
	dir := t.TempDir()
	for crash := 0; crash < 2; crash++ {
		s := startServerIn(t, dir, "pool", 1, "--appendfsync", "always")
		c := s.client(2)
		ctx := ctx(t)
		for i := 0; i < 50; i++ {
			if err := c.Set(ctx, fmt.Sprintf("c%d:%d", crash, i), "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		s.kill9()
		// Tear the last record: cut its last 5 bytes, as a crash in the
		// middle of the write would.
		segs := segments(t, dir, 0)
		last := segs[len(segs)-1]
		st, err := os.Stat(last)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(last, st.Size()-5); err != nil {
			t.Fatal(err)
		}
	}
	s := startServerIn(t, dir, "pool", 1)
	if !strings.Contains(s.log.String(), "torn tail truncated") {
		t.Fatalf("no torn tail reported:\n%s", s.log.String())
	}
	c := s.client(2)
	ctx := ctx(t)
	for crash := 0; crash < 2; crash++ {
		for i := 0; i < 49; i++ { // the torn 50th write of each run is gone
			if v, _ := c.Get(ctx, fmt.Sprintf("c%d:%d", crash, i)).Result(); v != "v" {
				t.Fatalf("c%d:%d lost after two torn tails", crash, i)
			}
		}
	}
}

// TestDataDirectoryIsLockedAndReshardedOnAnotherCount: a second moond on a
// data directory in use exits; a restart with another --shards moves the
// keys to the new shards and records the new count.
func TestDataDirectoryIsLockedAndReshardedOnAnotherCount(t *testing.T) {
	dir := t.TempDir()
	startServerIn(t, dir, "pool", 2)
	second := launch(t, dir, "pool", 2)
	if code := second.exitCode(); code == 0 || !strings.Contains(second.log.String(), "in use by another moond") {
		t.Fatalf("a second moond on the same dir: exit %d\n%s", code, second.log.String())
	}
	// Another shard count is no longer refused: the boot reshards.
	other := t.TempDir()
	s := startServerIn(t, other, "pool", 2)
	if err := s.client(2).Set(ctx(t), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.stop()
	s = startServerIn(t, other, "pool", 3)
	if got, err := s.client(2).Get(ctx(t), "k").Result(); err != nil || got != "v" || !s.logShows("resharding 2 -> 3: moved 1 keys") {
		t.Fatalf("restart with another shard count: GET k = %q, %v\n%s", got, err, s.log.String())
	}
	if b, err := os.ReadFile(filepath.Join(other, "moond.shards")); err != nil || string(b) != "3\n" {
		t.Fatalf("moond.shards after the reshard: %q, %v", b, err)
	}
}
