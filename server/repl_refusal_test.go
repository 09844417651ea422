package server

import (
	"net"
	"strings"
	"testing"

	"github.com/moond-db/moond/persistence/vfs"
)

// TestReplicaRefusedWriteResyncs: a write of the master's stream that the
// replica's WAL refuses (MISCONF, here a full disk) is not applied there,
// so the replica must not go on past it as if it held it: once its disk
// takes writes again, it has every key the master wrote, the refused one
// included (a full sync), and its offset reaches the master's.
func TestReplicaRefusedWriteResyncs(t *testing.T) {
	ctx := testCtx(t)
	master := startTest(t, "uring", 1, "appendonly", "no")
	replica, f := startFaulty(t, "uring", 1)
	mc, rc := client(t, master), client(t, replica)
	host, port, _ := net.SplitHostPort(master.Addr())
	if err := rc.ConfigSet(ctx, "replica-read-only", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	if err := mc.Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the replica in sync", func() bool { return rc.Get(ctx, "before").Val() == "1" })

	full := f.add(vfs.ENOSPCOnWrite(walFiles))
	// The first write after the disk filled is held on the replica (its
	// record retried), the ones after it refused: wait until a write of
	// the replica's own is refused, then write the key on the master.
	_ = impatient(t, replica).Set(ctx, "held", "1", 0).Err()
	rc = client(t, replica)
	waitFor(t, "MISCONF on the replica", func() bool {
		err := rc.Set(ctx, "local", "1", 0).Err()
		return err != nil && strings.HasPrefix(err.Error(), "MISCONF")
	})
	if err := mc.Set(ctx, "refused", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := mc.Set(ctx, "after", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	full()
	waitFor(t, "the refused key on the replica", func() bool {
		return rc.Get(ctx, "refused").Val() == "1" && rc.Get(ctx, "after").Val() == "1"
	})
	waitFor(t, "the replica's offset at the master's", func() bool {
		m := infoField(mc.Info(ctx, "replication").Val(), "master_repl_offset")
		r := infoField(rc.Info(ctx, "replication").Val(), "slave_repl_offset")
		return m != "" && m == r
	})
}
