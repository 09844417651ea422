package tests

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// PSYNC2 (docs/DESIGN.md §3, "Partial resync after a failover"): a
// promoted replica keeps its old master's history, and the other
// replicas of that master continue from it without a full sync.

// waitInfoStr waits (30 s at most) until cond holds of c's INFO field.
func waitInfoStr(t *testing.T, c *redis.Client, field string, cond func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v := infoField(t, c, field)
		if cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("INFO %s = %q after 30s", field, v)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitCaughtUp waits until each replica's slave_repl_offset is the
// master's master_repl_offset, and returns it.
func waitCaughtUp(t *testing.T, m *redis.Client, rs ...*redis.Client) string {
	t.Helper()
	want := infoField(t, m, "master_repl_offset")
	for _, r := range rs {
		waitInfoStr(t, r, "slave_repl_offset", func(v string) bool { return v == want })
	}
	return want
}

// replicaOf sends REPLICAOF to c (host "NO", port "ONE" to promote it).
func replicaOf(t *testing.T, c *redis.Client, host, port string) {
	t.Helper()
	if err := c.Do(ctx(t), "REPLICAOF", host, port).Err(); err != nil {
		t.Fatalf("REPLICAOF %s %s: %v", host, port, err)
	}
}

// TestPsync2ReplicasContinueFromPromoted: a redis-server replica and a
// moond replica of a moond master, and a moond replica promoted with
// REPLICAOF NO ONE and written to; the two others repointed to it continue
// (two sync_partial_ok, no sync_full) with that write, then follow its
// writes in several dbs.
func TestPsync2ReplicasContinueFromPromoted(t *testing.T) {
	// No PING may reach one replica and not the others before the
	// promotion: their offsets must stay the promoted one's.
	ms := startServer(t, "uring", 2, "--repl-ping-replica-period", "3600")
	maddr := ms.addr()
	fillMaster(t, maddr)
	mhost, mport := hostPort(t, maddr)
	as, cs := startServer(t, "uring", 2), startServer(t, "uring", 3)
	a, c := as.client(2), cs.client(2)
	replicaOf(t, a, mhost, mport)
	replicaOf(t, c, mhost, mport)
	r := startRedisServer(t, "--replicaof", mhost, mport)
	for _, x := range []*redis.Client{a, c, r} {
		waitLinkUp(t, x)
	}
	masterWrites(t, maddr)
	m := ms.client(2)
	// db0:gone (PX 50) expires on the master, whose DEL must be in the
	// stream before the offsets are taken.
	pollUntil(t, 10*time.Second, "db0:gone expired on the master", func() bool {
		return m.Exists(ctx(t), "db0:gone").Val() == 0
	})
	off := waitCaughtUp(t, m, a, c, r)
	oldID := infoField(t, m, "master_replid")

	replicaOf(t, a, "NO", "ONE")
	n, _ := strconv.ParseInt(off, 10, 64)
	for f, want := range map[string]string{"master_repl_offset": off, "master_replid2": oldID,
		"second_repl_offset": strconv.FormatInt(n+1, 10)} {
		if got := infoField(t, a, f); got != want {
			t.Fatalf("promoted: %s = %s, want %s", f, got, want)
		}
	}
	// Writes between the promotion and the replicas' return are in the
	// stream they continue with.
	if err := a.Set(ctx(t), "between", "promotion and return", 0).Err(); err != nil {
		t.Fatal(err)
	}
	ahost, aport := hostPort(t, as.addr())
	replicaOf(t, r, ahost, aport)
	replicaOf(t, c, ahost, aport)
	waitLinkUp(t, r)
	waitLinkUp(t, c)
	waitInfoStr(t, a, "sync_partial_ok", func(v string) bool { return v == "2" })
	if v := infoField(t, a, "sync_full"); v != "0" {
		t.Fatalf("sync_full = %s on the promoted master, want 0", v)
	}
	if v := infoField(t, r, "master_replid"); v != infoField(t, a, "master_replid") || v == oldID {
		t.Fatalf("the redis replica follows replid %s; the promoted master's is %s", v, infoField(t, a, "master_replid"))
	}

	a0, a5 := onDB(t, as.addr(), 0), onDB(t, as.addr(), 5)
	for i := range 20 {
		if err := a5.Set(ctx(t), "after:"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := a0.Incr(ctx(t), "db0:num").Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := a0.MSet(ctx(t), "mset:1", "x", "mset:2", "y", "mset:3", "z").Err(); err != nil {
		t.Fatal(err)
	}
	waitCaughtUp(t, a, r, c)
	waitEqual(t, as.addr(), r.Options().Addr)
	waitEqual(t, as.addr(), cs.addr())
}

// TestPsync2PromotedInfoAsRedis: a redis-server replica and a moond
// replica of one redis-server master, both promoted at the same offset:
// INFO replication's history fields and ROLE agree.
func TestPsync2PromotedInfoAsRedis(t *testing.T) {
	m := startRedisServer(t, "--repl-ping-replica-period", "3600")
	maddr := m.Options().Addr
	fillMaster(t, maddr)
	host, port := hostPort(t, maddr)
	rr := startRedisServer(t, "--replicaof", host, port)
	ms := startServer(t, "uring", 2)
	mr := ms.client(2)
	replicaOf(t, mr, host, port)
	waitLinkUp(t, rr)
	waitLinkUp(t, mr)
	syncOff := waitCaughtUp(t, m, rr, mr)
	for i := range 10 {
		if err := m.Set(ctx(t), "k"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	off := waitCaughtUp(t, m, rr, mr)
	replicaOf(t, rr, "NO", "ONE")
	replicaOf(t, mr, "NO", "ONE")
	for _, f := range []string{"role", "master_repl_offset", "master_replid2", "second_repl_offset", "repl_backlog_active"} {
		if want, got := infoField(t, rr, f), infoField(t, mr, f); got != want {
			t.Errorf("%s: moond %q, redis-server %q", f, got, want)
		}
	}
	if id := infoField(t, mr, "master_replid"); id == infoField(t, m, "master_replid") || len(id) != 40 {
		t.Errorf("moond's master_replid after the promotion is %q", id)
	}
	// Redis's replica kept a backlog since its sync; moond's starts at
	// the promotion (docs/DESIGN.md).
	n, _ := strconv.ParseInt(syncOff, 10, 64)
	if got := infoField(t, rr, "repl_backlog_first_byte_offset"); got != strconv.FormatInt(n+1, 10) {
		t.Errorf("redis-server's repl_backlog_first_byte_offset %s, sync at %s", got, syncOff)
	}
	n, _ = strconv.ParseInt(off, 10, 64)
	if got := infoField(t, mr, "repl_backlog_first_byte_offset"); got != strconv.FormatInt(n+1, 10) {
		t.Errorf("moond's repl_backlog_first_byte_offset %s, promoted at %s", got, off)
	}
	want, err1 := rr.Do(ctx(t), "ROLE").Slice()
	got, err2 := mr.Do(ctx(t), "ROLE").Slice()
	if err1 != nil || err2 != nil || len(got) != 3 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ROLE: moond %v %v, redis-server %v %v", got, err2, want, err1)
	}
}

// TestPsync2MoondReplicaRepointedContinues: a moond replica of a
// redis-server master, repointed to another replica of that master (which
// shares its replid), continues with PSYNC on its old master's replid, in
// the database the stream had selected: the master's next writes to db 5
// come with no SELECT.
func TestPsync2MoondReplicaRepointedContinues(t *testing.T) {
	m := startRedisServer(t, "--repl-ping-replica-period", "3600")
	host, port := hostPort(t, m.Options().Addr)
	rr := startRedisServer(t, "--replicaof", host, port)
	ms := startServer(t, "uring", 2)
	mr := ms.client(2)
	replicaOf(t, mr, host, port)
	waitLinkUp(t, rr)
	waitLinkUp(t, mr)
	m5 := onDB(t, m.Options().Addr, 5)
	if err := m5.Set(ctx(t), "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitCaughtUp(t, m, rr, mr)

	rhost, rport := hostPort(t, rr.Options().Addr)
	replicaOf(t, mr, rhost, rport)
	waitLinkUp(t, mr)
	if v := infoField(t, rr, "sync_partial_ok"); v != "1" {
		t.Fatalf("sync_partial_ok = %s on the redis-server replica, want 1 (sync_full %s)", v, infoField(t, rr, "sync_full"))
	}
	for i := range 10 {
		if err := m5.Set(ctx(t), "after:"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	waitCaughtUp(t, m, rr, mr)
	waitEqual(t, m.Options().Addr, ms.addr())
}
