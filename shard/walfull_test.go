package shard

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/moond-db/moond/persistence/checkpoint"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/runtime/looptest"
)

// walFullMax is the --max-wal-size of the WAL-ceiling tests: the checkpoint
// starts at half of it, readers pause at seven eighths.
const walFullMax = 1 << 20

// walFullShard opens a shard with --max-wal-size walFullMax whose heap
// fsyncs hang until the returned release is called (also at the end of the
// test, before the loop stops): a checkpoint that starts cannot publish.
func walFullShard(t *testing.T, kind runtime.Kind) (*runtime.Loop, *Shard, func()) {
	t.Helper()
	dir := t.TempDir() // removed after the loop stopped (cleanups run last first)
	l := startLoop(t, kind)
	gate := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	o := testOptions(dir, "everysec")
	o.Tunables = func() Tunables { return Tunables{MaxWALSize: walFullMax, CheckpointTimeout: 1 << 62} }
	o.WrapBackend = func(be runtime.Backend) runtime.Backend {
		fb := vfs.NewFaultyBackend(l, be)
		fb.Add(vfs.Rule{Op: vfs.OpSync, Fault: vfs.FaultHang, Gate: gate,
			Filter: func(c vfs.Call) bool { _, ok := heap.ParseFileName(filepath.Base(c.Path)); return ok }})
		return fb
	}
	return l, open(t, l, o), release
}

// fillToPause writes 4 KiB values until the shard pauses its readers, and
// fails the test when it never does.
func fillToPause(t *testing.T, l *runtime.Loop, s *Shard) {
	t.Helper()
	val := strings.Repeat("v", 4096)
	for i := 0; ; i++ {
		if i > 4*walFullMax/len(val) {
			var since int64
			looptest.On(t, l, func() { since = s.walBytesSinceCheckpoint() })
			t.Fatalf("readers never paused: %d WAL bytes since the checkpoint, max %d", since, walFullMax)
		}
		if reply, _ := exec(t, l, s, "SET", fmt.Sprintf("k%d", i), val); reply != "+OK\r\n" {
			t.Fatalf("SET: %q", reply)
		}
		paused := false
		// One call is one loop iteration: maybeWALFull ran before it.
		looptest.On(t, l, func() { s.Tick(0); paused = s.ReadsPaused() })
		if paused {
			break
		}
	}
	var since int64
	var running bool
	looptest.On(t, l, func() { since, running = s.walBytesSinceCheckpoint(), s.ckpt.mgr.Stats().InProgress })
	if since < walFullMax-walFullMax/8 || !running {
		t.Fatalf("paused with %d WAL bytes since the checkpoint (max %d), checkpoint in progress %v", since, walFullMax, running)
	}
}

// At seven eighths of --max-wal-size with a checkpoint running, the shard
// stops reading from its clients until that checkpoint publishes.
func TestWALCeilingPausesReadersUntilTheCheckpointPublishes(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind.String(), func(t *testing.T) {
			l, s, release := walFullShard(t, kind)
			fillToPause(t, l, s)
			resumed, stuckAtResume := false, false
			looptest.On(t, l, func() {
				s.WhenReadable(func() { resumed, stuckAtResume = true, s.ckpt.walStuck })
			})
			paused := false
			looptest.On(t, l, func() { paused = s.ReadsPaused() })
			if resumed || !paused {
				t.Fatal("readers resumed while the checkpoint cannot publish")
			}
			release()
			if !looptest.Until(t, l, func() bool { s.Tick(0); return resumed }) {
				t.Fatal("readers not resumed after the checkpoint could publish")
			}
			if stuckAtResume {
				t.Error("readers resumed by the give-up, not by the publication")
			}
			// (The WAL since the new redo point may pause readers again at
			// once, under the next checkpoint: that is the rule, not a
			// failure.)
			var completed int64
			looptest.On(t, l, func() { completed = s.ckpt.mgr.Stats().Completed })
			if completed < 1 {
				t.Errorf("readers resumed with %d checkpoints completed", completed)
			}
		})
	}
}

// A checkpoint that makes no progress for maxWALPause (a heap disk that
// hangs) must not stop the server: readers resume, and the pause does not
// return before the next checkpoint publishes.
func TestWALCeilingPauseGivesUpWithoutCheckpointProgress(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind.String(), func(t *testing.T) {
			l, s, release := walFullShard(t, kind)
			fillToPause(t, l, s)
			resumed := false
			looptest.On(t, l, func() { s.WhenReadable(func() { resumed = true }) })
			// The wait is maxWALPause of no progress, a second or two.
			if !looptest.Until(t, l, func() bool { s.Tick(0); return resumed }) {
				t.Fatal("readers still paused although the checkpoint makes no progress")
			}
			// More writes, above seven eighths, with the checkpoint still
			// running: no new pause.
			val := strings.Repeat("w", 4096)
			for i := range 32 {
				exec(t, l, s, "SET", fmt.Sprintf("more%d", i), val)
				paused, since := false, int64(0)
				looptest.On(t, l, func() { s.Tick(0); paused, since = s.ReadsPaused(), s.walBytesSinceCheckpoint() })
				if paused {
					t.Fatalf("paused again after giving up, before a checkpoint published (%d WAL bytes since it)", since)
				}
			}
			var st checkpoint.Stats
			looptest.On(t, l, func() { st = s.ckpt.mgr.Stats() })
			if !st.InProgress || st.Completed != 0 {
				t.Fatalf("the checkpoint was to be stuck: %+v", st)
			}
			// The next publication ends the give-up: the pause may return.
			release()
			if !looptest.Until(t, l, func() bool { s.Tick(0); return s.ckpt.mgr.Stats().Completed >= 1 }) {
				t.Fatal("the checkpoint did not publish once its fsync ran")
			}
			stuck := true
			looptest.On(t, l, func() { stuck = s.ckpt.walStuck })
			if stuck {
				t.Error("still given up after the checkpoint published")
			}
		})
	}
}
