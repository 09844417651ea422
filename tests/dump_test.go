package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// dumpFixture is a command that makes one test value, and whether its
// OBJECT ENCODING is the same in moond and redis-server 7.0 (moond keeps
// small sets of strings in a listpack, as Redis 7.2 does; 7.0 in a
// hashtable).
type dumpFixture struct {
	key     string
	cmd     []any
	sameEnc bool
}

// dumpFixtures are values of every type and encoding: strings short,
// long and compressible (Redis dumps those LZF-compressed), long and
// random, integers of each width, binary; lists small, large (many
// listpack nodes), with an element over 8 KiB (a plain node); intsets,
// small and large sets; sorted sets and hashes small and large; a
// HyperLogLog.
// loadDumpFixtures writes every fixture into rs and returns them.
func loadDumpFixtures(t *testing.T, cx context.Context, rs *redis.Client) []dumpFixture {
	t.Helper()
	fixtures := dumpFixtures()
	for _, f := range fixtures {
		if err := rs.Do(cx, f.cmd...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return fixtures
}

func dumpFixtures() []dumpFixture {
	rng := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 1000)
	for i := range random {
		random[i] = byte(rng.IntN(256))
	}
	bin := "\x00\x01\xff\r\n"
	many := func(cmd string, key string, n int, f func(i int) []any) []any {
		out := []any{cmd, key}
		for i := range n {
			out = append(out, f(i)...)
		}
		return out
	}
	fx := []dumpFixture{
		{"s10", []any{"SET", "s10", "0123456789"}, true},
		{"s1000", []any{"SET", "s1000", strings.Repeat("abcdefghij", 100)}, true},
		{"srandom", []any{"SET", "srandom", string(random)}, true},
		{"sbin", []any{"SET", "sbin", bin}, true},
		{"sempty", []any{"SET", "sempty", ""}, true},
		{"i8", []any{"SET", "i8", "-7"}, true},
		{"i16", []any{"SET", "i16", "30000"}, true},
		{"i32", []any{"SET", "i32", "-2147483648"}, true},
		{"i64", []any{"SET", "i64", "9223372036854775807"}, true},
		{"i00", []any{"SET", "i00", "007"}, true},
		{"hll", []any{"PFADD", "hll", "a", "b", "c"}, true},
		{"lsmall", []any{"RPUSH", "lsmall", "a", "", "12", "-5000", "1234567890123", bin, strings.Repeat("x", 100)}, true},
		{"llarge", many("RPUSH", "llarge", 3000, func(i int) []any { return []any{fmt.Sprintf("elem-%d-%s", i, strings.Repeat("y", i%70))} }), true},
		{"lplain", []any{"RPUSH", "lplain", "a", strings.Repeat("z", 10000), "b"}, true},
		{"sintset", []any{"SADD", "sintset", "1", "-2", "100000", "70000000000"}, true},
		{"sintlarge", many("SADD", "sintlarge", 600, func(i int) []any { return []any{i * 7} }), true},
		{"ssmall", []any{"SADD", "ssmall", "a", "", "b", bin}, false},
		{"slarge", many("SADD", "slarge", 1000, func(i int) []any { return []any{fmt.Sprintf("m%d", i)} }), true},
		{"zsmall", []any{"ZADD", "zsmall", "1", "a", "-inf", "", "inf", bin, "2.5", "12", "0.1", "x"}, true},
		{"zlarge", many("ZADD", "zlarge", 500, func(i int) []any { return []any{float64(i) / 3, fmt.Sprintf("z%d", i)} }), true},
		{"hsmall", []any{"HSET", "hsmall", "f", "v", "", "empty", "n", "123", bin, bin}, true},
		{"hlongvalue", []any{"HSET", "hlongvalue", "f", strings.Repeat("v", 100)}, true},
		{"hlarge", many("HSET", "hlarge", 1000, func(i int) []any { return []any{fmt.Sprintf("f%d", i), i} }), true},
	}
	return fx
}

// valueOf reads key back with its type's commands, canonically (a set's
// members and a hash's pairs sorted), with its encoding when enc.
func valueOf(t *testing.T, c *redis.Client, key string, enc bool) string {
	t.Helper()
	cx := ctx(t)
	typ := c.Type(cx, key).Val()
	var body string
	switch typ {
	case "string":
		body = fmt.Sprintf("%q", c.Get(cx, key).Val())
	case "list":
		body = fmt.Sprintf("%q", c.LRange(cx, key, 0, -1).Val())
	case "set":
		ms := c.SMembers(cx, key).Val()
		slices.Sort(ms)
		body = fmt.Sprintf("%q", ms)
	case "zset":
		body = fmt.Sprintf("%v", c.ZRangeWithScores(cx, key, 0, -1).Val())
	case "hash":
		var pairs []string
		for f, v := range c.HGetAll(cx, key).Val() {
			pairs = append(pairs, fmt.Sprintf("%q=%q", f, v))
		}
		slices.Sort(pairs)
		body = strings.Join(pairs, " ")
	default:
		return "type " + typ
	}
	if enc {
		typ += "/" + c.ObjectEncoding(cx, key).Val()
	}
	return typ + " " + body
}

// TestDumpRestoreWithRedisServer dumps every fixture from redis-server 7.0
// and restores it in moond (1 and 2 shards), then dumps moond's copy and
// restores it in redis-server: the value reads back the same each way.
func TestDumpRestoreWithRedisServer(t *testing.T) {
	rs := startRedisServer(t)
	cx := ctx(t)
	fixtures := loadDumpFixtures(t, cx, rs)
	for _, shards := range []int{1, 2} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			mc := startServer(t, "pool", shards).client(2)
			for _, f := range fixtures {
				p, err := rs.Dump(cx, f.key).Result()
				if err != nil {
					t.Fatal(err)
				}
				if err := mc.Restore(cx, f.key, 0, p).Err(); err != nil {
					t.Errorf("%s: RESTORE of redis-server's payload: %v", f.key, err)
					continue
				}
				// What redis-server itself makes of its payload (a short
				// raw string, PFADD's, comes back embstr).
				ref := fmt.Sprintf("ref%d-%s", shards, f.key)
				if err := rs.Restore(cx, ref, 0, p).Err(); err != nil {
					t.Fatal(err)
				}
				want := valueOf(t, rs, ref, f.sameEnc)
				if got := valueOf(t, mc, f.key, f.sameEnc); got != want {
					t.Errorf("%s restored in moond as\n %.300s\nwant\n %.300s", f.key, got, want)
				}
				back := fmt.Sprintf("back%d-%s", shards, f.key)
				p2, err := mc.Dump(cx, f.key).Result()
				if err != nil {
					t.Fatal(err)
				}
				if f.key == "s1000" && len(p2) > 200 {
					t.Errorf("moond's DUMP of a compressible 1000-byte string is %d bytes: not LZF", len(p2))
				}
				if err := rs.Restore(cx, back, 0, p2).Err(); err != nil {
					t.Errorf("%s: redis-server refuses moond's payload: %v", f.key, err)
					continue
				}
				if got := valueOf(t, rs, back, f.sameEnc); got != want {
					t.Errorf("%s restored in redis-server from moond as\n %.300s\nwant\n %.300s", f.key, got, want)
				}
			}
		})
	}
}

