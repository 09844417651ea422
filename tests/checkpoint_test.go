package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/checkpoint"
	"github.com/redis/go-redis/v9"
)

// infoField returns one field of INFO persistence.
func infoField(t testing.TB, c *redis.Client, name string) string {
	t.Helper()
	v, ok, info := infoLookup(t, c, name)
	if !ok {
		t.Fatalf("INFO has no %s:\n%s", name, info)
	}
	return v
}

// infoLookup is INFO's field name, ok false when INFO has none (yet), and
// the whole INFO text.
func infoLookup(t testing.TB, c *redis.Client, name string) (string, bool, string) {
	t.Helper()
	info, err := c.Info(ctx(t), "everything").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v, true, info
		}
	}
	return "", false, info
}

func infoInt(t testing.TB, c *redis.Client, name string) int64 {
	t.Helper()
	v := infoField(t, c, name)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("INFO %s = %q: %v", name, v, err)
	}
	return n
}

// waitInfo waits (at most 10 s) until the INFO persistence field's value
// satisfies ok; the unlinks of recycled segments, for one, complete after
// SAVE has replied.
func waitInfo(t testing.TB, c *redis.Client, name string, ok func(int64) bool) bool {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(infoInt(t, c, name)) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// replayedRecords is how many WAL records the boot replayed, from the log
// line that says so (0 when it did not log one).
func replayedRecords(t *testing.T, s *server) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(s.log.String(), "\n") {
		if !strings.Contains(line, "WAL replayed") {
			continue
		}
		_, rest, _ := strings.Cut(line, " records=")
		v, _, _ := strings.Cut(rest, " ")
		k, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("cannot read the record count of %q", line)
		}
		n += k
	}
	return n
}

// TestSaveMakesRestartReplayOnlyTheWALTail: after SAVE, a restart loads the
// keys from the heap and replays only what was written since, even after
// kill -9, and the WAL below the redo point was recycled.
func TestSaveMakesRestartReplayOnlyTheWALTail(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := startServerIn(t, dir, backend, 2, "--wal-segment-size", "65536", "--appendfsync", "always")
			c := s.client(2)
			ctx := ctx(t)
			val := strings.Repeat("x", 100)
			pipe := c.Pipeline()
			for i := 0; i < 5000; i++ {
				pipe.Set(ctx, "k"+strconv.Itoa(i), val+strconv.Itoa(i), 0)
			}
			pipe.Set(ctx, "ttl", "t", time.Hour)
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			before := infoInt(t, c, "rdb_last_save_time")
			changes := infoInt(t, c, "rdb_changes_since_last_save")
			if changes < 5000 {
				t.Fatalf("rdb_changes_since_last_save = %d before SAVE", changes)
			}
			if err := c.Save(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if got := infoInt(t, c, "checkpoints_completed"); got < 2 {
				t.Fatalf("checkpoints_completed = %d after SAVE on 2 shards", got)
			}
			if got := infoInt(t, c, "rdb_changes_since_last_save"); got != 0 {
				t.Fatalf("rdb_changes_since_last_save = %d after SAVE", got)
			}
			if got := infoInt(t, c, "rdb_last_save_time"); got < before {
				t.Fatalf("rdb_last_save_time went back: %d < %d", got, before)
			}
			if !waitInfo(t, c, "wal_segments_recycled", func(n int64) bool { return n > 0 }) {
				t.Fatalf("SAVE recycled no WAL segment")
			}
			if got := infoInt(t, c, "heap_files"); got == 0 {
				t.Fatalf("heap_files = 0 after SAVE")
			}
			c.Del(ctx, "k1")
			c.Set(ctx, "k2", "after-save", 0)
			c.Rename(ctx, "k3", "renamed")
			c.Set(ctx, "new", "n", 0)
			s.kill9()

			s2 := startServerIn(t, dir, backend, 2)
			if n := replayedRecords(t, s2); n > 100 {
				t.Fatalf("restart replayed %d WAL records; after SAVE only the tail should be\n%s", n, s2.log.String())
			}
			c2 := s2.client(2)
			for i := 0; i < 5000; i++ {
				want := val + strconv.Itoa(i)
				switch i {
				case 1, 3:
					want = ""
				case 2:
					want = "after-save"
				}
				if got, _ := c2.Get(ctx, "k"+strconv.Itoa(i)).Result(); got != want {
					t.Fatalf("k%d = %q after restart, want %q", i, got, want)
				}
			}
			if got, _ := c2.Get(ctx, "renamed").Result(); got != val+"3" {
				t.Fatalf("renamed = %q", got)
			}
			if got, _ := c2.Get(ctx, "new").Result(); got != "n" {
				t.Fatalf("new = %q", got)
			}
			if ttl, _ := c2.TTL(ctx, "ttl").Result(); ttl <= 0 || ttl > time.Hour {
				t.Fatalf("TTL after a restart from the heap: %v", ttl)
			}
			if n, _ := c2.DBSize(ctx).Result(); n != 5001 { // 5000 + ttl - k1 + new (k3 became renamed)
				t.Fatalf("DBSIZE = %d after restart, want 5001", n)
			}
		})
	}
}

