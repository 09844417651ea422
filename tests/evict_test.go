package tests

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxmemory end to end: each policy keeps the data under the limit and
// takes only the keys it may; evictions are logged, so that a kill -9
// brings no evicted key back; CLIENT TRACKING hears of evictions.

// writeKeys SETs n keys prefix0..prefix(n-1) of 1 KiB, with a TTL of
// ttl seconds when ttl > 0, in pipelines, and returns the errors' texts.
func writeKeys(t *testing.T, c context.Context, cl *redis.Client, prefix string, n, ttl int) []string {
	t.Helper()
	val := strings.Repeat("x", 1024)
	var errs []string
	for i := 0; i < n; i += 256 {
		pipe := cl.Pipeline()
		for j := i; j < min(i+256, n); j++ {
			k := prefix + strconv.Itoa(j)
			pipe.Set(c, k, val, time.Duration(ttl)*time.Second)
		}
		cmds, _ := pipe.Exec(c)
		for _, cmd := range cmds {
			if err := cmd.Err(); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	return errs
}

// countKeys counts the keys prefix0..prefix(n-1) that exist.
func countKeys(t *testing.T, c context.Context, cl *redis.Client, prefix string, n int) int {
	t.Helper()
	found := 0
	for i := 0; i < n; i += 256 {
		pipe := cl.Pipeline()
		for j := i; j < min(i+256, n); j++ {
			pipe.Exists(c, prefix+strconv.Itoa(j))
		}
		cmds, err := pipe.Exec(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range cmds {
			found += int(cmd.(*redis.IntCmd).Val())
		}
	}
	return found
}

func TestMaxmemoryPoliciesKeepTheDataUnderTheLimit(t *testing.T) {
	const limit = 4 << 20
	eachServer(t, func(t *testing.T, s *server) {
		c := ctx(t)
		cl := s.client(2)
		for _, policy := range []string{"allkeys-lru", "allkeys-lfu", "allkeys-random",
			"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"} {
			if err := cl.FlushAll(c).Err(); err != nil {
				t.Fatal(err)
			}
			evictedBefore := infoInt(t, cl, "evicted_keys")
			if err := cl.ConfigSet(c, "maxmemory-policy", policy).Err(); err != nil {
				t.Fatal(err)
			}
			if err := cl.ConfigSet(c, "maxmemory", strconv.Itoa(limit)).Err(); err != nil {
				t.Fatal(err)
			}
			// 200 keys without a TTL, then 4x the limit with one.
			if errs := writeKeys(t, c, cl, "keep", 200, 0); len(errs) > 0 {
				t.Fatalf("%s: %v", policy, errs[0])
			}
			if errs := writeKeys(t, c, cl, "ttl", 4*limit>>10, 1000); len(errs) > 0 {
				t.Fatalf("%s: writes refused while keys could be evicted: %v", policy, errs[0])
			}
			evicted := infoInt(t, cl, "evicted_keys") - evictedBefore
			left := countKeys(t, c, cl, "ttl", 4*limit>>10) + countKeys(t, c, cl, "keep", 200)
			if evicted == 0 || left > limit>>10 {
				t.Fatalf("%s: %d keys evicted, %d KiB of values left under a %d KiB limit", policy, evicted, left, limit>>10)
			}
			if n := cl.DBSize(c).Val(); n != int64(left) {
				t.Fatalf("%s: DBSIZE %d, %d keys found", policy, n, left)
			}
			if strings.HasPrefix(policy, "volatile") {
				if n := countKeys(t, c, cl, "keep", 200); n != 200 {
					t.Fatalf("%s evicted %d keys without a TTL", policy, 200-n)
				}
			}
		}
		if err := cl.ConfigSet(c, "maxmemory", "0").Err(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestMaxmemoryVolatileRefusesWritesWhenOnlyKeysWithoutTTLAreLeft(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := ctx(t)
		cl := s.client(2)
		if err := cl.ConfigSet(c, "maxmemory-policy", "volatile-lru").Err(); err != nil {
			t.Fatal(err)
		}
		if err := cl.ConfigSet(c, "maxmemory", "2mb").Err(); err != nil {
			t.Fatal(err)
		}
		writeKeys(t, c, cl, "t", 500, 1000)
		errs := writeKeys(t, c, cl, "p", 8<<10, 0)
		if len(errs) == 0 {
			t.Fatal("8 MiB of keys without a TTL written under a 2 MiB limit")
		}
		if errs[0] != oomText {
			t.Fatalf("refusal %q, want %q", errs[0], oomText)
		}
		if n := countKeys(t, c, cl, "t", 500); n != 0 {
			t.Fatalf("%d keys with a TTL left while writes are refused", n)
		}
		if got := cl.Get(c, "p0").Val(); len(got) != 1024 {
			t.Fatalf("GET of a key written before the refusals: %d bytes", len(got))
		}
		// Deleting makes room: writes are taken again.
		if err := cl.FlushAll(c).Err(); err != nil {
			t.Fatal(err)
		}
		if err := cl.Set(c, "after", "1", 0).Err(); err != nil {
			t.Fatalf("SET after FLUSHALL: %v", err)
		}
	})
}

const oomText = "OOM command not allowed when used memory > 'maxmemory'."

func TestMaxmemoryLFUKeepsTheFrequentKeys(t *testing.T) {
	s := startServer(t, "uring", 2)
	c := ctx(t)
	cl := s.client(2)
	if err := cl.ConfigSet(c, "maxmemory-policy", "allkeys-lfu").Err(); err != nil {
		t.Fatal(err)
	}
	writeKeys(t, c, cl, "hot", 100, 0)
	for range 50 {
		pipe := cl.Pipeline()
		for i := range 100 {
			pipe.Get(c, "hot"+strconv.Itoa(i))
		}
		if _, err := pipe.Exec(c); err != nil {
			t.Fatal(err)
		}
	}
	if f := cl.ObjectFreq(c, "hot7").Val(); f <= 5 {
		t.Fatalf("OBJECT FREQ of a key read 50 times: %d", f)
	}
	if err := cl.ConfigSet(c, "maxmemory", "2mb").Err(); err != nil {
		t.Fatal(err)
	}
	writeKeys(t, c, cl, "cold", 8<<10, 0)
	if n := countKeys(t, c, cl, "hot", 100); n < 95 {
		t.Fatalf("%d of the 100 frequently read keys left", n)
	}
}

func TestMaxmemoryLoweredEvictsInTheBackground(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := ctx(t)
		cl := s.client(2)
		writeKeys(t, c, cl, "k", 16<<10, 0)
		// The lowest tenacity: each run evicts 16 keys, then yields.
		for _, kv := range [][2]string{{"maxmemory-eviction-tenacity", "0"}, {"maxmemory-policy", "allkeys-random"}, {"maxmemory", "2mb"}} {
			if err := cl.ConfigSet(c, kv[0], kv[1]).Err(); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, "the data under 2 MiB without any write", func() bool {
			return cl.DBSize(c).Val() <= 2<<10
		})
		waitFor(t, "the time over maxmemory ended", func() bool {
			return infoInt(t, cl, "current_eviction_exceeded_time") == 0
		})
		if got := cl.Get(c, "probe").Err(); got != redis.Nil {
			t.Fatalf("GET after eviction: %v", got)
		}
	})
}

func TestEvictedKeysStayGoneAfterKill9(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := startServerIn(t, dir, backend, 2, "--appendfsync", "always",
				"--maxmemory", "2mb", "--maxmemory-policy", "allkeys-random")
			c := ctx(t)
			cl := s.client(2)
			if errs := writeKeys(t, c, cl, "k", 8<<10, 0); len(errs) > 0 {
				t.Fatal(errs[0])
			}
			if infoInt(t, cl, "evicted_keys") == 0 {
				t.Fatal("nothing evicted")
			}
			before := scanAll(t, c, cl)
			s.kill9()
			s2 := startServerIn(t, dir, backend, 2)
			after := scanAll(t, c, s2.client(2))
			if len(before) != len(after) {
				t.Fatalf("%d keys before kill -9, %d after", len(before), len(after))
			}
			for k := range after {
				if !before[k] {
					t.Fatalf("%s was evicted and came back after kill -9", k)
				}
			}
		})
	}
}

// scanAll returns every key of database 0.
func scanAll(t *testing.T, c context.Context, cl *redis.Client) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	iter := cl.Scan(c, 0, "*", 1000).Iterator()
	for iter.Next(c) {
		keys[iter.Val()] = true
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestTrackingHearsOfEvictions(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		tr, wr := trackingPair(t, s)
		do(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "on")
		k := keyOnShard("ev", 1)
		do(t, wr, "+OK\r\n", "SET", k, "v")
		do(t, tr, "$1\r\nv\r\n", "GET", k)
		do(t, wr, "+OK\r\n", "CONFIG", "SET", "maxmemory-policy", "allkeys-random")
		do(t, wr, "+OK\r\n", "CONFIG", "SET", "maxmemory", "1")
		mustRead(t, tr, invalidateMsg(k))
		do(t, wr, ":0\r\n", "EXISTS", k)
		do(t, wr, "+OK\r\n", "CONFIG", "SET", "maxmemory", "0")
	})
}
