package tests

import (
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// debugObjectVolatile are the fields of DEBUG OBJECT that differ between
// any two servers: the address and the LRU clock and idle time (a shared
// integer's is as old as the server, in Redis).
var debugObjectVolatile = regexp.MustCompile(`Value at:0x[0-9a-f]+ | lru:\d+ lru_seconds_idle:\d+`)

// debugListLength is a list's serializedlength: Redis's serializes its
// listpacks, moond's the elements (RDB's plain list), so it is cut.
var debugListLength = regexp.MustCompile(`serializedlength:\d+ `)

// debugObject records DEBUG OBJECT key with its volatile fields cut.
func debugObject(e *benv, key string) {
	r := debugObjectVolatile.ReplaceAllString(e.quiet("DEBUG", "OBJECT", key), " ")
	if e.quiet("TYPE", key) == "+list\r\n" {
		r = debugListLength.ReplaceAllString(r, "")
	}
	e.note("DEBUG OBJECT %s -> %q", key, r)
}

// DEBUG compared with redis-server 7.0 (started with DEBUG enabled):
// DEBUG OBJECT's line for strings and lists (collections of other kinds
// serialize in other encodings, so their serializedlength differs), its
// errors, and the other subcommands' replies.
var debugRedisScenarios = []blockingScenario{
	{"DEBUG OBJECT", func(e *benv) {
		e.do("SET", "k", "v")
		debugObject(e, "k")
		e.do("SET", "n", "123")
		debugObject(e, "n")
		e.do("SET", "big", "12345678")
		debugObject(e, "big")
		e.do("SET", "s", "a string that LZF would not shorten")
		debugObject(e, "s")
		e.do("RPUSH", "l", "a", "b", "c", "1", "-5000", "70000", "a string of twenty-one")
		debugObject(e, "l")
		e.do("DEBUG", "OBJECT", "nokey")
		e.do("DEBUG", "OBJECT")
		e.do("DEBUG", "OBJECT", "a", "b")
	}},
	{"DEBUG DIGEST", func(e *benv) {
		e.do("DEBUG", "DIGEST")
		e.do("SET", "str", "hello")
		e.do("SET", "int", "12345")
		e.do("SET", "ttl", "x", "EX", "1000")
		e.do("RPUSH", "list", "a", "1", "b")
		e.do("SADD", "iset", "1", "2", "3")
		e.do("SADD", "set", "x", "y")
		e.do("ZADD", "z", "1", "a", "0.1", "b", "-2.5", "c", "3", "100")
		e.do("HSET", "h", "f", "v", "g", "1")
		e.do("DEBUG", "DIGEST")
		e.do("DEBUG", "DIGEST-VALUE", "str", "int", "ttl", "list", "iset", "set", "z", "h", "nokey")
		e.do("DEBUG", "DIGEST-VALUE")
		e.do("SELECT", "2")
		e.do("SET", "str", "hello")
		e.do("DEBUG", "DIGEST")
		e.do("DEBUG", "DIGEST", "extra")
		e.do("FLUSHALL")
		e.do("SELECT", "0")
	}},
	{"DEBUG PROTOCOL", func(e *benv) {
		for _, typ := range []string{"string", "integer", "double", "bignum", "null", "array", "set", "map", "true", "false", "verbatim"} {
			e.do("DEBUG", "PROTOCOL", typ)
		}
		d := e.client()
		for _, typ := range []string{"attrib", "push"} {
			e.send(d, "DEBUG", "PROTOCOL", typ)
			e.read(d)
			if e.proto == 3 {
				e.read(d) // the reply after the attribute's or push's
			}
		}
		e.do("DEBUG", "PROTOCOL", "bogus")
	}},
	{"DEBUG others", func(e *benv) {
		e.do("DEBUG", "RELOAD", "bogus")
		e.do("DEBUG", "RELOAD", "MERGE")
		e.do("SET", "kept", "1")
		e.do("DEBUG", "RELOAD")
		e.do("GET", "kept")
		e.do("DEBUG", "ERROR", "my error")
		// Written as plain reply bytes, DEBUG ERROR counts in neither
		// errorstats nor failed_calls.
		e.do("CONFIG", "RESETSTAT")
		e.do("DEBUG", "ERROR", "MY\nERR\rx")
		e.do("INFO", "errorstats")
		e.do("DEBUG", "LOG", "hello")
		e.do("DEBUG", "CHANGE-REPL-ID")
		e.do("DEBUG", "NOSUCHTHING")
	}},
	{"SHUTDOWN refusals", func(e *benv) {
		for _, opts := range [][]string{{"ABORT"}, {"bogus"}, {"NOSAVE", "SAVE"}, {"NOW", "bogus"},
			{"ABORT", "NOW"}, {"SAVE", "ABORT"}, {"FORCE", "NOSAVE", "NOW", "ABORT"}} {
			e.do(append([]string{"SHUTDOWN"}, opts...)...)
		}
	}},
}

// TestDebugMatchesRedisServer compares the DEBUG scenarios with
// redis-server 7.0 (skipped when none is installed).
func TestDebugMatchesRedisServer(t *testing.T) {
	matchRedisServerWith(t, []string{"--enable-debug-command", "yes"}, debugRedisScenarios)
}

// TestDebugDigestSurvivesReloadAndKill: DEBUG DIGEST is the same after
// DEBUG RELOAD, and after kill -9 and a restart on the same data
// directory, as Redis's tests compare digests around a reload.
func TestDebugDigestSurvivesReloadAndKill(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, "pool", 2)
	c := s.client(2)
	for _, cmd := range [][]any{
		{"SET", "str", "hello"}, {"SET", "ttl", "x", "EX", "1000"}, {"RPUSH", "list", "a", "1", "b"},
		{"SADD", "set", "x", "y"}, {"ZADD", "z", "1", "a", "0.1", "b"}, {"HSET", "h", "f", "v"},
	} {
		if err := c.Do(ctx(t), cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	digest := func(c *redis.Client) string {
		t.Helper()
		d, err := c.Do(ctx(t), "DEBUG", "DIGEST").Text()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	before := digest(c)
	if before == strings.Repeat("0", 40) {
		t.Fatal("DEBUG DIGEST of a data set is zero")
	}
	if err := c.Do(ctx(t), "DEBUG", "RELOAD").Err(); err != nil {
		t.Fatalf("DEBUG RELOAD: %v", err)
	}
	if after := digest(c); after != before {
		t.Fatalf("digest after DEBUG RELOAD %s, before %s", after, before)
	}
	s.kill9()
	s2 := startServerIn(t, dir, "pool", 2)
	if after := digest(s2.client(2)); after != before {
		t.Fatalf("digest after kill -9 and restart %s, before %s", after, before)
	}
}
