package heap

import (
	"slices"
	"testing"
)

func TestSyncResultClearsAFileOnlyForTheGenerationItSynced(t *testing.T) {
	tr := NewSyncTracker()
	g1 := tr.MarkWritten(1)
	if !tr.NeedsSync(1) {
		t.Fatal("a written file does not need an fsync")
	}
	covered := tr.SyncStarted(1)
	if covered != g1 {
		t.Fatalf("fsync covers generation %d, want %d", covered, g1)
	}
	g2 := tr.MarkWritten(1) // lands while the fsync is outstanding
	tr.SyncDone(1, covered)
	if !tr.Durable(1, g1) {
		t.Fatal("the write the fsync covered is not durable")
	}
	if tr.Durable(1, g2) || !tr.NeedsSync(1) {
		t.Fatal("a write that landed after the fsync started was taken as durable")
	}
	tr.SyncDone(1, tr.SyncStarted(1))
	if !tr.Durable(1, g2) || tr.NeedsSync(1) {
		t.Fatal("the second fsync did not cover the later write")
	}
}

func TestOnlyOneFsyncPerFileIsOutstanding(t *testing.T) {
	tr := NewSyncTracker()
	tr.MarkWritten(1)
	tr.SyncStarted(1)
	if !tr.Syncing(1) {
		t.Fatal("no fsync outstanding")
	}
	tr.MarkWritten(2)
	tr.SyncStarted(2) // another file may sync at the same time
	defer func() {
		if recover() == nil {
			t.Fatal("a second fsync of the same file was started")
		}
	}()
	tr.SyncStarted(1)
}

func TestAFailedFsyncLeavesTheFileNeedingOne(t *testing.T) {
	tr := NewSyncTracker()
	g := tr.MarkWritten(1)
	tr.SyncStarted(1)
	tr.SyncFailed(1)
	if tr.Durable(1, g) || !tr.NeedsSync(1) || tr.Syncing(1) {
		t.Fatal("a failed fsync counted as done")
	}
}

func TestPendingListsFilesWithUnsyncedWrites(t *testing.T) {
	tr := NewSyncTracker()
	tr.MarkWritten(5)
	tr.MarkWritten(2)
	tr.MarkWritten(9)
	tr.SyncDone(9, tr.SyncStarted(9))
	if got := tr.Pending(); !slices.Equal(got, []uint32{2, 5}) {
		t.Fatalf("pending %v", got)
	}
}

func TestAForgottenFileHoldsNothingBack(t *testing.T) {
	tr := NewSyncTracker()
	g := tr.MarkWritten(1)
	gen := tr.SyncStarted(1)
	tr.Forget(1)
	if !tr.Durable(1, g) || tr.NeedsSync(1) {
		t.Fatal("a forgotten file still holds the checkpoint")
	}
	tr.SyncDone(1, gen) // the outstanding fsync completes later: ignored
}
