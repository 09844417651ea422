package tests

import (
	"regexp"
	"strings"
	"testing"
)

// memoryNumber is a value of MEMORY STATS: figures differ between any
// two servers, so only their place and kind are compared.
var memoryNumber = regexp.MustCompile(`^-?[0-9.]+$`)

// memoryShape records the shape of a MEMORY STATS reply: its headers and
// names as they are, its numbers by kind only (":n" an integer, ",d" a
// RESP3 double, "$n" a number in a bulk string).
func memoryShape(e *benv, args ...string) {
	var shape []string
	lines := strings.Split(e.quiet(args...), "\r\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case l == "":
		case l[0] == ':':
			shape = append(shape, ":n")
		case l[0] == ',':
			shape = append(shape, ",d")
		case l[0] == '$' && i+1 < len(lines):
			i++
			if memoryNumber.MatchString(lines[i]) {
				shape = append(shape, "$n")
			} else {
				shape = append(shape, lines[i])
			}
		default:
			shape = append(shape, l)
		}
	}
	e.note("%q -> %s", args, strings.Join(shape, " "))
}

// MEMORY compared with redis-server 7.0: the fields of MEMORY STATS in
// their order and kind (a database with keys gets its db.N map), MEMORY
// DOCTOR on an instance that holds little, the errors and HELP.
// MALLOC-STATS is left out: redis-server's is jemalloc's report, moond's
// says the allocator has none, as a Redis built without jemalloc does.
var memoryRedisScenarios = []blockingScenario{
	{"MEMORY STATS", func(e *benv) {
		memoryShape(e, "MEMORY", "STATS")
		e.do("SET", "k", "v")
		e.do("SELECT", "3")
		e.do("SET", "k", "v")
		memoryShape(e, "MEMORY", "STATS")
		e.do("FLUSHALL")
		e.do("SELECT", "0")
	}},
	{"MEMORY others", func(e *benv) {
		e.do("MEMORY", "DOCTOR")
		e.do("MEMORY", "STATS", "x")
		e.do("MEMORY", "DOCTOR", "x")
		e.do("MEMORY", "MALLOC-STATS", "x")
		e.do("MEMORY", "BOGUS")
		e.do("MEMORY", "HELP")
		e.do("MEMORY", "PURGE")
		e.do("MEMORY", "USAGE", "nokey")
	}},
}

// TestMemoryMatchesRedisServer compares the MEMORY scenarios with
// redis-server 7.0 (skipped when none is installed).
func TestMemoryMatchesRedisServer(t *testing.T) {
	matchRedisServer(t, memoryRedisScenarios)
}
