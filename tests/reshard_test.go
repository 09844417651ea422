package tests

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Resharding: a restart with another --shards moves every key to the
// shard its slot maps to under the new count (docs/DESIGN.md §7).

// reshardDBs are the databases the reshard tests write to.
const reshardDBs = 4

// keyState is what a key holds as a client sees it: its value and its
// absolute expiry (PEXPIRETIME, -1 for none).
type keyState struct {
	value  string
	expiry int64
}

// fillForReshard writes keys into several databases: small values, some
// with a TTL, integers, values large enough to span heap pages, a
// SWAPDB, part of it checkpointed and part of it only in the WAL.
func fillForReshard(t *testing.T, s *server) {
	t.Helper()
	c := s.client(2)
	cx := ctx(t)
	big := strings.Repeat("0123456789abcdef", 1<<10) // 16 KiB: overflow pages
	for db := 0; db < reshardDBs; db++ {
		p := c.Pipeline()
		p.Select(cx, db)
		for i := 0; i < 150; i++ {
			k := fmt.Sprintf("db%d:key:%d", db, i)
			switch i % 5 {
			case 0:
				p.Set(cx, k, fmt.Sprintf("v%d", i), 0)
			case 1:
				p.Set(cx, k, fmt.Sprintf("ttl%d", i), time.Duration(1+i)*time.Hour)
			case 2:
				p.IncrBy(cx, k, int64(i)*1000)
			case 3:
				p.Set(cx, k, fmt.Sprintf("%s-%d", big[:1000+i*97], i), 0)
			default:
				p.Set(cx, fmt.Sprintf("{tag%d}%s", i%7, k), "", 0)
			}
		}
		if _, err := p.Exec(cx); err != nil {
			t.Fatalf("writes to db %d: %v", db, err)
		}
	}
	mustDo(t, c, "SET", "huge", strings.Repeat(big, 20)) // 320 KiB
	mustDo(t, c, "SWAPDB", "1", "2")
	mustDo(t, c, "SAVE")
	// Above the redo point: only the WAL holds these.
	mustDo(t, c, "SWAPDB", "0", "3")
	mustDo(t, c, "SET", "after-save", big, "PX", "86400000")
	mustDo(t, c, "APPEND", "huge", "tail")
	mustDo(t, c, "DEL", "db3:key:0") // in database 0 since the SWAPDB
}

func mustDo(t *testing.T, c *redis.Client, args ...any) {
	t.Helper()
	if err := c.Do(ctx(t), args...).Err(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
}

// snapshot reads every key of the reshard tests' databases.
func snapshot(t *testing.T, s *server) map[string]keyState {
	t.Helper()
	out := map[string]keyState{}
	for db := 0; db < reshardDBs; db++ {
		c := redis.NewClient(&redis.Options{Addr: s.addr(), DB: db, DisableIdentity: true})
		keys, err := c.Keys(ctx(t), "*").Result()
		if err != nil {
			t.Fatalf("KEYS in db %d: %v", db, err)
		}
		for _, k := range keys {
			v, err := c.Get(ctx(t), k).Result()
			if err != nil {
				t.Fatalf("GET %s in db %d: %v", k, db, err)
			}
			exp, err := c.Do(ctx(t), "PEXPIRETIME", k).Int64()
			if err != nil {
				t.Fatalf("PEXPIRETIME %s in db %d: %v", k, db, err)
			}
			out[fmt.Sprintf("%d/%s", db, k)] = keyState{v, exp}
		}
		c.Close()
	}
	return out
}

// sameData fails the test unless got holds exactly the keys of want.
func sameData(t *testing.T, what string, want, got map[string]keyState, log string) {
	t.Helper()
	if maps.Equal(want, got) {
		return
	}
	var diff []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			diff = append(diff, "missing "+k)
		} else if g != v {
			diff = append(diff, fmt.Sprintf("%s: expiry %d want %d, value of %d bytes want %d", k, g.expiry, v.expiry, len(g.value), len(v.value)))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diff = append(diff, "extra "+k)
		}
	}
	slices.Sort(diff)
	t.Fatalf("%s: %d keys, want %d; %d differences, first: %v\n%s", what, len(got), len(want), len(diff), diff[:min(len(diff), 10)], log)
}

// noReshardLeftovers fails the test if the data directory still holds a
// reshard's files, or moond.shards does not say n.
func noReshardLeftovers(t *testing.T, dir string, n int) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	shards := 0
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e.Name(), "reshard"):
			t.Fatalf("%s left in the data directory", e.Name())
		case strings.HasPrefix(e.Name(), "shard-"):
			shards++
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "moond.shards"))
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(n) || shards != n {
		t.Fatalf("moond.shards %q (%v) and %d shard directories, want %d", b, err, shards, n)
	}
}

