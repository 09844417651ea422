package tests

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// repl-backlog-size on a moond master: set by flag or CONFIG SET with
// Redis's units and errors, shown by INFO, and resized at run time.

// backlogConfigReplies runs CONFIG SET/GET repl-backlog-size steps on c
// and returns each reply (or error) and INFO's repl_backlog_size.
func backlogConfigReplies(t *testing.T, c *redis.Client) []string {
	t.Helper()
	var out []string
	for _, args := range [][]any{
		{"CONFIG", "GET", "repl-backlog-size"},
		{"CONFIG", "SET", "repl-backlog-size", "2mb"},
		{"CONFIG", "GET", "repl-backlog-size"},
		{"CONFIG", "SET", "repl-backlog-size", "100"},
		{"CONFIG", "GET", "repl-backlog-size"},
		{"CONFIG", "SET", "repl-backlog-size", "0"},
		{"CONFIG", "SET", "repl-backlog-size", "-1"},
		{"CONFIG", "SET", "repl-backlog-size", "1gb"},
		{"CONFIG", "GET", "repl-backlog-size"},
	} {
		v, err := c.Do(ctx(t), args...).Result()
		out = append(out, fmt.Sprint(args[1:], " -> ", v, err))
	}
	return append(out, "info "+infoField(t, c, "repl_backlog_size"))
}

// TestMasterBacklogSizeAsRedis: the flag, CONFIG GET/SET (units, the
// least size, the errors) and INFO's repl_backlog_size answer as a
// redis-server 7.0's.
func TestMasterBacklogSizeAsRedis(t *testing.T) {
	r := startRedisServer(t, "--repl-backlog-size", "64kb")
	s := startServer(t, "uring", 2, "--repl-backlog-size", "64kb")
	want := backlogConfigReplies(t, r)
	got := backlogConfigReplies(t, s.client(2))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("moond:\n%s\nredis-server:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(want[0], "65536") {
		t.Fatalf("the flag was not taken: %s", want[0])
	}
}

// psyncLine sends PSYNC replid offset to addr on a new connection and
// returns the reply's first line; the connection closes (a replica that
// goes away at once).
func psyncLine(t *testing.T, addr, replid string, offset int64) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "PSYNC %s %d\r\n", replid, offset)
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}

// TestMasterBacklogResizeDecidesPartialResync: while a replica keeps the
// stream fed, a replica that goes away and returns after 100 KB of writes
// continues when CONFIG SET made the live backlog 4 MB, and needs a full
// sync when it was 16 KB, or was shrunk to that while it was away.
func TestMasterBacklogResizeDecidesPartialResync(t *testing.T) {
	s := startServer(t, "uring", 2)
	maddr := s.addr()
	m := s.client(2)
	host, port := hostPort(t, maddr)
	waitLinkUp(t, startRedisServer(t, "--replicaof", host, port))
	val := strings.Repeat("x", 1000)
	// away attaches a replica that leaves at once, writes 100 KB, calls
	// meanwhile, and returns the reply to the replica's PSYNC.
	away := func(meanwhile func()) string {
		t.Helper()
		var id string
		var off int64
		line := psyncLine(t, maddr, "?", -1)
		if _, err := fmt.Sscanf(line, "+FULLRESYNC %s %d", &id, &off); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		for i := range 100 {
			if err := m.Set(ctx(t), fmt.Sprintf("k%d", i), val, 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		meanwhile()
		return psyncLine(t, maddr, id, off+1)
	}
	set := func(size string) func() {
		return func() {
			if err := m.ConfigSet(ctx(t), "repl-backlog-size", size).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	set("16kb")()
	if got := away(func() {}); !strings.HasPrefix(got, "+FULLRESYNC ") {
		t.Fatalf("return past a 16 KB backlog: %q", got)
	}
	set("4mb")()
	if got := away(func() {}); !strings.HasPrefix(got, "+CONTINUE") {
		t.Fatalf("return within a 4 MB backlog: %q", got)
	}
	if got := away(set("16kb")); !strings.HasPrefix(got, "+FULLRESYNC ") {
		t.Fatalf("return past a backlog shrunk to 16 KB: %q", got)
	}
	if hist := infoField(t, m, "repl_backlog_histlen"); hist != "16384" {
		t.Fatalf("repl_backlog_histlen %s, want 16384", hist)
	}
}
