package shard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/runtime/looptest"
)

// save runs SAVE on s and waits for it, ticking the shard as the server
// does (a retried step moves on only at a tick).
func save(t testing.TB, l *runtime.Loop, s *Shard) {
	t.Helper()
	done, failed := false, error(nil)
	looptest.On(t, l, func() { s.RequestCheckpoint(true, func(err error) { done, failed = true, err }) })
	if !looptest.Until(t, l, func() bool { s.Tick(0); return done }) {
		var st CheckpointStats
		looptest.On(t, l, func() { st = s.Info().Checkpoint.Stats })
		t.Fatalf("SAVE did not finish: state %v, last error %q", st.State, st.LastError)
	}
	if failed != nil {
		t.Fatal(failed)
	}
}

func ckptStats(t *testing.T, l *runtime.Loop, s *Shard) CheckpointStats {
	t.Helper()
	var st CheckpointStats
	looptest.On(t, l, func() { st = s.Info().Checkpoint.Stats })
	return st
}

// Issue 14, defect 2: the page loader found the heap file missing, logged
// it, and the checkpoint retried the page forever.
func TestHeapFileMissingAtThePageLoaderIsHandledAsVanished(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind.String(), func(t *testing.T) {
			dir := t.TempDir()
			l := startLoop(t, kind)
			s := open(t, l, testOptions(dir, "everysec"))
			for i := range 10 {
				exec(t, l, s, "SET", fmt.Sprint("k", i), fmt.Sprint("v", i))
			}
			save(t, l, s)
			closeShard(t, l, s)

			s = open(t, l, testOptions(dir, "everysec"))
			if err := os.Remove(heap.FilePath(filepath.Join(dir, heap.DirName), 1)); err != nil {
				t.Fatal(err)
			}
			exec(t, l, s, "DEL", "k0") // its free needs the page: the loader opens the file
			save(t, l, s)
			if st := ckptStats(t, l, s); st.VanishedUnexpected != 1 || st.VanishedRetired != 0 {
				t.Fatalf("heap_vanished_unexpected %d, retired %d; want 1 and 0", st.VanishedUnexpected, st.VanishedRetired)
			}
			if _, err := os.Stat(heap.FilePath(filepath.Join(dir, heap.DirName), 1)); !os.IsNotExist(err) {
				t.Fatalf("the vanished heap file was re-created: %v", err)
			}
			closeShard(t, l, s)

			// The keys left are written again: the next boot opens the heap
			// and has them all.
			s = open(t, l, testOptions(dir, "everysec"))
			defer closeShard(t, l, s)
			if reply, _ := exec(t, l, s, "DBSIZE"); reply != ":9\r\n" {
				t.Fatalf("DBSIZE after reopening: %q, want 9", reply)
			}
			if reply, _ := exec(t, l, s, "GET", "k7"); reply != "$2\r\nv7\r\n" {
				t.Fatalf("GET k7 after reopening: %q", reply)
			}
		})
	}
}

