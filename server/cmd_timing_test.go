package server

import (
	"testing"

	"github.com/moond-db/moond/server/config"
)

// TestCmdDoneRecordsWithoutAllocating checks the per-command cost of the
// timing on the path every GET and SET takes: it records the call (time,
// histogram) and allocates nothing once the command's histogram exists.
func TestCmdDoneRecordsWithoutAllocating(t *testing.T) {
	srv := New(config.Default(), nil)
	w := newWorker(srv, 0, nil)
	c := &conn{w: w}
	get := commands["get"]
	args := [][]byte{[]byte("get"), []byte("k")}
	w.ran = get
	c.cmdDone(args, monotonicNanos()-1000) // the first call makes the histogram
	allocs := testing.AllocsPerRun(100, func() {
		w.ran = get
		c.cmdDone(args, monotonicNanos())
	})
	if allocs != 0 {
		t.Errorf("%v allocations per command", allocs)
	}
	if h := w.stats.hists[get.id]; h == nil || h.total != 102 {
		t.Fatalf("histogram %v, want 102 calls", h)
	}
	if w.stats.cmdCalls[get.id].nanos < 1000 {
		t.Errorf("%d ns counted, want at least the first call's 1000", w.stats.cmdCalls[get.id].nanos)
	}
	if len(w.slowlog.entries) != 0 {
		t.Errorf("%d slow log entries below slowlog-log-slower-than", len(w.slowlog.entries))
	}
	// A boundary with no command marked as run (rejected, queued in
	// MULTI) records nothing.
	before := w.stats.cmdCalls[get.id]
	c.cmdDone(args, monotonicNanos()-1000)
	if w.stats.cmdCalls[get.id] != before {
		t.Error("a boundary without a command that ran was recorded")
	}
}
