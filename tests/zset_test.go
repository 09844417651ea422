package tests

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Sorted sets end to end: every command through go-redis on both I/O
// backends with 1 and 2 shards (multi-key commands on keys of one hash
// tag), and kill -9 under appendfsync always, with and without a SAVE.

func zs(pairs ...any) []redis.Z {
	var out []redis.Z
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, redis.Z{Score: float64(pairs[i].(int)), Member: pairs[i+1]})
	}
	return out
}

// strs is a command's reply as strings (nil on an error).
func strs(cmd *redis.Cmd) []string {
	v, _ := cmd.StringSlice()
	return v
}

func check(t *testing.T, what string, got, want any, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: got %#v, want %#v", what, got, want)
	}
}

func TestZSetCommandsEndToEnd(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		ctx := ctx(t)
		a, b, d := "{z}a", "{z}b", "{z}d"

		n, err := c.ZAdd(ctx, a, zs(1, "one", 2, "two", 3, "three")...).Result()
		check(t, "ZADD", n, int64(3), err)
		n, err = c.ZAddArgs(ctx, a, redis.ZAddArgs{GT: true, Ch: true, Members: zs(5, "one", 1, "two")}).Result()
		check(t, "ZADD GT CH", n, int64(1), err)
		f, err := c.ZIncrBy(ctx, a, 0.5, "two").Result()
		check(t, "ZINCRBY", f, 2.5, err)
		f, err = c.ZAddArgsIncr(ctx, a, redis.ZAddArgs{Members: zs(1, "two")}).Result()
		check(t, "ZADD INCR", f, 3.5, err)
		check(t, "ZCARD", c.ZCard(ctx, a).Val(), int64(3), nil)
		check(t, "ZSCORE", c.ZScore(ctx, a, "one").Val(), 5.0, nil)
		check(t, "ZMSCORE", c.ZMScore(ctx, a, "one", "three").Val(), []float64{5, 3}, nil)
		check(t, "ZRANK", c.ZRank(ctx, a, "three").Val(), int64(0), nil)
		check(t, "ZREVRANK", c.ZRevRank(ctx, a, "three").Val(), int64(2), nil)
		check(t, "ZCOUNT", c.ZCount(ctx, a, "(3", "+inf").Val(), int64(2), nil)
		check(t, "ZRANGE", c.ZRange(ctx, a, 0, -1).Val(), []string{"three", "two", "one"}, nil)
		check(t, "ZRANGE WITHSCORES", c.ZRangeWithScores(ctx, a, 0, 0).Val(), []redis.Z{{Score: 3, Member: "three"}}, nil)
		check(t, "ZREVRANGE", strs(c.Do(ctx, "ZREVRANGE", a, 0, 0)), []string{"one"}, nil)
		check(t, "ZRANGEBYSCORE", strs(c.Do(ctx, "ZRANGEBYSCORE", a, "3", "4", "LIMIT", 0, 5)), []string{"three", "two"}, nil)
		check(t, "ZREVRANGEBYSCORE", strs(c.Do(ctx, "ZREVRANGEBYSCORE", a, "+inf", "-inf", "LIMIT", 0, 1)), []string{"one"}, nil)
		check(t, "ZRANGE BYSCORE REV", c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: a, Start: "5", Stop: "(3", ByScore: true, Rev: true}).Val(), []string{"one", "two"}, nil)

		c.ZAdd(ctx, b, zs(0, "a", 0, "b", 0, "c", 0, "d")...)
		check(t, "ZRANGEBYLEX", strs(c.Do(ctx, "ZRANGEBYLEX", b, "[b", "+")), []string{"b", "c", "d"}, nil)
		check(t, "ZREVRANGEBYLEX", strs(c.Do(ctx, "ZREVRANGEBYLEX", b, "(c", "-")), []string{"b", "a"}, nil)
		check(t, "ZLEXCOUNT", c.ZLexCount(ctx, b, "(a", "[c").Val(), int64(2), nil)
		n, err = c.ZRangeStore(ctx, d, redis.ZRangeArgs{Key: b, Start: "[a", Stop: "[b", ByLex: true}).Result()
		check(t, "ZRANGESTORE", n, int64(2), err)
		check(t, "ZREMRANGEBYLEX", c.ZRemRangeByLex(ctx, d, "-", "(b").Val(), int64(1), nil)
		check(t, "ZREMRANGEBYRANK", c.ZRemRangeByRank(ctx, b, 0, 0).Val(), int64(1), nil)
		check(t, "ZREMRANGEBYSCORE", c.ZRemRangeByScore(ctx, d, "-inf", "inf").Val(), int64(1), nil)
		check(t, "EXISTS", c.Exists(ctx, d).Val(), int64(0), nil)
		check(t, "ZREM", c.ZRem(ctx, b, "b", "x").Val(), int64(1), nil)

		c.ZAdd(ctx, b, zs(1, "one", 10, "ten")...)
		check(t, "ZUNION", c.ZUnionWithScores(ctx, redis.ZStore{Keys: []string{a, b}, Weights: []float64{1, 2}}).Val(),
			[]redis.Z{{Score: 0, Member: "c"}, {Score: 0, Member: "d"}, {Score: 3, Member: "three"}, {Score: 3.5, Member: "two"}, {Score: 7, Member: "one"}, {Score: 20, Member: "ten"}}, nil)
		check(t, "ZINTER", c.ZInterWithScores(ctx, &redis.ZStore{Keys: []string{a, b}, Aggregate: "MAX"}).Val(), []redis.Z{{Score: 5, Member: "one"}}, nil)
		check(t, "ZDIFF", c.ZDiff(ctx, a, b).Val(), []string{"three", "two"}, nil)
		check(t, "ZINTERCARD", c.ZInterCard(ctx, 0, a, b).Val(), int64(1), nil)
		check(t, "ZUNIONSTORE", c.ZUnionStore(ctx, d, &redis.ZStore{Keys: []string{a, b}}).Val(), int64(6), nil)
		check(t, "ZINTERSTORE", c.ZInterStore(ctx, d, &redis.ZStore{Keys: []string{a, b}}).Val(), int64(1), nil)
		check(t, "ZDIFFSTORE", c.ZDiffStore(ctx, d, a, b).Val(), int64(2), nil)
		check(t, "ZPOPMIN", c.ZPopMin(ctx, d).Val(), []redis.Z{{Score: 3, Member: "three"}}, nil)
		check(t, "ZPOPMAX", c.ZPopMax(ctx, a, 2).Val(), []redis.Z{{Score: 5, Member: "one"}, {Score: 3.5, Member: "two"}}, nil)
		key, got, err := c.ZMPop(ctx, "min", 1, "{z}none", b).Result()
		check(t, "ZMPOP", fmt.Sprint(key, got), fmt.Sprint(b, []redis.Z{{Score: 0, Member: "c"}}), err)
		m, err := c.ZRandMember(ctx, a, 1).Result()
		check(t, "ZRANDMEMBER", m, []string{"three"}, err)
		keys, cursor, err := c.ZScan(ctx, a, 0, "*", 10).Result()
		check(t, "ZSCAN", fmt.Sprint(keys, cursor), "[three 3] 0", err)

		c.Set(ctx, "{z}str", "x", 0)
		if err := c.ZAdd(ctx, "{z}str", redis.Z{Score: 1, Member: "a"}).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
			t.Fatalf("ZADD on a string: %v", err)
		}
		if err := c.ZAdd(ctx, a, redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}).Err(); err != nil {
			t.Fatal(err)
		}
		check(t, "TYPE", c.Type(ctx, a).Val(), "zset", nil)
		check(t, "OBJECT ENCODING", c.ObjectEncoding(ctx, a).Val(), "listpack", nil)

		// A set past the listpack limit, and RESP3 doubles.
		big := make([]redis.Z, 200)
		for i := range big {
			big[i] = redis.Z{Score: float64(i) / 4, Member: "m" + strconv.Itoa(i)}
		}
		c.ZAdd(ctx, "{z}big", big...)
		check(t, "OBJECT ENCODING big", c.ObjectEncoding(ctx, "{z}big").Val(), "skiplist", nil)
		c3 := s.client(3)
		check(t, "RESP3 ZSCORE", c3.ZScore(ctx, "{z}big", "m1").Val(), 0.25, nil)
		check(t, "RESP3 ZRANGE WITHSCORES", c3.ZRangeWithScores(ctx, "{z}big", 1, 2).Val(), []redis.Z{{Score: 0.25, Member: "m1"}, {Score: 0.5, Member: "m2"}}, nil)
		check(t, "ZRANK big", c3.ZRank(ctx, "{z}big", "m150").Val(), int64(150), nil)

		// The limits are CONFIG SET-able and reach every shard.
		if err := c.ConfigSet(ctx, "zset-max-listpack-entries", "0").Err(); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"{x}cfg", "{y}cfg", "{w}cfg"} {
			c.ZAdd(ctx, k, redis.Z{Score: 1, Member: "a"})
			check(t, "OBJECT ENCODING "+k, c.ObjectEncoding(ctx, k).Val(), "skiplist", nil)
		}
		c.ConfigSet(ctx, "zset-max-listpack-entries", "128")
		c.ConfigSet(ctx, "zset-max-listpack-value", "1")
		c.ZAdd(ctx, "{x}cfg2", redis.Z{Score: 1, Member: "ab"})
		check(t, "OBJECT ENCODING long member", c.ObjectEncoding(ctx, "{x}cfg2").Val(), "skiplist", nil)
	})
}

