package tests

import (
	"strings"
	"testing"
)

// CLIENT REPLY compared with redis-server 7.0: OFF answers nothing, not
// even errors or replies that come from other shards or a blocked
// command, until ON (which answers OK); SKIP drops the next reply only,
// and a SKIP during SKIP drops the one after it. CLIENT NO-EVICT, a flag
// only (moond evicts no clients), shows in CLIENT LIST.
var clientReplyScenarios = []blockingScenario{
	{"errors", func(e *benv) {
		e.do("CLIENT", "REPLY", "bogus")
		e.do("CLIENT", "REPLY")
		e.do("CLIENT", "REPLY", "ON", "extra")
	}},
	{"OFF then ON", func(e *benv) {
		d := e.client()
		e.send(d, "CLIENT", "REPLY", "OFF")
		e.send(d, "SET", "x", "1")
		e.send(d, "NOSUCHCOMMAND")
		e.send(d, "MGET", "x", "a", "b", "c", "d", "e")
		e.send(d, "BLPOP", "nolist", "0.01")
		e.send(d, "CLIENT", "REPLY", "SKIP")
		e.send(d, "CLIENT", "REPLY", "ON")
		e.read(d)
		e.send(d, "GET", "x")
		e.read(d)
	}},
	{"SKIP", func(e *benv) {
		d := e.client()
		e.do("SET", "x", "1")
		e.send(d, "CLIENT", "REPLY", "SKIP")
		e.send(d, "MGET", "x", "a", "b", "c")
		e.send(d, "ECHO", "one")
		e.read(d)
		e.send(d, "CLIENT", "REPLY", "SKIP")
		e.send(d, "CLIENT", "REPLY", "SKIP")
		e.send(d, "GET", "x")
		e.send(d, "ECHO", "two")
		e.read(d)
		e.send(d, "CLIENT", "REPLY", "SKIP")
		e.send(d, "CLIENT", "REPLY", "ON")
		e.read(d)
		e.send(d, "CLIENT", "REPLY", "SKIP")
		e.send(d, "BLPOP", "nolist", "0.01")
		e.send(d, "ECHO", "three")
		e.read(d)
	}},
	{"CLIENT NO-EVICT shows flag e", func(e *benv) {
		d := e.client()
		id := e.clientID(d)
		e.send(d, "CLIENT", "NO-EVICT", "ON")
		e.read(d)
		clientFlagsOnly(e, id)
		e.send(d, "CLIENT", "NO-EVICT", "OFF")
		e.read(d)
		clientFlagsOnly(e, id)
		e.do("CLIENT", "NO-EVICT", "maybe")
	}},
}

// TestClientReplyMatchesRedisServer compares the CLIENT REPLY scenarios
// with redis-server 7.0 (skipped when none is installed).
func TestClientReplyMatchesRedisServer(t *testing.T) {
	matchRedisServer(t, clientReplyScenarios)
}

// clientFlagsOnly records the flags of CLIENT LIST for a client (its cmd
// field names a subcommand as "client" in moond, "client|no-evict" in
// Redis).
func clientFlagsOnly(e *benv, id string) {
	for _, f := range strings.Fields(e.quiet("CLIENT", "LIST", "ID", id)) {
		if strings.HasPrefix(f, "flags=") {
			e.note("CLIENT LIST ID <id>: %s", f)
		}
	}
}
