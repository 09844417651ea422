package shard

import (
	"slices"
	"testing"

	"github.com/moond-db/moond/persistence/txnlog"
)

// TestLoneReplayAppliesOnlyWholePartsOfItsOwn: a shard alone applies a
// part's records at an END that names it alone, in order, and leaves out a
// part whose END names another shard, a torn one (the next BEGIN, an
// ABORT or the log's end comes first) and an empty one naming another.
func TestLoneReplayAppliesOnlyWholePartsOfItsOwn(t *testing.T) {
	l := &loneReplay{self: 0}
	var applied []uint64
	apply := func(lsn uint64, _ []byte) error { applied = append(applied, lsn); return nil }
	begin := func(id uint64) txnlog.Marker { return txnlog.Marker{Txid: id} }
	end := func(id uint64, parts ...uint32) txnlog.Marker {
		return txnlog.Marker{End: true, Txid: id, Parts: parts}
	}
	rec := func(lsn uint64) {
		if !l.hold(lsn, []byte("x")) {
			applied = append(applied, lsn) // applied now, outside any part
		}
	}
	step := func(m txnlog.Marker) {
		if err := l.marker(m, apply); err != nil {
			t.Fatal(err)
		}
	}
	rec(1)
	step(begin(1))
	rec(2)
	rec(3)
	step(end(1, 0)) // committed: 2, 3
	step(begin(2))
	rec(4)
	step(end(2, 0, 1)) // names shard 1: left out
	step(begin(3))
	rec(5)
	step(begin(4)) // 3 torn
	rec(6)
	step(txnlog.Marker{Abort: true, Txid: 4}) // 4 torn, then a boot's ABORT
	rec(7)
	step(end(5, 1)) // an empty part naming another shard
	step(begin(6))
	rec(8) // the log ends inside 6
	l.drop()
	if want := []uint64{1, 2, 3, 7}; !slices.Equal(applied, want) {
		t.Fatalf("applied %v, want %v", applied, want)
	}
	if want := []uint64{2, 3, 4, 5, 6}; !slices.Equal(l.dropped, want) {
		t.Fatalf("dropped %v, want %v", l.dropped, want)
	}
}
