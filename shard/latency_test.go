package shard

import (
	"slices"
	"testing"
	"time"

	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/runtime/looptest"
)

// TestOnLatencyReportsSyncsAndCheckpoints checks that the shard tells
// Options.OnLatency of each WAL fdatasync, each checkpoint and each active
// expire cycle (the server's latency monitor keeps those above its
// threshold).
func TestOnLatencyReportsSyncsAndCheckpoints(t *testing.T) {
	dir := t.TempDir() // before the loop: removed once it stopped
	l := startLoop(t, runtime.KindPool)
	o := testOptions(dir, "always")
	var events []string // touched on l's thread only
	o.OnLatency = func(event string, took time.Duration) {
		if took < 0 {
			t.Errorf("%s took %v", event, took)
		}
		events = append(events, event)
	}
	s := open(t, l, o)
	defer closeShard(t, l, s)
	_, lsn := exec(t, l, s, "SET", "k", "v")
	durable := false
	looptest.On(t, l, func() {
		s.WhenDurable(lsn, func() { durable = true }, func() { t.Error("a healthy WAL failed a held reply") })
	})
	if !looptest.Until(t, l, func() bool { return durable }) {
		t.Fatal("the SET never became durable")
	}
	save(t, l, s)
	looptest.On(t, l, func() { s.Tick(time.Millisecond) })
	var got []string
	looptest.On(t, l, func() { got = slices.Clone(events) })
	for _, want := range []string{"wal-fsync", "checkpoint", "expire-cycle"} {
		if !slices.Contains(got, want) {
			t.Errorf("events %v, want %s among them", got, want)
		}
	}
}