// TestCleanShutdownCheckpoints: a clean stop runs the shutdown checkpoint,
// so the next start replays (almost) nothing.
func TestCleanShutdownCheckpoints(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, "uring", 1)
	c := s.client(2)
	ctx := ctx(t)
	for i := 0; i < 300; i++ {
		c.Set(ctx, "k"+strconv.Itoa(i), i, 0)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if !s.logShows("shutdown checkpoint done") {
		t.Fatalf("no shutdown checkpoint:\n%s", s.log.String())
	}
	s2 := startServerIn(t, dir, "uring", 1)
	if n := replayedRecords(t, s2); n != 0 {
		t.Fatalf("restart after a clean stop replayed %d records\n%s", n, s2.log.String())
	}
	if v, _ := s2.client(2).Get(ctx, "k299").Int(); v != 299 {
		t.Fatalf("k299 = %d after restart", v)
	}
}

// TestBgsaveAndLastsave: BGSAVE answers at once and LASTSAVE moves once
// the checkpoint finalized on every shard.
func TestBgsaveAndLastsave(t *testing.T) {
	s := startServer(t, "pool", 2)
	c := s.client(2)
	ctx := ctx(t)
	c.Set(ctx, "a", "1", 0)
	start, err := c.LastSave(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.BgSave(ctx).Result(); err != nil || got != "Background saving started" {
		t.Fatalf("BGSAVE = %q, %v", got, err)
	}
	if got, err := c.Do(ctx, "BGSAVE", "SCHEDULE").Text(); err != nil || got != "Background saving started" {
		t.Fatalf("BGSAVE SCHEDULE = %q, %v", got, err)
	}
	if err := c.Do(ctx, "BGSAVE", "NOW").Err(); err == nil || !strings.Contains(err.Error(), "syntax error") {
		t.Fatalf("BGSAVE NOW: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for infoInt(t, c, "checkpoints_completed") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("BGSAVE never completed on both shards")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got, _ := c.LastSave(ctx).Result(); got < start {
		t.Fatalf("LASTSAVE went back: %d < %d", got, start)
	}
	if got, err := c.BgRewriteAOF(ctx).Result(); err != nil || got != "Background append only file rewriting started" {
		t.Fatalf("BGREWRITEAOF = %q, %v", got, err)
	}
	for _, f := range []string{"checkpoint_in_progress", "last_checkpoint_redo_lsn", "checkpoint_last_duration_ms",
		"checkpoint_pages_flushed", "checkpoint_pages_failed", "data_fsync_pending", "heap_bytes",
		"heap_vanished_retired", "heap_vanished_unexpected", "wal_bytes_since_checkpoint", "poisoned", "rdb_last_bgsave_status"} {
		infoField(t, c, f)
	}
}

// TestKillAtEachCheckpointStepLosesNoAcknowledgedWrite crashes the server
// (SIGKILL from the test-only hook) at every named step of a checkpoint,
// while pipelined writers run under appendfsync always, after an earlier
// checkpoint already recycled WAL segments; every acknowledged write must
// be back after the restart, the keys whose WAL was recycled included.
func TestKillAtEachCheckpointStepLosesNoAcknowledgedWrite(t *testing.T) {
	for _, step := range checkpoint.Steps {
		for _, backend := range []string{"uring", "pool"} {
			t.Run(string(step)+"/"+backend, func(t *testing.T) {
				t.Parallel()
				killAtStep(t, backend, step)
			})
		}
	}
}

func killAtStep(t *testing.T, backend string, step checkpoint.Step) {
	dir := t.TempDir()
	const writers = 4
	logs := make([]*writerLog, writers)
	for i := range logs {
		logs[i] = &writerLog{acked: map[string]string{}}
	}
	common := []string{"--appendfsync", "always", "--wal-segment-size", "65536", "--checkpoint-timeout", "3600"}
	s := startServerIn(t, dir, backend, 2, append(common, "--test-crash-at", string(step)+"@2")...)
	var acks atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	seq := 0
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			runWriter(s, w, logs[w], &seq, 0, &acks, stop)
		}(w)
	}
	waitAcks := func(n int64) {
		deadline := time.Now().Add(30 * time.Second)
		for acks.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("only %d pipelines acknowledged in 30s\n%s", acks.Load(), s.log.String())
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitAcks(1000) // several 64 KiB segments on each shard
	c := redis.NewClient(&redis.Options{Addr: s.addr(), DisableIdentity: true})
	defer c.Close()
	// The first checkpoint completes and recycles the WAL below it.
	if err := c.Save(ctx(t)).Err(); err != nil {
		t.Fatalf("SAVE: %v", err)
	}
	if !waitInfo(t, c, "wal_segments_recycled", func(n int64) bool { return n > 0 }) {
		t.Fatalf("the first checkpoint recycled no WAL segment")
	}
	waitAcks(acks.Load() + 200)
	// The second one dies at the step, under load.
	c.BgSave(ctx(t))
	code := s.exitCode()
	close(stop)
	wg.Wait()
	if code != -1 || !strings.Contains(s.log.String(), "test hook: killing the process") {
		t.Fatalf("the server did not kill itself at %s (exit %d)\n%s", step, code, s.log.String())
	}
	s2 := startServerIn(t, dir, backend, 2, common...)
	verifyAcknowledged(t, s2, logs, 1)
	// And the history after the crash is a sound base for the next one.
	c2 := s2.client(2)
	if err := c2.Save(ctx(t)).Err(); err != nil {
		t.Fatalf("SAVE after the crash: %v", err)
	}
	s2.kill9()
	s3 := startServerIn(t, dir, backend, 2, common...)
	verifyAcknowledged(t, s3, logs, 2)
}

// TestSustainedWritesKeepTheWALBounded writes without pause and checks that
// the WAL on disk stays under --max-wal-size plus one segment (plus what
// one checkpoint lets through while it runs): the WAL-size trigger starts
// checkpoints and their redo points let segments be recycled.
// MOOND_LONG_TESTS=1 (make test-long, part of make test) runs it for three
// minutes instead of five seconds.
func TestSustainedWritesKeepTheWALBounded(t *testing.T) {
	dur := 5 * time.Second
	if os.Getenv("MOOND_LONG_TESTS") == "1" {
		dur = 3 * time.Minute
	}
	const maxWAL, seg = 4 << 20, 256 << 10
	dir := t.TempDir()
	s := startServerIn(t, dir, "uring", 1, "--max-wal-size", strconv.Itoa(maxWAL),
		"--wal-segment-size", strconv.Itoa(seg), "--checkpoint-timeout", "3600")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: s.addr(), PoolSize: 1, DisableIdentity: true})
			defer c.Close()
			val := strings.Repeat("v", 200)
			// One context for the whole run: ctx(t) registers a cleanup
			// per call, which minutes of pipelines would pile up.
			cx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				pipe := c.Pipeline()
				for j := 0; j < 16; j++ {
					// A hot set of 500 keys per writer: the heap pages a
					// checkpoint writes (and logs as full-page images,
					// about 0.5 MB in all) stay well below --max-wal-size.
					pipe.Set(cx, fmt.Sprintf("w%d:%d", w, (i*16+j)%500), val, 0)
				}
				if _, err := pipe.Exec(cx); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	walDir := filepath.Join(dir, "shard-000", "wal")
	worst := int64(0)
	end := time.Now().Add(dur)
	for time.Now().Before(end) {
		size := dirSize(t, walDir)
		worst = max(worst, size)
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	c := s.client(2)
	completed := infoInt(t, c, "checkpoints_completed")
	t.Logf("WAL at most %d bytes (max-wal-size %d, segment %d), %d checkpoints", worst, maxWAL, seg, completed)
	if completed == 0 {
		t.Fatalf("the WAL-size trigger started no checkpoint")
	}
	if worst > maxWAL+seg {
		t.Fatalf("WAL reached %d bytes: over --max-wal-size %d plus a segment", worst, maxWAL)
	}
}

