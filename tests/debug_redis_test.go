package tests

import (
	"regexp"
	"testing"
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
	{"DEBUG others", func(e *benv) {
		e.do("DEBUG", "RELOAD", "bogus")
		e.do("DEBUG", "RELOAD", "MERGE")
		e.do("SET", "kept", "1")
		e.do("DEBUG", "RELOAD")
		e.do("GET", "kept")
		e.do("DEBUG", "ERROR", "my error")
		e.do("DEBUG", "LOG", "hello")
		e.do("DEBUG", "CHANGE-REPL-ID")
		e.do("DEBUG", "NOSUCHTHING")
	}},
}

// TestDebugMatchesRedisServer compares the DEBUG scenarios with
// redis-server 7.0 (skipped when none is installed).
func TestDebugMatchesRedisServer(t *testing.T) {
	matchRedisServerWith(t, []string{"--enable-debug-command", "yes"}, debugRedisScenarios)
}
