package tests

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const apKeys = 20

// writeBase writes, under appendonly yes, the keys the tests check after
// the restarts: ap<i> = "ab", ttl<i> with an hour's TTL, del<i>, and a key
// in database 3.
func writeBase(t *testing.T, s *server) {
	ctx := ctx(t)
	c := s.client(2)
	for i := 0; i < apKeys; i++ {
		n := strconv.Itoa(i)
		for _, err := range []error{c.Set(ctx, "ap"+n, "ab", 0).Err(), c.Set(ctx, "ttl"+n, n, time.Hour).Err(),
			c.Set(ctx, "del"+n, n, 0).Err()} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	c3 := redis.NewClient(&redis.Options{Addr: s.addr(), DB: 3, DisableIdentity: true})
	defer c3.Close()
	if err := c3.Set(ctx, "in-db3", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
}

// writeGap writes while appendonly is off: APPEND "X" to the even ap keys,
// deletes the del keys, makes gap<i>.
func writeGap(t *testing.T, c *redis.Client) {
	ctx := ctx(t)
	for i := 0; i < apKeys; i++ {
		n := strconv.Itoa(i)
		if i%2 == 0 {
			if err := c.Append(ctx, "ap"+n, "X").Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Del(ctx, "del"+n).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.Set(ctx, "gap"+n, n, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// checkBase checks what writeBase wrote under appendonly yes: it is never
// lost, whatever happened after.
func checkBase(t *testing.T, s *server) {
	ctx := ctx(t)
	c := s.client(2)
	for i := 0; i < apKeys; i++ {
		n := strconv.Itoa(i)
		if v, err := c.Get(ctx, "ttl"+n).Result(); err != nil || v != n {
			t.Fatalf("ttl%s = %q, %v; want %q", n, v, err, n)
		}
		if d, _ := c.PTTL(ctx, "ttl"+n).Result(); d <= 0 || d > time.Hour {
			t.Fatalf("ttl%s: PTTL %v, want its hour", n, d)
		}
	}
	c3 := redis.NewClient(&redis.Options{Addr: s.addr(), DB: 3, DisableIdentity: true})
	defer c3.Close()
	if v, _ := c3.Get(ctx, "in-db3").Result(); v != "x" {
		t.Fatalf("in-db3 = %q, want x", v)
	}
}

// TestAppendOnlyOffOnKill9AfterCheckpoint turns appendonly off and on
// again at run time, writes in between and after, waits for the
// checkpoint that makes the log whole, and kills the server: everything
// comes back, including what was written while off (the checkpoint wrote
// it) and the APPENDs on top of it.
func TestAppendOnlyOffOnKill9AfterCheckpoint(t *testing.T) {
	dir := t.TempDir()
	common := []string{"--appendfsync", "always", "--checkpoint-timeout", "3600"}
	s := startServerIn(t, dir, "uring", 2, common...)
	ctx := ctx(t)
	c := s.client(2)
	writeBase(t, s)
	if err := c.ConfigSet(ctx, "appendonly", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if v := infoField(t, c, "aof_enabled"); v != "0" {
		t.Fatalf("aof_enabled:%s after CONFIG SET appendonly no", v)
	}
	if !s.logShows("WAL sealed") {
		t.Fatalf("no shard sealed its WAL:\n%s", s.log.String())
	}
	writeGap(t, c)
	if err := c.ConfigSet(ctx, "appendonly", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	if v := infoField(t, c, "aof_enabled"); v != "1" {
		t.Fatalf("aof_enabled:%s after CONFIG SET appendonly yes", v)
	}
	for i := 0; i < apKeys; i++ {
		if err := c.Append(ctx, "ap"+strconv.Itoa(i), "Y").Err(); err != nil {
			t.Fatal(err)
		}
	}
	if !waitInfo(t, c, "aof_rewrite_in_progress", func(n int64) bool { return n == 0 }) {
		t.Fatal("aof_rewrite_in_progress never went back to 0")
	}
	for i := 0; i < apKeys; i++ {
		if err := c.Append(ctx, "ap"+strconv.Itoa(i), "Z").Err(); err != nil {
			t.Fatal(err)
		}
	}
	s.kill9()

	s2 := startServerIn(t, dir, "uring", 2, common...)
	checkBase(t, s2)
	c2 := s2.client(2)
	for i := 0; i < apKeys; i++ {
		n := strconv.Itoa(i)
		want := "abYZ"
		if i%2 == 0 {
			want = "abXYZ"
		}
		if v, _ := c2.Get(ctx, "ap"+n).Result(); v != want {
			t.Fatalf("ap%s = %q after kill -9, want %q", n, v, want)
		}
		if v, _ := c2.Get(ctx, "gap"+n).Result(); v != n {
			t.Fatalf("gap%s = %q, want %q (written while off, covered by the checkpoint)", n, v, n)
		}
		if n, _ := c2.Exists(ctx, "del"+n).Result(); n != 0 {
			t.Fatalf("del%d came back", i)
		}
	}
}

// TestAppendOnlyOnKill9BeforeCheckpoint boots with appendonly no, writes,
// turns it on with APPENDs pipelined right behind, and dies (test crash
// point) in the first checkpoint after it, once its WAL barrier is durable and before any page is written.
// The APPENDs were never acknowledged; replaying them over the heap's "ab"
// would make "abY" of a key whose "abX" the WAL never saw: the boot must
// stop at the gap. The restarted server then takes writes, which must
// survive the next kill -9 (the boot stopped at a gap too: its replies
// wait for a checkpoint above it).
func TestAppendOnlyOnKill9BeforeCheckpoint(t *testing.T) {
	dir := t.TempDir()
	common := []string{"--appendfsync", "always", "--checkpoint-timeout", "3600"}
	s := startServerIn(t, dir, "uring", 1, common...)
	writeBase(t, s)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	s1 := startServerIn(t, dir, "uring", 1, append(common, "--appendonly", "no", "--test-crash-at", "after-barrier@1")...)
	ctx := ctx(t)
	c := s1.client(2)
	writeGap(t, c)
	// One read: CONFIG SET, then the APPENDs, on the shard's thread before
	// its next tick moves the checkpoint on.
	pipe := c.Pipeline()
	pipe.ConfigSet(ctx, "appendonly", "yes")
	for i := 0; i < apKeys; i++ {
		pipe.Append(ctx, "ap"+strconv.Itoa(i), "Y")
	}
	if _, err := pipe.Exec(ctx); err == nil {
		t.Fatal("the pipeline was acknowledged though the server died before the checkpoint covering the gap published")
	}
	if code := s1.exitCode(); code != 137 && code != -1 {
		t.Logf("exit code %d", code)
	}
	if !strings.Contains(s1.log.String(), "test hook: killing the process") {
		t.Fatalf("the crash point was not reached:\n%s", s1.log.String())
	}

	s2 := startServerIn(t, dir, "uring", 1, common...)
	checkBase(t, s2)
	c2 := s2.client(2)
	for i := 0; i < apKeys; i++ {
		n := strconv.Itoa(i)
		v, _ := c2.Get(ctx, "ap"+n).Result()
		ok := v == "ab" || v == "abY"
		if i%2 == 0 {
			ok = v == "ab" || v == "abX" || v == "abXY"
		}
		if !ok {
			t.Fatalf("ap%s = %q after the crash: a value no command ever made", n, v)
		}
	}
	for i := 0; i < apKeys; i++ {
		if err := c2.Set(ctx, "after"+strconv.Itoa(i), i+1, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	s2.kill9()

	s3 := startServerIn(t, dir, "uring", 1, common...)
	c3 := s3.client(2)
	for i := 0; i < apKeys; i++ {
		if v, _ := c3.Get(ctx, "after"+strconv.Itoa(i)).Int(); v != i+1 {
			t.Fatalf("after%d = %d, want %d: acknowledged under appendfsync always and lost", i, v, i+1)
		}
	}
}
