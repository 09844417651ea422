package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Keyspace notifications compared with redis-server 7.0, message for
// message: a subscriber to __key*@*__:* and a writer run the same script
// against redis-server and against moond (one shard, where each message
// reaches its subscriber before any command that comes in after the
// write's reply), and the transcripts (tracking_redis_test.go's tenv:
// every client drained with a PING after each step) must be equal. The
// scripts are the scenarios of Redis's tests/unit/pubsub.tcl "Keyspace
// notifications" tests, and every command of every type moond has.

// notifyScript is the writer's commands of the all-types scenario: each
// family's writes, their no-op forms, the ones that empty a key, and
// reads that miss.
var notifyScript = [][]string{
	// Strings.
	{"SET", "foo", "bar"}, {"SET", "foo", "baz", "XX"}, {"SET", "foo", "x", "NX"},
	{"SET", "foo", "bar", "EX", "100"}, {"SET", "foo", "v", "KEEPTTL"}, {"SET", "nk", "v", "GET"},
	{"SETNX", "sn", "1"}, {"SETNX", "sn", "2"}, {"SETEX", "se", "100", "v"}, {"PSETEX", "pse", "100000", "v"},
	{"GETSET", "foo", "g"}, {"GETDEL", "foo"}, {"GETDEL", "foo"},
	{"SET", "ge", "v"}, {"GETEX", "ge", "EX", "100"}, {"GETEX", "ge", "PERSIST"}, {"GETEX", "ge", "PERSIST"},
	{"GETEX", "ge", "PXAT", "1"}, {"GETEX", "ge"},
	{"MSET", "m1", "1", "m2", "2"}, {"MSETNX", "m1", "1", "m3", "3"}, {"MSETNX", "m4", "4", "m5", "5"},
	{"APPEND", "ap", "x"}, {"APPEND", "ap", "y"},
	{"SETRANGE", "sr", "2", "x"}, {"SETRANGE", "sr", "0", "y"}, {"SETRANGE", "sr", "0", ""}, {"SETRANGE", "sr2", "0", ""},
	{"INCR", "cnt"}, {"DECR", "cnt"}, {"INCRBY", "cnt", "5"}, {"DECRBY", "cnt", "2"}, {"INCRBYFLOAT", "cnt", "1.5"},
	{"INCR", "ap"}, {"GET", "nosuch"}, {"MGET", "m1", "nosuch", "m2"}, {"STRLEN", "nosuch"}, {"GETRANGE", "nosuch", "0", "1"},
	{"LCS", "m1", "nosuch"},
	// Bitmaps and HyperLogLogs.
	{"SETBIT", "bm", "7", "1"}, {"SETBIT", "bm", "7", "1"}, {"SETBIT", "bm", "7", "0"}, {"GETBIT", "nosuch", "0"},
	{"BITFIELD", "bf", "SET", "u8", "0", "1"}, {"BITFIELD", "bf", "GET", "u8", "0"}, {"BITFIELD", "bf", "INCRBY", "u8", "0", "0"},
	{"BITFIELD_RO", "nosuch", "GET", "u8", "0"},
	{"BITOP", "OR", "bo", "bm", "bf"}, {"BITOP", "AND", "bo", "nosuch", "nosuch2"}, {"BITCOUNT", "nosuch"}, {"BITPOS", "nosuch", "1"},
	{"PFADD", "hll", "a", "b"}, {"PFADD", "hll", "a"}, {"PFADD", "hll2"}, {"PFCOUNT", "hll"}, {"PFCOUNT", "hll", "nosuch"},
	{"PFMERGE", "hll3", "hll", "nosuch"}, {"PFMERGE", "hll3", "hll"},
	// Generic.
	{"DEL", "m1", "nosuch", "m2"}, {"UNLINK", "m3"}, {"EXISTS", "m4", "nosuch"}, {"TYPE", "nosuch"}, {"TOUCH", "m4", "nosuch"},
	{"TTL", "nosuch"}, {"PTTL", "m4"}, {"EXPIRETIME", "nosuch"}, {"OBJECT", "ENCODING", "nosuch"},
	{"RENAME", "m4", "r1"}, {"SET", "r2", "x"}, {"RENAME", "r1", "r2"}, {"RENAME", "r2", "r2"}, {"RENAMENX", "r2", "m5"},
	{"RENAMENX", "r2", "r3"}, {"EXPIRE", "r3", "100"}, {"RENAME", "r3", "r4"},
	{"COPY", "r4", "c1"}, {"COPY", "r4", "c1"}, {"COPY", "r4", "c1", "REPLACE"}, {"COPY", "r4", "c2", "DB", "3"}, {"COPY", "nosuch", "c3"},
	{"MOVE", "c1", "4"}, {"MOVE", "nosuch", "4"}, {"SET", "c1", "x"}, {"MOVE", "c1", "4"},
	{"EXPIRE", "m5", "100"}, {"EXPIRE", "m5", "50", "NX"}, {"EXPIRE", "m5", "200", "GT"}, {"PEXPIRE", "m5", "100000"},
	{"EXPIREAT", "m5", "99999999999"}, {"PEXPIREAT", "m5", "99999999999999"}, {"PERSIST", "m5"}, {"PERSIST", "m5"},
	{"EXPIRE", "m5", "-1"}, {"EXPIRE", "nosuch", "10"}, {"SET", "pa", "1"}, {"PEXPIREAT", "pa", "1"},
	{"SET", "rs", "bar"}, {"DUMP", "rs"}, {"DUMP", "nosuch"}, {"RESTORE", "rs", "0", barPayload},
	{"RESTORE", "rs", "0", barPayload, "REPLACE"}, {"RESTORE", "rs2", "100000", barPayload},
	{"RESTORE", "rs", "1", barPayload, "REPLACE", "ABSTTL"}, {"RESTORE", "rs3", "1", barPayload, "ABSTTL"},
	{"RESTORE", "rs3", "0", "bad"},
	// Lists.
	{"LPUSH", "l", "a", "b"}, {"RPUSH", "l", "c"}, {"LPUSHX", "nol", "a"}, {"RPUSHX", "l", "d"},
	{"LINSERT", "l", "BEFORE", "a", "z"}, {"LINSERT", "l", "BEFORE", "nosuch", "z"}, {"LSET", "l", "0", "q"},
	{"LPOP", "l"}, {"RPOP", "l", "2"}, {"LRANGE", "nol", "0", "-1"}, {"LLEN", "l"}, {"LINDEX", "nol", "0"},
	{"RPUSH", "l", "a", "b", "a", "c"}, {"LREM", "l", "0", "nosuch"}, {"LREM", "l", "1", "a"},
	{"LTRIM", "l", "0", "-1"}, {"LTRIM", "l", "1", "2"}, {"LMOVE", "l", "l2", "LEFT", "RIGHT"}, {"LMOVE", "l", "l", "LEFT", "RIGHT"},
	{"RPOPLPUSH", "l", "l2"}, {"LMOVE", "l2", "l3", "RIGHT", "LEFT"}, {"LMPOP", "2", "nol", "l2", "LEFT", "COUNT", "5"},
	{"BLPOP", "nol", "l3", "0"}, {"RPUSH", "l4", "x"}, {"BLMOVE", "l4", "l5", "LEFT", "LEFT", "0"},
	{"BRPOPLPUSH", "l5", "l6", "0"}, {"BLMPOP", "0", "1", "l6", "RIGHT"}, {"BRPOP", "nol", "0.01"},
	{"RPUSH", "lt", "a", "b"}, {"LTRIM", "lt", "5", "6"}, {"RPUSH", "lr", "a"}, {"LREM", "lr", "0", "a"},
	// Hashes.
	{"HSET", "h", "f", "v", "g", "w"}, {"HSET", "h", "f", "v"}, {"HMSET", "h", "x", "y"}, {"HSETNX", "h", "f", "v"},
	{"HSETNX", "h", "n", "v"}, {"HINCRBY", "h", "i", "2"}, {"HINCRBYFLOAT", "h", "fl", "2.5"}, {"HINCRBY", "h2", "i", "1"},
	{"HDEL", "h", "nosuch"}, {"HDEL", "h", "f", "g"}, {"HDEL", "h2", "i"}, {"HGET", "nosuch", "f"}, {"HGETALL", "nosuch"},
	{"HLEN", "h"}, {"HEXISTS", "nosuch", "f"}, {"HRANDFIELD", "nosuch"},
	// Sets.
	{"SADD", "s", "a", "b", "c"}, {"SADD", "s", "a"}, {"SREM", "s", "nosuch"}, {"SREM", "s", "a"}, {"SISMEMBER", "nosuch", "a"},
	{"SADD", "s1", "x"}, {"SPOP", "s1"}, {"SADD", "s1", "x"}, {"SPOP", "s1", "5"}, {"SPOP", "nosuch"},
	{"SMOVE", "s", "sd", "b"}, {"SMOVE", "s", "sd", "nosuch"}, {"SADD", "sd", "c"}, {"SMOVE", "s", "sd", "c"},
	{"SADD", "sa", "1", "2", "3"}, {"SADD", "sb", "2", "3", "4"},
	{"SINTERSTORE", "si", "sa", "sb"}, {"SINTERSTORE", "si", "sa", "nosuch"}, {"SUNIONSTORE", "su", "sa", "nosuch"},
	{"SDIFFSTORE", "sdf", "sa", "sb"}, {"SDIFFSTORE", "sdf", "sa", "sa"}, {"SINTER", "sa", "nosuch"}, {"SUNION", "nosuch"},
	{"SMEMBERS", "nosuch"}, {"SCARD", "nosuch"}, {"SINTERCARD", "2", "sa", "nosuch"},
	// Sorted sets.
	{"ZADD", "z", "1", "a", "2", "b", "3", "c"}, {"ZADD", "z", "1", "a"}, {"ZADD", "z", "XX", "5", "nosuch"},
	{"ZADD", "z", "INCR", "1", "a"}, {"ZINCRBY", "z", "1", "b"}, {"ZINCRBY", "z2", "1", "b"}, {"ZADD", "z", "CH", "9", "c"},
	{"ZREM", "z", "nosuch"}, {"ZREM", "z", "a"}, {"ZREM", "z2", "b"},
	{"ZADD", "zr", "1", "a", "2", "b", "3", "c", "4", "d"}, {"ZREMRANGEBYSCORE", "zr", "1", "1"},
	{"ZREMRANGEBYRANK", "zr", "0", "0"}, {"ZREMRANGEBYLEX", "zr", "-", "+"}, {"ZREMRANGEBYSCORE", "zr", "1", "100"},
	{"ZADD", "zp", "1", "a", "2", "b", "3", "c"}, {"ZPOPMIN", "zp"}, {"ZPOPMAX", "zp", "5"}, {"ZPOPMIN", "nosuch"},
	{"ZADD", "zp", "1", "a", "2", "b"}, {"ZMPOP", "2", "nosuch", "zp", "MAX"}, {"BZPOPMIN", "zp", "0"},
	{"ZADD", "zp", "1", "a"}, {"BZMPOP", "0", "1", "zp", "MIN"},
	{"ZADD", "za", "1", "x", "2", "y"}, {"ZADD", "zb", "1", "y"},
	{"ZUNIONSTORE", "zu", "2", "za", "zb"}, {"ZINTERSTORE", "zi", "2", "za", "zb"}, {"ZDIFFSTORE", "zd", "2", "za", "zb"},
	{"ZINTERSTORE", "zi", "2", "za", "nosuch"}, {"ZRANGESTORE", "zrs", "za", "0", "-1"}, {"ZRANGESTORE", "zrs", "nosuch", "0", "-1"},
	{"ZRANGE", "nosuch", "0", "-1"}, {"ZSCORE", "nosuch", "a"}, {"ZCARD", "nosuch"}, {"ZUNION", "2", "za", "nosuch"},
	// Transactions and flushes.
	{"MULTI"}, {"SET", "t1", "1"}, {"INCR", "t1"}, {"DEL", "t1"}, {"EXEC"},
	{"SELECT", "5"}, {"SET", "d5", "1"}, {"SWAPDB", "5", "6"}, {"SELECT", "6"}, {"DEL", "d5"}, {"SELECT", "0"},
	{"FLUSHDB"}, {"SET", "f", "1"}, {"FLUSHALL"},
	// Reads of a missing key, of every family.
	{"GETEX", "nosuch"}, {"SUBSTR", "nosuch", "0", "1"}, {"PFCOUNT", "nosuch"}, {"LPOS", "nosuch", "a"},
	{"LLEN", "nosuch"}, {"HSTRLEN", "nosuch", "f"}, {"HMGET", "nosuch", "f"}, {"HKEYS", "nosuch"}, {"HVALS", "nosuch"},
	{"HSCAN", "nosuch", "0"}, {"SRANDMEMBER", "nosuch"}, {"SMISMEMBER", "nosuch", "a"}, {"SSCAN", "nosuch", "0"},
	{"SDIFF", "nosuch"}, {"ZRANDMEMBER", "nosuch"}, {"ZMSCORE", "nosuch", "a"}, {"ZCOUNT", "nosuch", "0", "1"},
	{"ZLEXCOUNT", "nosuch", "-", "+"}, {"ZRANGEBYSCORE", "nosuch", "0", "1"}, {"ZREVRANGE", "nosuch", "0", "1"},
	{"ZRANK", "nosuch", "a"}, {"ZSCAN", "nosuch", "0"}, {"ZINTER", "2", "nosuch", "nosuch2"}, {"ZDIFF", "1", "nosuch"},
	{"ZINTERCARD", "1", "nosuch"}, {"OBJECT", "FREQ", "nosuch"}, {"OBJECT", "IDLETIME", "nosuch"},
	{"MEMORY", "USAGE", "nosuch"}, {"PEXPIRETIME", "nosuch"}, {"RANDOMKEY"}, {"DBSIZE"}, {"KEYS", "*"},
	// Writes that change nothing or fail: no event.
	{"SET", "str", "v"}, {"LPUSH", "str", "x"}, {"HSET", "str", "f", "v"}, {"SADD", "str", "m"}, {"ZADD", "str", "1", "m"},
	{"INCR", "str"}, {"LPOP", "nosuch"}, {"RPOPLPUSH", "nosuch", "d"}, {"SPOP", "nosuch", "2"}, {"ZPOPMAX", "nosuch"},
	{"HDEL", "nosuch", "f"}, {"SREM", "nosuch", "a"}, {"ZREM", "nosuch", "a"}, {"LREM", "nosuch", "0", "a"},
	{"LTRIM", "nosuch", "0", "1"}, {"ZREMRANGEBYRANK", "nosuch", "0", "1"}, {"RENAME", "nosuch", "x"},
	{"SETRANGE", "str", "1", "abc"}, {"BITOP", "NOT", "bnot", "str"}, {"HINCRBYFLOAT", "hf", "f", "1e1"},
	{"GETEX", "str", "PX", "100000"}, {"SET", "str", "v", "PXAT", "99999999999999"}, {"SET", "str", "w", "XX", "GET"},
}

