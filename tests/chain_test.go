package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Chained replication (docs/DESIGN.md §3, "Chained replication"): a
// master, a replica of it, and a sub-replica of that replica.

// replicaAckOffset is the offset= of INFO's slave0 line on m: the last
// offset its replica acknowledged.
func replicaAckOffset(t *testing.T, m *redis.Client) string {
	t.Helper()
	for _, kv := range strings.Split(infoField(t, m, "slave0"), ",") {
		if v, ok := strings.CutPrefix(kv, "offset="); ok {
			return v
		}
	}
	return ""
}

// TestChainedReplication: a moond master, a middle replica (moond, then
// redis-server) and a moond sub-replica: the master's data and the writes
// made on it once the chain is up reach the bottom key by key; the
// sub-replica's INFO replication names the middle server as its master,
// with the link up, every command read applied, and the offset the
// middle last heard from it is the sub-replica's. A redis-server middle
// passes its master's stream on as it is, so the sub-replica shows the
// master's replid and offset, as a Redis sub-replica; a moond middle
// serves its own (not checked: docs/DESIGN.md, "Chained replication").
func TestChainedReplication(t *testing.T) {
	for _, mid := range []string{"moond", "redis"} {
		t.Run(mid, func(t *testing.T) {
			top := startServer(t, "uring", 2)
			fillMaster(t, top.addr())
			thost, tport := hostPort(t, top.addr())
			m := startReplicaOf(t, mid, thost, tport)
			bottom := startServer(t, "uring", 2)
			b := bottom.client(2)
			mhost, mport := hostPort(t, m.Options().Addr)
			replicaOf(t, b, mhost, mport)
			waitLinkUp(t, b)
			masterWrites(t, top.addr())
			waitCaughtUp(t, top.client(2), m)
			waitEqual(t, top.addr(), bottom.addr())
			pollUntil(t, 30*time.Second, "the middle heard the sub-replica's offset", func() bool {
				off := infoField(t, b, "slave_repl_offset")
				return off == infoField(t, b, "slave_read_repl_offset") && off == replicaAckOffset(t, m)
			})
			want := map[string]string{"role": "slave", "master_host": mhost, "master_port": mport,
				"master_link_status": "up", "master_sync_in_progress": "0", "slave_read_only": "1",
				"connected_slaves": "0"}
			if mid == "redis" {
				want["master_replid"] = infoField(t, m, "master_replid")
			}
			for f, v := range want {
				if got := infoField(t, b, f); got != v {
					t.Errorf("sub-replica: %s = %q, want %q", f, got, v)
				}
			}
			if got := infoField(t, m, "connected_slaves"); got != "1" {
				t.Errorf("middle: connected_slaves = %q, want 1", got)
			}
		})
	}
}

// startReplicaOf starts a replica of the master at host:port, a
// redis-server (kind "redis") or a moond of three shards, and waits for
// its link to be up.
func startReplicaOf(t *testing.T, kind, host, port string) *redis.Client {
	t.Helper()
	var r *redis.Client
	if kind == "redis" {
		r = startRedisServer(t, "--replicaof", host, port)
	} else {
		r = startServer(t, "uring", 3).client(2)
		replicaOf(t, r, host, port)
	}
	waitLinkUp(t, r)
	return r
}
