package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A moond master restarted on its data directory (docs/DESIGN.md §3, "A
// master's restart continues its history"): after a clean shutdown it
// keeps its replid and offset, and its replicas continue; after a kill -9
// it starts a new history, and they full-sync.

// restartedMaster is a moond master with appendonly yes, a moond and a
// redis-server replica online and caught up, and the data of fillMaster
// and masterWrites in several dbs.
type restartedMaster struct {
	s      *server
	flags  []string // the master's flags, for the restart
	moond  *server  // the moond replica
	mr, rr *redis.Client
	replid string // master_replid before the restart
}

// newRestartedMaster starts the master and its replicas and waits until
// both hold the master's offset. No PING goes into the stream on its own
// (repl-ping-replica-period 3600): a PING the master fed but did not send
// before it stopped would leave the replicas behind its offset.
func newRestartedMaster(t *testing.T) *restartedMaster {
	t.Helper()
	flags := []string{"--appendonly", "yes", "--repl-ping-replica-period", "3600"}
	s := startServerIn(t, t.TempDir(), "uring", 2, flags...)
	maddr := s.addr()
	fillMaster(t, maddr)
	host, port := hostPort(t, maddr)
	ms := startServer(t, "uring", 2, "--replicaof", host, port)
	x := &restartedMaster{s: s, flags: flags, moond: ms, mr: ms.client(2),
		rr: startRedisServer(t, "--replicaof", host, port)}
	waitLinkUp(t, x.mr)
	waitLinkUp(t, x.rr)
	masterWrites(t, maddr)
	m := s.client(2)
	pollUntil(t, 10*time.Second, "db0:gone expired on the master", func() bool {
		return m.Exists(ctx(t), "db0:gone").Val() == 0
	})
	waitCaughtUp(t, m, x.mr, x.rr)
	x.replid = infoField(t, m, "master_replid")
	return x
}

// shutdown stops the master with SHUTDOWN and waits for its clean exit.
func (x *restartedMaster) shutdown(t *testing.T) {
	t.Helper()
	r := x.s.raw()
	r.send("SHUTDOWN\r\n")
	if !r.closed() {
		t.Fatal("SHUTDOWN left the connection open")
	}
	if code := x.s.exitCode(); code != 0 {
		t.Fatalf("the master exited with %d after SHUTDOWN", code)
	}
}

// restart starts the master again on its directory and port (with extra
// flags), once the old process exited, and waits until it loaded its
// data.
func (x *restartedMaster) restart(t *testing.T, extra ...string) *redis.Client {
	t.Helper()
	port := x.s.port
	flags := append(append(append([]string(nil), x.flags...), extra...), "--port", strconv.Itoa(port))
	x.s = startServerIn(t, x.s.dir, "uring", 2, flags...)
	x.s.port = port
	m := x.s.client(2)
	waitInfoStr(t, m, "loading", func(v string) bool { return v == "0" })
	return m
}

// writeAfterRestart writes to dbs 0 and 5 of the restarted master.
func (x *restartedMaster) writeAfterRestart(t *testing.T, tag string) {
	t.Helper()
	c0, c5 := onDB(t, x.s.addr(), 0), onDB(t, x.s.addr(), 5)
	for i := range 10 {
		if err := c5.Set(ctx(t), tag+":"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c0.Incr(ctx(t), "db0:num").Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c0.MSet(ctx(t), tag+":m1", "x", tag+":m2", "y", tag+":m3", "z").Err(); err != nil {
		t.Fatal(err)
	}
}

// caughtUp waits until both replicas follow the restarted master, hold its
// offset and equal it key by key.
func (x *restartedMaster) caughtUp(t *testing.T, m *redis.Client) {
	t.Helper()
	waitLinkUp(t, x.mr)
	waitLinkUp(t, x.rr)
	waitCaughtUp(t, m, x.mr, x.rr)
	waitEqual(t, x.s.addr(), x.moond.addr())
	waitEqual(t, x.s.addr(), x.rr.Options().Addr)
}

// TestMasterRestartContinuesAfterACleanShutdown: SHUTDOWN of a moond
// master with a moond and a redis-server replica, started again on its
// directory and port: it keeps its replid and offset, both replicas
// continue (sync_partial_ok 2, sync_full 0), and the writes made before
// they came back and after reach both, in dbs 0 and 5.
func TestMasterRestartContinuesAfterACleanShutdown(t *testing.T) {
	x := newRestartedMaster(t)
	m := x.s.client(2)
	off := infoField(t, m, "master_repl_offset")
	x.shutdown(t)
	saved, err := os.ReadFile(filepath.Join(x.s.dir, "replication-position"))
	if want := x.replid + " " + off + " "; err != nil || !strings.HasPrefix(string(saved), want) {
		t.Fatalf("the saved position is %q (%v), want %q...", saved, err, want)
	}

	m = x.restart(t)
	if id, o := infoField(t, m, "master_replid"), infoField(t, m, "master_repl_offset"); id != x.replid || o != off {
		t.Fatalf("restarted: master_replid %s offset %s, want %s %s", id, o, x.replid, off)
	}
	// Written as soon as the master loaded: most likely before the
	// replicas came back, so from the backlog the restart began.
	x.writeAfterRestart(t, "early")
	t.Logf("replicas attached when the early writes were done: %s", infoField(t, m, "connected_slaves"))
	waitInfoStr(t, m, "sync_partial_ok", func(v string) bool { return v == "2" })
	x.writeAfterRestart(t, "late")
	x.caughtUp(t, m)
	if v := infoField(t, m, "sync_full"); v != "0" {
		t.Fatalf("sync_full %s on the restarted master, want 0", v)
	}
	if v := infoField(t, m, "master_replid"); v != x.replid {
		t.Fatalf("master_replid %s after the replicas came back, want %s", v, x.replid)
	}
	if _, err := os.Stat(filepath.Join(x.s.dir, "replication-position")); !os.IsNotExist(err) {
		t.Fatalf("the position file is still there after the boot took it: %v", err)
	}
}

// TestMasterKill9RestartFullSyncs: kill -9 of the master instead: no
// position survives, the restarted master has a new replid, and both
// replicas full-sync to its data.
func TestMasterKill9RestartFullSyncs(t *testing.T) {
	x := newRestartedMaster(t)
	x.s.kill9()
	m := x.restart(t)
	if id := infoField(t, m, "master_replid"); id == x.replid {
		t.Fatalf("master_replid %s kept after a kill -9", id)
	}
	x.writeAfterRestart(t, "early")
	waitInfoStr(t, m, "sync_full", func(v string) bool { return v == "2" })
	x.writeAfterRestart(t, "late")
	x.caughtUp(t, m)
	if v := infoField(t, m, "sync_partial_ok"); v != "0" {
		t.Fatalf("sync_partial_ok %s after a kill -9, want 0", v)
	}
}

// TestMasterRestartedAsReplicaContinues: a master shut down cleanly whose
// moond replica is promoted meanwhile (a failover while it is down),
// started again as a replica of the promoted one: its first PSYNC names
// its own replid and offset, which the promoted replica holds as
// master_replid2, so it continues (sync_partial_ok, no sync_full), with
// the write the promoted one took before it came back; the redis-server
// replica, repointed, continues too.
func TestMasterRestartedAsReplicaContinues(t *testing.T) {
	x := newRestartedMaster(t)
	x.shutdown(t)
	replicaOf(t, x.mr, "NO", "ONE")
	if v := infoField(t, x.mr, "master_replid2"); v != x.replid {
		t.Fatalf("the promoted replica's master_replid2 is %s, want the old master's %s", v, x.replid)
	}
	if err := x.mr.Set(ctx(t), "after-promotion", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	host, port := hostPort(t, x.moond.addr())
	old := x.restart(t, "--replicaof", host, port)
	waitLinkUp(t, old)
	replicaOf(t, x.rr, host, port)
	waitLinkUp(t, x.rr)
	waitInfoStr(t, x.mr, "sync_partial_ok", func(v string) bool { return v == "2" })
	if v := infoField(t, x.mr, "sync_full"); v != "0" {
		t.Fatalf("sync_full %s on the promoted replica, want 0", v)
	}
	if err := onDB(t, x.moond.addr(), 5).Set(ctx(t), "later", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitCaughtUp(t, x.mr, old, x.rr)
	waitEqual(t, x.moond.addr(), x.s.addr())
	waitEqual(t, x.moond.addr(), x.rr.Options().Addr)
}

// TestMasterRestartUnderWritesContinues: SHUTDOWN while a client writes:
// the writes the master took up to its last are in the stream its
// replicas get before they are disconnected, so after the restart both
// continue (sync_partial_ok 2, sync_full 0), and every acknowledged write
// is on the master and both replicas.
func TestMasterRestartUnderWritesContinues(t *testing.T) {
	x := newRestartedMaster(t)
	c := onDB(t, x.s.addr(), 5)
	acked := make(chan int)
	go func() {
		n := 0
		for c.Set(ctx(t), "w:"+strconv.Itoa(n), n, 0).Err() == nil {
			n++
		}
		acked <- n
	}()
	m := x.s.client(2)
	start, _ := strconv.Atoi(infoField(t, m, "master_repl_offset"))
	waitInfoStr(t, m, "master_repl_offset", func(v string) bool {
		off, _ := strconv.Atoi(v)
		return off > start+2000 // the writer is well under way
	})
	x.shutdown(t)
	n := <-acked
	if n == 0 {
		t.Fatal("no write was acknowledged before the shutdown")
	}
	m = x.restart(t)
	waitInfoStr(t, m, "sync_partial_ok", func(v string) bool { return v == "2" })
	x.caughtUp(t, m)
	if v := infoField(t, m, "sync_full"); v != "0" {
		t.Fatalf("sync_full %s on the restarted master, want 0", v)
	}
	for _, addr := range []string{x.s.addr(), x.moond.addr(), x.rr.Options().Addr} {
		if v, err := onDB(t, addr, 5).Get(ctx(t), "w:"+strconv.Itoa(n-1)).Int(); err != nil || v != n-1 {
			t.Fatalf("%s: the last acknowledged write w:%d reads %d (%v)", addr, n-1, v, err)
		}
	}
}
