package tests

import (
	"strconv"
	"strings"
)

// The scenarios of TestBlockingMatchesRedisServer, after the blocking
// cases of Redis 7.0's tests/unit/type/list.tcl and zset.tcl. Keys a
// command uses together share a {hash tag}, so that they live on one
// shard; the cross-shard scenarios use keys of two shards on purpose.
//
// Not here, because moond has no MULTI/EXEC, WATCH, SORT or DEBUG yet:
// "LPUSH + DEL should not awake blocked client" and "... + SET" in a
// transaction (their effect without MULTI is in "wrong kind or deleted"),
// "MULTI/EXEC is isolated from the point of view of BLPOP/BLMPOP/BZPOPMIN/
// BZMPOP", "BLPOP/BLMPOP/BRPOPLPUSH inside a transaction", "PUSH resulting
// from BRPOPLPUSH affect WATCH", "BRPOPLPUSH does not affect WATCH while
// still blocked", "MULTI + LPUSH + EXPIRE + DEBUG SLEEP on blocked
// client", "BLPOP when result key is created by SORT..STORE", the
// replication-stream checks, and "BLMPOP/BZMPOP with multiple blocked
// clients" in their MULTI form (their pushes run one by one here).
//
// Left out on purpose: Redis 7.0 does not wake a waiter when a *STORE
// command overwrites its key while it holds another kind (BZPOPMAX k
// waits; SET k x; ZUNIONSTORE k 1 src: setKey's dbOverwrite signals
// nothing, so the client waits on although k holds a sorted set). moond
// serves it: every write to a waited-on key makes it ready. And scores
// are written in their shortest form, as Redis 7.2 writes them (0.1, where
// 7.0's %.17g writes 0.10000000000000001), as everywhere in moond.

type blockingScenario struct {
	name string
	run  func(e *benv)
}

var bigValue = strings.Repeat("L", 300)

// Keys on shard 0 and shard 1 of two: a wait across shards.
var (
	crossA = keyOnShard("xa", 0)
	crossB = keyOnShard("xb", 1)
)

// pops are the four ways list.tcl pops one element: BLPOP, BRPOP and
// BLMPOP LEFT|RIGHT COUNT 1, over keys with a timeout.
var pops = []struct {
	name string
	cmd  func(timeout string, keys ...string) []string
}{
	{"BLPOP", func(t string, keys ...string) []string { return append(append([]string{"BLPOP"}, keys...), t) }},
	{"BRPOP", func(t string, keys ...string) []string { return append(append([]string{"BRPOP"}, keys...), t) }},
	{"BLMPOP_LEFT", func(t string, keys ...string) []string { return mpop("BLMPOP", t, "LEFT", keys) }},
	{"BLMPOP_RIGHT", func(t string, keys ...string) []string { return mpop("BLMPOP", t, "RIGHT", keys) }},
}

// zpops are BZPOPMIN, BZPOPMAX and BZMPOP MIN|MAX COUNT 1.
var zpops = []struct {
	name string
	cmd  func(timeout string, keys ...string) []string
}{
	{"BZPOPMIN", func(t string, keys ...string) []string { return append(append([]string{"BZPOPMIN"}, keys...), t) }},
	{"BZPOPMAX", func(t string, keys ...string) []string { return append(append([]string{"BZPOPMAX"}, keys...), t) }},
	{"BZMPOP_MIN", func(t string, keys ...string) []string { return mpop("BZMPOP", t, "MIN", keys) }},
	{"BZMPOP_MAX", func(t string, keys ...string) []string { return mpop("BZMPOP", t, "MAX", keys) }},
}

func mpop(cmd, timeout, where string, keys []string) []string {
	out := []string{cmd, timeout, itoa(len(keys))}
	out = append(out, keys...)
	return append(out, where, "COUNT", "1")
}

func itoa(n int) string { return strconv.Itoa(n) }

var directions = [][2]string{{"LEFT", "LEFT"}, {"LEFT", "RIGHT"}, {"RIGHT", "LEFT"}, {"RIGHT", "RIGHT"}}

