package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// timingConn is one connection (its name and shard stay) with helpers for
// the SLOWLOG and LATENCY tests.
type timingConn struct {
	t *testing.T
	c *redis.Conn
}

func newTimingConn(t *testing.T, s *server) *timingConn {
	c := s.client(2).Conn()
	t.Cleanup(func() { c.Close() })
	return &timingConn{t: t, c: c}
}

// do runs a command that must succeed.
func (x *timingConn) do(args ...any) any {
	x.t.Helper()
	v, err := x.c.Do(ctx(x.t), args...).Result()
	if err != nil && err != redis.Nil {
		x.t.Fatalf("%v: %v", args, err)
	}
	return v
}

// fails runs a command that must answer the error want.
func (x *timingConn) fails(want string, args ...any) {
	x.t.Helper()
	err := x.c.Do(ctx(x.t), args...).Err()
	if err == nil || err.Error() != want {
		x.t.Errorf("%v: error %v, want %q", args, err, want)
	}
}

func (x *timingConn) int(args ...any) int64 {
	x.t.Helper()
	n, ok := x.do(args...).(int64)
	if !ok {
		x.t.Fatalf("%v: not an integer reply", args)
	}
	return n
}

// slowEntries is SLOWLOG GET [count]'s reply.
func (x *timingConn) slowEntries(count ...any) [][]any {
	x.t.Helper()
	reply, ok := x.do(append([]any{"slowlog", "get"}, count...)...).([]any)
	if !ok {
		x.t.Fatal("SLOWLOG GET: not an array")
	}
	out := make([][]any, len(reply))
	for i, e := range reply {
		if out[i], ok = e.([]any); !ok || len(out[i]) != 6 {
			x.t.Fatalf("SLOWLOG GET entry %d: %v, want an array of 6", i, e)
		}
	}
	return out
}

// argvOf is an entry's arguments joined by spaces.
func argvOf(t *testing.T, e []any) string {
	t.Helper()
	args, ok := e[3].([]any)
	if !ok {
		t.Fatalf("entry arguments %v: not an array", e[3])
	}
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = fmt.Sprint(a)
	}
	return strings.Join(s, " ")
}

