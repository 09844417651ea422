package server

import (
	"net"
	"strings"
	"testing"
)

// TestReplicaNotServingStaleDataSyncs: with replica-serve-stale-data no,
// the link's own local connection is not refused (MASTERDOWN, or LOADING
// during a load that broke off): the replica syncs, and serves once the
// link is up.
func TestReplicaNotServingStaleDataSyncs(t *testing.T) {
	ctx := testCtx(t)
	master := startTest(t, "uring", 1, "appendonly", "no")
	replica := startTest(t, "uring", 1, "replica-serve-stale-data", "no")
	mc, rc := client(t, master), client(t, replica)
	if err := mc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(master.Addr())
	if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the key on the replica", func() bool { return rc.Get(ctx, "k").Val() == "v" })
}

// infoField returns field's value in an INFO reply, or "".
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}
