package tests

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A demoted master (REPLICAOF host port sent to a master, as Sentinel
// does to the old master after a failover) offers its own history: PSYNC
// <its replid> <its offset+1>, as Redis 7.0's
// replicationCacheMasterUsingMyself (docs/DESIGN.md §3, "Partial resync
// after a failover").

// demotedPair returns a moond master A holding data in two dbs and a
// replica B of it (kind "moond" or "redis") promoted with REPLICAOF NO
// ONE once caught up, and B's host and port.
func demotedPair(t *testing.T, kind string) (a *server, b *redis.Client, bhost, bport string) {
	t.Helper()
	a = startServer(t, "uring", 2, "--repl-ping-replica-period", "3600")
	fillMaster(t, a.addr())
	ahost, aport := hostPort(t, a.addr())
	b = startReplicaOf(t, kind, ahost, aport)
	masterWrites(t, a.addr())
	// db0:gone (PX 50) expires on A, whose DEL must be in B's stream
	// before B's promotion: past it A's offset would be ahead of B's.
	pollUntil(t, 10*time.Second, "db0:gone expired on A", func() bool {
		return a.client(2).Exists(ctx(t), "db0:gone").Val() == 0
	})
	waitCaughtUp(t, a.client(2), b)
	replicaOf(t, b, "NO", "ONE")
	bhost, bport = hostPort(t, b.Options().Addr)
	return a, b, bhost, bport
}

// TestPsync2DemotedMasterContinues: A, a moond master, and B, its replica
// (moond, then redis-server), promoted; A made a replica of B continues
// (sync_partial_ok 1, sync_full 0 on B) and then holds B's data, written
// after the promotion too. Without A offering its own history it full
// syncs (sync_full 1).
func TestPsync2DemotedMasterContinues(t *testing.T) {
	for _, kind := range []string{"moond", "redis"} {
		t.Run(kind, func(t *testing.T) {
			a, b, bhost, bport := demotedPair(t, kind)
			full0 := infoField(t, b, "sync_full")
			ok0, _ := strconv.Atoi(infoField(t, b, "sync_partial_ok"))
			if err := b.Set(ctx(t), "after:promotion", "on B", 0).Err(); err != nil {
				t.Fatal(err)
			}
			ac := a.client(2)
			replicaOf(t, ac, bhost, bport)
			waitLinkUp(t, ac)
			waitInfoStr(t, b, "sync_partial_ok", func(v string) bool { n, _ := strconv.Atoi(v); return n == ok0+1 })
			if v := infoField(t, b, "sync_full"); v != full0 {
				t.Fatalf("sync_full on B = %s, was %s: A full synced", v, full0)
			}
			if err := b.Set(ctx(t), "after:return", "on B", 0).Err(); err != nil {
				t.Fatal(err)
			}
			waitCaughtUp(t, b, ac)
			waitEqual(t, b.Options().Addr, a.addr())
		})
	}
}

// TestPsync2DemotedMasterAheadFullSyncs: A acknowledged a write after B,
// its replica, stopped following it (B promoted first); A's offset is
// then past B's history of A's replid, so B refuses to continue
// (sync_partial_err) and A full syncs, losing the write B never had, as
// with Redis.
func TestPsync2DemotedMasterAheadFullSyncs(t *testing.T) {
	for _, kind := range []string{"moond", "redis"} {
		t.Run(kind, func(t *testing.T) {
			a, b, bhost, bport := demotedPair(t, kind)
			ac := a.client(2)
			if err := ac.Set(ctx(t), "only:on:a", "acknowledged by A", 0).Err(); err != nil {
				t.Fatal(err)
			}
			full0, _ := strconv.Atoi(infoField(t, b, "sync_full"))
			ok0 := infoField(t, b, "sync_partial_ok")
			replicaOf(t, ac, bhost, bport)
			waitLinkUp(t, ac)
			waitInfoStr(t, b, "sync_full", func(v string) bool { n, _ := strconv.Atoi(v); return n == full0+1 })
			if v := infoField(t, b, "sync_partial_ok"); v != ok0 {
				t.Fatalf("sync_partial_ok on B = %s, was %s: A continued past B's history", v, ok0)
			}
			waitCaughtUp(t, b, ac)
			waitEqual(t, b.Options().Addr, a.addr())
			if n := ac.Exists(ctx(t), "only:on:a").Val(); n != 0 {
				t.Fatalf("A kept a write B never had")
			}
		})
	}
}
