package tests

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A transaction and its connection: a client that hangs up right after
// EXEC (or before it), and transactions too large for one read.

// TestMultiHangupAroundExec: clients send MULTI, two SETs over both shards
// and EXEC (or no EXEC) in one write and close at once. A pair without
// EXEC is never written; a pair with EXEC is written whole or not at all;
// the server goes on.
func TestMultiHangupAroundExec(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		pairs := pairKeys("hu", 60)
		for i, p := range pairs {
			cmds := encodeCommand([]string{"MULTI"}) + encodeCommand([]string{"SET", p[0], "v"}) +
				encodeCommand([]string{"SET", p[1], "v"})
			if i%2 == 0 {
				cmds += encodeCommand([]string{"EXEC"})
			}
			nc, err := net.DialTimeout("tcp", s.addr(), 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if _, err := nc.Write([]byte(cmds)); err != nil {
				t.Fatal(err)
			}
			nc.Close()
		}
		x := newTxClient(t, s, 2)
		// The hung-up connections' input may still be running: wait, with
		// a deadline, until every connection but x's is gone.
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(x.do("info", "clients"), "connected_clients:1\r") {
			if time.Now().After(deadline) {
				t.Fatalf("the hung-up connections are still there:\n%s", x.do("info", "clients"))
			}
			time.Sleep(time.Millisecond)
		}
		written := 0
		for i, p := range pairs {
			got := x.do("mget", p[0], p[1])
			switch {
			case got == "[v v]" && i%2 == 0:
				written++
			case got == "[(nil) (nil)]":
			default:
				t.Errorf("pair %d (EXEC sent: %v): %s", i, i%2 == 0, got)
			}
		}
		x.want("PONG", "ping")
		t.Logf("%d of %d transactions sent with EXEC ran", written, len(pairs)/2)
	})
}

// TestMultiLargeTransactions: thousands of queued commands over both
// shards in one pipeline, and values of a MiB each, in one EXEC.
func TestMultiLargeTransactions(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		const n = 4000
		c := s.client(2)
		cmds, err := c.Pipelined(ctx(t), func(p redis.Pipeliner) error {
			p.Do(ctx(t), "multi")
			for i := range n {
				p.Do(ctx(t), "set", fmt.Sprintf("big%d", i), i)
			}
			p.Do(ctx(t), "dbsize")
			p.Do(ctx(t), "exec")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		exec, err := cmds[len(cmds)-1].(*redis.Cmd).Slice()
		if err != nil || len(exec) != n+1 {
			t.Fatalf("EXEC of %d commands: %d replies (%v)", n+1, len(exec), err)
		}
		for i, r := range exec[:n] {
			if r != "OK" {
				t.Fatalf("reply %d: %v", i, r)
			}
		}
		if exec[n] != int64(n) {
			t.Fatalf("DBSIZE inside EXEC: %v", exec[n])
		}

		a, b := keyOnShard("mib-a", 0), keyOnShard("mib-b", 1)
		va, vb := strings.Repeat("a", 1<<20), strings.Repeat("b", 1<<20)
		x := newTxClient(t, s, 2)
		x.want("OK", "multi")
		x.want("QUEUED", "set", a, va)
		x.want("QUEUED", "set", b, vb)
		x.want("QUEUED", "strlen", a)
		x.want("[OK OK 1048576]", "exec")
		if got, err := c.MGet(ctx(t), a, b).Result(); err != nil || len(got) != 2 || got[0] != va || got[1] != vb {
			t.Fatalf("MGET of the MiB values: %v", err)
		}
	})
}