// barPayload is DUMP's payload of the string "bar", in moond and in
// redis-server alike.
var barPayload = withFooter("\x00\x03bar", 10)

// notifyScenario runs the writer's script with the given classes.
func notifyScript1(classes string) func(e *tenv) {
	return func(e *tenv) {
		e.open("sub", 2)
		e.open("r", 2)
		e.step("r", "CONFIG", "SET", "notify-keyspace-events", classes)
		e.step("sub", "PSUBSCRIBE", "__key*@*__:*")
		for _, cmd := range notifyScript {
			e.step("r", cmd...)
		}
	}
}

// notifyScenarios are pubsub.tcl's keyspace notification tests, and the
// whole script under each class on its own.
var notifyScenarios = []struct {
	name string
	run  func(e *tenv)
}{
	{"KEA", notifyScript1("KEA")},
	{"KEA plus keymiss and new", notifyScript1("KEAmn")},
	{"keyspace only, generic", notifyScript1("Kg")},
	{"keyevent only, strings", notifyScript1("E$")},
	{"lists", notifyScript1("Kl")},
	{"sets", notifyScript1("Ks")},
	{"sorted sets", notifyScript1("Kz")},
	{"hashes", notifyScript1("Kh")},
	{"new", notifyScript1("En")},
	{"keymiss", notifyScript1("Km")},
	{"streams, modules and evictions publish nothing here", notifyScript1("KEtde")},
	{"no K nor E publishes nothing", notifyScript1("A")},
	{"config get and set", func(e *tenv) {
		e.open("r", 2)
		for _, v := range []string{"KEA", "AKE", "Ex", "K$lshzxeg", "Egshlz$xetdnmK", "nKEm", "Kg$lshzxetd", "KEg$", "", "Z", "KEa", "KE A", "A"} {
			e.step("r", "CONFIG", "SET", "notify-keyspace-events", v)
			e.step("r", "CONFIG", "GET", "notify-keyspace-events")
		}
		e.step("r", "CONFIG", "SET", "notify-keyspace-events", "")
	}},
	{"expired events, lazy", func(e *tenv) {
		e.open("sub", 2)
		e.open("r", 2)
		e.step("r", "DEBUG", "SET-ACTIVE-EXPIRE", "0")
		e.step("r", "CONFIG", "SET", "notify-keyspace-events", "KExgm")
		e.step("sub", "PSUBSCRIBE", "__key*@*__:*")
		e.step("r", "SET", "foo", "bar")
		e.step("r", "SET", "other", "bar")
		e.step("r", "PEXPIRE", "foo", "30")
		e.step("r", "PEXPIRE", "other", "30")
		start := time.Now() // after the replies: the TTLs started before them
		waitFor(e.t, "the keys' time to pass", func() bool { return time.Since(start) > 40*time.Millisecond })
		e.step("r", "GET", "foo")
		e.step("r", "SET", "other", "x") // a write expires the old key first
		e.step("r", "DEBUG", "SET-ACTIVE-EXPIRE", "1")
	}},
	{"a blocked pop served by a push", func(e *tenv) {
		e.open("sub", 2)
		e.open("r", 2)
		e.open("bl", 2)
		e.step("r", "CONFIG", "SET", "notify-keyspace-events", "KEA")
		e.step("sub", "PSUBSCRIBE", "__key*@*__:*")
		for _, c := range [][]string{{"BLPOP", "bl1", "0"}, {"BLMOVE", "bl2", "bl3", "RIGHT", "LEFT", "0"}, {"BZPOPMAX", "bl4", "0"}} {
			e.clients["bl"].send(c...)
			fmt.Fprintf(&e.log, "bl: %s\n", strings.Join(c, " "))
			waitFor(e.t, "the client to block", func() bool {
				info, _ := e.ctl.Info(ctx(e.t), "clients").Result()
				return strings.Contains(info, "blocked_clients:1\r\n")
			})
			switch c[0] {
			case "BZPOPMAX":
				e.step("r", "ZADD", "bl4", "1", "a", "2", "b")
			default:
				e.step("r", "RPUSH", c[1], "x", "y")
			}
		}
	}},
	{"evicted events", func(e *tenv) {
		e.open("sub", 2)
		e.open("r", 2)
		e.step("r", "CONFIG", "SET", "notify-keyspace-events", "Ee")
		e.step("r", "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
		e.step("sub", "PSUBSCRIBE", "__key*@*__:*")
		e.step("r", "SET", "foo", "bar")
		e.step("r", "CONFIG", "SET", "maxmemory", "1")
		e.step("r", "CONFIG", "SET", "maxmemory", "0")
		e.step("r", "CONFIG", "SET", "maxmemory-policy", "noeviction")
	}},
	{"expired events, active", func(e *tenv) {
		e.open("sub", 2)
		e.open("r", 2)
		e.step("r", "CONFIG", "SET", "notify-keyspace-events", "Ex")
		e.step("sub", "PSUBSCRIBE", "__key*@*__:*")
		e.step("r", "PSETEX", "foo", "100", "1")
		e.awaitPush("sub")
	}},
}

// awaitPush waits for client name's next message (one that a background
// job sends, not a step) and writes it to the transcript.
func (e *tenv) awaitPush(name string) {
	r, err := e.clients[name].read(10 * time.Second)
	if err != nil {
		e.t.Fatalf("%s: no message: %v (transcript so far:\n%s)", name, err, e.log.String())
	}
	fmt.Fprintf(&e.log, "%s <- %s\n", name, r)
}

func TestNotifyMatchesRedisServer(t *testing.T) {
	rs := startRedisServer(t, "--enable-debug-command", "local")
	redisAddr := rs.Options().Addr
	s := startServer(t, "uring", 1)
	for _, sc := range notifyScenarios {
		t.Run(sc.name, func(t *testing.T) {
			var logs [2]string
			for i, addr := range []string{redisAddr, s.addr()} {
				e := newTenv(t, addr)
				if err := e.ctl.FlushAll(ctx(t)).Err(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { e.ctl.ConfigSet(ctx(t), "notify-keyspace-events", "") })
				sc.run(e)
				logs[i] = e.log.String()
			}
			if logs[0] != logs[1] {
				t.Fatalf("transcripts differ%s", firstDifference(logs[0], logs[1]))
			}
			if !strings.Contains(logs[0], "\n") {
				t.Fatal("empty transcript")
			}
		})
	}
}