// zsetState reads every key's content and encoding.
func zsetState(t *testing.T, c *redis.Client, keys []string) map[string]string {
	t.Helper()
	ctx := ctx(t)
	out := map[string]string{}
	for _, k := range keys {
		z, err := c.ZRangeWithScores(ctx, k, 0, -1).Result()
		if err != nil {
			t.Fatalf("ZRANGE %s: %v", k, err)
		}
		enc, _ := c.ObjectEncoding(ctx, k).Result()
		out[k] = fmt.Sprint(z, " ", enc)
	}
	return out
}

// writeZSets does a round of every kind of sorted-set write.
func writeZSets(t *testing.T, c *redis.Client, round int) []string {
	t.Helper()
	ctx := ctx(t)
	p := fmt.Sprintf("{r%d}", round)
	keys := []string{p + "small", p + "big", p + "long", p + "union", p + "range", p + "popped"}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		must(c.ZAdd(ctx, p+"small", redis.Z{Score: float64(i % 7), Member: "s" + strconv.Itoa(i%20)}).Err())
		must(c.ZIncrBy(ctx, p+"small", 0.1, "s"+strconv.Itoa(i%5)).Err())
	}
	for i := range 400 {
		must(c.ZAdd(ctx, p+"big", redis.Z{Score: float64(i * 3 % 101), Member: "b" + strconv.Itoa(i)}).Err())
	}
	must(c.ZRem(ctx, p+"big", "b1", "b2", "b3").Err())
	must(c.ZRemRangeByScore(ctx, p+"big", "10", "(20").Err())
	must(c.ZAdd(ctx, p+"long", redis.Z{Score: 1, Member: strings.Repeat("x", 100)}, redis.Z{Score: -1, Member: "y"}).Err())
	must(c.ZAddArgs(ctx, p+"long", redis.ZAddArgs{GT: true, Members: zs(5, "y")}).Err())
	must(c.ZUnionStore(ctx, p+"union", &redis.ZStore{Keys: []string{p + "small", p + "long"}, Weights: []float64{2, 1}}).Err())
	must(c.ZRangeStore(ctx, p+"range", redis.ZRangeArgs{Key: p + "big", Start: 0, Stop: 9}).Err())
	must(c.ZAdd(ctx, p+"popped", zs(1, "a", 2, "b", 3, "c", 4, "d")...).Err())
	must(c.ZPopMin(ctx, p+"popped", 1).Err())
	must(c.ZPopMax(ctx, p+"popped").Err())
	must(c.ZAdd(ctx, p+"gone", zs(1, "a")...).Err())
	must(c.ZPopMin(ctx, p+"gone").Err())
	return append(keys, p+"gone")
}

