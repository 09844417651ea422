package tests

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestSetCommandsEndToEnd runs every set command through go-redis, on both
// backends with 1 and 2 shards; the multi-key commands name keys of one
// hash tag, so that they are on one shard.
func TestSetCommandsEndToEnd(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		for _, proto := range []int{2, 3} {
			c := s.client(proto)
			ctx := ctx(t)
			c.FlushAll(ctx)
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			eq := func(what string, got, want []string) {
				t.Helper()
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("RESP%d %s: %q, want %q", proto, what, got, want)
				}
			}
			num := func(what string, got, want int64) {
				t.Helper()
				if got != want {
					t.Errorf("RESP%d %s: %d, want %d", proto, what, got, want)
				}
			}
			n, err := c.SAdd(ctx, "{s}a", 1, 2, 3, "x").Result()
			must(err)
			num("SADD", n, 4)
			must(c.SAdd(ctx, "{s}b", 2, 3, 4).Err())
			big := make([]any, 600)
			for i := range big {
				big[i] = i
			}
			must(c.SAdd(ctx, "{s}big", big...).Err())
			// OBJECT ENCODING only on one shard: the server routes OBJECT's
			// subcommands by the container's key positions (none), so with
			// two shards it may ask the wrong one.
			if strings.HasSuffix(t.Name(), "shards=1") {
				if enc, err := c.ObjectEncoding(ctx, "{s}big").Result(); enc != "hashtable" {
					t.Errorf("RESP%d encoding %q %v", proto, enc, err)
				}
				if enc, err := c.ObjectEncoding(ctx, "{s}b").Result(); enc != "intset" {
					t.Errorf("RESP%d encoding %q %v", proto, enc, err)
				}
				// The limits are CONFIG SET-able and apply as sets are written.
				must(c.ConfigSet(ctx, "set-max-intset-entries", "2").Err())
				must(c.SAdd(ctx, "{s}cfg", 1, 2).Err())
				must(c.SAdd(ctx, "{s}cfg", 3).Err())
				if enc, err := c.ObjectEncoding(ctx, "{s}cfg").Result(); enc != "hashtable" {
					t.Errorf("RESP%d encoding past set-max-intset-entries 2: %q %v", proto, enc, err)
				}
				// Three integers at once make a listpack, as in Redis 7.2.
				must(c.SAdd(ctx, "{s}cfg2", 1, 2, 3).Err())
				if enc, err := c.ObjectEncoding(ctx, "{s}cfg2").Result(); enc != "listpack" {
					t.Errorf("RESP%d encoding of SADD 1 2 3 past set-max-intset-entries 2: %q %v", proto, enc, err)
				}
				must(c.ConfigSet(ctx, "set-max-intset-entries", "512").Err())
			}
			n, _ = c.SRem(ctx, "{s}a", "x", "nope").Result()
			num("SREM", n, 1)
			n, _ = c.SCard(ctx, "{s}big").Result()
			num("SCARD", n, 600)
			if ok, _ := c.SIsMember(ctx, "{s}a", 2).Result(); !ok {
				t.Error("SISMEMBER")
			}
			if got, _ := c.SMIsMember(ctx, "{s}a", 1, 9).Result(); !slices.Equal(got, []bool{true, false}) {
				t.Errorf("SMISMEMBER %v", got)
			}
			got, err := c.SMembers(ctx, "{s}a").Result()
			must(err)
			eq("SMEMBERS", got, []string{"1", "2", "3"})
			if m, _ := c.SRandMember(ctx, "{s}a").Result(); m < "1" || m > "3" {
				t.Errorf("SRANDMEMBER %q", m)
			}
			got, _ = c.SRandMemberN(ctx, "{s}a", -5).Result()
			num("SRANDMEMBER -5", int64(len(got)), 5)
			got, _ = c.SRandMemberN(ctx, "{s}a", 10).Result()
			eq("SRANDMEMBER 10", got, []string{"1", "2", "3"})
			eq("SINTER", c.SInter(ctx, "{s}a", "{s}b").Val(), []string{"2", "3"})
			num("SINTERCARD", c.SInterCard(ctx, 1, "{s}a", "{s}b").Val(), 1)
			eq("SUNION", c.SUnion(ctx, "{s}a", "{s}b").Val(), []string{"1", "2", "3", "4"})
			eq("SDIFF", c.SDiff(ctx, "{s}a", "{s}b").Val(), []string{"1"})
			num("SINTERSTORE", c.SInterStore(ctx, "{s}i", "{s}a", "{s}b").Val(), 2)
			num("SUNIONSTORE", c.SUnionStore(ctx, "{s}u", "{s}a", "{s}b").Val(), 4)
			num("SDIFFSTORE", c.SDiffStore(ctx, "{s}d", "{s}a", "{s}b").Val(), 1)
			eq("stored", c.SMembers(ctx, "{s}u").Val(), []string{"1", "2", "3", "4"})
			if ok, _ := c.SMove(ctx, "{s}a", "{s}d", 3).Result(); !ok {
				t.Error("SMOVE")
			}
			eq("after SMOVE", c.SMembers(ctx, "{s}d").Val(), []string{"1", "3"})
			var all []string
			var cursor uint64
			for {
				keys, next, err := c.SScan(ctx, "{s}big", cursor, "", 50).Result()
				must(err)
				all = append(all, keys...)
				if cursor = next; cursor == 0 {
					break
				}
			}
			slices.Sort(all)
			num("SSCAN", int64(len(slices.Compact(all))), 600)
			popped, _ := c.SPopN(ctx, "{s}big", 100).Result()
			num("SPOP 100", int64(len(popped)), 100)
			num("SCARD after SPOP", c.SCard(ctx, "{s}big").Val(), 500)
			if m, err := c.SPop(ctx, "{s}d").Result(); err != nil || (m != "1" && m != "3") {
				t.Errorf("SPOP %q %v", m, err)
			}
			must(c.Set(ctx, "{s}str", "v", 0).Err())
			if err := c.SAdd(ctx, "{s}str", "x").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
				t.Errorf("SADD on a string: %v", err)
			}
			if err := c.SInter(ctx, "{s}nokey", "{s}str").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
				t.Errorf("SINTER on a string: %v", err)
			}
			if typ, _ := c.Type(ctx, "{s}u").Result(); typ != "set" {
				t.Errorf("TYPE %q", typ)
			}
			keys, _, _ := c.ScanType(ctx, 0, "{s}*", 1000, "set").Result()
			if len(keys) == 0 || slices.Contains(keys, "{s}str") {
				t.Errorf("SCAN TYPE set: %q", keys)
			}
		}
	})
}