func dirSize(t *testing.T, dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// TestSwapDBSurvivesCheckpointsAndCrashes: SWAPDB before a checkpoint,
// after it, and a crash in the middle of the checkpoint that follows it;
// every restart finds each key in the database SWAPDB put it in.
func TestSwapDBSurvivesCheckpointsAndCrashes(t *testing.T) {
	dir := t.TempDir()
	common := []string{"--appendfsync", "always", "--checkpoint-timeout", "3600"}
	s := startServerIn(t, dir, "uring", 1, append(common, "--test-crash-at", string(checkpoint.StepMidPwrite)+"@3")...)
	ctx := ctx(t)
	db := func(s *server, n int) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: s.addr(), DB: n, DisableIdentity: true})
		t.Cleanup(func() { c.Close() })
		return c
	}
	val := strings.Repeat("v", 300)
	pipe := db(s, 0).Pipeline()
	for i := 0; i < 2000; i++ {
		pipe.Set(ctx, "a"+strconv.Itoa(i), val, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	db(s, 1).Set(ctx, "in1", "one", 0)
	c0 := db(s, 0)
	if err := c0.Save(ctx).Err(); err != nil { // checkpoint 1: a* in physical db 0
		t.Fatal(err)
	}
	c0.Do(ctx, "SWAPDB", 0, 1)
	if err := c0.Save(ctx).Err(); err != nil { // checkpoint 2: logs the map at its redo point
		t.Fatal(err)
	}
	c0.Do(ctx, "SWAPDB", 0, 2) // db0 (was db1: in1) <-> db2 (empty)
	db(s, 0).Set(ctx, "new0", "x", 0)
	pipe = db(s, 1).Pipeline()
	for i := 0; i < 2000; i++ {
		pipe.Set(ctx, "a"+strconv.Itoa(i), val+"2", 0) // every page dirty again
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	c0.BgSave(ctx) // checkpoint 3 dies mid-pwrite
	if code := s.exitCode(); code != -1 {
		t.Fatalf("exit %d, want the test hook's SIGKILL\n%s", code, s.log.String())
	}
	for round := 0; round < 2; round++ {
		s2 := startServerIn(t, dir, "uring", 1, common...)
		if got, _ := db(s2, 1).Get(ctx, "a1999").Result(); got != val+"2" {
			t.Fatalf("round %d: db1 a1999 = %.10q", round, got)
		}
		if n, _ := db(s2, 1).DBSize(ctx).Result(); n != 2000 {
			t.Fatalf("round %d: db1 holds %d keys, want 2000", round, n)
		}
		if got, _ := db(s2, 2).Get(ctx, "in1").Result(); got != "one" {
			t.Fatalf("round %d: db2 in1 = %q", round, got)
		}
		if got, _ := db(s2, 0).Get(ctx, "new0").Result(); got != "x" {
			t.Fatalf("round %d: db0 new0 = %q", round, got)
		}
		if n, _ := db(s2, 0).DBSize(ctx).Result(); n != 1 {
			t.Fatalf("round %d: db0 holds %d keys, want 1", round, n)
		}
		if round == 0 {
			if err := db(s2, 0).Save(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		s2.kill9()
	}
}

// TestEmptyHeapFileIsTombstonedThenUnlinked: a heap file whose keys were
// all deleted is tombstoned after the checkpoint that wrote the deletions,
// and unlinked only after the next one committed the tombstone; a restart
// with the tombstone not yet committed finds a consistent heap.
func TestEmptyHeapFileIsTombstonedThenUnlinked(t *testing.T) {
	dir := t.TempDir()
	heapFiles := func() int {
		m, _ := filepath.Glob(filepath.Join(dir, "shard-000", "heap", "heap-*.dat"))
		return len(m)
	}
	s := startServerIn(t, dir, "pool", 1)
	c := s.client(2)
	ctx := ctx(t)
	for i := 0; i < 100; i++ {
		c.Set(ctx, "k"+strconv.Itoa(i), i, 0)
	}
	c.Save(ctx)
	if n := heapFiles(); n != 1 {
		t.Fatalf("%d heap files after the first SAVE", n)
	}
	for i := 0; i < 100; i++ {
		c.Del(ctx, "k"+strconv.Itoa(i))
	}
	c.Save(ctx) // writes the deletions, then tombstones the empty file (in memory)
	if n := heapFiles(); n != 1 {
		t.Fatalf("%d heap files: the tombstoned file went before its tombstone was committed", n)
	}
	s.kill9()
	s = startServerIn(t, dir, "pool", 1)
	c = s.client(2)
	if n, _ := c.DBSize(ctx).Result(); n != 0 {
		t.Fatalf("DBSIZE %d after a restart with an empty heap file", n)
	}
	c.Save(ctx) // the empty file is tombstoned again
	if n := heapFiles(); n != 1 {
		t.Fatalf("%d heap files before the tombstone was committed", n)
	}
	c.Save(ctx) // commits the tombstone; the file goes
	deadline := time.Now().Add(10 * time.Second)
	for heapFiles() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d heap files: the empty one was never unlinked\n%s", heapFiles(), s.log.String())
		}
		time.Sleep(time.Millisecond)
	}
	c.Set(ctx, "after", "a", 0)
	c.Save(ctx)
	s.kill9()
	s = startServerIn(t, dir, "pool", 1)
	c = s.client(2)
	if got, _ := c.Get(ctx, "after").Result(); got != "a" {
		t.Fatalf("after = %q", got)
	}
	if n, _ := c.DBSize(ctx).Result(); n != 1 {
		t.Fatalf("DBSIZE %d at the end", n)
	}
}
