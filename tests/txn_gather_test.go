package tests

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Commands that read keys of one shard to write keys of another, or that
// compute over keys of several shards, compared with redis-server 7.0
// reply for reply and key for key: moond with two shards, every script's
// keys spread over both (keyOnShard).
func TestCrossShardCommandsMatchRedis(t *testing.T) {
	ref := startRedisServer(t)
	k := func(prefix string, shard int) string { return keyOnShard("x"+prefix, shard) }
	a, b, c, d := k("a", 0), k("b", 1), k("c", 0), k("d", 1)
	scripts := [][][]string{
		{{"SET", a, "1"}, {"PEXPIRE", a, "100000"}, {"RENAME", a, b}, {"TTL", b}, {"RENAMENX", b, c}, {"SET", d, "x"}, {"RENAMENX", c, d}, {"RENAME", a, c}},
		{{"RPUSH", a, "1", "2", "3"}, {"COPY", a, b}, {"COPY", a, b}, {"COPY", a, b, "REPLACE"}, {"LPUSH", b, "0"}, {"COPY", b, c, "DB", "3"}, {"SELECT", "3"}, {"LRANGE", c, "0", "-1"}, {"SELECT", "0"}},
		{{"SADD", a, "1", "2", "3"}, {"SADD", b, "2", "3", "4"}, {"SADD", c, "3", "4", "5"}, {"SMOVE", a, b, "1"}, {"SMOVE", a, d, "2"}, {"SMOVE", a, d, "9"}, {"SINTER", b, c}, {"SUNION", a, b, c}, {"SDIFF", b, c}, {"SINTERCARD", "3", a, b, c}, {"SINTERCARD", "2", b, c, "LIMIT", "1"}, {"SINTERSTORE", d, b, c}, {"SUNIONSTORE", a, b, c, d}, {"SDIFFSTORE", c, a, b}, {"SINTERSTORE", d, b, "missing"}},
		{{"RPUSH", a, "1", "2", "3"}, {"LMOVE", a, b, "LEFT", "RIGHT"}, {"LMOVE", a, b, "RIGHT", "LEFT"}, {"RPOPLPUSH", a, b}, {"RPOPLPUSH", a, b}, {"LMPOP", "2", c, b, "LEFT", "COUNT", "2"}, {"SET", c, "str"}, {"LMOVE", b, c, "LEFT", "LEFT"}},
		{{"ZADD", a, "1", "m1", "2", "m2", "3", "m3"}, {"ZADD", b, "10", "m2", "20", "m3", "30", "m4"}, {"ZUNIONSTORE", c, "2", a, b, "WEIGHTS", "2", "1"}, {"ZINTERSTORE", d, "2", a, b, "AGGREGATE", "MAX"}, {"ZDIFFSTORE", c, "2", b, a}, {"ZUNION", "2", a, b, "WITHSCORES"}, {"ZINTER", "2", a, b}, {"ZDIFF", "2", a, b, "WITHSCORES"}, {"ZINTERCARD", "2", a, b}, {"ZRANGESTORE", d, a, "0", "1"}, {"ZMPOP", "2", c, a, "MAX", "COUNT", "2"}},
		{{"SET", a, "\xff\x0f"}, {"SET", b, "\x0f\xf0\x55"}, {"BITOP", "AND", c, a, b}, {"BITOP", "OR", d, a, b}, {"BITOP", "XOR", c, a, b, d}, {"BITOP", "NOT", d, b}, {"GET", c}, {"GET", d}, {"BITOP", "AND", c, "missing1", "missing2"}},
		{{"PFADD", a, "a", "b", "c"}, {"PFADD", b, "c", "d"}, {"PFCOUNT", a, b}, {"PFMERGE", c, a, b}, {"PFCOUNT", c}, {"SET", d, "notahll"}, {"PFMERGE", c, d}},
		{{"SET", a, "ohmytext"}, {"SET", b, "mynewtext"}, {"LCS", a, b}, {"LCS", a, b, "LEN"}},
		{{"MSETNX", a, "1", b, "2"}, {"MSETNX", b, "3", c, "4"}, {"MGET", a, b, c}, {"SADD", c, "x"}, {"SINTERSTORE", a, c, b}},
		// In a transaction: gathered commands between the others, in order.
		{{"SADD", a, "1", "2"}, {"SADD", b, "2", "3"}, {"MULTI"}, {"SET", c, "v"}, {"SINTERSTORE", d, a, b}, {"SMEMBERS", d},
			{"RENAME", c, a}, {"GET", a}, {"SUNION", b, d}, {"INCR", c}, {"SELECT", "2"}, {"SET", c, "in2"}, {"COPY", c, d}, {"EXEC"},
			{"GET", d}, {"SELECT", "0"}},
	}
	check := func(t *testing.T, pool *redis.Client) [][]string {
		var out [][]string
		cl := pool.Conn() // one connection: MULTI and SELECT hold on it
		defer cl.Close()
		for _, script := range scripts {
			cl.Do(ctx(t), "FLUSHALL")
			var got []string
			for _, cmd := range script {
				args := make([]any, len(cmd))
				for i, s := range cmd {
					args[i] = s
				}
				v, err := cl.Do(ctx(t), args...).Result()
				got = append(got, fmt.Sprintf("%q -> %v %v", cmd, v, errText(err)))
			}
			for _, key := range []string{a, b, c, d} {
				typ, _ := cl.Type(ctx(t), key).Result()
				got = append(got, fmt.Sprintf("%s: %s %s", key, typ, dumpValue(t, cl, key, typ)))
			}
			out = append(out, got)
		}
		return out
	}
	want := check(t, ref)
	eachTwoShardServer(t, func(t *testing.T, s *server) {
		got := check(t, s.client(2))
		for i := range want {
			for j := range want[i] {
				if j >= len(got[i]) || got[i][j] != want[i][j] {
					t.Errorf("script %d step %d:\n  moond %s\n  redis %s", i, j, stepAt(got[i], j), want[i][j])
				}
			}
		}
	})
}

func errText(err error) string {
	if err == nil || err == redis.Nil {
		return ""
	}
	return "ERR: " + err.Error()
}

func stepAt(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(missing)"
}

// dumpValue shows a key's value whatever its type, members sorted where
// the type has no order.
func dumpValue(t *testing.T, cl *redis.Conn, key, typ string) string {
	cx := ctx(t)
	var v any
	switch typ {
	case "string":
		v = cl.Get(cx, key).Val()
	case "list":
		v = cl.LRange(cx, key, 0, -1).Val()
	case "set":
		m := cl.SMembers(cx, key).Val()
		v = strings.Join(slices.Sorted(slices.Values(m)), ",")
	case "zset":
		v = cl.ZRangeWithScores(cx, key, 0, -1).Val()
	case "hash":
		v = cl.HGetAll(cx, key).Val()
	}
	return fmt.Sprint(v, " ttl ", cl.TTL(cx, key).Val() > 0)
}
