package tests

import "testing"

// CLIENT REPLY compared with redis-server 7.0: OFF answers nothing, not
// even errors or replies that come from other shards or a blocked
// command, until ON (which answers OK); SKIP drops the next reply only,
// and a SKIP during SKIP drops the one after it.
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
}

// TestClientReplyMatchesRedisServer compares the CLIENT REPLY scenarios
// with redis-server 7.0 (skipped when none is installed).
func TestClientReplyMatchesRedisServer(t *testing.T) {
	matchRedisServer(t, clientReplyScenarios)
}
