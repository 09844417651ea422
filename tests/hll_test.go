package tests

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestHLLCommands runs every HyperLogLog command through go-redis on both
// backends with 1 and 2 shards: PFADD, PFCOUNT and PFMERGE over keys of
// one {hash tag}, PFDEBUG, and the error replies.
func TestHLLCommands(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		ctx := ctx(t)
		mustInt := func(want int64, cmd *redis.IntCmd) {
			t.Helper()
			if got, err := cmd.Result(); err != nil || got != want {
				t.Fatalf("%v: %d, %v; want %d", cmd.Args(), got, err, want)
			}
		}
		mustInt(1, c.PFAdd(ctx, "{h}1", "a", "b", "c"))
		mustInt(0, c.PFAdd(ctx, "{h}1", "a", "b"))
		mustInt(1, c.PFAdd(ctx, "{h}2", "b", "c", "d"))
		mustInt(3, c.PFCount(ctx, "{h}1"))
		mustInt(4, c.PFCount(ctx, "{h}1", "{h}2", "{h}missing"))
		if err := c.PFMerge(ctx, "{h}dst", "{h}1", "{h}2").Err(); err != nil {
			t.Fatal(err)
		}
		mustInt(4, c.PFCount(ctx, "{h}dst"))
		raw, err := c.Get(ctx, "{h}dst").Result()
		if err != nil || !strings.HasPrefix(raw, "HYLL\x01") {
			t.Fatalf("GET of an HLL: %q, %v", raw, err)
		}
		// Many elements: the value turns dense.
		var eles []any
		for i := range 5000 {
			eles = append(eles, "e"+strconv.Itoa(i))
		}
		mustInt(1, c.PFAdd(ctx, "{h}big", eles...))
		if enc, err := c.Do(ctx, "PFDEBUG", "ENCODING", "{h}big").Text(); err != nil || enc != "dense" {
			t.Fatalf("PFDEBUG ENCODING: %q, %v", enc, err)
		}
		if n, err := c.PFCount(ctx, "{h}big").Result(); err != nil || n < 4750 || n > 5250 {
			t.Fatalf("PFCOUNT of 5000 elements: %d, %v", n, err)
		}
		if regs, err := c.Do(ctx, "PFDEBUG", "GETREG", "{h}1").Slice(); err != nil || len(regs) != 16384 {
			t.Fatalf("PFDEBUG GETREG: %d registers, %v", len(regs), err)
		}
		if dec, err := c.Do(ctx, "PFDEBUG", "DECODE", "{h}2").Text(); err != nil || !strings.Contains(dec, "v:") {
			t.Fatalf("PFDEBUG DECODE: %q, %v", dec, err)
		}
		if n, err := c.Do(ctx, "PFDEBUG", "TODENSE", "{h}2").Int64(); err != nil || n != 1 {
			t.Fatalf("PFDEBUG TODENSE: %d, %v", n, err)
		}
		// Errors.
		c.Set(ctx, "{h}str", "not an hll", 0)
		for _, cmd := range []redis.Cmder{
			c.PFAdd(ctx, "{h}str", "x"), c.PFCount(ctx, "{h}str"), c.PFMerge(ctx, "{h}str", "{h}1"),
		} {
			if err := cmd.Err(); err == nil || err.Error() != "WRONGTYPE Key is not a valid HyperLogLog string value." {
				t.Fatalf("%v on a plain string: %v", cmd.Args(), err)
			}
		}
		c.Append(ctx, "{h}dst", "junk") // sparse: extra opcodes
		if err := c.PFCount(ctx, "{h}dst", "{h}missing").Err(); err == nil || err.Error() != "INVALIDOBJ Corrupted HLL object detected" {
			t.Fatalf("PFCOUNT of a damaged HLL: %v", err)
		}
	})
}

