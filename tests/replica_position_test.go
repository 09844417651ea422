package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestReplicaRestartContinuesAfterACleanShutdown: a moond replica of a
// redis-server master, stopped cleanly (SIGTERM) and started again on its
// directory while the master took more writes, continues with a partial
// resync (the master's sync_partial_ok, no new sync_full) and equals the
// master; the position file is gone once it booted. After a kill -9 there
// is no position: the next start does a full sync.
func TestReplicaRestartContinuesAfterACleanShutdown(t *testing.T) {
	m := startRedisServer(t, "--dir", t.TempDir(), "--repl-diskless-sync-delay", "0")
	maddr := m.Options().Addr
	fillMaster(t, maddr)
	host, port := hostPort(t, maddr)
	dir := t.TempDir()
	s := startServerIn(t, dir, "uring", 2, "--replicaof", host, port)
	waitLinkUp(t, s.client(2))
	waitEqual(t, maddr, s.addr())
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "replication-position")); err != nil {
		t.Fatalf("no replication position after a clean shutdown: %v", err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(m.Set(ctx(t), "while-down", "1", 0).Err())
	must(m.Incr(ctx(t), "db0:num").Err())
	full, partial := infoField(t, m, "sync_full"), infoField(t, m, "sync_partial_ok")

	s2 := startServerIn(t, dir, "uring", 2, "--replicaof", host, port)
	waitLinkUp(t, s2.client(2))
	waitEqual(t, maddr, s2.addr())
	if got := infoField(t, m, "sync_full"); got != full {
		t.Fatalf("the restarted replica did a full sync (sync_full %s, was %s)", got, full)
	}
	if got, want := infoField(t, m, "sync_partial_ok"), inc(t, partial); got != want {
		t.Fatalf("sync_partial_ok %s, want %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "replication-position")); !os.IsNotExist(err) {
		t.Fatalf("the position file is still there after the boot took it: %v", err)
	}

	// A crash leaves no position: a full sync.
	must(m.Set(ctx(t), "before-the-kill", "1", 0).Err())
	waitEqual(t, maddr, s2.addr())
	s2.kill9()
	full = infoField(t, m, "sync_full")
	s3 := startServerIn(t, dir, "uring", 2, "--replicaof", host, port)
	waitLinkUp(t, s3.client(2))
	waitEqual(t, maddr, s3.addr())
	if got, want := infoField(t, m, "sync_full"), inc(t, full); got != want {
		t.Fatalf("after a kill -9 sync_full %s, want %s (a full sync)", got, want)
	}
}

// inc is the decimal n+1.
func inc(t *testing.T, n string) string {
	t.Helper()
	v, err := strconv.Atoi(n)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(v + 1)
}

// TestReplicaWithoutAppendonlySavesNoPosition: a replica with appendonly
// no keeps no data set on disk, so its clean shutdown saves no position
// (a restart that continued would have none of the data before it).
func TestReplicaWithoutAppendonlySavesNoPosition(t *testing.T) {
	m := startRedisServer(t, "--dir", t.TempDir(), "--repl-diskless-sync-delay", "0")
	fillMaster(t, m.Options().Addr)
	host, port := hostPort(t, m.Options().Addr)
	dir := t.TempDir()
	s := startServerIn(t, dir, "uring", 2, "--replicaof", host, port, "--appendonly", "no")
	waitLinkUp(t, s.client(2))
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "replication-position")); !os.IsNotExist(err) {
		t.Fatalf("a replica without appendonly saved a position: %v", err)
	}
}