// TestZSetsSurviveKill9 writes sorted sets under appendfsync always, kills
// the server with SIGKILL, restarts it and checks every set exactly; with
// a SAVE in between, the sets come back from heap records plus the WAL
// tail.
func TestZSetsSurviveKill9(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		for _, save := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/save=%v", backend, save), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				s := startServerIn(t, dir, backend, 2, "--appendfsync", "always")
				c := s.client(2)
				keys := writeZSets(t, c, 1)
				if save {
					if err := c.Save(ctx(t)).Err(); err != nil {
						t.Fatal(err)
					}
				}
				keys = append(keys, writeZSets(t, c, 2)...)
				// Changes to sets the SAVE wrote, after it.
				if err := c.ZAdd(ctx(t), "{r1}big", redis.Z{Score: 1000, Member: "late"}).Err(); err != nil {
					t.Fatal(err)
				}
				if err := c.ZRem(ctx(t), "{r1}small", "s1").Err(); err != nil {
					t.Fatal(err)
				}
				want := zsetState(t, c, keys)
				s.kill9()
				s2 := startServerIn(t, dir, backend, 2)
				got := zsetState(t, s2.client(2), keys)
				for _, k := range keys {
					if got[k] != want[k] {
						t.Errorf("%s after kill -9: %s\nwant %s", k, got[k], want[k])
					}
				}
				if !strings.Contains(want["{r1}big"], "skiplist") || !strings.Contains(want["{r1}small"], "listpack") {
					t.Fatalf("the test should cover both encodings: %s / %s", want["{r1}big"], want["{r1}small"])
				}
			})
		}
	}
}
