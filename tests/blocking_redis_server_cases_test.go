package tests

import "time"

// The scenarios of TestBlockingMatchesRedisServer after list.tcl's: the
// sorted sets of zset.tcl, timeouts, and the server's side (SWAPDB,
// FLUSHALL, pipelining, CLIENT UNBLOCK, disconnects, waits across shards).

// blockingScenarios are every scenario compared.
var blockingScenarios = append(append([]blockingScenario(nil), listScenarios...), serverScenarios...)

// serverScenarios are the sorted-set and server cases.
var serverScenarios = []blockingScenario{
	{"sorted sets", func(e *benv) {
		d := e.client()
		for _, p := range zpops {
			e.do("DEL", "z1{t}", "z2{t}")
			e.do("ZADD", "z1{t}", "1", "a", "2", "b", "3", "c", "1.5", "h", "-inf", "lo", "+inf", "hi")
			e.do("ZADD", "z2{t}", "4", "d", "5", "e", "6", "f")
			e.send(d, p.cmd("1", "z1{t}")...)
			e.read(d)
			e.send(d, p.cmd("1", "z1{t}", "z2{t}")...)
			e.read(d)
			e.send(d, p.cmd("1", "z2{t}", "z1{t}")...)
			e.read(d)
			e.do("DEL", "z1{t}")
			e.send(d, p.cmd("1", "z1{t}", "z2{t}")...)
			e.read(d)
			// Blocking path.
			e.send(d, p.cmd("5", "zset{t}")...)
			e.blocked(1)
			e.do("ZADD", "zset{t}", "1", "a")
			e.read(d)
			// Variadic ZADD serves one member.
			e.send(d, p.cmd("0", "zset")...)
			e.blocked(1)
			e.do("ZADD", "zset", "-1", "foo", "1", "bar")
			e.read(d)
			e.do("ZRANGE", "zset", "0", "-1")
			e.do("DEL", "zset")
		}
		e.send(d, "BZMPOP", "0", "1", "zset", "MAX", "COUNT", "10")
		e.blocked(1)
		e.do("ZADD", "zset", "1", "a", "2.5", "b", "-inf", "c")
		e.read(d)
	}},
	{"timeouts", func(e *benv) {
		d := e.client()
		for _, cmd := range [][]string{
			{"BLPOP", "l1{t}", "l2{t}", "0.1"}, {"BRPOP", "l1{t}", "0.01"},
			{"BLMOVE", "l1{t}", "l2{t}", "LEFT", "RIGHT", "0.01"}, {"BRPOPLPUSH", "l1{t}", "l2{t}", "0.01"},
			{"BLMPOP", "0.01", "2", "l1{t}", "l2{t}", "LEFT"}, {"BLMPOP", "0.001", "1", "l1{t}", "RIGHT", "COUNT", "3"},
			{"BZPOPMIN", "z1{t}", "0.01"}, {"BZPOPMAX", "z1{t}", "z2{t}", "0.01"},
			{"BZMPOP", "0.01", "1", "z1{t}", "MIN"}, {"BZMPOP", "0.01", "2", "z1{t}", "z2{t}", "MAX", "COUNT", "2"},
			// Rounded up to 1 ms, not down to 0 (for ever).
			{"BLPOP", "l1{t}", "0.0001"}, {"BZPOPMIN", "z1{t}", "1e-20"}, {"BLMOVE", "l1{t}", "l2{t}", "LEFT", "RIGHT", "0.0009"},
		} {
			e.send(d, cmd...)
			e.read(d)
			e.blocked(0)
		}
		e.do("EXISTS", "l1{t}", "l2{t}", "z1{t}", "z2{t}")
	}},
	{"timeout arguments", func(e *benv) {
		d := e.client()
		timeouts := []string{"-1", "-0.5", "-0", "abc", "", " 1", "1 ", "+1", "1e3", "0x10", "1e300", "1e400", "1e5000",
			"1e-5000", "inf", "+inf", "-inf", "nan", "9223372036854775", "9223372036854776", "9223372036854775807",
			"9223372036854775808", "18446744073709551616", "0.5", ".5", "5.", "1e", "0x", "1,5"}
		for _, to := range timeouts {
			// The key holds data: a timeout that parses returns at once.
			e.quiet("RPUSH", "k{t}", "x")
			e.quiet("ZADD", "z{t}", "1", "m")
			for _, cmd := range [][]string{
				{"BLPOP", "k{t}", to}, {"BLMOVE", "k{t}", "k2{t}", "LEFT", "LEFT", to}, {"BRPOPLPUSH", "k{t}", "k2{t}", to},
				{"BLMPOP", to, "1", "k{t}", "LEFT"}, {"BZPOPMIN", "z{t}", to}, {"BZMPOP", to, "1", "z{t}", "MAX"},
			} {
				e.send(d, cmd...)
				e.read(d)
				e.quiet("RPUSH", "k{t}", "x")
				e.quiet("ZADD", "z{t}", "1", "m")
			}
		}
		// The timeout is checked before the key's kind.
		e.do("SET", "s", "x")
		e.send(d, "BLPOP", "s", "-1")
		e.read(d)
		e.send(d, "BZPOPMAX", "s", "abc")
		e.read(d)
	}},
	{"mpop arguments", func(e *benv) {
		d := e.client()
		for _, cmd := range []string{"BLMPOP", "BZMPOP"} {
			min, max := "LEFT", "RIGHT"
			if cmd == "BZMPOP" {
				min, max = "MIN", "MAX"
			}
			for _, args := range [][]string{
				{}, {"0", "1"}, {"0", "1", "k{t}"},
				{"0", "0", "k{t}", min}, {"0", "a", "k{t}", min}, {"0", "-1", "k{t}", max},
				{"0", "1", "k{t}", "bad_where"}, {"0", "1", "k{t}", min, "bar_arg"}, {"0", "1", "k{t}", max, min},
				{"0", "1", "k{t}", "COUNT"}, {"0", "1", "k{t}", min, "COUNT", "1", "COUNT", "2"},
				{"0", "2", "k{t}", "k2{t}", "bad_arg"}, {"0", "5", "k{t}", min}, {"0", "3", "k{t}", min},
				{"0", "1", "k{t}", min, "COUNT", "0"}, {"0", "1", "k{t}", max, "COUNT", "a"},
				{"0", "1", "k{t}", min, "COUNT", "-1"}, {"0", "2", "k{t}", "k2{t}", max, "COUNT", "-1"},
				// The arguments are checked before the timeout.
				{"-1", "0", "k{t}", min}, {"abc", "1", "k{t}", "bad"}, {"-1", "1", "k{t}", min, "COUNT", "0"},
				{"abc", "1", "k{t}", min},
				// Keys of two shards.
				{"0", "2", crossA, crossB, "bad_where"}, {"-1", "2", crossA, crossB, min},
				{"0", "2", crossA, crossB, min, "COUNT", "0"}, {"0", "3", crossA, crossB, min},
			} {
				e.send(d, append([]string{cmd}, args...)...)
				e.read(d)
			}
		}
		e.do("PING")
	}},
	{"moved into place", func(e *benv) {
		d := e.client()
		for _, p := range pops[:3] {
			e.send(d, p.cmd("0", "foo{t}")...)
			e.blocked(1)
			e.do("LPUSH", "bob{t}", "abc", "def", "hij")
			e.do("RENAME", "bob{t}", "foo{t}")
			e.read(d)
			e.do("DEL", "foo{t}")
		}
		e.send(d, "BZPOPMIN", "zfoo{t}", "0")
		e.blocked(1)
		e.do("ZADD", "zbob{t}", "1", "a")
		e.do("RENAMENX", "zbob{t}", "zfoo{t}")
		e.read(d)
		// COPY, and MOVE from another database.
		e.send(d, "BLPOP", "cp{t}", "0")
		e.blocked(1)
		e.do("RPUSH", "orig{t}", "copied")
		e.do("COPY", "orig{t}", "cp{t}")
		e.read(d)
		e.send(d, "BLPOP", "mv", "0")
		e.blocked(1)
		e.do("SELECT", "1")
		e.do("RPUSH", "mv", "moved")
		e.do("MOVE", "mv", "0")
		e.read(d)
		e.do("SELECT", "0")
	}},
	{"SWAPDB", func(e *benv) {
		d := e.client()
		e.do("SELECT", "1")
		e.do("RPUSH", "k", "hello")
		e.send(d, "SELECT", "9")
		e.read(d)
		e.send(d, "BRPOP", "k", "5")
		e.blocked(1)
		e.do("SWAPDB", "1", "9")
		e.read(d)
		// The data comes back from database 9 to 1 for a waiter there.
		e.send(d, "SELECT", "1")
		e.read(d)
		e.send(d, "BLPOP", "k", "z", "5")
		e.blocked(1)
		e.do("SELECT", "9")
		e.do("RPUSH", "z", "zz")
		e.do("SWAPDB", "9", "1")
		e.read(d)
		// A key that expired does not wake it.
		e.do("FLUSHALL")
		e.do("SELECT", "1")
		e.do("RPUSH", "k", "hello")
		e.do("PEXPIRE", "k", "50")
		start := time.Now()
		id := e.clientID(d)
		e.send(d, "SELECT", "9")
		e.read(d)
		e.send(d, "BRPOP", "k", "0")
		e.blocked(1)
		e.until("the key's TTL passed", func() bool { return time.Since(start) > 100*time.Millisecond })
		e.do("SWAPDB", "1", "9")
		e.blocked(1)
		e.clientFlags(id)
		e.do("CLIENT", "UNBLOCK", id)
		e.read(d)
		e.do("SELECT", "0")
	}},
	{"FLUSHALL and FLUSHDB keep clients blocked", func(e *benv) {
		d := e.client()
		id := e.clientID(d)
		for _, flush := range [][]string{{"FLUSHALL"}, {"FLUSHDB"}, {"FLUSHALL", "ASYNC"}, {"FLUSHDB", "SYNC"}} {
			e.do("RPUSH", "other", "x")
			e.send(d, "BLPOP", "k", "0")
			e.blocked(1)
			e.do(flush...)
			e.blocked(1)
			e.clientFlags(id)
			e.do("RPUSH", "k", "after")
			e.read(d)
			e.send(d, "BZPOPMAX", "z", "0")
			e.blocked(1)
			e.do(flush...)
			e.do("ZADD", "z", "2", "after")
			e.read(d)
		}
		// One with a timeout still times out.
		e.send(d, "BLMOVE", "k{t}", "k2{t}", "RIGHT", "LEFT", "0.2")
		e.blocked(1)
		e.do("FLUSHALL")
		e.read(d)
	}},
	{"pipelined commands wait behind a blocked one", func(e *benv) {
		d := e.client()
		d.write(encodeCommand([]string{"ECHO", "before"}) + encodeCommand([]string{"BLPOP", "k", "0"}) +
			encodeCommand([]string{"ECHO", "after"}) + encodeCommand([]string{"RPUSH", "k2", "v"}) +
			encodeCommand([]string{"BLPOP", "k2", "k3", "0"}) + encodeCommand([]string{"BRPOP", "k3", "0"}) +
			encodeCommand([]string{"LRANGE", "k", "0", "-1"}))
		e.note("d1> pipeline")
		e.read(d)
		e.blocked(1)
		e.do("LLEN", "k2")
		e.do("RPUSH", "k", "x", "y")
		e.read(d)
		e.read(d)
		e.read(d)
		e.read(d)
		e.blocked(1)
		e.do("LPUSH", "k3", "z")
		e.read(d)
		e.read(d)
		e.blocked(0)
	}},
	{"CLIENT UNBLOCK", func(e *benv) {
		d := e.client()
		id := e.clientID(d)
		for _, cmd := range [][]string{
			{"BLPOP", "k{u}", "0"}, {"BRPOP", "k{u}", "k2{u}", "0"}, {"BLMOVE", "k{u}", "k2{u}", "LEFT", "RIGHT", "0"},
			{"BRPOPLPUSH", "k{u}", "k2{u}", "0"}, {"BLMPOP", "0", "1", "k{u}", "LEFT"}, {"BZPOPMIN", "z{u}", "0"},
			{"BZPOPMAX", "z{u}", "100"}, {"BZMPOP", "0", "2", "z{u}", "z2{u}", "MAX", "COUNT", "3"},
		} {
			for _, how := range [][]string{{}, {"TIMEOUT"}, {"ERROR"}, {"timeout"}, {"error"}} {
				e.send(d, cmd...)
				e.blocked(1)
				e.clientFlags(id)
				e.do(append([]string{"CLIENT", "UNBLOCK", id}, how...)...)
				e.read(d)
				e.blocked(0)
			}
		}
		e.clientFlags(id)
		e.do("CLIENT", "UNBLOCK", id)
		e.do("CLIENT", "UNBLOCK", id, "ERROR")
		e.do("CLIENT", "UNBLOCK", "999999")
		e.do("CLIENT", "UNBLOCK", "abc")
		e.do("CLIENT", "UNBLOCK", id, "LATER")
		e.do("CLIENT", "UNBLOCK", id, "TIMEOUT", "x")
		e.do("CLIENT", "UNBLOCK")
		// A client blocked on two shards' keys.
		e.send(d, "BLPOP", crossA, crossB, "0")
		e.blocked(1)
		e.do("CLIENT", "UNBLOCK", id, "ERROR")
		e.read(d)
	}},
	{"disconnected waiter", func(e *benv) {
		d := e.client()
		e.send(d, "BLPOP", "gone", "0")
		e.blocked(1)
		e.closeClient(d)
		e.blocked(0)
		e.do("RPUSH", "gone", "x")
		e.do("LRANGE", "gone", "0", "-1")
		d2 := e.client()
		e.send(d2, "BZPOPMIN", "zgone", "0")
		e.blocked(1)
		d3 := e.client()
		e.send(d3, "BZPOPMIN", "zgone", "0")
		e.blocked(2)
		e.closeClient(d2)
		e.blocked(1)
		e.do("ZADD", "zgone", "1", "a", "2", "b")
		e.read(d3)
		e.do("ZRANGE", "zgone", "0", "-1")
	}},
	{"first blocked first served", func(e *benv) {
		var ds []*rawClient
		for i := range 5 {
			ds = append(ds, e.client())
			e.send(ds[i], "BLPOP", "fifo", "0")
			e.blocked(i + 1)
		}
		e.do("RPUSH", "fifo", "1", "2", "3")
		for _, d := range ds[:3] {
			e.read(d)
		}
		e.blocked(2)
		e.do("RPUSH", "fifo", "4", "5", "6")
		for _, d := range ds[3:] {
			e.read(d)
		}
		e.do("LRANGE", "fifo", "0", "-1")
	}},
	{"writes that wake and writes that do not", func(e *benv) {
		d1, d2 := e.client(), e.client()
		// A non-blocking move into the waited key.
		e.send(d1, "BLPOP", "k2{w}", "0")
		e.blocked(1)
		e.do("RPUSH", "k1{w}", "a", "b")
		e.do("LMOVE", "k1{w}", "k2{w}", "LEFT", "RIGHT")
		e.read(d1)
		e.send(d1, "BLPOP", "k2{w}", "0")
		e.blocked(1)
		e.do("RPOPLPUSH", "k1{w}", "k2{w}")
		e.read(d1)
		// A waiter of another database is not woken.
		d3 := e.client()
		e.send(d3, "SELECT", "1")
		e.read(d3)
		e.send(d3, "BLPOP", "same", "0")
		e.blocked(1)
		e.do("RPUSH", "same", "db0")
		e.blocked(1)
		e.do("SELECT", "1")
		e.do("RPUSH", "same", "db1")
		e.read(d3)
		e.do("SELECT", "0")
		// Waiters of two kinds on one key: only the kind written serves.
		e.send(d1, "BLPOP", "mixed", "0")
		e.blocked(1)
		e.send(d2, "BZPOPMIN", "mixed", "0")
		e.blocked(2)
		e.do("ZADD", "mixed", "1", "m", "2", "n")
		e.read(d2)
		e.blocked(1)
		e.do("DEL", "mixed")
		e.do("RPUSH", "mixed", "l")
		e.read(d1)
		// Sorted-set stores into the waited key.
		e.do("ZADD", "src{w}", "1", "a", "2", "b")
		for _, store := range [][]string{
			{"ZUNIONSTORE", "dst{w}", "1", "src{w}"}, {"ZINTERSTORE", "dst{w}", "1", "src{w}"},
			{"ZDIFFSTORE", "dst{w}", "1", "src{w}"}, {"ZRANGESTORE", "dst{w}", "src{w}", "0", "0"},
		} {
			e.send(d1, "BZPOPMAX", "dst{w}", "0")
			e.blocked(1)
			e.do(store...)
			e.read(d1)
			e.do("DEL", "dst{w}")
		}
		// Scores whose 7.0 form (%.17g) is also the shortest one.
		e.send(d1, "BZPOPMIN", "zf", "0")
		e.blocked(1)
		e.do("ZADD", "zf", "0.5", "a", "3.3333333333333335", "b")
		e.read(d1)
		e.send(d1, "BZMPOP", "0", "1", "zf", "MIN")
		e.read(d1)
		// CLIENT KILL of a waiter: the next push stays.
		id := e.clientID(d1)
		e.send(d1, "BLPOP", "killed", "0")
		e.blocked(1)
		e.do("CLIENT", "KILL", "ID", id)
		e.blocked(0)
		e.do("RPUSH", "killed", "x")
		e.do("LLEN", "killed")
		// A non-integer timeout with data arriving in time.
		e.send(d3, "BRPOP", "nonint", "0.5")
		e.blocked(1)
		e.do("SELECT", "1")
		e.do("RPUSH", "nonint", "foo")
		e.read(d3)
		e.do("SELECT", "0")
	}},
	{"waits across shards", func(e *benv) {
		d := e.client()
		for _, k := range []string{crossB, crossA} {
			e.send(d, "BLPOP", crossA, crossB, "0")
			e.blocked(1)
			e.do("RPUSH", k, "v")
			e.read(d)
		}
		e.send(d, "BZMPOP", "0", "2", crossA, crossB, "MIN", "COUNT", "2")
		e.blocked(1)
		e.do("ZADD", crossB, "1", "a", "2", "b", "3", "c")
		e.read(d)
		e.do("RPUSH", crossB, "there")
		e.send(d, "BRPOP", crossA, crossB, "1")
		e.read(d)
		for _, cmd := range [][]string{
			{"BLPOP", crossA, crossB, "-1"}, {"BLPOP", crossA, crossB, "abc"}, {"BZPOPMIN", crossA, crossB, "1e400"},
			{"BLMPOP", "-1", "2", crossA, crossB, "LEFT"}, {"BZMPOP", "0", "2", crossA, crossB, "MIN", "COUNT", "0"},
		} {
			e.send(d, cmd...)
			e.read(d)
		}
		e.send(d, "BRPOP", crossA, crossB, "0.05")
		e.read(d)
		e.do("SET", crossB, "str")
		e.send(d, "BLPOP", crossA, crossB, "0")
		e.read(d)
	}},
	{"waits across shards meet a key of another kind", func(e *benv) {
		// Redis looks at the keys in order: the first with data is
		// served, one of another kind before it is WRONGTYPE.
		d := e.client()
		e.do("RPUSH", crossA, "a1", "a2", "a3")
		e.do("SET", crossB, "str")
		for range 3 {
			e.send(d, "BLPOP", crossA, crossB, "0")
			e.read(d)
		}
		e.do("RPUSH", crossA, "a")
		e.send(d, "BLPOP", crossB, crossA, "0")
		e.read(d)
		e.do("LRANGE", crossA, "0", "-1")
	}},
}