// hllState reads key's value and count, the cached cardinality masked:
// PFCOUNT fills it without a record, so a restart may bring it back stale.
func hllState(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	raw, err := c.Get(ctx(t), key).Result()
	if err != nil || len(raw) < 16 {
		return fmt.Sprintf("GET: %q, %v", raw, err)
	}
	b := []byte(raw)
	clear(b[8:16])
	n, err := c.PFCount(ctx(t), key).Result()
	return fmt.Sprintf("%q count %d err %v", b, n, err)
}

// TestHLLSurvivesKill9: HLLs written under appendfsync always (sparse,
// promoted to dense, merged, with a TTL, turned dense by PFDEBUG), some
// before a SAVE and some after it, come back byte for byte (but for the
// cached cardinality) after kill -9 and a restart, on both backends.
func TestHLLSurvivesKill9(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		for _, save := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/save=%v", backend, save), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				s := startServerIn(t, dir, backend, 2, "--appendfsync", "always")
				c := s.client(2)
				ctx := ctx(t)
				keys := hllWrites(t, c, 0)
				if save {
					if err := c.Save(ctx).Err(); err != nil {
						t.Fatal(err)
					}
				}
				keys = append(keys, hllWrites(t, c, 1)...)
				want := map[string]string{}
				for _, k := range keys {
					want[k] = hllState(t, c, k)
				}
				s.kill9()
				s2 := startServerIn(t, dir, backend, 2)
				c2 := s2.client(2)
				for _, k := range keys {
					if got := hllState(t, c2, k); got != want[k] {
						t.Errorf("%s after kill -9:\n got %.300s\nwant %.300s", k, got, want[k])
					}
				}
				if ttl, err := c2.TTL(ctx, "{r0}ttl").Result(); err != nil || ttl <= 0 {
					t.Errorf("TTL of an HLL after kill -9: %v, %v", ttl, err)
				}
			})
		}
	}
}

// hllWrites writes a round of HLLs whose keys carry round, and more
// elements into round 0's, and returns the keys it wrote.
func hllWrites(t *testing.T, c *redis.Client, round int) []string {
	t.Helper()
	ctx := ctx(t)
	tag := fmt.Sprintf("{r%d}", round)
	add := func(key string, from, to int) {
		var eles []any
		for i := from; i < to; i++ {
			eles = append(eles, fmt.Sprintf("%s-%d", key, i))
		}
		if err := c.PFAdd(ctx, key, eles...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	add(tag+"small", 0, 10)
	add(tag+"small", 5, 20)
	for i := range 40 { // promoted to dense by a PFADD on the way
		add(tag+"grow", i*100, i*100+100)
	}
	add(tag+"ttl", 0, 50)
	if err := c.Expire(ctx, tag+"ttl", 3600e9).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.PFMerge(ctx, tag+"merged", tag+"small", tag+"ttl").Err(); err != nil {
		t.Fatal(err)
	}
	add(tag+"todense", 0, 30)
	if err := c.Do(ctx, "PFDEBUG", "TODENSE", tag+"todense").Err(); err != nil {
		t.Fatal(err)
	}
	add(tag+"todense", 30, 40)
	c.PFCount(ctx, tag+"small") // fills a cache: no record
	if round > 0 {
		add("{r0}small", 100, 130)
		add("{r0}grow", 5000, 5100)
		if err := c.PFMerge(ctx, "{r0}merged", "{r0}grow").Err(); err != nil {
			t.Fatal(err)
		}
	}
	return []string{tag + "small", tag + "grow", tag + "ttl", tag + "merged", tag + "todense"}
}

// TestPFSelfTest runs PFSELFTEST once: it is pure computation (ten
// million estimator steps, as Redis's), the same on every backend, and
// takes seconds under -race, so it has a client of its own with a read
// timeout to match rather than four parallel copies racing the default.
func TestPFSelfTest(t *testing.T) {
	s := startServer(t, "uring", 1)
	c := redis.NewClient(&redis.Options{Addr: s.addr(), ReadTimeout: 3 * time.Minute})
	defer c.Close()
	cx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := c.Do(cx, "PFSELFTEST").Err(); err != nil {
		t.Fatalf("PFSELFTEST: %v", err)
	}
}