// TestRestoreRepliesMatchRedisServer runs RESTORE's options and errors
// against moond and redis-server 7.0 and compares the replies, and the
// TTL, idle time and LFU counter they leave.
func TestRestoreRepliesMatchRedisServer(t *testing.T) {
	rs := startRedisServer(t)
	mc := startServer(t, "pool", 2).client(2)
	cx := ctx(t)
	reply := func(c *redis.Client, args ...any) string {
		v, err := c.Do(cx, args...).Result()
		return fmt.Sprintf("%#v %v", v, err)
	}
	both := func(args ...any) string {
		t.Helper()
		m, r := reply(mc, args...), reply(rs, args...)
		if m != r {
			t.Errorf("%.80q:\n moond: %s\n redis: %s", args, m, r)
		}
		return m
	}
	both("SET", "foo", "bar")
	p := rs.Dump(cx, "foo").Val()
	badSum := p[:len(p)-1] + string(p[len(p)-1]^1)
	// A version above 10, with a correct checksum, from moond's DUMP
	// format rules: type, object, version, CRC.
	badData := "\x01\x00" // an empty RDB_TYPE_LIST
	badData = withFooter(badData, 10)
	v11 := withFooter("\x00\x01x", 11)
	now := time.Now().UnixMilli()
	for _, args := range [][]any{
		{"RESTORE", "foo", "0", p},
		{"RESTORE", "foo", "-1", badSum},
		{"RESTORE", "foo", "0", p, "NOPE"},
		{"RESTORE", "new", "-1", p},
		{"RESTORE", "new", "x", p},
		{"RESTORE", "new", "0", badSum},
		{"RESTORE", "new", "0", "short"},
		{"RESTORE", "new", "0", v11},
		{"RESTORE", "new", "0", badData},
		{"RESTORE", "new", "0", p, "IDLETIME", "-1"},
		{"RESTORE", "new", "0", p, "IDLETIME", "x"},
		{"RESTORE", "new", "0", p, "IDLETIME"},
		{"RESTORE", "new", "0", p, "FREQ", "256"},
		{"RESTORE", "new", "0", p, "FREQ", "-1"},
		{"RESTORE", "new", "0", p, "IDLETIME", "1", "FREQ", "1"},
		{"RESTORE", "new", "0", p, "FREQ", "1", "IDLETIME", "1"},
		{"RESTORE", "new"},
		{"DUMP"},
		{"DUMP", "nokey"},
		{"EXISTS", "new"},
		{"SET", "other", "x"},
		{"RESTORE", "other", "0", p, "REPLACE", "ABSTTL"},
		{"GET", "other"},
		{"TTL", "other"},
		{"RESTORE", "past", strconv.FormatInt(now-1000, 10), p, "ABSTTL"},
		{"EXISTS", "past"},
		{"RESTORE", "other", "1", p, "REPLACE", "ABSTTL"},
		{"EXISTS", "other"},
		{"RESTORE", "ttl", "100000", p},
		{"RESTORE", "abs", strconv.FormatInt(now+100000, 10), p, "ABSTTL"},
		{"RESTORE", "idle", "0", p, "IDLETIME", "1000"},
		{"RESTORE", "wrongtype", "0", p, "REPLACE"},
		{"TYPE", "wrongtype"},
	} {
		both(args...)
	}
	for _, k := range []string{"ttl", "abs"} {
		m, r := mc.PTTL(cx, k).Val(), rs.PTTL(cx, k).Val()
		if m < 90*time.Second || m > 100*time.Second || r < 90*time.Second || r > 100*time.Second {
			t.Errorf("PTTL %s: moond %v, redis %v, want about 100s", k, m, r)
		}
	}
	m, r := mc.ObjectIdleTime(cx, "idle").Val(), rs.ObjectIdleTime(cx, "idle").Val()
	if m < 1000*time.Second || m > 1002*time.Second || r < 1000*time.Second || r > 1002*time.Second {
		t.Errorf("OBJECT IDLETIME after IDLETIME 1000: moond %v, redis %v", m, r)
	}
	both("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
	both("RESTORE", "freq", "0", p, "FREQ", "100")
	both("OBJECT", "FREQ", "freq")
	both("RESTORE", "freq2", "0", p, "IDLETIME", "100")
	both("OBJECT", "FREQ", "freq2")
	both("CONFIG", "SET", "maxmemory-policy", "noeviction")
	// moond's COMMAND INFO has no tips nor key specs (server/cmd_command.go):
	// the rest must match.
	for _, name := range []string{"dump", "restore"} {
		m := mc.Do(cx, "COMMAND", "INFO", name).Val().([]any)[0].([]any)
		r := rs.Do(cx, "COMMAND", "INFO", name).Val().([]any)[0].([]any)
		if fmt.Sprint(m[:7]) != fmt.Sprint(r[:7]) {
			t.Errorf("COMMAND INFO %s:\n moond: %v\n redis: %v", name, m[:7], r[:7])
		}
	}
}

// withFooter appends a DUMP footer of version v to obj, computing the
// CRC-64 as redis-server does (a test-local copy of the algorithm, so
// that the test does not trust the code it checks).
func withFooter(obj string, v uint16) string {
	b := append([]byte(obj), byte(v), byte(v>>8))
	var crc uint64
	for _, c := range b {
		crc ^= uint64(c)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0x95ac9329ac4bc9b5
			} else {
				crc >>= 1
			}
		}
	}
	for i := range 8 {
		b = append(b, byte(crc>>(8*i)))
	}
	return string(b)
}