// TestSlowlogAsRedis follows Redis 7.0's tests/unit/slowlog.tcl, where it
// applies, on one and two shards (DEBUG SLEEP is a slow command, as in
// Redis, although it delays only its own client).
func TestSlowlogAsRedis(t *testing.T) {
	for _, shards := range []int{1, 2} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			t.Parallel()
			s := startServer(t, "uring", shards, "--slowlog-log-slower-than", "1000000")
			x := newTimingConn(t, s)

			if n := x.int("slowlog", "len"); n != 0 {
				t.Fatalf("a new server's slow log holds %d entries", n)
			}
			// Only commands slower than the threshold.
			x.do("config", "set", "slowlog-log-slower-than", 100000)
			x.do("ping")
			if n := x.int("slowlog", "len"); n != 0 {
				t.Fatalf("PING was logged at 100 ms: %d entries", n)
			}
			x.do("debug", "sleep", 0.2)
			if n := x.int("slowlog", "len"); n != 1 {
				t.Fatalf("DEBUG SLEEP 0.2 not logged at 100 ms: %d entries", n)
			}
			// slowlog-max-len bounds the log.
			x.do("config", "set", "slowlog-log-slower-than", 0)
			x.do("config", "set", "slowlog-max-len", 10)
			for range 100 {
				x.do("ping")
			}
			if n := x.int("slowlog", "len"); n != 10 {
				t.Fatalf("SLOWLOG LEN %d at slowlog-max-len 10", n)
			}
			if n := len(x.slowEntries(5)); n != 5 {
				t.Fatalf("SLOWLOG GET 5 gave %d entries", n)
			}
			x.do("config", "set", "slowlog-log-slower-than", 100000)
			x.do("slowlog", "reset")
			if n := x.int("slowlog", "len"); n != 0 {
				t.Fatalf("%d entries after SLOWLOG RESET", n)
			}
			// An entry: id, time, duration, arguments, address, name. The
			// ids count every entry logged, as Redis's do (105 here).
			x.do("client", "setname", "foobar")
			x.do("debug", "sleep", 0.2)
			e := x.slowEntries()[0]
			if e[0] != int64(105) || e[2].(int64) <= 100000 || argvOf(t, e) != "debug sleep 0.2" || e[5] != "foobar" {
				t.Fatalf("entry %v, want id 105, > 100000 µs, debug sleep 0.2, foobar", e)
			}
			if addr, ok := e[4].(string); !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
				t.Errorf("entry's client address %v", e[4])
			}
			// Passwords are redacted.
			x.do("config", "set", "slowlog-log-slower-than", 0)
			x.do("slowlog", "reset")
			x.do("config", "set", "requirepass", "")
			x.fails("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?", "auth", "secret")
			x.do("config", "set", "slowlog-log-slower-than", 10000)
			got := x.slowEntries()
			want := []string{"auth (redacted)", "config set requirepass (redacted)", "slowlog reset"}
			if len(got) != len(want) {
				t.Fatalf("%d entries, want %d: %v", len(got), len(want), got)
			}
			for i, w := range want {
				if a := argvOf(t, got[i]); a != w {
					t.Errorf("entry %d: %q, want %q", i, a, w)
				}
			}
			// MIGRATE's credentials too.
			x.do("config", "set", "slowlog-log-slower-than", 0)
			x.do("slowlog", "reset")
			host, port := "127.0.0.1", fmt.Sprint(s.port)
			x.do("migrate", host, port, "key", 9, 5000)
			x.do("migrate", host, port, "key", 9, 5000, "AUTH", "user")
			x.do("migrate", host, port, "key", 9, 5000, "AUTH2", "user", "password")
			x.do("config", "set", "slowlog-log-slower-than", 10000)
			got = x.slowEntries()
			want = []string{" key 9 5000 AUTH2 (redacted) (redacted)", " key 9 5000 AUTH (redacted)", " key 9 5000", "slowlog reset"}
			if len(got) != len(want) {
				t.Fatalf("%d entries, want %d: %v", len(got), len(want), got)
			}
			for i, w := range want {
				if a := argvOf(t, got[i]); !strings.HasSuffix(a, w) {
					t.Errorf("entry %d: %q, want it to end in %q", i, a, w)
				}
			}
			// Too many and too long arguments are trimmed.
			x.do("config", "set", "slowlog-log-slower-than", 0)
			x.do("slowlog", "reset")
			sadd := []any{"sadd", "set"}
			for i := 3; i <= 33; i++ {
				sadd = append(sadd, i)
			}
			x.do(sadd...)
			if a := argvOf(t, x.slowEntries()[0]); !strings.HasSuffix(a, " 30 31 ... (2 more arguments)") {
				t.Errorf("33 arguments logged as %q", a)
			}
			x.do("slowlog", "reset")
			x.do("sadd", "set", "foo", strings.Repeat("A", 129))
			if a := argvOf(t, x.slowEntries()[0]); a != "sadd set foo "+strings.Repeat("A", 128)+"... (1 more bytes)" {
				t.Errorf("a 129-byte argument logged as %q", a)
			}
			// EXEC is not logged, the commands it ran are.
			x.do("config", "set", "slowlog-log-slower-than", 100000)
			x.do("slowlog", "reset")
			pipe := x.c.TxPipeline()
			pipe.Do(ctx(t), "debug", "sleep", 0.2)
			if _, err := pipe.Exec(ctx(t)); err != nil {
				t.Fatal(err)
			}
			if es := x.slowEntries(); len(es) != 1 || argvOf(t, es[0]) != "debug sleep 0.2" {
				t.Fatalf("after MULTI, DEBUG SLEEP, EXEC the log holds %v, want only debug sleep 0.2", es)
			}
			// A shorter log keeps the newest.
			x.do("client", "setname", "lastentry_client")
			x.do("config", "set", "slowlog-max-len", 1)
			x.do("debug", "sleep", 0.2)
			if es := x.slowEntries(); len(es) != 1 || es[0][5] != "lastentry_client" {
				t.Fatalf("at slowlog-max-len 1 the log holds %v", es)
			}
			// -1 turns it off.
			x.do("config", "set", "slowlog-log-slower-than", -1)
			x.do("slowlog", "reset")
			x.do("debug", "sleep", 0.2)
			if n := x.int("slowlog", "len"); n != 0 {
				t.Fatalf("slowlog-log-slower-than -1 logged %d entries", n)
			}
		})
	}
}

