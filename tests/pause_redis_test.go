package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// CLIENT PAUSE and UNPAUSE compared with redis-server 7.0 (the harness of
// blocking_redis_test.go), after Redis's tests/unit/pause.tcl: a held
// command counts in blocked_clients and shows flags=b, and runs when the
// pause ends.
var pauseRedisScenarios = []blockingScenario{
	{"errors", func(e *benv) {
		e.do("CLIENT", "PAUSE", "abc")
		e.do("CLIENT", "PAUSE", "-1")
		e.do("CLIENT", "PAUSE", "+5", "WRITE")
		e.do("CLIENT", "PAUSE", " 5", "WRITE")
		e.do("CLIENT", "PAUSE", "abc", "sometimes")
		e.do("CLIENT", "PAUSE", "10", "sometimes")
		e.do("CLIENT", "PAUSE", "10", "WRITE", "extra")
		e.do("CLIENT", "PAUSE")
		e.do("CLIENT", "PAUSE", "99999999999999999999")
		e.do("CLIENT", "PAUSE", "9000000000000000000", "WRITE")
		e.do("CLIENT", "UNPAUSE")
		e.do("CLIENT", "UNPAUSE", "x")
		e.do("CLIENT", "PAUSE", "0", "all")
		e.do("CLIENT", "UNPAUSE")
	}},
	{"reads pass a WRITE pause", func(e *benv) {
		d := e.client()
		e.do("CLIENT", "PAUSE", "100000", "WRITE")
		e.send(d, "GET", "FOO")
		e.read(d)
		e.send(d, "PING")
		e.read(d)
		e.blocked(0)
		e.do("CLIENT", "UNPAUSE")
	}},
	{"writes held by a WRITE pause", func(e *benv) {
		d := e.client()
		id := e.clientID(d)
		e.do("CLIENT", "PAUSE", "100000", "WRITE")
		e.send(d, "SET", "FOO", "BAR")
		e.blocked(1)
		e.clientFlags(id)
		e.do("GET", "FOO")
		e.do("CLIENT", "UNPAUSE")
		e.read(d)
		e.do("GET", "FOO")
	}},
	{"a held command's pipeline waits behind it", func(e *benv) {
		d := e.client()
		e.do("CLIENT", "PAUSE", "100000", "WRITE")
		d.write(encodeCommand([]string{"SET", "a", "1"}) + encodeCommand([]string{"GET", "a"}) +
			encodeCommand([]string{"MGET", "a", "b", "c", "d"}) + encodeCommand([]string{"INCR", "n"}))
		e.note("d1> SET a 1; GET a; MGET a b c d; INCR n")
		e.blocked(1)
		e.do("GET", "a")
		e.do("CLIENT", "UNPAUSE")
		for range 4 {
			e.read(d)
		}
	}},
	{"a shorter pause keeps the longer one's end", func(e *benv) {
		e.do("SET", "clock", "x", "PX", "50")
		e.do("CLIENT", "PAUSE", "100000", "WRITE")
		e.do("CLIENT", "PAUSE", "10", "WRITE")
		// Once the key expired, more than the short pause went by.
		e.until("50 ms went by", func() bool { return isNullReply(e.quiet("GET", "clock")) })
		d := e.client()
		e.send(d, "SET", "FOO", "BAR")
		e.blocked(1)
		e.do("CLIENT", "UNPAUSE")
		e.read(d)
	}},
	{"the pausing client is held too", func(e *benv) {
		e.do("CLIENT", "PAUSE", "100000", "WRITE")
		e.do("GET", "k")
		d := e.client()
		e.send(d, "CLIENT", "UNPAUSE")
		e.read(d)
		e.do("SET", "k", "v")
	}},
	{"PFCOUNT and PUBLISH held", func(e *benv) {
		e.do("PFADD", "pause-hll", "test")
		e.do("CLIENT", "PAUSE", "100000", "WRITE")
		d1, d2 := e.client(), e.client()
		e.send(d1, "PFCOUNT", "pause-hll")
		e.blocked(1)
		e.send(d2, "PUBLISH", "foo", "bar")
		e.blocked(2)
		e.do("CLIENT", "UNPAUSE")
		e.read(d1)
		e.read(d2)
	}},
	{"a read MULTI/EXEC passes", func(e *benv) {
		e.do("SET", "FOO", "BAR")
		e.do("CLIENT", "PAUSE", "100000", "WRITE")
		d := e.client()
		for _, cmd := range [][]string{{"MULTI"}, {"PING"}, {"GET", "FOO"}, {"EXEC"}} {
			e.send(d, cmd...)
			e.read(d)
		}
		e.blocked(0)
		e.do("CLIENT", "UNPAUSE")
	}},
	{"a write MULTI/EXEC held at EXEC", func(e *benv) {
		d := e.client()
		e.send(d, "MULTI")
		e.read(d)
		e.send(d, "SET", "FOO", "BAR")
		e.read(d)
		e.do("CLIENT", "PAUSE", "100000", "WRITE")
		e.send(d, "EXEC")
		e.blocked(1)
		e.do("CLIENT", "UNPAUSE")
		e.read(d)
	}},
	{"a write queued in MULTI is held", func(e *benv) {
		d := e.client()
		id := e.clientID(d)
		e.send(d, "MULTI")
		e.read(d)
		e.do("CLIENT", "PAUSE", "100000", "WRITE")
		e.send(d, "SET", "FOO", "BAR")
		e.blocked(1)
		e.clientFlags(id)
		e.do("CLIENT", "UNPAUSE")
		e.read(d)
		e.send(d, "EXEC")
		e.read(d)
	}},
	// Held clients of one shard run in the order they were held; those of
	// several shards in no set order, which this leaves out.
	{"held clients all run", func(e *benv) {
		e.do("CLIENT", "PAUSE", "100000", "WRITE")
		var ds []*rawClient
		for i := range 3 {
			d := e.client()
			e.send(d, "SET", fmt.Sprint("held:", i), "x")
			e.blocked(i + 1)
			ds = append(ds, d)
		}
		e.do("CLIENT", "UNPAUSE")
		for _, d := range ds {
			e.read(d)
		}
		e.do("MGET", "held:0", "held:1", "held:2")
	}},
	{"errors answer at once", func(e *benv) {
		e.do("CLIENT", "PAUSE", "100000", "WRITE")
		e.do("SET", "FOO")
		e.do("NOSUCHCOMMAND")
		e.do("CLIENT", "UNPAUSE")
	}},
	{"errors answer at once under ALL", func(e *benv) {
		e.do("MULTI")
		e.do("CLIENT", "PAUSE", "300", "ALL")
		e.do("EXEC")
		e.do("GET")
		e.do("CLIENT", "PAUSE")
		e.do("OBJECT", "NOSUCH", "k")
		e.do("OBJECT", "ENCODING")
		e.do("PING")
	}},
	{"a pause starts at the end of a transaction", func(e *benv) {
		e.do("MULTI")
		e.do("SET", "FOO1{t}", "BAR")
		e.do("CLIENT", "PAUSE", "100000", "WRITE")
		e.do("SET", "FOO2{t}", "BAR")
		e.do("EXEC")
		d := e.client()
		e.send(d, "SET", "FOO3{t}", "BAR")
		e.blocked(1)
		e.do("GET", "FOO1{t}")
		e.do("GET", "FOO2{t}")
		e.do("GET", "FOO3{t}")
		e.do("CLIENT", "UNPAUSE")
		e.read(d)
	}},
	{"a pause ALL holds every command until it ends", func(e *benv) {
		d := e.client()
		e.do("SET", "k", "v")
		e.do("CLIENT", "PAUSE", "300", "ALL")
		e.send(d, "GET", "k")
		e.read(d)
		e.do("PING")
	}},
	{"expired keys are kept while paused", func(e *benv) {
		base := rawInfoInt(e.quiet("INFO", "stats"), "expired_keys")
		e.do("MULTI")
		e.do("SET", "foo{t}", "bar", "PX", "10")
		e.do("SET", "bar{t}", "foo", "PX", "10")
		e.do("CLIENT", "PAUSE", "100000", "WRITE")
		e.do("EXEC")
		e.until("the keys expired", func() bool {
			return isNullReply(e.quiet("GET", "foo{t}")) && isNullReply(e.quiet("GET", "bar{t}"))
		})
		e.note("expired while paused: %d", rawInfoInt(e.quiet("INFO", "stats"), "expired_keys")-base)
		e.do("CLIENT", "UNPAUSE")
		e.do("GET", "foo{t}")
		e.do("GET", "bar{t}")
		e.note("expired after: %d", rawInfoInt(e.quiet("INFO", "stats"), "expired_keys")-base)
	}},
	{"a held client that hangs up runs nothing", func(e *benv) {
		d := e.client()
		e.do("CLIENT", "PAUSE", "100000", "WRITE")
		e.send(d, "SET", "gone", "1")
		e.blocked(1)
		e.closeClient(d)
		e.blocked(0)
		e.do("CLIENT", "UNPAUSE")
		e.do("EXISTS", "gone")
	}},
}

