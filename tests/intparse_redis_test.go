package tests

import "testing"

// intParseRedisScenarios compare with redis-server 7.0 the integer
// arguments Redis reads with string2ll: no '+', no spaces, no leading
// zeros, no "-0", within range; and DEBUG SLEEP's, which Redis reads with
// an unchecked strtod and so never refuses.
var intParseRedisScenarios = []blockingScenario{
	{"string2ll arguments", func(e *benv) {
		// SLOWLOG GET's reply must not depend on how slow this host was
		// when it ran the FLUSHALL before the scenario.
		e.quiet("CONFIG", "SET", "slowlog-log-slower-than", "-1")
		e.quiet("SLOWLOG", "RESET")
		defer e.quiet("CONFIG", "SET", "slowlog-log-slower-than", "10000")
		for _, n := range []string{"+1", "01", " 1", "1 ", "-0", "0x1", "4294967296"} {
			e.do("SELECT", n)
			e.do("SELECT", "0")
			e.do("CLIENT", "KILL", "ID", n)
			e.do("CLIENT", "LIST", "ID", n)
			e.do("CLIENT", "UNBLOCK", n)
			e.do("SLOWLOG", "GET", n)
			e.do("MIGRATE", "127.0.0.1", "1", "k", n, "1000")
			e.do("MIGRATE", "127.0.0.1", "1", "k", "0", n)
		}
		for _, n := range []string{"+3", "03", " 3", "-0"} {
			e.do("HELLO", n)
		}
		for _, n := range []string{"+999999", "0999999", " 999999"} {
			e.do("CLIENT", "TRACKING", "ON", "REDIRECT", n)
		}
	}},
	{"DEBUG SLEEP", func(e *benv) {
		for _, n := range []string{"abc", "-1", "+0", " 0", "00", "0.001", "", "nan", "1e-4x"} {
			e.do("DEBUG", "SLEEP", n)
		}
	}},
}

// TestIntegerArgumentsMatchRedisServer compares the integer parsing
// scenarios with redis-server 7.0 (skipped when none is installed).
func TestIntegerArgumentsMatchRedisServer(t *testing.T) {
	t.Parallel()
	matchRedisServerWith(t, []string{"--enable-debug-command", "yes"}, intParseRedisScenarios)
}