// TestRestoreIsDurable restores a value of every kind, kills moond and
// restarts it: the values and their TTLs come back.
func TestRestoreIsDurable(t *testing.T) {
	rs := startRedisServer(t)
	cx := ctx(t)
	fixtures := loadDumpFixtures(t, cx, rs)
	dir := t.TempDir()
	s := startServerIn(t, dir, "pool", 2, "--appendfsync", "always")
	mc := s.client(2)
	want := map[string]string{}
	for i, f := range fixtures {
		ttl := time.Duration(0)
		if i%2 == 1 {
			ttl = time.Hour
		}
		if err := mc.Restore(cx, f.key, ttl, rs.Dump(cx, f.key).Val()).Err(); err != nil {
			t.Fatal(err)
		}
		want[f.key] = valueOf(t, mc, f.key, false)
	}
	s.kill9()
	mc = startServerIn(t, dir, "pool", 2, "--appendfsync", "always").client(2)
	for i, f := range fixtures {
		if got := valueOf(t, mc, f.key, false); got != want[f.key] {
			t.Errorf("%s after restart: %.200s, want %.200s", f.key, got, want[f.key])
		}
		ttl := mc.TTL(cx, f.key).Val()
		if (i%2 == 1) != (ttl > 59*time.Minute) {
			t.Errorf("%s after restart: TTL %v", f.key, ttl)
		}
	}
}

