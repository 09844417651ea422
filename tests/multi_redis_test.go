package tests

import "testing"

// MULTI/EXEC compared with redis-server 7.0, byte for byte: each scenario
// runs on redis-server and on moond with one and two shards, in RESP2 and
// RESP3, and the raw transcripts must be equal (the harness of
// blocking_redis_test.go). foo1 and foo2 live on different shards of two.
var multiRedisScenarios = []blockingScenario{
	{"queue and EXEC", func(e *benv) {
		e.do("MULTI")
		e.do("SET", "foo1", "bar")
		e.do("MULTI")
		e.do("LPUSH", "foo1", "x")
		e.do("GET", "foo1")
		e.do("MGET", "foo1", "foo2")
		e.do("MSET", "foo2", "b", "foo3", "c")
		e.do("EXISTS", "foo1", "foo2", "foo3", "nokey")
		e.do("DEL", "foo2", "foo1")
		e.do("PING")
		e.do("ECHO", "hi")
		e.do("EXEC")
		e.do("EXEC")
		e.do("DISCARD")
		e.do("MULTI")
		e.do("EXEC")
	}},
	{"EXECABORT", func(e *benv) {
		e.do("MULTI")
		e.do("SET", "foo1", "1")
		e.do("NON-EXISTING-COMMAND", "a", "b")
		e.do("SET", "foo2")
		e.do("SAVE")
		e.do("MULTI")
		e.do("EXEC")
		e.do("EXISTS", "foo1", "foo2")
		e.do("MULTI")
		e.do("SET", "foo1", "1")
		e.do("DISCARD")
		e.do("EXISTS", "foo1")
	}},
	{"blocking commands inside MULTI", func(e *benv) {
		e.do("RPUSH", "mylist", "a")
		e.do("ZADD", "myzset", "1", "m")
		e.do("MULTI")
		e.do("BLPOP", "empty_list", "0")
		e.do("BLPOP", "mylist", "0")
		e.do("BRPOP", "empty_list", "0")
		e.do("BZPOPMIN", "empty_zset", "0")
		e.do("BZPOPMAX", "myzset", "0")
		e.do("BLMPOP", "0", "1", "empty_list", "LEFT")
		e.do("EXEC")
		e.do("EXISTS", "mylist", "myzset")
	}},
	{"SELECT inside MULTI", func(e *benv) {
		e.do("MULTI")
		e.do("SELECT", "1")
		e.do("MSET", "foo1", "x", "foo2", "y")
		e.do("SELECT", "99")
		e.do("SELECT", "notanumber")
		e.do("GET", "foo1")
		e.do("DBSIZE")
		e.do("EXEC")
		e.do("MGET", "foo1", "foo2")
		e.do("SELECT", "0")
		e.do("MGET", "foo1", "foo2")
		e.do("DBSIZE")
	}},
	{"RESET inside MULTI", func(e *benv) {
		e.do("MULTI")
		e.do("SET", "foo1", "x")
		e.do("RESET")
		e.do("EXEC")
		e.do("EXISTS", "foo1")
	}},
	{"SUBSCRIBE inside MULTI", func(e *benv) {
		// Redis queues (P)SUBSCRIBE in a transaction (they have no
		// no-multi flag); EXEC runs them, and the connection is then in
		// subscribed mode. Its EXEC array counts one element per
		// command while SUBSCRIBE of two channels writes two replies.
		rc := e.client()
		for _, cmd := range [][]string{
			{"MULTI"}, {"SUBSCRIBE", "chan1", "chan2"}, {"PSUBSCRIBE", "p*"},
			{"SET", "foo1", "1"}, {"SET", "foo2", "2"},
		} {
			e.send(rc, cmd...)
			e.read(rc)
		}
		e.send(rc, "EXEC")
		e.read(rc)
		e.read(rc)
		e.do("PUBLISH", "chan1", "hello")
		e.read(rc)
		e.do("PUBLISH", "pat", "hi")
		e.read(rc)
		e.send(rc, "PING")
		e.read(rc)
		e.send(rc, "GET", "foo2")
		e.read(rc)
		e.do("MGET", "foo1", "foo2")
	}},
	{"reply types inside EXEC", func(e *benv) {
		e.do("MULTI")
		e.do("SET", "foo1", "5")
		e.do("INCR", "foo1")
		e.do("INCRBYFLOAT", "foo2", "1.5")
		e.do("HSET", "h", "f", "v")
		e.do("HGETALL", "h")
		e.do("ZADD", "z", "1", "a")
		e.do("ZRANGE", "z", "0", "-1", "WITHSCORES")
		e.do("ZSCORE", "z", "a")
		e.do("SADD", "s", "m")
		e.do("SMEMBERS", "s")
		e.do("GET", "nokey")
		e.do("EXEC")
	}},
}

// TestMultiMatchesRedisServer compares the MULTI scenarios with
// redis-server 7.0 (skipped when none is installed).
func TestMultiMatchesRedisServer(t *testing.T) {
	t.Parallel()
	matchRedisServer(t, multiRedisScenarios)
}