// TestSetsSurviveKill9 writes sets of every encoding, under appendfsync
// always, then kills the server with SIGKILL and checks that every set is
// back exactly; with a SAVE before the last writes, so that the values
// come back from the heap and the WAL tail both.
func TestSetsSurviveKill9(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		for _, save := range []bool{false, true} {
			t.Run(backend+"/save="+strconv.FormatBool(save), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				s := startServerIn(t, dir, backend, 2, "--appendfsync", "always")
				c := s.client(2)
				ctx := ctx(t)
				write := func(round int) {
					p := strconv.Itoa(round)
					for i := range 20 {
						k := "{k" + strconv.Itoa(i) + "}"
						c.SAdd(ctx, k+"ints", i, i*1000, -i, round)
						c.SAdd(ctx, k+"strs", "a"+p, "b", strings.Repeat("z", i))
						members := make([]any, 300+i)
						for j := range members {
							members[j] = "m" + strconv.Itoa(j*round)
						}
						c.SAdd(ctx, k+"big", members...)
						c.SRem(ctx, k+"big", "m0", "m"+strconv.Itoa(round))
						c.SPopN(ctx, k+"big", 3)
						c.SPop(ctx, k+"ints")
						c.SMove(ctx, k+"strs", k+"moved", "b")
						c.SUnionStore(ctx, k+"union", k+"ints", k+"strs")
						c.SInterStore(ctx, k+"inter", k+"big", k+"big")
						c.SDiffStore(ctx, k+"empty", k+"ints", k+"ints")
					}
				}
				write(1)
				if save {
					if err := c.Save(ctx).Err(); err != nil {
						t.Fatal(err)
					}
				}
				write(2)
				want := setSnapshot(t, c)
				s.kill9()
				s2 := startServerIn(t, dir, backend, 2, "--appendfsync", "always")
				got := setSnapshot(t, s2.client(2))
				if len(want) < 100 {
					t.Fatalf("only %d keys written: the test checks little", len(want))
				}
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s: %.80s after restart, want %.80s", k, got[k], v)
					}
				}
				if len(got) != len(want) {
					t.Errorf("%d keys after restart, want %d", len(got), len(want))
				}
			})
		}
	}
}

// setSnapshot maps every key to its sorted members.
func setSnapshot(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	ctx := ctx(t)
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		m, err := c.SMembers(ctx, k).Result()
		if err != nil {
			t.Fatalf("SMEMBERS %s: %v", k, err)
		}
		slices.Sort(m)
		out[k] = strings.Join(m, ",")
	}
	return out
}