// Issue 14, defect 6: a heap file unlinked while its fsync runs: the fsync
// succeeds on the unlinked inode, and the checkpoint published a manifest
// that listed the file, which the next boot refused.
func TestHeapFileUnlinkedDuringItsFsyncIsFoundBeforeFinalize(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind.String(), func(t *testing.T) {
			dir := t.TempDir()
			l := startLoop(t, kind)
			gate, entered := make(chan struct{}), make(chan string, 1)
			o := testOptions(dir, "everysec")
			o.WrapBackend = func(be runtime.Backend) runtime.Backend {
				fb := vfs.NewFaultyBackend(l, be)
				fb.Add(vfs.Rule{Op: vfs.OpSync, Path: heap.FileName(1), Fault: vfs.FaultHang, Gate: gate, Entered: entered, Count: 1})
				return fb
			}
			s := open(t, l, o)
			for i := range 10 {
				exec(t, l, s, "SET", fmt.Sprint("k", i), fmt.Sprint("v", i))
			}
			done, failed := false, error(nil)
			looptest.On(t, l, func() { s.RequestCheckpoint(true, func(err error) { done, failed = true, err }) })
			select {
			case <-entered:
			case <-time.After(looptest.Deadline):
				t.Fatal("the heap file's fsync was never reached")
			}
			if err := os.Remove(heap.FilePath(filepath.Join(dir, heap.DirName), 1)); err != nil {
				t.Fatal(err)
			}
			close(gate)
			if !looptest.Until(t, l, func() bool { s.Tick(0); return done }) {
				t.Fatalf("SAVE did not finish: %+v", ckptStats(t, l, s))
			}
			if failed != nil {
				t.Fatal(failed)
			}
			if st := ckptStats(t, l, s); st.VanishedUnexpected != 1 {
				t.Fatalf("heap_vanished_unexpected %d, want 1", st.VanishedUnexpected)
			}
			closeShard(t, l, s)

			s = open(t, l, testOptions(dir, "everysec"))
			defer closeShard(t, l, s)
			if reply, _ := exec(t, l, s, "DBSIZE"); reply != ":10\r\n" {
				t.Fatalf("DBSIZE after reopening: %q, want 10", reply)
			}
		})
	}
}

// The retired case of a vanished file, in production: a file whose
// tombstone was committed is removed from outside before the shard
// unlinks it.
func TestRetiredHeapFileRemovedFromOutsideCountsAsRetired(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind.String(), func(t *testing.T) {
			dir := t.TempDir()
			l := startLoop(t, kind)
			s := open(t, l, testOptions(dir, "everysec"))
			defer closeShard(t, l, s)
			exec(t, l, s, "SET", "k", "v")
			save(t, l, s)
			exec(t, l, s, "DEL", "k")
			save(t, l, s) // file 1 is empty: tombstoned when this one publishes
			if err := os.Remove(heap.FilePath(filepath.Join(dir, heap.DirName), 1)); err != nil {
				t.Fatal(err)
			}
			save(t, l, s) // commits the tombstone; its publish unlinks the file
			if !looptest.Until(t, l, func() bool { return s.Info().Checkpoint.Stats.VanishedRetired == 1 }) {
				t.Fatalf("heap_vanished_retired never reached 1: %+v", ckptStats(t, l, s))
			}
			if st := ckptStats(t, l, s); st.VanishedUnexpected != 0 {
				t.Fatalf("heap_vanished_unexpected %d, want 0", st.VanishedUnexpected)
			}
		})
	}
}

// Issue 14, defect 3: after a restart, every cold page a checkpoint needed
// cost one retry, after a backoff doubling up to a second.
func TestCheckpointOverColdPagesLoadsThemInBatches(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind.String(), func(t *testing.T) {
			dir := t.TempDir()
			l := startLoop(t, kind)
			s := open(t, l, testOptions(dir, "everysec"))
			const keys = 100
			value := strings.Repeat("x", 1800)
			for i := range keys {
				exec(t, l, s, "SET", fmt.Sprint("k", i), value)
			}
			save(t, l, s)
			closeShard(t, l, s)

			s = open(t, l, testOptions(dir, "everysec"))
			defer closeShard(t, l, s)
			for i := range keys {
				exec(t, l, s, "DEL", fmt.Sprint("k", i))
			}
			save(t, l, s) // 50 cold pages: at a second per miss it would not finish
			st := ckptStats(t, l, s)
			if strings.Contains(st.LastError, "not resident") {
				t.Fatalf("a page miss was retried after a backoff: %q", st.LastError)
			}
			if st.PageLoads == 0 || st.PageLoads > 2 || st.PagesLoaded < keys/2 {
				t.Fatalf("%d pages loaded in %d rounds; want them all in one or two", st.PagesLoaded, st.PageLoads)
			}
		})
	}
}