// TestRestoreServesBlockedPop: a list RESTORE creates serves a client
// blocked on its key, as Redis's dbAdd signals the key ready (2 shards:
// the waiter's connection may be on another shard than the key).
func TestRestoreServesBlockedPop(t *testing.T) {
	s := startServer(t, "pool", 2)
	mc := s.client(2)
	cx := ctx(t)
	mc.RPush(cx, "src", "a", "b")
	p := mc.Dump(cx, "src").Val()
	for _, key := range []string{"bk1", "bk2", "bk3"} {
		waiter := s.client(2)
		done := make(chan result, 1)
		go func() {
			v, err := waiter.BLPop(cx, 10*time.Second, key).Result()
			done <- result{v, err}
		}()
		waitBlocked(t, mc, 1)
		if err := mc.Restore(cx, key, 0, p).Err(); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-done:
			if r.err != nil || !slices.Equal(r.val, []string{key, "a"}) {
				t.Fatalf("BLPOP %s = %q, %v", key, r.val, r.err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("BLPOP %s was not served by RESTORE", key)
		}
		if got := mc.LRange(cx, key, 0, -1).Val(); !slices.Equal(got, []string{"b"}) {
			t.Fatalf("%s after the pop: %q", key, got)
		}
		waiter.Close()
	}
}
