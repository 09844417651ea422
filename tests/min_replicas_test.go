package tests

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moond-db/moond/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The master's replication settings against redis-server 7.0's
// (tests/integration/replication-2.tcl): min-replicas-to-write and
// min-replicas-max-lag (NOREPLICAS, EXECABORT, min_slaves_good_slaves),
// repl-ping-replica-period and the master's repl-timeout.

// transcript records commands and their replies, for comparing two servers.
type transcript struct {
	t    *testing.T
	c    *redis.Client
	rows []string
}

// do runs a command and records it with its reply or error.
func (tr *transcript) do(args ...any) string {
	v, err := tr.c.Do(ctx(tr.t), args...).Result()
	row := fmt.Sprintf("%v -> %v", args, v)
	if err != nil {
		row = fmt.Sprintf("%v -> error %v", args, err)
	}
	tr.rows = append(tr.rows, row)
	return row
}

// note records an observation.
func (tr *transcript) note(format string, args ...any) {
	tr.rows = append(tr.rows, fmt.Sprintf(format, args...))
}

// pidOf is the process id of the server whose client is c.
func pidOf(t *testing.T, c *redis.Client) int {
	t.Helper()
	pid, err := strconv.Atoi(infoField(t, c, "process_id"))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// signal sends sig to process pid.
func signal(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatal(err)
	}
}

// goodReplicasField is INFO's min_slaves_good_slaves, "absent" without it.
func goodReplicasField(t *testing.T, c *redis.Client) string {
	info, err := c.Info(ctx(t), "replication").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "min_slaves_good_slaves:"); ok {
			return v
		}
	}
	return "absent"
}

// minReplicasScenario drives master m, whose one replica (a redis-server)
// is process r, through the settings and returns what it answered.
func minReplicasScenario(t *testing.T, m *redis.Client, r int) []string {
	tr := &transcript{t: t, c: m}
	tr.do("CONFIG", "SET", "min-slaves-to-write", "1")
	tr.do("CONFIG", "SET", "min-slaves-max-lag", "10")
	tr.do("SET", "foo", "12345")
	tr.note("good %s", goodReplicasField(t, m))
	tr.do("CONFIG", "SET", "min-slaves-to-write", "2")
	tr.do("SET", "foo", "1")
	tr.do("INCR", "n")
	tr.do("GET", "foo")
	tr.note("good %s", goodReplicasField(t, m))
	tr.do("CONFIG", "GET", "min-replicas-to-write")
	tr.do("CONFIG", "GET", "min-slaves-max-lag")

	// Queued while refused: the write is answered NOREPLICAS, EXEC aborts.
	tx := &transcript{t: t, c: redis.NewClient(&redis.Options{Addr: m.Options().Addr, PoolSize: 1, Protocol: 2})}
	defer tx.c.Close()
	tx.do("MULTI")
	tx.do("GET", "foo")
	tx.do("SET", "foo", "2")
	tx.do("EXEC")
	// Queued while allowed, refused at EXEC.
	tr.do("CONFIG", "SET", "min-slaves-to-write", "1")
	tx.do("MULTI")
	tx.do("SET", "foo", "3")
	tr.do("CONFIG", "SET", "min-slaves-to-write", "2")
	tx.do("EXEC")
	tr.do("CONFIG", "SET", "min-slaves-to-write", "1")
	tx.do("MULTI")
	tx.do("GET", "foo")
	tx.do("EXEC")
	tr.rows = append(tr.rows, tx.rows...)

	// A replica that stops ACKing is no longer good after max-lag.
	tr.do("CONFIG", "SET", "min-slaves-max-lag", "2")
	signal(t, r, syscall.SIGSTOP)
	pollUntil(t, 15*time.Second, "a write refused once the stopped replica lags", func() bool {
		return m.Set(ctx(t), "foo", "4", 0).Err() != nil
	})
	tr.do("SET", "foo", "5")
	tr.note("good %s", goodReplicasField(t, m))
	signal(t, r, syscall.SIGCONT)
	pollUntil(t, 15*time.Second, "writes accepted once the replica ACKs again", func() bool {
		return m.Set(ctx(t), "foo", "6", 0).Err() == nil
	})
	tr.note("good %s", goodReplicasField(t, m))
	tr.do("CONFIG", "SET", "min-slaves-to-write", "0")
	tr.do("SET", "foo", "7")
	tr.note("good %s", goodReplicasField(t, m))

	// repl-ping-replica-period: the idle stream grows by PINGs.
	tr.do("CONFIG", "SET", "repl-ping-slave-period", "1")
	tr.do("CONFIG", "GET", "repl-ping-replica-period")
	tr.do("CONFIG", "SET", "repl-ping-replica-period", "0")
	off := infoField(t, m, "master_repl_offset")
	pollUntil(t, 10*time.Second, "the idle stream grows by PINGs", func() bool {
		return infoField(t, m, "master_repl_offset") != off
	})

	// repl-timeout on the master: a replica silent for as long is dropped.
	tr.do("CONFIG", "SET", "repl-timeout", "0")
	tr.do("CONFIG", "SET", "repl-timeout", "2")
	tr.do("CONFIG", "GET", "repl-timeout")
	signal(t, r, syscall.SIGSTOP)
	pollUntil(t, 15*time.Second, "the silent replica dropped after repl-timeout", func() bool {
		return infoField(t, m, "connected_slaves") == "0"
	})
	signal(t, r, syscall.SIGCONT)

	tr.do("CONFIG", "SET", "slave-priority", "0")
	tr.do("CONFIG", "GET", "replica-priority")
	tr.do("CONFIG", "SET", "replica-priority", "-1")
	tr.do("CONFIG", "SET", "replica-announced", "no")
	tr.do("CONFIG", "GET", "replica-announced")
	return tr.rows
}