// TestClientPauseMatchesRedisServer compares the CLIENT PAUSE scenarios
// with redis-server 7.0 (skipped when none is installed).
func TestClientPauseMatchesRedisServer(t *testing.T) {
	matchRedisServer(t, pauseRedisScenarios)
}

// TestClientPauseHoldsEveryShard pauses from a connection on one shard
// and checks that writes on every shard are held, and run when the pause
// times out; the stronger of two pauses stays (ALL over a later WRITE).
func TestClientPauseHoldsEveryShard(t *testing.T) {
	s := startServer(t, "pool", 4)
	ctl := dialRaw(t, s.addr(), "ctl", 2)
	// The kernel spreads connections over the shards' listeners: 32 of
	// them leave none of the four without one but once in thousands.
	var conns []*rawClient
	for range 32 {
		conns = append(conns, dialRaw(t, s.addr(), "d", 2))
	}
	ctl.send("MULTI")
	ctl.send("CLIENT", "PAUSE", "400", "ALL")
	ctl.send("CLIENT", "PAUSE", "10", "WRITE")
	ctl.send("EXEC")
	for range 4 {
		if _, err := ctl.read(5 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	for i, c := range conns {
		c.send("SET", fmt.Sprint("k", i), "v")
	}
	for _, c := range conns {
		r, err := c.read(5 * time.Second)
		if err != nil || r != "+OK\r\n" {
			t.Fatalf("SET under pause: %q %v", r, err)
		}
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("writes ran %v into a 400 ms pause ALL", d)
	}
	ctl.send("DBSIZE")
	if r, _ := ctl.read(5 * time.Second); r != ":32\r\n" {
		t.Fatalf("DBSIZE = %q, want 32", r)
	}
}

// unblockHeldScenario is Redis's "CLIENT UNBLOCK is not allow to unblock
// client blocked by CLIENT PAUSE" (after 7.0: redis-server 7.0.15 crashes
// on it): a command held by a pause is not blocked yet, so CLIENT UNBLOCK
// finds nothing to end; once the pause ends, the BLPOP blocks and can be.
func unblockHeldScenario(e *benv) {
	d1, d2 := e.client(), e.client()
	id1, id2 := e.clientID(d1), e.clientID(d2)
	e.do("CLIENT", "PAUSE", "100000", "WRITE")
	e.send(d1, "BLPOP", "mylist", "0")
	e.send(d2, "BLPOP", "mylist", "0")
	e.blocked(2)
	e.do("CLIENT", "UNBLOCK", id1, "TIMEOUT")
	e.do("CLIENT", "UNBLOCK", id2, "ERROR")
	e.do("CLIENT", "UNPAUSE")
	e.blocked(2)
	e.do("CLIENT", "UNBLOCK", id1, "TIMEOUT")
	e.do("CLIENT", "UNBLOCK", id2, "ERROR")
	e.read(d1)
	e.read(d2)
}

// TestClientUnblockLeavesAHeldCommand runs unblockHeldScenario on moond
// with one and two shards.
func TestClientUnblockLeavesAHeldCommand(t *testing.T) {
	want := []string{
		`["CLIENT" "PAUSE" "100000" "WRITE"] -> "+OK\r\n"`,
		`d1> ["BLPOP" "mylist" "0"]`,
		`d2> ["BLPOP" "mylist" "0"]`,
		`blocked_clients:2 clients_in_timeout_table:0`,
		`["CLIENT" "UNBLOCK" "<id>" "TIMEOUT"] -> ":0\r\n"`,
		`["CLIENT" "UNBLOCK" "<id>" "ERROR"] -> ":0\r\n"`,
		`["CLIENT" "UNPAUSE"] -> "+OK\r\n"`,
		`blocked_clients:2 clients_in_timeout_table:0`,
		`["CLIENT" "UNBLOCK" "<id>" "TIMEOUT"] -> ":1\r\n"`,
		`["CLIENT" "UNBLOCK" "<id>" "ERROR"] -> ":1\r\n"`,
		`d1< "*-1\r\n"`,
		`d2< "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"`,
	}
	for _, shards := range []int{1, 2} {
		s := startServer(t, "pool", shards)
		got := runScenario(t, s.addr(), 2, unblockHeldScenario)
		if d := firstDiff(want, got); d >= 0 {
			t.Errorf("shards=%d: step %d is %s, want %s\n  %s", shards, d, at(got, d), at(want, d), strings.Join(got, "\n  "))
		}
	}
}

// isNullReply reports whether r is a null reply, in RESP2 or RESP3.
func isNullReply(r string) bool { return r == "$-1\r\n" || r == "_\r\n" }
