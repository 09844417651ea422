package tests

import (
	"strconv"
	"strings"
	"testing"
)

// TestReplicaFullSyncLoadsInBatches: a moond replica loads a moond
// master's snapshot of 10,000 keys and more in MOOND.LOAD batches, one
// per few hundred keys of a shard, not a RESTORE per key; the data
// equals the master's, the load is in the replica's WAL (it survives a
// kill -9), and MOOND.LOAD is an unknown command to any other client.
func TestReplicaFullSyncLoadsInBatches(t *testing.T) {
	const keys = 10000
	ms := startServer(t, "uring", 2)
	maddr := ms.addr()
	fillMaster(t, maddr)
	fillBig(t, maddr, keys)
	dir := t.TempDir()
	rs := startServerIn(t, dir, "uring", 3)
	r := rs.client(2)
	host, port := hostPort(t, maddr)
	if err := r.Do(ctx(t), "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitLinkUp(t, r)
	waitEqual(t, maddr, rs.addr())
	bigDBEqual(t, maddr, rs.addr())

	if v, ok, _ := infoLookup(t, r, "cmdstat_restore"); ok {
		t.Fatalf("the load ran RESTOREs: cmdstat_restore:%s", v)
	}
	stat, ok, _ := infoLookup(t, r, "cmdstat_moond.load")
	if !ok {
		t.Fatal("INFO commandstats has no cmdstat_moond.load")
	}
	calls, _, _ := strings.Cut(strings.TrimPrefix(stat, "calls="), ",")
	if n, err := strconv.Atoi(calls); err != nil || n == 0 || n > keys/20 {
		t.Fatalf("the load sent %s MOOND.LOAD commands for %d keys, want 1 to %d", calls, keys, keys/20)
	}
	err := r.Do(ctx(t), "MOOND.LOAD", "0", "0", "x").Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR unknown command 'MOOND.LOAD'") {
		t.Fatalf("MOOND.LOAD from a client: %v, want the unknown-command error", err)
	}

	rs.kill9()
	rs2 := startServerIn(t, dir, "uring", 3)
	waitEqual(t, maddr, rs2.addr())
	bigDBEqual(t, maddr, rs2.addr())
}
