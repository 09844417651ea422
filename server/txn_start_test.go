package server

import (
	"testing"

	"github.com/moond-db/moond/runtime/looptest"
)

// TestTxnsBegunWhileAGroupWaitsShareTheNextGroup: shard 0 coordinates a
// txn over shards 0 and 1 while shard 1 is held, so its group waits for
// shard 1. Two txns shard 0 begins meanwhile, in two loop iterations, must
// not ask for their shards on their own, each a group queued behind the
// first: they start together, as one group, once the first group holds
// its shards, and both run.
func TestTxnsBegunWhileAGroupWaitsShareTheNextGroup(t *testing.T) {
	s := startTest(t, "uring", 2)
	w0, w1 := s.workers[0], s.workers[1]
	releaseBoth := func(t *txn) {
		t.release(0)
		t.release(1)
	}
	var blocker *txn
	looptest.On(t, w1.loop, func() {
		blocker = w1.beginTxn([]int{1}, func(*txn) {}) // holds shard 1 until told
	})
	if !looptest.Until(t, w1.loop, func() bool { return w1.holder == blocker.g }) {
		t.Fatal("shard 1 was never held")
	}
	ran := make(chan string, 3)
	looptest.On(t, w0.loop, func() {
		w0.beginTxn([]int{0, 1}, func(t *txn) { releaseBoth(t); ran <- "first" })
	})
	if !looptest.Until(t, w1.loop, func() bool { return len(w1.holdQ) == 1 }) {
		t.Fatal("the first group never asked shard 1")
	}
	var before int64
	looptest.On(t, w0.loop, func() {
		before = w0.stats.txnGroups
		w0.beginTxn([]int{0, 1}, func(t *txn) { releaseBoth(t); ran <- "second" })
	})
	looptest.On(t, w0.loop, func() {
		w0.beginTxn([]int{0, 1}, func(t *txn) { releaseBoth(t); ran <- "third" })
	})
	looptest.On(t, w1.loop, func() { blocker.release(1) })
	for _, want := range []string{"first", "second", "third"} {
		if got := <-ran; got != want {
			t.Fatalf("ran %q, want %q", got, want)
		}
	}
	var groups int64
	looptest.On(t, w0.loop, func() { groups = w0.stats.txnGroups - before })
	if groups != 1 {
		t.Fatalf("the two txns begun while the first group waited made %d groups, want 1", groups)
	}
}