// TestReshardKeepsEveryKey restarts 2 -> 3 -> 1 shards, on both backends:
// every key comes back in its database, with its value and its expiry,
// each time; the log says how many keys moved.
func TestReshardKeepsEveryKey(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := startServerIn(t, dir, backend, 2)
			fillForReshard(t, s)
			want := snapshot(t, s)
			if len(want) < 4*150 {
				t.Fatalf("only %d keys written", len(want))
			}
			s.kill9() // the 2 -> 3 move recovers the WAL tail too
			for _, step := range []struct{ from, to int }{{2, 3}, {3, 1}} {
				s = startServerIn(t, dir, backend, step.to)
				moved := fmt.Sprintf("resharding %d -> %d: moved %d keys", step.from, step.to, len(want))
				if !s.logShows(moved) {
					t.Fatalf("no log line %q\n%s", moved, s.log.String())
				}
				sameData(t, fmt.Sprintf("after %d -> %d", step.from, step.to), want, snapshot(t, s), s.log.String())
				noReshardLeftovers(t, dir, step.to)
				if err := s.stop(); err != nil {
					t.Fatal(err)
				}
			}
			// And the new shards are an ordinary directory: a plain restart.
			s = startServerIn(t, dir, backend, 1)
			if strings.Contains(s.log.String(), "resharding") {
				t.Fatalf("a restart with the same count resharded\n%s", s.log.String())
			}
			sameData(t, "after a plain restart", want, snapshot(t, s), s.log.String())
		})
	}
}

// TestReshardCrashLeavesOldOrNewData kills moond at each step of a 2 -> 3
// reshard's switch and restarts it with 2 and with 3 shards: each boot
// serves exactly the data written, and leaves no reshard files behind.
func TestReshardCrashLeavesOldOrNewData(t *testing.T) {
	for _, step := range []string{"reshard-copied", "reshard-intent", "reshard-renamed"} {
		for _, next := range []int{2, 3} {
			backend := []string{"uring", "pool"}[next%2]
			t.Run(fmt.Sprintf("%s/then-%d-shards/%s", step, next, backend), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				s := startServerIn(t, dir, backend, 2)
				fillForReshard(t, s)
				want := snapshot(t, s)
				if err := s.stop(); err != nil {
					t.Fatal(err)
				}
				crashed := launch(t, dir, backend, 3, "--test-crash-at", step)
				if code := crashed.exitCode(); code != -1 || !strings.Contains(crashed.log.String(), "killing the process at a reshard step") {
					t.Fatalf("moond did not kill itself at %s (exit %d)\n%s", step, code, crashed.log.String())
				}
				s = startServerIn(t, dir, backend, next)
				sameData(t, fmt.Sprintf("crash at %s, then %d shards", step, next), want, snapshot(t, s), s.log.String())
				noReshardLeftovers(t, dir, next)
				rolled := strings.Contains(s.log.String(), "finishing a reshard interrupted")
				if rolled != (step != "reshard-copied") {
					t.Fatalf("crash at %s: rolled forward %v\n%s", step, rolled, s.log.String())
				}
				if err := s.stop(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestReshardServesLoadingMeanwhile holds the old shards' recovery during
// a reshard (--test-hold-boot): moond listens, answers LOADING to data
// commands and shows loading:1 in INFO, then serves the data.
func TestReshardServesLoadingMeanwhile(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, "pool", 2)
	fillForReshard(t, s)
	want := snapshot(t, s)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	hold := filepath.Join(t.TempDir(), "release")
	s = launch(t, dir, "pool", 3, "--test-hold-boot", hold)
	if !s.logShows("resharding: the data directory holds another number of shards") {
		t.Fatalf("moond did not log the reshard\n%s", s.log.String())
	}
	r := s.raw()
	r.send(cmd("GET", "huge"))
	if got := r.line(); got != "-LOADING Redis is loading the dataset in memory" {
		t.Fatalf("GET while resharding: %q", got)
	}
	c := s.client(2)
	if got := infoField(t, c, "loading"); got != "1" {
		t.Fatalf("INFO loading while resharding: %q", got)
	}
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.waitReady()
	sameData(t, "after the reshard", want, snapshot(t, s), s.log.String())
}

// TestReshardInterruptedLeavesOldData stops moond while a 2 -> 3 reshard
// is under way (the old shards' recovery held): by SIGTERM, which ends the
// reshard and exits cleanly, and by kill -9, with the staged shards on
// disk. The next boot, with 2 or with 3 shards, serves exactly the data.
func TestReshardInterruptedLeavesOldData(t *testing.T) {
	for _, how := range []string{"sigterm", "kill9"} {
		for _, next := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/then-%d-shards", how, next), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				s := startServerIn(t, dir, "pool", 2)
				fillForReshard(t, s)
				want := snapshot(t, s)
				if err := s.stop(); err != nil {
					t.Fatal(err)
				}
				hold := filepath.Join(t.TempDir(), "release") // never created
				s = launch(t, dir, "pool", 3, "--test-hold-boot", hold)
				if !s.logShows("resharding: new shards open, moving the keys") {
					t.Fatalf("moond did not log the reshard\n%s", s.log.String())
				}
				if _, err := os.Stat(filepath.Join(dir, "reshard.staging")); err != nil {
					t.Fatalf("no staging area while resharding: %v", err)
				}
				if how == "kill9" {
					s.kill9()
				} else if err := s.stop(); err != nil {
					t.Fatalf("SIGTERM while resharding: %v\n%s", err, s.log.String())
				}
				s = startServerIn(t, dir, "pool", next)
				sameData(t, fmt.Sprintf("%s while resharding, then %d shards", how, next), want, snapshot(t, s), s.log.String())
				noReshardLeftovers(t, dir, next)
			})
		}
	}
}
