package server

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/replication"
)

// TestSavedPositionFormat: a replica's position and a master's own are
// read back as written, the mark telling them apart; a line of the older
// three-field form is a replica's; malformed lines are refused.
func TestSavedPositionFormat(t *testing.T) {
	id := strings.Repeat("ab", 20)
	for _, p := range []savedPosition{
		{Position: replication.Position{ReplID: id, Offset: 1984, DB: 5}},
		{Position: replication.Position{ReplID: id, Offset: 0, DB: 0}, own: true},
	} {
		got, err := parseSavedPosition(p.String())
		if err != nil || got != p {
			t.Fatalf("%q read back as %+v (%v), want %+v", p.String(), got, err, p)
		}
	}
	if got, err := parseSavedPosition(id + " 7 3\n"); err != nil || got.own || got.Offset != 7 || got.DB != 3 {
		t.Fatalf("the three-field form read as %+v (%v), want a replica's position", got, err)
	}
	for _, bad := range []string{"", id, id + " 7", id + " 7 3 replica", id + " 7 3 master x",
		"short 7 3", id + " -1 0", id + " 7 -2", id + " x 3 master"} {
		if p, err := parseSavedPosition(bad); err == nil {
			t.Fatalf("%q accepted as %+v", bad, p)
		}
	}
}

// TestWALRefusalSavesNoPosition: once a shard's WAL refused a record
// (here a key's expiry on a log poisoned by a failed fdatasync), a shutdown saves
// no replication position: a record fed to the stream, or answered to a
// link, may be missing from the log.
func TestWALRefusalSavesNoPosition(t *testing.T) {
	s, f := startFaulty(t, "uring", 1)
	ctx := testCtx(t)
	link := replication.Position{ReplID: strings.Repeat("ab", 20), Offset: 7}
	if _, ok := s.positionAtStop(ctx, link, true); !ok {
		t.Fatal("a clean link's position is not saved on a shard that never refused a record")
	}
	c := client(t, s)
	if err := c.Set(ctx, "short", "1", 300*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	f.add(vfs.Rule{Op: vfs.OpDatasync, Path: walFiles, Fault: vfs.FaultError, Err: syscall.EIO})
	_ = impatient(t, s).Set(ctx, "during", "1", 0).Err()
	c = client(t, s)
	waitFor(t, "MISCONF", func() bool {
		err := c.Set(ctx, "refused", "1", 0).Err()
		return err != nil && strings.HasPrefix(err.Error(), "MISCONF")
	})
	// The key's expiry is applied (and would be fed) but its DEL is
	// refused by the poisoned log.
	waitFor(t, "the key expired", func() bool { return c.Exists(ctx, "short").Val() == 0 })
	if p, ok := s.positionAtStop(ctx, link, true); ok {
		t.Fatalf("position %+v saved after the WAL refused a record", p)
	}
}
