package tests

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestListCommandsEndToEnd runs every list command through go-redis
// against the real server, on both backends with 1 and 2 shards; the
// two-key commands use keys with one {hash tag}, so that they land on one
// shard.
func TestListCommandsEndToEnd(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		ctx := ctx(t)
		expectList := func(key string, want ...string) {
			t.Helper()
			got, err := c.LRange(ctx, key, 0, -1).Result()
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("LRANGE %s = %q (%v), want %q", key, got, err, want)
			}
		}
		expectInt := func(what string, got int64, err error, want int64) {
			t.Helper()
			if err != nil || got != want {
				t.Fatalf("%s = %d (%v), want %d", what, got, err, want)
			}
		}
		n, err := c.LPush(ctx, "l", "b", "a").Result()
		expectInt("LPUSH", n, err, 2)
		n, err = c.RPush(ctx, "l", "c", "d").Result()
		expectInt("RPUSH", n, err, 4)
		n, err = c.LPushX(ctx, "nokey", "x").Result()
		expectInt("LPUSHX nokey", n, err, 0)
		n, err = c.RPushX(ctx, "l", "e").Result()
		expectInt("RPUSHX", n, err, 5)
		expectList("l", "a", "b", "c", "d", "e")
		n, err = c.LLen(ctx, "l").Result()
		expectInt("LLEN", n, err, 5)
		if v, err := c.LIndex(ctx, "l", -2).Result(); err != nil || v != "d" {
			t.Fatalf("LINDEX -2 = %q (%v)", v, err)
		}
		if err := c.LSet(ctx, "l", 0, "A").Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.LSet(ctx, "l", 99, "A").Err(); err == nil || err.Error() != "ERR index out of range" {
			t.Fatalf("LSET out of range: %v", err)
		}
		n, err = c.LInsertBefore(ctx, "l", "c", "bc").Result()
		expectInt("LINSERT", n, err, 6)
		n, err = c.LPos(ctx, "l", "bc", redis.LPosArgs{}).Result()
		expectInt("LPOS", n, err, 2)
		ps, err := c.LPosCount(ctx, "l", "A", 0, redis.LPosArgs{MaxLen: 3}).Result()
		if err != nil || !slices.Equal(ps, []int64{0}) {
			t.Fatalf("LPOS COUNT 0 MAXLEN 3 = %v (%v)", ps, err)
		}
		n, err = c.LRem(ctx, "l", 0, "bc").Result()
		expectInt("LREM", n, err, 1)
		if v, err := c.LPop(ctx, "l").Result(); err != nil || v != "A" {
			t.Fatalf("LPOP = %q (%v)", v, err)
		}
		if v, err := c.RPopCount(ctx, "l", 2).Result(); err != nil || !slices.Equal(v, []string{"e", "d"}) {
			t.Fatalf("RPOP 2 = %q (%v)", v, err)
		}
		if err := c.LTrim(ctx, "l", 0, 0).Err(); err != nil {
			t.Fatal(err)
		}
		expectList("l", "b")
		if v, err := c.LPopCount(ctx, "nokey", 2).Result(); !errors.Is(err, redis.Nil) {
			t.Fatalf("LPOP nokey 2 = %q (%v), want nil", v, err)
		}

		// Two keys of one shard.
		c.RPush(ctx, "{q}src", "1", "2", "3")
		if v, err := c.LMove(ctx, "{q}src", "{q}dst", "LEFT", "RIGHT").Result(); err != nil || v != "1" {
			t.Fatalf("LMOVE = %q (%v)", v, err)
		}
		if v, err := c.Do(ctx, "RPOPLPUSH", "{q}src", "{q}dst").Text(); err != nil || v != "3" {
			t.Fatalf("RPOPLPUSH = %q (%v)", v, err)
		}
		expectList("{q}dst", "3", "1")
		key, vals, err := c.LMPop(ctx, "RIGHT", 5, "{q}none", "{q}dst").Result()
		if err != nil || key != "{q}dst" || !slices.Equal(vals, []string{"1", "3"}) {
			t.Fatalf("LMPOP = %q %q (%v)", key, vals, err)
		}
		if _, _, err := c.LMPop(ctx, "LEFT", 1, "{q}none", "{q}dst").Result(); !errors.Is(err, redis.Nil) {
			t.Fatalf("LMPOP of missing keys: %v, want nil", err)
		}
		if enc, err := c.ObjectEncoding(ctx, "{q}src").Result(); err != nil || enc != "quicklist" {
			t.Fatalf("OBJECT ENCODING = %q (%v)", enc, err)
		}
		if typ, _ := c.Type(ctx, "{q}src").Result(); typ != "list" {
			t.Fatalf("TYPE = %q", typ)
		}
		c.Set(ctx, "str", "x", 0)
		if err := c.LPush(ctx, "str", "a").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
			t.Fatalf("LPUSH on a string: %v", err)
		}
		// A large list: nodes, and COPY of it.
		big := make([]any, 3000)
		for i := range big {
			big[i] = fmt.Sprintf("element-%d", i)
		}
		c.RPush(ctx, "{b}big", big...)
		if err := c.Copy(ctx, "{b}big", "{b}copy", 0, false).Err(); err != nil {
			t.Fatal(err)
		}
		if v, err := c.LIndex(ctx, "{b}copy", 2999).Result(); err != nil || v != "element-2999" {
			t.Fatalf("LINDEX of the copy = %q (%v)", v, err)
		}

		// RESP3 null shapes.
		c3 := s.client(3)
		if v, err := c3.LPop(ctx, "nokey").Result(); !errors.Is(err, redis.Nil) {
			t.Fatalf("RESP3 LPOP nokey = %q (%v)", v, err)
		}
		if v, err := c3.LPopCount(ctx, "nokey", 1).Result(); !errors.Is(err, redis.Nil) {
			t.Fatalf("RESP3 LPOP nokey 1 = %q (%v)", v, err)
		}
	})
}