// TestSlowlogAcrossShards checks that commands that ran on another shard
// than their connection's are logged with that connection's name, newest
// first across the shards, and that SLOWLOG RESET clears every shard.
func TestSlowlogAcrossShards(t *testing.T) {
	s := startServer(t, "pool", 4)
	x := newTimingConn(t, s)
	x.do("client", "setname", "spread")
	x.do("config", "set", "slowlog-log-slower-than", 0)
	x.do("slowlog", "reset")
	const n = 20
	for i := range n {
		x.do("set", fmt.Sprintf("key%d", i), "v")
	}
	x.do("mget", "key1", "key2", "key3", "key4")
	es := x.slowEntries(-1)
	if len(es) != n+2 { // the SETs, MGET and SLOWLOG RESET
		t.Fatalf("%d entries, want %d", len(es), n+2)
	}
	if a := argvOf(t, es[0]); a != "mget key1 key2 key3 key4" {
		t.Errorf("newest entry %q, want the MGET", a)
	}
	for i, e := range es[1 : n+1] {
		if want := fmt.Sprintf("set key%d v", n-1-i); argvOf(t, e) != want || e[5] != "spread" {
			t.Errorf("entry %d: %q by %v, want %q by spread", i+1, argvOf(t, e), e[5], want)
		}
		if e[0].(int64) <= es[i+2][0].(int64) {
			t.Errorf("entry ids not decreasing: %v then %v", e[0], es[i+2][0])
		}
	}
	x.do("config", "set", "slowlog-log-slower-than", -1)
	x.do("slowlog", "reset")
	if n := x.int("slowlog", "len"); n != 0 {
		t.Fatalf("%d entries after SLOWLOG RESET on 4 shards", n)
	}
}

// TestSlowlogErrors checks SLOWLOG's and its parameters' errors, in
// redis-server 7.0's words.
func TestSlowlogErrors(t *testing.T) {
	s := startServer(t, "pool", 1)
	x := newTimingConn(t, s)
	x.fails("ERR count should be greater than or equal to -1", "slowlog", "get", -2)
	x.fails("ERR count should be greater than or equal to -1", "slowlog", "get", "x")
	x.fails("ERR wrong number of arguments for 'slowlog|len' command", "slowlog", "len", 3)
	x.fails("ERR wrong number of arguments for 'slowlog|get' command", "slowlog", "get", 1, 2)
	x.fails("ERR unknown subcommand 'foo'. Try SLOWLOG HELP.", "slowlog", "foo")
	x.fails("ERR CONFIG SET failed (possibly related to argument 'slowlog-log-slower-than') - argument must be between -1 and 9223372036854775807 inclusive",
		"config", "set", "slowlog-log-slower-than", -2)
	x.fails("ERR CONFIG SET failed (possibly related to argument 'slowlog-max-len') - argument must be between 0 and 9223372036854775807 inclusive",
		"config", "set", "slowlog-max-len", -1)
	if help, ok := x.do("slowlog", "help").([]any); !ok || len(help) != 12 {
		t.Errorf("SLOWLOG HELP: %v", help)
	}
	if es := x.slowEntries(0); len(es) != 0 {
		t.Errorf("SLOWLOG GET 0 gave %d entries", len(es))
	}
}
