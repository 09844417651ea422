package tests

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The blocking commands compared with redis-server 7.0, reply for reply:
// each scenario (blocking_redis_cases_test.go, after the blocking cases of
// Redis's tests/unit/type/list.tcl and zset.tcl) runs against redis-server
// and against moond with one and two shards, in RESP2 and RESP3, through
// raw connections ("deferred clients": send, wait until INFO says the
// client blocked, act with another client, read); every raw reply goes
// into a transcript, and the transcripts must be equal.

// rawClient is one connection that sends commands and reads whole raw
// replies.
type rawClient struct {
	name   string
	c      net.Conn
	r      *bufio.Reader
	broken string // why its stream can no longer be trusted
}

func dialRaw(t *testing.T, addr, name string, proto int) *rawClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rc := &rawClient{name: name, c: c, r: bufio.NewReader(c)}
	if proto == 3 {
		// HELLO's reply names the server: not compared.
		rc.send("HELLO", "3")
		if _, err := rc.read(5 * time.Second); err != nil {
			t.Fatalf("HELLO 3: %v", err)
		}
	}
	return rc
}

func encodeCommand(args []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

func (rc *rawClient) send(args ...string) { rc.write(encodeCommand(args)) }

func (rc *rawClient) write(s string) {
	rc.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := rc.c.Write([]byte(s)); err != nil && rc.broken == "" {
		rc.broken = "write: " + err.Error()
	}
}

// read reads one whole reply, as the bytes the server sent.
func (rc *rawClient) read(wait time.Duration) (string, error) {
	if rc.broken != "" {
		return "", fmt.Errorf("%s", rc.broken)
	}
	rc.c.SetReadDeadline(time.Now().Add(wait))
	var b strings.Builder
	if err := rc.readValue(&b); err != nil {
		rc.broken = err.Error()
		return b.String(), err
	}
	return b.String(), nil
}

func (rc *rawClient) readValue(b *strings.Builder) error {
	line, err := rc.r.ReadString('\n')
	b.WriteString(line)
	if err != nil {
		return err
	}
	if len(line) < 3 {
		return fmt.Errorf("short line %q", line)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	switch line[0] {
	case '$', '=', '!':
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		_, err := io.ReadFull(rc.r, buf)
		b.Write(buf)
		return err
	case '*', '~', '>':
	case '%', '|':
		n *= 2
	default:
		return nil
	}
	for range max(n, 0) {
		if err := rc.readValue(b); err != nil {
			return err
		}
	}
	return nil
}

// benv is one run of a scenario against one server.
type benv struct {
	t       *testing.T
	addr    string
	proto   int
	ctl     *rawClient
	clients []*rawClient
	ids     map[string]bool // the deferred clients' ids
	log     []string
}

func (e *benv) note(format string, args ...any) {
	e.log = append(e.log, fmt.Sprintf(format, args...))
}

// do runs a command on the control client and records its reply (a
// client id in it recorded as <id>: ids differ between servers).
func (e *benv) do(args ...string) string {
	e.ctl.send(args...)
	r, err := e.ctl.read(5 * time.Second)
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = a
		if e.ids[a] {
			shown[i] = "<id>"
		}
	}
	if err != nil {
		e.note("%q -> %q (%v)", shown, r, err)
		return r
	}
	e.note("%q -> %q", shown, r)
	return r
}

// quiet runs a command on the control client without recording it.
func (e *benv) quiet(args ...string) string {
	e.ctl.send(args...)
	r, _ := e.ctl.read(5 * time.Second)
	return r
}

// client opens a deferred client, speaking the run's protocol.
func (e *benv) client() *rawClient {
	rc := dialRaw(e.t, e.addr, fmt.Sprintf("d%d", len(e.clients)+1), e.proto)
	e.clients = append(e.clients, rc)
	return rc
}

// send sends a command on a deferred client without reading.
func (e *benv) send(rc *rawClient, args ...string) {
	e.note("%s> %q", rc.name, args)
	rc.send(args...)
}

// read records the next reply of a deferred client.
func (e *benv) read(rc *rawClient) {
	r, err := rc.read(5 * time.Second)
	if err != nil {
		e.note("%s< %q (%v)", rc.name, r, err)
		return
	}
	e.note("%s< %q", rc.name, r)
}

// clientID asks a deferred client its id.
func (e *benv) clientID(rc *rawClient) string {
	rc.send("CLIENT", "ID")
	r, _ := rc.read(5 * time.Second)
	id := strings.TrimSpace(strings.TrimPrefix(r, ":"))
	if e.ids == nil {
		e.ids = map[string]bool{}
	}
	e.ids[id] = true
	return id
}

// closeClient hangs up a deferred client.
func (e *benv) closeClient(rc *rawClient) {
	e.note("%s: close", rc.name)
	rc.c.Close()
	rc.broken = "closed"
}

// blocked waits until INFO says n clients are blocked, and records it
// with clients_in_timeout_table (or the count it stayed at).
func (e *benv) blocked(n int) {
	got := -1
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		info := e.quiet("INFO", "clients")
		if got = rawInfoInt(info, "blocked_clients"); got == n {
			e.note("blocked_clients:%d clients_in_timeout_table:%d", n, rawInfoInt(info, "clients_in_timeout_table"))
			return
		}
		time.Sleep(time.Millisecond)
	}
	e.note("blocked_clients stayed %d, want %d", got, n)
}

