package tests

import "testing"

// CLIENT KILL's filters compared with redis-server 7.0 (the harness of
// blocking_redis_test.go): TYPE pubsub takes a subscribed connection of
// either protocol, TYPE master or replica none, an unknown type is an
// error. (TYPE normal is left out: the harness's other connections to
// each server differ.)
var clientRedisScenarios = []blockingScenario{
	{"CLIENT KILL TYPE", func(e *benv) {
		sub := e.client()
		e.send(sub, "SUBSCRIBE", "ch")
		e.read(sub)
		e.do("CLIENT", "KILL", "TYPE", "bogus")
		e.do("CLIENT", "KILL", "TYPE", "master")
		e.do("CLIENT", "KILL", "TYPE", "replica")
		e.do("PUBLISH", "ch", "still here")
		e.read(sub)
		e.do("CLIENT", "KILL", "ID", "0")
		e.do("CLIENT", "KILL", "TYPE", "pubsub")
		e.do("CLIENT", "KILL", "TYPE", "pubsub")
		e.do("PUBLISH", "ch", "gone")
	}},
}

// TestClientKillMatchesRedisServer compares the CLIENT KILL scenarios
// with redis-server 7.0 (skipped when none is installed).
func TestClientKillMatchesRedisServer(t *testing.T) {
	t.Parallel()
	matchRedisServer(t, clientRedisScenarios)
}
