package heap

import (
	"slices"
	"testing"
)

func TestDeferredFreesAreReleasedOnlyWhenTheirCheckpointFinalized(t *testing.T) {
	var d DeferredFrees
	a, b, c := RecordID{1, 1, 0}, RecordID{1, 2, 0}, RecordID{2, 1, 3}
	d.Add(100, a)
	d.Add(100, b)
	d.Add(250, c)
	if d.Len() != 3 || d.Waiting(100) != 2 || d.Waiting(250) != 1 {
		t.Fatalf("len %d", d.Len())
	}
	if got := d.Release(99, nil); len(got) != 0 {
		t.Fatalf("released %v before checkpoint 100 finalized", got)
	}
	if got := d.Release(249, nil); !slices.Equal(got, []RecordID{a, b}) {
		t.Fatalf("released %v, want checkpoint 100's", got)
	}
	if got := d.Release(249, nil); len(got) != 0 {
		t.Fatalf("released %v twice", got)
	}
	if got := d.Release(250, nil); !slices.Equal(got, []RecordID{c}) || d.Len() != 0 {
		t.Fatalf("released %v, len %d", got, d.Len())
	}
}

func TestDeferredFreesRefuseAnOlderCheckpoint(t *testing.T) {
	var d DeferredFrees
	d.Add(10, RecordID{})
	defer func() {
		if recover() == nil {
			t.Fatal("filed under a checkpoint older than the last")
		}
	}()
	d.Add(9, RecordID{})
}