func (e *benv) blockedClients() int {
	return rawInfoInt(e.quiet("INFO", "clients"), "blocked_clients")
}

// rawInfoInt is the value of an integer field of an INFO reply, or -1.
func rawInfoInt(info, name string) int {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return -1
}

// clientFlags records the flags, db and cmd fields of CLIENT LIST for
// a deferred client.
func (e *benv) clientFlags(id string) {
	list := e.quiet("CLIENT", "LIST", "ID", id)
	var kept []string
	for _, f := range strings.Fields(list) {
		for _, p := range []string{"flags=", "db=", "cmd="} {
			if strings.HasPrefix(f, p) {
				kept = append(kept, f)
			}
		}
	}
	e.note("CLIENT LIST ID <id>: %s", strings.Join(kept, " "))
}

// until waits, with a deadline, for cond; it records nothing.
func (e *benv) until(what string, cond func() bool) {
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.note("never: %s", what)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// runScenario runs f against the server at addr and returns its
// transcript. The server is flushed first and left with no client.
func runScenario(t *testing.T, addr string, proto int, f func(e *benv)) []string {
	e := &benv{t: t, addr: addr, proto: proto}
	e.ctl = dialRaw(t, addr, "ctl", proto)
	defer e.ctl.c.Close()
	e.until("no blocked client left from before", func() bool { return e.blockedClients() == 0 })
	e.quiet("FLUSHALL")
	f(e)
	for _, rc := range e.clients {
		rc.c.Close()
	}
	e.until("the scenario's blocked clients gone", func() bool { return e.blockedClients() == 0 })
	return e.log
}

// TestBlockingMatchesRedisServer runs every blocking scenario against
// redis-server 7.0 (skipped when none is installed) and moond with one and
// two shards, in RESP2 and RESP3, and compares the transcripts.
func TestBlockingMatchesRedisServer(t *testing.T) {
	matchRedisServer(t, blockingScenarios)
}

// matchRedisServer runs each scenario against redis-server 7.0 (skipped
// when none is installed) and moond with one shard (uring) and two (pool),
// in RESP2 and RESP3, and compares the transcripts step by step.
func matchRedisServer(t *testing.T, scenarios []blockingScenario) {
	matchRedisServerWith(t, nil, scenarios)
}

// matchRedisServerWith is matchRedisServer with redis-server started with
// the extra arguments redisArgs.
func matchRedisServerWith(t *testing.T, redisArgs []string, scenarios []blockingScenario) {
	rs := startRedisServer(t, redisArgs...)
	redisAddr := rs.Options().Addr
	moonds := []struct {
		name string
		s    *server
	}{
		{"moond/uring/shards=1", startServer(t, "uring", 1)},
		{"moond/pool/shards=2", startServer(t, "pool", 2)},
	}
	for _, sc := range scenarios {
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/RESP%d", sc.name, proto), func(t *testing.T) {
				want := runScenario(t, redisAddr, proto, sc.run)
				for _, m := range moonds {
					got := runScenario(t, m.s.addr(), proto, sc.run)
					if d := firstDiff(want, got); d >= 0 {
						t.Errorf("%s differs from redis-server at step %d:\n redis: %s\n moond: %s\nredis transcript:\n  %s\nmoond transcript:\n  %s",
							m.name, d, at(want, d), at(got, d), strings.Join(want, "\n  "), strings.Join(got, "\n  "))
					}
				}
			})
		}
	}
}

func firstDiff(a, b []string) int {
	for i := range max(len(a), len(b)) {
		if at(a, i) != at(b, i) {
			return i
		}
	}
	return -1
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(end)"
}
