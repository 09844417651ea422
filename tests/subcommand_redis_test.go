package tests

import "testing"

// subcommandContainers are the container commands moond answers, each
// with a known subcommand called with the wrong number of arguments.
var subcommandContainers = [][]string{
	{"CLIENT", "KILL"},
	{"CONFIG", "GET"},
	{"COMMAND", "GETKEYS", "GET"},
	{"OBJECT", "ENCODING"},
	{"MEMORY", "USAGE"},
	{"SLOWLOG", "LEN", "extra"},
	{"LATENCY", "GRAPH"},
	{"PUBSUB", "NUMPAT", "extra"},
	{"FUNCTION", "DELETE"},
	{"DEBUG", "SLEEP"}, // no container in Redis: its own error text
}

// subcommandRedisScenarios compare with redis-server 7.0 how a container
// refuses an unknown subcommand ("ERR unknown subcommand 'nosuch'. Try
// CLIENT HELP.") and a known one with the wrong number of arguments
// ("ERR wrong number of arguments for 'client|kill' command"), alone and
// inside MULTI, and the cmd field CLIENT LIST shows after a container
// ("client|id"), or after an unknown command or subcommand ("NULL").
var subcommandRedisScenarios = []blockingScenario{
	{"unknown subcommand and wrong arity", func(e *benv) {
		for _, c := range subcommandContainers {
			e.do(c[0], "nosuch")
			e.do(c[0], "NoSuch", "with", "args")
			if c[0] != "COMMAND" { // COMMAND alone lists every command
				e.do(c[0])
			}
			e.do(c[0], "help", "extra")
			e.do(c...)
		}
	}},
	{"refused in MULTI", func(e *benv) {
		e.do("MULTI")
		e.do("CLIENT", "nosuch")
		e.do("CONFIG", "SET", "maxmemory")
		e.do("OBJECT", "nosuch")
		e.do("EXEC")
	}},
	{"CLIENT LIST cmd of a container", func(e *benv) {
		d := e.client()
		id := e.clientID(d)
		e.clientFlags(id)
		e.send(d, "CONFIG", "GET", "nosuch-parameter")
		e.read(d)
		e.clientFlags(id)
		e.send(d, "GET", "k")
		e.read(d)
		e.clientFlags(id)
		e.send(d, "OBJECT", "ENCODING", "k")
		e.read(d)
		e.clientFlags(id)
		e.send(d, "CLIENT")
		e.read(d)
		e.clientFlags(id)
		e.send(d, "CLIENT", "KILL")
		e.read(d)
		e.clientFlags(id)
		e.send(d, "CLIENT", "NOSUCH")
		e.read(d)
		e.clientFlags(id)
		e.send(d, "GET", "k")
		e.read(d)
		e.send(d, "NOSUCHCOMMAND")
		e.read(d)
		e.clientFlags(id)
	}},
}

// TestSubcommandErrorsMatchRedisServer compares the subcommand scenarios
// with redis-server 7.0 (skipped when none is installed).
func TestSubcommandErrorsMatchRedisServer(t *testing.T) {
	t.Parallel()
	matchRedisServerWith(t, []string{"--enable-debug-command", "yes"}, subcommandRedisScenarios)
}