// TestListsSurviveKill9 writes lists under appendfsync always (a
// quicklist among them, and moves between keys), kills the server with
// SIGKILL and checks that every list is back exactly; with a SAVE in the
// middle, so that the heap's encoding is read back too.
func TestListsSurviveKill9(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		for _, save := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/save=%v", backend, save), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				s := startServerIn(t, dir, backend, 2, "--appendfsync", "always")
				c := s.client(2)
				ctx := ctx(t)
				keys := []string{"{k}a", "{k}b", "{k}c", "plain", "big"}
				for i := 0; i < 300; i++ {
					c.RPush(ctx, "big", fmt.Sprintf("%d-%s", i, strings.Repeat("v", 40)))
				}
				for i := 0; i < 200; i++ {
					c.LPush(ctx, keys[i%3], fmt.Sprint(i))
					if i%7 == 0 {
						c.LMove(ctx, "{k}a", "{k}b", "LEFT", "RIGHT")
					}
					if i%11 == 0 {
						c.RPopCount(ctx, "{k}c", 2)
					}
					if i == 100 && save {
						if err := c.Save(ctx).Err(); err != nil {
							t.Fatal(err)
						}
					}
				}
				c.RPush(ctx, "plain", "x", "y", "z")
				c.LSet(ctx, "big", 150, "changed")
				c.LInsertAfter(ctx, "big", "changed", "inserted")
				c.LRem(ctx, "big", 1, "0-"+strings.Repeat("v", 40))
				c.LTrim(ctx, "big", 1, -2)
				c.LMPop(ctx, "LEFT", 3, "{k}none", "{k}c")
				want := map[string][]string{}
				for _, k := range keys {
					want[k], _ = c.LRange(ctx, k, 0, -1).Result()
				}
				if len(want["big"]) != 298 || want["big"][148] != "changed" || len(want["plain"]) != 3 {
					t.Fatalf("before the kill: big has %d elements, plain %d", len(want["big"]), len(want["plain"]))
				}
				s.kill9()
				s2 := startServerIn(t, dir, backend, 2)
				c2 := s2.client(2)
				for _, k := range keys {
					got, err := c2.LRange(ctx, k, 0, -1).Result()
					if err != nil || !slices.Equal(got, want[k]) {
						t.Fatalf("%s after kill -9: %d elements (%v), want %d", k, len(got), err, len(want[k]))
					}
				}
			})
		}
	}
}
