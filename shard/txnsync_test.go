package shard

import (
	"testing"
	"time"

	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/runtime/looptest"
)

// saveWithin runs a checkpoint on s, ticking it, and reports whether it finalized
// within the deadline.
func saveWithin(t *testing.T, l *runtime.Loop, s *Shard, within time.Duration) bool {
	t.Helper()
	done := false
	var tick *runtime.Timer
	looptest.On(t, l, func() {
		tick = l.Every(5*time.Millisecond, func() { s.Tick(0) })
		s.RequestCheckpoint(true, func(err error) {
			if err != nil {
				t.Error(err)
			}
			done = true
		})
	})
	deadline := time.Now().Add(within)
	ok := looptest.Until(t, l, func() bool { return done || time.Now().After(deadline) }) && done
	looptest.On(t, l, func() { tick.Stop() })
	return ok
}

// TestCheckpointSyncsEveryShardsLogAfterAPart: under everysec, the first
// checkpoint after a part of a txn ended here syncs every shard's WAL
// (SyncPeers) before it writes; a checkpoint with no new part, or under
// always, does not.
func TestCheckpointSyncsEveryShardsLogAfterAPart(t *testing.T) {
	for _, fsync := range []string{"everysec", "always"} {
		t.Run(fsync, func(t *testing.T) {
			dir := t.TempDir() // before the loop: removed once it stopped
			l := startLoop(t, runtime.KindUring)
			o := testOptions(dir, fsync)
			syncs := 0
			o.SyncPeers = func(done func(error)) { syncs++; done(nil) }
			s := open(t, l, o)
			exec(t, l, s, "SET", "plain", "1")
			if !saveWithin(t, l, s, 10*time.Second) {
				t.Fatal("the checkpoint over no part did not finish")
			}
			if syncs != 0 {
				t.Fatalf("a checkpoint over no part synced every shard's log %d times", syncs)
			}
			writePart(t, l, s, 5, []int{0, 1})
			if !saveWithin(t, l, s, 10*time.Second) {
				t.Fatal("the checkpoint after a part did not finish")
			}
			want := 1
			if fsync == "always" {
				want = 0
			}
			if syncs < want || (want == 0 && syncs != 0) {
				t.Fatalf("%s: %d syncs of every shard's log, want %d", fsync, syncs, want)
			}
		})
	}
}

// TestCheckpointWaitsWhileAHeldShardsPartIsOpen: while Held reports a txn
// holding the shard, a checkpoint neither begins nor takes keys; it
// finishes once the hold ends.
func TestCheckpointWaitsWhileAHeldShardsPartIsOpen(t *testing.T) {
	dir := t.TempDir() // before the loop: removed once it stopped
	l := startLoop(t, runtime.KindUring)
	o := testOptions(dir, "always")
	held := true
	o.Held = func() bool { return held }
	s := open(t, l, o)
	exec(t, l, s, "SET", "k", "1")
	if saveWithin(t, l, s, 300*time.Millisecond) {
		t.Fatal("a checkpoint finished while a txn held the shard")
	}
	looptest.On(t, l, func() { held = false })
	if !saveWithin(t, l, s, 10*time.Second) {
		t.Fatal("the checkpoint did not finish once the hold ended")
	}
}