// listScenarios are the cases of list.tcl.
var listScenarios = []blockingScenario{
	{"existing lists", func(e *benv) {
		d := e.client()
		for _, p := range pops {
			e.do("DEL", "blist", "blist1{t}", "blist2{t}")
			e.do("RPUSH", "blist", "a", "b", bigValue, "c", "d")
			e.send(d, p.cmd("1", "blist")...)
			e.read(d)
			e.send(d, p.cmd("1", "blist")...)
			e.read(d)
			e.do("LLEN", "blist")
			// Multiple lists, then only the second has entries.
			e.do("RPUSH", "blist1{t}", "a", bigValue, "c")
			e.do("RPUSH", "blist2{t}", "d", bigValue, "f")
			e.send(d, p.cmd("1", "blist1{t}", "blist2{t}")...)
			e.read(d)
			e.send(d, p.cmd("1", "blist2{t}", "blist1{t}")...)
			e.read(d)
			e.do("DEL", "blist1{t}")
			e.send(d, p.cmd("1", "blist1{t}", "blist2{t}")...)
			e.read(d)
			e.do("LRANGE", "blist2{t}", "0", "-1")
		}
	}},
	{"moves with data", func(e *benv) {
		d := e.client()
		e.do("RPUSH", "target{t}", "bar")
		e.do("RPUSH", "blist{t}", "a", "b", bigValue, "c", "d")
		e.send(d, "BRPOPLPUSH", "blist{t}", "target{t}", "1")
		e.read(d)
		e.do("LPOP", "target{t}")
		for _, dir := range directions {
			e.send(d, "BLMOVE", "blist{t}", "target{t}", dir[0], dir[1], "1")
			e.read(d)
			e.do("LRANGE", "target{t}", "0", "-1")
		}
		e.do("LRANGE", "blist{t}", "0", "-1")
	}},
	{"push after block", func(e *benv) {
		d := e.client()
		for _, p := range pops {
			e.send(d, p.cmd("0", "blist1")...)
			e.blocked(1)
			e.do("RPUSH", "blist1", "foo")
			e.read(d)
			e.do("EXISTS", "blist1")
			// Variadic LPUSH serves one element.
			e.send(d, p.cmd("0", "blist")...)
			e.blocked(1)
			e.do("LPUSH", "blist", "foo", "bar")
			e.read(d)
			e.do("LRANGE", "blist", "0", "-1")
			e.do("DEL", "blist")
			// Arguments are empty: data arrives on one or the other.
			for _, k := range []string{"blist1{t}", "blist2{t}"} {
				e.send(d, p.cmd("1", "blist1{t}", "blist2{t}")...)
				e.blocked(1)
				e.do("RPUSH", k, "foo")
				e.read(d)
				e.do("EXISTS", "blist1{t}", "blist2{t}")
			}
		}
	}},
	{"zero timeouts block for ever", func(e *benv) {
		d := e.client()
		for _, p := range pops {
			e.send(d, p.cmd("0", "blist1")...)
			e.blocked(1)
			e.do("PING")
			e.blocked(1)
			e.do("RPUSH", "blist1", "foo")
			e.read(d)
		}
		// -0.001 s rounds up to 0 ms: it waits for ever too.
		for _, to := range []string{"-0.001", "-0.0001", "-0"} {
			e.send(d, "BLPOP", "blist1", to)
			e.blocked(1)
			e.do("RPUSH", "blist1", "foo")
			e.read(d)
		}
	}},
	{"same key several times", func(e *benv) {
		d := e.client()
		e.send(d, "BLPOP", "list1{t}", "list2{t}", "list2{t}", "list1{t}", "0")
		e.blocked(1)
		e.do("LPUSH", "list1{t}", "a")
		e.read(d)
		e.send(d, "BLPOP", "list1{t}", "list2{t}", "list2{t}", "list1{t}", "0")
		e.blocked(1)
		e.do("LPUSH", "list2{t}", "b")
		e.read(d)
		e.do("LPUSH", "list1{t}", "a")
		e.do("LPUSH", "list2{t}", "b")
		e.send(d, "BLPOP", "list1{t}", "list2{t}", "list2{t}", "list1{t}", "0")
		e.read(d)
		e.send(d, "BLPOP", "list1{t}", "list2{t}", "list2{t}", "list1{t}", "0")
		e.read(d)
		e.send(d, "BLMPOP", "0", "4", "list1{t}", "list2{t}", "list2{t}", "list1{t}", "RIGHT", "COUNT", "5")
		e.blocked(1)
		e.do("RPUSH", "list2{t}", "x", "y")
		e.read(d)
		// Sorted sets.
		e.send(d, "BZPOPMIN", "z1{t}", "z2{t}", "z2{t}", "z1{t}", "0")
		e.blocked(1)
		e.do("ZADD", "z1{t}", "0", "a")
		e.read(d)
		e.send(d, "BZPOPMIN", "z1{t}", "z2{t}", "z2{t}", "z1{t}", "0")
		e.blocked(1)
		e.do("ZADD", "z2{t}", "1", "b")
		e.read(d)
		e.do("ZADD", "z1{t}", "0", "a")
		e.do("ZADD", "z2{t}", "1", "b")
		e.send(d, "BZPOPMIN", "z1{t}", "z2{t}", "z2{t}", "z1{t}", "0")
		e.read(d)
		e.send(d, "BZPOPMIN", "z1{t}", "z2{t}", "z2{t}", "z1{t}", "0")
		e.read(d)
	}},
	{"wrong kind or deleted does not wake", func(e *benv) {
		d := e.client()
		for _, p := range pops {
			e.send(d, p.cmd("0", "list")...)
			e.blocked(1)
			e.do("SET", "list", "foo")
			e.do("DEL", "list")
			e.do("ZADD", "list", "1", "m")
			e.do("DEL", "list")
			e.blocked(1)
			e.do("LPUSH", "list", "b")
			e.read(d)
		}
		for _, p := range zpops {
			e.send(d, p.cmd("0", "zset")...)
			e.blocked(1)
			e.do("SET", "zset", "foo")
			e.do("DEL", "zset")
			e.do("RPUSH", "zset", "x")
			e.do("DEL", "zset")
			e.blocked(1)
			e.do("ZADD", "zset", "1", "bar")
			e.read(d)
		}
		// A key of another kind stays, then turns into a list.
		e.send(d, "BLPOP", "k{t}", "0")
		e.blocked(1)
		e.do("SET", "k{t}", "str")
		e.do("RPUSH", "src{t}", "v")
		e.do("RENAME", "src{t}", "k{t}")
		e.read(d)
	}},
	{"wrong kind at call time", func(e *benv) {
		d := e.client()
		e.do("SET", "blist2{t}", "nolist")
		for _, p := range pops {
			e.send(d, p.cmd("1", "blist1{t}", "blist2{t}")...)
			e.read(d)
		}
		e.do("RPUSH", "blist1{t}", "x", "y", "z", "w")
		for _, p := range pops {
			e.send(d, p.cmd("1", "blist1{t}", "blist2{t}")...)
			e.read(d)
		}
		e.do("SET", "notalist{t}", "foo")
		e.send(d, "BLPOP", "notalist{t}", "0")
		e.read(d)
		e.send(d, "BRPOP", "notalist{t}", "0")
		e.read(d)
		e.send(d, "BLMPOP", "0", "2", "notalist{t}", "notalist2{t}", "LEFT", "COUNT", "1")
		e.read(d)
		e.do("DEL", "notalist{t}")
		e.do("SET", "notalist2{t}", "nolist")
		e.send(d, "BLMPOP", "0", "2", "notalist{t}", "notalist2{t}", "LEFT", "COUNT", "1")
		e.read(d)
		e.do("SET", "foo{t}", "bar")
		for _, cmd := range [][]string{
			{"BZPOPMIN", "foo{t}", "1"}, {"BZPOPMAX", "foo{t}", "1"},
			{"BZMPOP", "1", "1", "foo{t}", "MIN"}, {"BZMPOP", "1", "1", "foo{t}", "MAX"},
			{"BZMPOP", "1", "1", "foo{t}", "MIN", "COUNT", "10"},
			{"BZMPOP", "1", "2", "foo3{t}", "foo{t}", "MIN"}, {"BZMPOP", "1", "2", "foo{t}", "foo3{t}", "MAX", "COUNT", "1"},
			{"BLMOVE", "foo{t}", "x{t}", "LEFT", "LEFT", "0"}, {"BRPOPLPUSH", "foo{t}", "x{t}", "0"},
		} {
			e.send(d, cmd...)
			e.read(d)
		}
	}},
	{"moves while blocked", func(e *benv) {
		d1, d2 := e.client(), e.client()
		e.do("RPUSH", "target{t}", "bar")
		e.send(d1, "BRPOPLPUSH", "blist{t}", "target{t}", "0")
		e.blocked(1)
		e.do("RPUSH", "blist{t}", "foo")
		e.read(d1)
		e.do("LRANGE", "target{t}", "0", "-1")
		for _, dir := range directions {
			e.do("DEL", "blist{t}", "target{t}")
			e.do("RPUSH", "target{t}", "bar")
			e.send(d1, "BLMOVE", "blist{t}", "target{t}", dir[0], dir[1], "0")
			e.blocked(1)
			e.do("RPUSH", "blist{t}", "foo")
			e.read(d1)
			e.do("LRANGE", "target{t}", "0", "-1")
		}
		// A client BLPOPing the target list.
		for _, dir := range directions {
			e.do("DEL", "blist{t}", "target{t}")
			e.send(d2, "BLPOP", "target{t}", "0")
			e.blocked(1)
			e.send(d1, "BLMOVE", "blist{t}", "target{t}", dir[0], dir[1], "0")
			e.blocked(2)
			e.do("RPUSH", "blist{t}", "foo")
			e.read(d1)
			e.read(d2)
			e.do("EXISTS", "target{t}")
		}
	}},
	{"move destination of another kind", func(e *benv) {
		d1, d2 := e.client(), e.client()
		e.do("SET", "blist{t}", "nolist")
		e.send(d1, "BRPOPLPUSH", "blist{t}", "target{t}", "1")
		e.read(d1)
		e.do("DEL", "blist{t}")
		e.do("SET", "target{t}", "nolist")
		e.do("LPUSH", "blist{t}", "foo")
		e.send(d1, "BRPOPLPUSH", "blist{t}", "target{t}", "1")
		e.read(d1)
		e.do("DEL", "blist{t}")
		e.send(d1, "BRPOPLPUSH", "blist{t}", "target{t}", "0")
		e.blocked(1)
		e.do("RPUSH", "blist{t}", "foo")
		e.read(d1)
		e.do("LRANGE", "blist{t}", "0", "-1")
		// The order of elements is kept after the failure.
		e.do("DEL", "blist{t}")
		e.send(d1, "BRPOPLPUSH", "blist{t}", "target{t}", "0")
		e.blocked(1)
		e.do("RPUSH", "blist{t}", "a", "b", "c")
		e.read(d1)
		e.do("LRANGE", "blist{t}", "0", "-1")
		// Two waiters, the first with a bad destination.
		e.do("DEL", "blist{t}", "target{t}")
		e.do("SET", "target1{t}", "nolist")
		e.send(d1, "BRPOPLPUSH", "blist{t}", "target1{t}", "0")
		e.blocked(1)
		e.send(d2, "BLMOVE", "blist{t}", "target2{t}", "LEFT", "RIGHT", "0")
		e.blocked(2)
		e.do("LPUSH", "blist{t}", "foo")
		e.read(d1)
		e.read(d2)
		e.do("LRANGE", "target2{t}", "0", "-1")
		// A sorted set as destination.
		e.do("ZADD", "zdst{t}", "1", "m")
		e.send(d1, "BLMOVE", "blist{t}", "zdst{t}", "RIGHT", "LEFT", "0")
		e.blocked(1)
		e.do("RPUSH", "blist{t}", "x")
		e.read(d1)
		e.do("LRANGE", "blist{t}", "0", "-1")
	}},
	{"linked circular and self moves", func(e *benv) {
		d1, d2 := e.client(), e.client()
		e.send(d1, "BLMOVE", "list1{t}", "list2{t}", "RIGHT", "LEFT", "0")
		e.blocked(1)
		e.send(d2, "BLMOVE", "list2{t}", "list3{t}", "LEFT", "RIGHT", "0")
		e.blocked(2)
		e.do("RPUSH", "list1{t}", "foo")
		e.read(d1)
		e.read(d2)
		e.do("LRANGE", "list1{t}", "0", "-1")
		e.do("LRANGE", "list2{t}", "0", "-1")
		e.do("LRANGE", "list3{t}", "0", "-1")
		e.do("DEL", "list1{t}", "list2{t}", "list3{t}")
		e.send(d1, "BRPOPLPUSH", "list1{t}", "list2{t}", "0")
		e.blocked(1)
		e.send(d2, "BRPOPLPUSH", "list2{t}", "list1{t}", "0")
		e.blocked(2)
		e.do("RPUSH", "list1{t}", "foo")
		e.read(d1)
		e.read(d2)
		e.do("LRANGE", "list1{t}", "0", "-1")
		e.do("LRANGE", "list2{t}", "0", "-1")
		e.do("DEL", "list1{t}")
		e.send(d1, "BRPOPLPUSH", "blist{t}", "blist{t}", "0")
		e.blocked(1)
		e.do("RPUSH", "blist{t}", "foo")
		e.read(d1)
		e.do("LRANGE", "blist{t}", "0", "-1")
		// Regression for bug 593: a chain with a pipelined second move.
		e.do("DEL", "blist{t}")
		e.send(d1, "BRPOPLPUSH", "a{t}", "b{t}", "0")
		e.send(d1, "BRPOPLPUSH", "a{t}", "b{t}", "0")
		e.blocked(1)
		e.send(d2, "BRPOPLPUSH", "b{t}", "c{t}", "0")
		e.blocked(2)
		e.do("LPUSH", "a{t}", "data")
		e.read(d1)
		e.read(d2)
		e.blocked(1)
		e.do("LRANGE", "c{t}", "0", "-1")
		e.closeClient(d1)
		e.blocked(0)
		e.do("PING")
	}},
	{"mpop waiters with COUNT", func(e *benv) {
		d := []*rawClient{e.client(), e.client(), e.client(), e.client()}
		args := [][]string{
			{"BLMPOP", "0", "2", "blist{t}", "blist2{t}", "LEFT", "COUNT", "1"},
			{"BLMPOP", "0", "2", "blist{t}", "blist2{t}", "RIGHT", "COUNT", "10"},
			{"BLMPOP", "0", "2", "blist{t}", "blist2{t}", "LEFT", "COUNT", "10"},
			{"BLMPOP", "0", "2", "blist{t}", "blist2{t}", "RIGHT", "COUNT", "1"},
		}
		for i := range d {
			e.send(d[i], args[i]...)
			e.blocked(i + 1)
		}
		e.do("LPUSH", "blist{t}", "a", "b", "c", "d", "e")
		e.read(d[0])
		e.read(d[1])
		e.do("LPUSH", "blist2{t}", "1", "2", "3", "4", "5")
		e.read(d[2])
		e.do("LPUSH", "blist2{t}", "1", "2", "3")
		e.read(d[3])
		e.do("LRANGE", "blist2{t}", "0", "-1")
		zargs := [][]string{
			{"BZMPOP", "0", "2", "myzset{t}", "myzset2{t}", "MIN", "COUNT", "1"},
			{"BZMPOP", "0", "2", "myzset{t}", "myzset2{t}", "MAX", "COUNT", "10"},
			{"BZMPOP", "0", "2", "myzset{t}", "myzset2{t}", "MIN", "COUNT", "10"},
			{"BZMPOP", "0", "2", "myzset{t}", "myzset2{t}", "MAX", "COUNT", "1"},
		}
		for i := range d {
			e.send(d[i], zargs[i]...)
			e.blocked(i + 1)
		}
		e.do("ZADD", "myzset{t}", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e")
		e.read(d[0])
		e.read(d[1])
		e.do("ZADD", "myzset2{t}", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e")
		e.read(d[2])
		e.do("ZADD", "myzset2{t}", "1", "a", "2", "b", "3", "c")
		e.read(d[3])
		e.do("ZRANGE", "myzset2{t}", "0", "-1")
		// Arguments that are not keys wake nobody (#10762).
		e.send(d[0], "BZMPOP", "0", "1", "myzset", "MIN", "COUNT", "10")
		e.blocked(1)
		e.send(d[1], "BZMPOP", "0", "2", "myzset2", "myzset3", "MAX", "COUNT", "10")
		e.blocked(2)
		for i, k := range []string{"0", "1", "min", "max", "count", "10", "2"} {
			e.do("ZADD", k, itoa(100*(i+1)), k+"_token")
		}
		e.blocked(2)
		e.do("ZADD", "myzset", "1", "zset")
		e.do("ZADD", "myzset3", "1", "zset3")
		e.read(d[0])
		e.read(d[1])
	}},
}
