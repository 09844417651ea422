package shard

import (
	"strings"
	"testing"

	"github.com/moond-db/moond/persistence/txnlog"
	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/runtime/looptest"
)

// writePart runs SET a 1 and SET b 1 as part txid of a txn on s, ends it
// naming parts when parts is not nil, and waits until the WAL holds it all.
// The shard is then left as a crash leaves it: never closed.
func writePart(t *testing.T, l *runtime.Loop, s *Shard, txid uint64, parts []int) {
	t.Helper()
	exec(t, l, s, "SET", "a", "0") // before the part: always kept
	looptest.On(t, l, func() { s.OpenPart(txid) })
	exec(t, l, s, "SET", "a", "1")
	_, lsn := exec(t, l, s, "SET", "b", "1")
	looptest.On(t, l, func() {
		if parts != nil {
			var err error
			if lsn, err = s.EndPart(txid, 0, parts); err != nil {
				t.Error(err)
			}
		} else {
			s.ClosePart()
		}
	})
	durable := false
	looptest.On(t, l, func() { s.WhenDurable(lsn, func() { durable = true }, func() { t.Error("WAL failed") }) })
	if !looptest.Until(t, l, func() bool { return durable }) {
		t.Fatal("the part never became durable")
	}
}

// reopen opens the shard's directory again on a new loop, as a boot after
// a crash does, and returns a and b.
func reopen(t *testing.T, kind runtime.Kind, o Options) (*Shard, *runtime.Loop, string, string) {
	t.Helper()
	l := startLoop(t, kind)
	s := open(t, l, o)
	synced := false // Open (unlike Boot) does not wait for its ABORTs
	looptest.On(t, l, func() { s.SyncLog(func(error) { synced = true }) })
	if !looptest.Until(t, l, func() bool { return synced }) {
		t.Fatal("the log never synced")
	}
	a, _ := exec(t, l, s, "GET", "a")
	b, _ := exec(t, l, s, "GET", "b")
	return s, l, a, b
}

// withOtherEnd decides from shard 0's log (o) and a shard 1 that holds
// txn 9's END.
func withOtherEnd(t *testing.T) func(o Options) *txnlog.Decision {
	return func(o Options) *txnlog.Decision {
		sum, err := ScanTxns(o)
		if err != nil {
			t.Fatal(err)
		}
		other := &txnlog.Summary{}
		other.Add(txnlog.Marker{End: true, Txid: 9, Parts: []uint32{0, 1}})
		return txnlog.Decide(map[uint32]*txnlog.Summary{0: sum, 1: other})
	}
}

// TestPartsReplayOnlyWhenTheirTxnCommitted: a part whose END is missing,
// or whose END names a shard that holds no part, is left out whole by the
// replay, and stays out on the next boot (its ABORT); a part whose txn
// committed is replayed whole.
func TestPartsReplayOnlyWhenTheirTxnCommitted(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind.String(), func(t *testing.T) {
			cases := []struct {
				name  string
				parts []int
				txns  func(o Options) *txnlog.Decision
				want  string
			}{
				{"torn: no END", nil, nil, "$-1"},
				{"END on this shard alone", []int{0}, nil, "$1"},
				{"END names shard 1, which holds nothing", []int{0, 1}, nil, "$-1"},
				{"END names shard 1, which holds its END", []int{0, 1}, withOtherEnd(t), "$1"},
			}
			for _, c := range cases {
				o := testOptions(t.TempDir(), "always")
				l := startLoop(t, kind)
				writePart(t, l, open(t, l, o), 9, c.parts)
				if c.txns != nil {
					d := c.txns(o)
					o.Txns = func() *txnlog.Decision { return d }
				}
				_, _, a, b := reopen(t, kind, o)
				wantA := "$1\r\n1\r\n"
				if c.want == "$-1" {
					wantA = "$1\r\n0\r\n"
				}
				if a != wantA || !strings.HasPrefix(b, c.want+"\r\n") {
					t.Fatalf("%s: a=%q b=%q after the first boot, want a=%q and b %s", c.name, a, b, wantA, c.want)
				}
				// The next boot decides as the first did, even when shard 1
				// now holds its END (the first boot's ABORT wins).
				d := withOtherEnd(t)(o)
				o.Txns = func() *txnlog.Decision { return d }
				_, _, a2, b2 := reopen(t, kind, o)
				if a2 != a || b2 != b {
					t.Fatalf("%s: second boot a=%q b=%q, first a=%q b=%q", c.name, a2, b2, a, b)
				}
			}
		})
	}
}

// TestSkippedPartIsAbortedInTheLog: a part whose BEGIN is logged and whose
// ending step never runs (its shard refused writes then) gets an ABORT, so
// that the next txn's part begins (it used to panic: a BEGIN without its
// END) and a boot leaves the skipped part out while it keeps the next one
// and the writes between them.
func TestSkippedPartIsAbortedInTheLog(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind.String(), func(t *testing.T) {
			o := testOptions(t.TempDir(), "always")
			l := startLoop(t, kind)
			s := open(t, l, o)
			looptest.On(t, l, func() { s.OpenPart(7) })
			exec(t, l, s, "SET", "a", "1") // logs txn 7's BEGIN
			looptest.On(t, l, func() { s.SkipPart(7, []int{0, 1}) })
			exec(t, l, s, "SET", "b", "1") // no part's
			var lsn uint64
			looptest.On(t, l, func() { s.OpenPart(8) })
			exec(t, l, s, "SET", "c", "1")
			looptest.On(t, l, func() {
				var err error
				if lsn, err = s.EndPart(8, 0, []int{0}); err != nil {
					t.Error(err)
				}
			})
			durable := false
			looptest.On(t, l, func() { s.WhenDurable(lsn, func() { durable = true }, func() { t.Error("WAL failed") }) })
			if !looptest.Until(t, l, func() bool { return durable }) {
				t.Fatal("txn 8's END never became durable")
			}
			s2, l2, a, b := reopen(t, kind, o)
			c, _ := exec(t, l2, s2, "GET", "c")
			if a != "$-1\r\n" || b != "$1\r\n1\r\n" || c != "$1\r\n1\r\n" {
				t.Fatalf("after a boot a=%q b=%q c=%q; want a missing (its part aborted), b and c 1", a, b, c)
			}
		})
	}
}
