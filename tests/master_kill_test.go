package tests

import (
	"context"
	"crypto/rand"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Kill -9 of a moond master, and of its redis-server replica, while the
// snapshot travels and while the stream flows: in every case the replica
// ends up with exactly the data the master has after its recovery.

// bigDB is the database fillBig fills: waitEqual compares other ones key
// by key, bigDBEqual this one by size.
const bigDB = 2

// fillBig writes n keys of 1 KiB of random bytes (which the snapshot
// cannot compress) to database bigDB of addr, pipelined: a snapshot far
// larger than the loopback socket's buffers, so that its transfer stalls
// while the replica is stopped.
func fillBig(t *testing.T, addr string, n int) {
	t.Helper()
	c := onDB(t, addr, bigDB)
	val := make([]byte, 1024)
	for i := 0; i < n; i += 500 {
		p := c.Pipeline()
		for j := i; j < min(n, i+500); j++ {
			rand.Read(val)
			p.Set(ctx(t), "big:"+strconv.Itoa(j), string(val), 0)
		}
		if _, err := p.Exec(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
}

// bigDBEqual checks that the replica holds as many keys in bigDB as the
// master, and the same value under a sample of them.
func bigDBEqual(t *testing.T, master, replica string) {
	t.Helper()
	m, r := onDB(t, master, bigDB), onDB(t, replica, bigDB)
	if a, b := m.DBSize(ctx(t)).Val(), r.DBSize(ctx(t)).Val(); a != b || a == 0 {
		t.Fatalf("db %d: the master holds %d keys, the replica %d", bigDB, a, b)
	}
	for i := 0; i < 30000; i += 997 {
		k := "big:" + strconv.Itoa(i)
		if a, b := m.Get(ctx(t), k).Val(), r.Get(ctx(t), k).Val(); a != b {
			t.Fatalf("db %d: %s differs (%d bytes on the master, %d on the replica)", bigDB, k, len(a), len(b))
		}
	}
}

// redisPID is the process id of the redis-server behind c.
func redisPID(t *testing.T, c *redis.Client) int {
	t.Helper()
	pid, err := strconv.Atoi(infoField(t, c, "process_id"))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// repointTo makes replica r follow the moond at addr and waits until it
// holds the same data.
func repointTo(t *testing.T, r *redis.Client, addr string) {
	t.Helper()
	host, port := hostPort(t, addr)
	if err := r.Do(ctx(t), "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitLinkUp(t, r)
	waitEqual(t, addr, r.Options().Addr)
}

// TestMasterKill9WhileStreaming: the master is killed while a client
// writes and the stream flows; restarted from its directory it recovers
// from its WAL, and the replica, pointed at it again, converges to what
// it recovered.
func TestMasterKill9WhileStreaming(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, "uring", 2)
	fillMaster(t, s.addr())
	host, port := hostPort(t, s.addr())
	r := startRedisServer(t, "--replicaof", host, port)
	waitLinkUp(t, r)
	stop := make(chan struct{})
	werr := make(chan error, 1)
	go func() { werr <- writeUntil(context.Background(), s.client(2), stop) }()
	waitFor(t, "the stream to carry writes", func() bool {
		off, _ := strconv.Atoi(infoField(t, r, "slave_repl_offset"))
		return off > 20000
	})
	s.kill9()
	close(stop)
	<-werr // the writer's connection broke with the master
	s2 := startServerIn(t, dir, "uring", 2)
	repointTo(t, r, s2.addr())
}

// TestMasterKill9WhileTheSnapshotTravels: the master is killed while its
// replica is stopped in the middle of the snapshot's transfer; the
// replica, woken, drops the half-read snapshot, and after the master's
// restart gets a whole one.
func TestMasterKill9WhileTheSnapshotTravels(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, "uring", 2)
	fillMaster(t, s.addr())
	fillBig(t, s.addr(), 30000)
	r, pid := stalledReplica(t, s)
	s.kill9()
	syscall.Kill(pid, syscall.SIGCONT)
	s2 := startServerIn(t, dir, "uring", 2)
	repointTo(t, r, s2.addr())
	bigDBEqual(t, s2.addr(), r.Options().Addr)
}

// TestReplicaKill9WhileTheSnapshotTravels: the replica is killed in the
// middle of the snapshot's transfer; the master drops it, keeps serving,
// and a new replica gets the whole data set.
func TestReplicaKill9WhileTheSnapshotTravels(t *testing.T) {
	s := startServer(t, "uring", 2)
	fillMaster(t, s.addr())
	fillBig(t, s.addr(), 30000)
	_, pid := stalledReplica(t, s)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	m := s.client(2)
	waitField(t, m, "connected_slaves", "0")
	if err := m.Set(ctx(t), "after", "the kill", 0).Err(); err != nil {
		t.Fatal(err)
	}
	host, port := hostPort(t, s.addr())
	r2 := startRedisServer(t, "--replicaof", host, port)
	waitLinkUp(t, r2)
	waitEqual(t, s.addr(), r2.Options().Addr)
	bigDBEqual(t, s.addr(), r2.Options().Addr)
	if !s.logShows("replica disconnected") {
		t.Fatal("the master did not log the killed replica's disconnection")
	}
}

// stalledReplica starts a redis-server replica of s and stops it (SIGSTOP)
// once s sends it the snapshot, so that the transfer stalls half done (the
// snapshot is far larger than the loopback socket's buffers); it returns
// the replica and its pid, which a cleanup wakes (SIGCONT) if it lives.
func stalledReplica(t *testing.T, s *server) (*redis.Client, int) {
	t.Helper()
	host, port := hostPort(t, s.addr())
	r := startRedisServer(t, "--replicaof", host, port)
	pid := redisPID(t, r)
	m := s.client(2)
	// The master builds a snapshot of tens of megabytes first.
	waitForWithin(t, time.Minute, "the snapshot's transfer to start", func() bool {
		info, err := m.Info(ctx(t), "replication").Result()
		return err == nil && strings.Contains(info, "state=send_bulk")
	})
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	return r, pid
}

// TestMoondReplicaKill9WhileTheSnapshotLoads: a moond replica of a
// redis-server master is killed while it reads the master's snapshot (30
// MB of random values); restarted on its directory, with replicaof in its
// flags, it syncs again and equals the master.
func TestMoondReplicaKill9WhileTheSnapshotLoads(t *testing.T) {
	m := startRedisServer(t, "--dir", t.TempDir(), "--repl-diskless-sync", "no")
	maddr := m.Options().Addr
	fillMaster(t, maddr)
	fillBig(t, maddr, 30000)
	host, port := hostPort(t, maddr)
	dir := t.TempDir()
	s := startServerIn(t, dir, "uring", 2, "--replicaof", host, port)
	waitFor(t, "the snapshot's transfer to start", func() bool {
		info, err := m.Info(ctx(t), "replication").Result()
		return err == nil && strings.Contains(info, "state=send_bulk")
	})
	s.kill9()
	s2 := startServerIn(t, dir, "uring", 2, "--replicaof", host, port)
	r := s2.client(2)
	waitLinkUp(t, r)
	waitEqual(t, maddr, s2.addr())
	bigDBEqual(t, maddr, s2.addr())
}
