package tests

import "testing"

// maxmemory's refusals compared with redis-server 7.0, byte for byte
// (the harness of blocking_redis_test.go). "CONFIG SET maxmemory 1" puts
// either server over its limit at once; under noeviction that refuses the
// commands that add data, any command queued in MULTI, and EXEC of a
// transaction that queued one; reads and deletions go on. foo1 and foo2
// live on different shards of two.
var evictRedisScenarios = []blockingScenario{
	{"noeviction refusals", func(e *benv) {
		e.do("CONFIG", "SET", "maxmemory-policy", "noeviction")
		e.do("MSET", "foo1", "a", "foo2", "b")
		e.do("CONFIG", "SET", "maxmemory", "1")
		e.do("SET", "foo1", "x")
		e.do("MSET", "foo1", "x", "foo2", "y")
		e.do("APPEND", "foo2", "more")
		e.do("INCR", "counter")
		e.do("MGET", "foo1", "foo2")
		e.do("EXPIRE", "foo1", "100")
		e.do("DEL", "foo1")
		e.do("EXISTS", "foo1", "foo2")
		e.do("MULTI")
		e.do("GET", "foo2")
		e.do("EXEC")
		e.do("CONFIG", "SET", "maxmemory", "0")
		e.do("SET", "foo1", "back")
		e.do("MGET", "foo1", "foo2")
	}},
	{"EXEC of a transaction that adds data", func(e *benv) {
		e.do("CONFIG", "SET", "maxmemory-policy", "noeviction")
		e.do("SET", "foo1", "a")
		rc := e.client()
		for _, cmd := range [][]string{{"MULTI"}, {"SET", "foo2", "b"}, {"GET", "foo1"}} {
			e.send(rc, cmd...)
			e.read(rc)
		}
		e.do("CONFIG", "SET", "maxmemory", "1")
		e.send(rc, "EXEC")
		e.read(rc)
		e.send(rc, "EXEC")
		e.read(rc)
		// A read-only transaction still runs.
		for _, cmd := range [][]string{{"MULTI"}} {
			e.send(rc, cmd...)
			e.read(rc)
		}
		e.do("CONFIG", "SET", "maxmemory", "0")
		e.send(rc, "GET", "foo1")
		e.read(rc)
		e.do("CONFIG", "SET", "maxmemory", "1")
		e.send(rc, "EXEC")
		e.read(rc)
		e.do("CONFIG", "SET", "maxmemory", "0")
		e.do("EXISTS", "foo1", "foo2")
	}},
	{"OBJECT FREQ and IDLETIME by policy", func(e *benv) {
		e.do("SET", "foo1", "a")
		e.do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
		e.do("OBJECT", "FREQ", "foo1")
		e.do("CONFIG", "SET", "maxmemory-policy", "volatile-lfu")
		e.do("OBJECT", "IDLETIME", "foo1")
		e.do("SET", "foo2", "b")
		e.do("OBJECT", "FREQ", "foo2")
		e.do("OBJECT", "FREQ", "nokey")
		e.do("CONFIG", "SET", "maxmemory-policy", "noeviction")
		e.do("CONFIG", "SET", "maxmemory-samples", "0")
		e.do("CONFIG", "SET", "maxmemory-eviction-tenacity", "101")
		e.do("CONFIG", "SET", "maxmemory-policy", "lru")
		e.do("CONFIG", "GET", "maxmemory-samples")
		e.do("CONFIG", "GET", "lfu-log-factor")
		e.do("CONFIG", "GET", "lfu-decay-time")
	}},
}

// TestMaxmemoryMatchesRedisServer compares the maxmemory scenarios with
// redis-server 7.0 (skipped when none is installed).
func TestMaxmemoryMatchesRedisServer(t *testing.T) {
	t.Parallel()
	matchRedisServer(t, evictRedisScenarios)
}