// TestMinReplicasAsRedis: a moond master and a redis-server master, each
// with a redis-server replica, answer the same to the scenario above.
func TestMinReplicasAsRedis(t *testing.T) {
	run := func(m *redis.Client, addr string) []string {
		host, port := hostPort(t, addr)
		r := pidOf(t, redistest.Start(t, freePort(t), t.TempDir(), "--replicaof", host, port))
		pollUntil(t, 30*time.Second, "the replica online", func() bool {
			info, err := m.Info(ctx(t), "replication").Result()
			return err == nil && strings.Contains(info, "state=online")
		})
		defer signal(t, r, syscall.SIGCONT) // never leave it stopped
		return minReplicasScenario(t, m, r)
	}
	rport := freePort(t)
	want := run(redistest.Start(t, rport, t.TempDir()), "127.0.0.1:"+strconv.Itoa(rport))
	ms := startServer(t, "uring", 2)
	got := run(ms.client(2), ms.addr())
	t.Logf("moond's transcript:\n%s", strings.Join(got, "\n"))
	if len(got) != len(want) {
		t.Fatalf("moond:\n%s\nredis:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("row %d:\n moond %s\n redis %s", i, got[i], want[i])
		}
	}
	if !strings.Contains(strings.Join(got, "\n"), "NOREPLICAS Not enough good replicas to write.") {
		t.Errorf("moond never refused a write:\n%s", strings.Join(got, "\n"))
	}
}

// TestMinReplicasIgnoredByReplica: a moond replica with
// min-replicas-to-write set (and no replicas of its own) still applies its
// master's writes, and answers READONLY, not NOREPLICAS, to a client's
// (replication-2.tcl, "min-slaves-to-write is ignored by slaves").
func TestMinReplicasIgnoredByReplica(t *testing.T) {
	ms, rs := startServer(t, "uring", 2), startServer(t, "uring", 2)
	m, r := ms.client(2), rs.client(2)
	host, port := hostPort(t, ms.addr())
	if err := r.Do(ctx(t), "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitLinkUp(t, r)
	for _, c := range []*redis.Client{m, r} {
		for _, kv := range [][2]string{{"min-slaves-to-write", "1"}, {"min-slaves-max-lag", "10"}} {
			if err := c.ConfigSet(ctx(t), kv[0], kv[1]).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	pollUntil(t, 10*time.Second, "the master counts its replica as good", func() bool {
		return goodReplicasField(t, m) == "1"
	})
	if err := m.Set(ctx(t), "foo", "aaabbb", 0).Err(); err != nil {
		t.Fatalf("SET on the master with its one good replica: %v", err)
	}
	pollUntil(t, 10*time.Second, "the write reached the replica", func() bool {
		return r.Get(ctx(t), "foo").Val() == "aaabbb"
	})
	if err := r.Set(ctx(t), "foo", "x", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("SET on the replica: %v, want READONLY", err)
	}
}
