package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/checkpoint/record"
	"github.com/moond-db/moond/persistence/control"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/manifest"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/runtime"
)

func controlRedo(t *testing.T, dir string) (uint64, bool) {
	t.Helper()
	c, ok, err := control.Read(vfs.Default, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c.RedoLSN, ok
}

func TestCheckpointPublishesRedoAndWritesHeapManifestAndControl(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{})
		e.fill("k", 50, 100)
		var redo uint64
		e.on(func() { redo = e.wal.next })
		if err := e.wait(e.save()); err != nil {
			t.Fatal(err)
		}
		if got := e.published1(); got != redo {
			t.Fatalf("published redo %d, want %d", got, redo)
		}
		if r, ok := controlRedo(t, e.dir); !ok || r != redo {
			t.Fatalf("control file redo %d (exists %v), want %d", r, ok, redo)
		}
		man, ok, err := manifest.Read(vfs.Default, e.dir, 0)
		if err != nil || !ok || len(man.Live()) != 1 {
			t.Fatalf("manifest: %v %v %v", man, ok, err)
		}
		// The heap on disk holds every key.
		ix := heap.NewIndex()
		h2, err := heap.Open(heap.Options{Dir: filepath.Join(e.dir, heap.DirName), Files: man.Live(), Cache: heap.NewCache(1 << 20), ReadMisses: true, OnRecord: ix.Add})
		if err != nil {
			t.Fatal(err)
		}
		h2.Close()
		if len(ix.Keys) != 50 {
			t.Fatalf("heap on disk holds %d keys, want 50", len(ix.Keys))
		}
		s := e.stats()
		if s.Completed != 1 || s.InProgress || s.PagesFlushed == 0 || s.LastRedoLSN != redo {
			t.Fatalf("stats %+v", s)
		}
		// The phases' times were counted, and only the phases'.
		var phases float64
		for st, secs := range s.PhaseSeconds {
			if secs < 0 || (State(st) == Idle && secs != 0) {
				t.Fatalf("phase %v: %v seconds", State(st), secs)
			}
			phases += secs
		}
		if phases <= 0 || phases > float64(s.LastDurationMs+1)/1000 {
			t.Fatalf("phases took %vs in all, the checkpoint %dms", phases, s.LastDurationMs)
		}
		// The checkpoint record is in the WAL and names redo.
		var found bool
		e.on(func() {
			for _, p := range e.wal.payloads {
				if r, err := record.DecodeEnd(p); err == nil && r == redo {
					found = true
				}
			}
		})
		if !found {
			t.Fatal("no checkpoint-end record for redo")
		}
	})
}

func TestOneWALBarrierPerFlushBatchNotPerPage(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{batchPages: 4})
		e.fill("k", 20, 1800) // two records a page: about 10 pages
		if err := e.wait(e.save()); err != nil {
			t.Fatal(err)
		}
		s := e.stats()
		var barriers, fpis int
		e.on(func() { barriers, fpis = e.wal.barriers, e.wal.fpis() })
		pages := int(s.PagesFlushed)
		if pages < 8 {
			t.Fatalf("only %d pages flushed; the test needs several batches", pages)
		}
		if fpis != pages {
			t.Fatalf("%d FPIs for %d pages written for the first time this cycle", fpis, pages)
		}
		batches := (pages + 3) / 4
		// One barrier per batch, plus the checkpoint record's.
		if barriers != batches+1 || s.Barriers != int64(batches) {
			t.Fatalf("%d WAL barriers (%d by batches) for %d pages in batches of 4, want %d per batch", barriers, s.Barriers, pages, batches)
		}
	})
}

func TestNoFinalizeOverAPageWhoseFPIFailed(t *testing.T) {
	e := newEnv(t, runtime.KindPool, envOpts{batchPages: 2})
	e.fill("k", 10, 1800)
	failed := false
	e.on(func() {
		e.wal.appendErr = func(p []byte) error {
			if p[0] == record.KindFPI && !failed {
				failed = true
				return errors.New("injected: FPI append failed")
			}
			return nil
		}
	})
	ch := e.save()
	e.waitFor("the pass to end with a failed page", func() bool { return e.m.Stats().LastFlush.Failed == 1 })
	if s := e.stats(); s.State != Flushing || s.Completed != 0 || e.published1() != 1 {
		t.Fatalf("finalized over a page whose FPI failed: %+v", s)
	}
	if _, ok := controlRedo(t, e.dir); ok {
		t.Fatal("control file written")
	}
	// Flush again, same redo: the page is written with its FPI this time.
	e.on(e.m.Tick)
	if err := e.wait(ch); err != nil {
		t.Fatal(err)
	}
	if s := e.stats(); s.Completed != 1 || s.PagesFailed != 1 || s.LastFlush.Failed != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestNoFinalizeOverAPageThatFailedToWrite(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{})
		e.fill("k", 10, 1800)
		page1 := e.be.Add(vfs.Rule{Op: vfs.OpWrite, Path: heap.FileName(1), Fault: vfs.FaultError, Err: syscall.EIO,
			Filter: func(c vfs.Call) bool { return c.Off == heap.PageOffset(1) }})
		ch := e.save()
		e.waitFor("the pass to end with a failed page", func() bool { return e.m.Stats().LastFlush.Failed == 1 })
		if s := e.stats(); s.State != Flushing || s.Completed != 0 || e.published1() != 1 {
			t.Fatalf("finalized over a page that failed to write: %+v", s)
		}
		// The fault persists: more passes, still no finalize.
		e.on(e.m.Tick)
		e.waitFor("a second failed pass", func() bool { return e.m.Stats().PagesFailed == 2 })
		if e.published1() != 1 {
			t.Fatal("redo published over an unwritten page")
		}
		e.be.Delete(page1)
		e.on(e.m.Tick)
		if err := e.wait(ch); err != nil {
			t.Fatal(err)
		}
		if s := e.stats(); s.Completed != 1 || s.LastFlush != (FlushResult{Flushed: 1}) {
			t.Fatalf("stats %+v", s)
		}
	})
}

func TestNoRedoOverAHeapFileThatCannotBeFsyncedYet(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{})
		e.fill("k", 10, 100)
		e.be.holdFsync()
		ch := e.save()
		<-e.be.heldCh
		for range 3 {
			e.on(e.m.Tick)
		}
		if s := e.stats(); s.State != Syncing || s.DataFsyncPending != 1 || e.published1() != 1 {
			t.Fatalf("state %+v while the heap fsync is outstanding", s)
		}
		if _, ok := controlRedo(t, e.dir); ok {
			t.Fatal("control file written before the heap fsync")
		}
		e.on(e.be.release)
		if err := e.wait(ch); err != nil {
			t.Fatal(err)
		}
		if e.published1() == 1 {
			t.Fatal("redo not published")
		}
	})
}

func TestSyncResultClearsAFileOnlyForTheGenerationItSynced(t *testing.T) {
	e := newEnv(t, runtime.KindPool, envOpts{})
	e.fill("k", 10, 100)
	e.be.holdFsync()
	ch := e.save()
	name := <-e.be.heldCh
	id, _ := heap.ParseFileName(name)
	// A write of this checkpoint lands after the fsync started.
	e.on(func() {
		e.m.fileGen[id] = e.m.sync.MarkWritten(id)
		e.be.release()
	})
	if err := e.wait(ch); err != nil {
		t.Fatal(err)
	}
	var n int
	e.on(func() { n = e.be.fsyncs[name] })
	if n != 2 {
		t.Fatalf("%d fsyncs of %s; the write after the first fsync started needs a second", n, name)
	}
}

func TestFsyncErrorPoisons(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{})
		e.fill("k", 10, 100)
		rule := e.be.fail(vfs.OpSync, heap.FileName(1), syscall.EIO)
		err := e.wait(e.save())
		if !errors.Is(err, ErrPoisoned) || !errors.Is(err, syscall.EIO) {
			t.Fatalf("SAVE: %v, want poisoned by EIO", err)
		}
		s := e.stats()
		if !s.Poisoned || s.State != Poisoned || !strings.Contains(s.PoisonReason, "fsync") || e.poisoned == nil {
			t.Fatalf("stats %+v", s)
		}
		// For good: the fault is gone, the redo never moves again.
		e.be.Delete(rule)
		e.on(e.m.Tick)
		if err := e.wait(e.save()); !errors.Is(err, ErrPoisoned) {
			t.Fatalf("SAVE after poisoning: %v", err)
		}
		if e.published1() != 1 {
			t.Fatal("redo moved after poisoning")
		}
	})
}

// The loop cancels what is in flight when it stops: a heap fsync that
// answers ECANCELED did not fail, it did not happen. It neither poisons
// the shard nor lets the redo point move over the file's writes.
func TestCancelledFsyncNeitherPoisonsNorPublishes(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{})
		e.fill("k", 10, 100)
		rule := e.be.fail(vfs.OpSync, heap.FileName(1), syscall.ECANCELED)
		ch := e.save()
		e.waitFor("the cancelled fsync", func() bool {
			s := e.m.Stats()
			return s.Fsyncs >= 1 && s.DataFsyncPending == 0
		})
		if s := e.stats(); s.Poisoned || e.poisoned != nil || s.State != Syncing || s.Completed != 0 {
			t.Fatalf("after a cancelled fsync: stats %+v, poisoned %v", s, e.poisoned)
		}
		if e.published1() != 1 {
			t.Fatal("redo published over a cancelled fsync")
		}
		if _, ok := controlRedo(t, e.dir); ok {
			t.Fatal("control file written over a cancelled fsync")
		}
		// Not done, not failed: the next tick fsyncs again.
		e.be.Delete(rule)
		e.on(e.m.Tick)
		if err := e.wait(ch); err != nil {
			t.Fatal(err)
		}
		if e.published1() == 1 {
			t.Fatal("redo not published once the fsync ran")
		}
	})
}

func TestFailedControlFileWriteLeavesRedoUnpublished(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{})
		e.fill("k", 10, 100)
		rule := e.be.fail(vfs.OpWrite, control.FileName+vfs.TempSuffix, syscall.ENOSPC)
		ch := e.save()
		e.waitFor("the control write to fail", func() bool {
			return strings.Contains(e.m.Stats().LastError, "control")
		})
		if s := e.stats(); s.State != Finalizing || e.published1() != 1 || s.LastRedoLSN != 1 || s.Completed != 0 {
			t.Fatalf("redo published over a failed control write: %+v", s)
		}
		if _, ok := controlRedo(t, e.dir); ok {
			t.Fatal("control file exists")
		}
		e.be.Delete(rule)
		e.on(e.m.Tick)
		if err := e.wait(ch); err != nil {
			t.Fatal(err)
		}
		if r, ok := controlRedo(t, e.dir); !ok || r != e.published1() || r == 1 {
			t.Fatalf("control redo %d, published %d", r, e.published1())
		}
	})
}

func TestFinalizeProceedsWhenAWrittenHeapFileVanishedBeforeItsFsync(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{})
		e.fill("k", 10, 100)
		e.be.fail(vfs.OpSync, heap.FileName(1), syscall.ENOENT)
		if err := e.wait(e.save()); err != nil {
			t.Fatal(err)
		}
		s := e.stats()
		if s.Completed != 1 || s.Poisoned || s.VanishedUnexpected != 1 || s.VanishedRetired != 0 {
			t.Fatalf("stats %+v", s)
		}
	})
}

func TestFinalizeProceedsWhenADirtyPageFileVanishedBeforeTheFlush(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{})
		e.fill("k", 10, 100)
		if err := e.wait(e.save()); err != nil {
			t.Fatal(err)
		}
		// New versions dirty file 1's page; then the file goes.
		e.fill("k", 10, 120)
		if err := os.Remove(heap.FilePath(filepath.Join(e.dir, heap.DirName), 1)); err != nil {
			t.Fatal(err)
		}
		var opens int
		e.on(func() { opens = e.be.opens })
		if err := e.wait(e.save()); err != nil {
			t.Fatal(err)
		}
		s := e.stats()
		if s.Completed != 2 || s.VanishedUnexpected != 1 {
			t.Fatalf("stats %+v", s)
		}
		if _, err := os.Stat(heap.FilePath(filepath.Join(e.dir, heap.DirName), 1)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("vanished heap file re-created: %v", err)
		}
		e.on(func() { opens = e.be.opens - opens })
		if opens == 0 {
			t.Fatal("no open tried")
		}
	})
}

func TestUnexpectedlyVanishedFileKeysAreWrittenAgainBeforeFinalize(t *testing.T) {
	e := newEnv(t, runtime.KindPool, envOpts{})
	e.fill("k", 10, 100)
	if err := e.wait(e.save()); err != nil {
		t.Fatal(err)
	}
	e.fill("k", 5, 120) // dirties file 1's page
	hd := filepath.Join(e.dir, heap.DirName)
	if err := os.Remove(heap.FilePath(hd, 1)); err != nil {
		t.Fatal(err)
	}
	if err := e.wait(e.save()); err != nil {
		t.Fatal(err)
	}
	man, _, err := manifest.Read(vfs.Default, e.dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if man.IsLive(1) {
		t.Fatal("the committed manifest still lists the vanished file as live: boot would fail")
	}
	ix := heap.NewIndex()
	h2, err := heap.Open(heap.Options{Dir: hd, Files: man.Live(), Cache: heap.NewCache(1 << 20), ReadMisses: true, OnRecord: ix.Add})
	if err != nil {
		t.Fatal(err)
	}
	h2.Close()
	if len(ix.Keys) != 10 {
		t.Fatalf("durable heap holds %d keys after the redo moved, want all 10 written again", len(ix.Keys))
	}
}

func TestRetiredVersusUnexpectedVanishCounting(t *testing.T) {
	e := newEnv(t, runtime.KindPool, envOpts{maxFileSize: 2 * heap.PageSize})
	e.fill("k", 8, 1800) // 4 pages: files 1 and 2
	if err := e.wait(e.save()); err != nil {
		t.Fatal(err)
	}
	e.fill("k", 8, 1700) // new versions go to new files
	if err := e.wait(e.save()); err != nil {
		t.Fatal(err)
	}
	// The deferred frees of the old versions dirtied files 1 and 2.
	e.on(func() {
		if err := e.man.Tombstone(2, e.wal.next); err != nil {
			t.Error(err)
		}
	})
	hd := filepath.Join(e.dir, heap.DirName)
	for _, id := range []uint32{1, 2} {
		if err := os.Remove(heap.FilePath(hd, id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.wait(e.save()); err != nil {
		t.Fatal(err)
	}
	s := e.stats()
	var vanished []string
	e.on(func() { vanished = e.vanished })
	if s.VanishedRetired != 1 || s.VanishedUnexpected != 1 {
		t.Fatalf("retired %d unexpected %d (%v), want 1 and 1", s.VanishedRetired, s.VanishedUnexpected, vanished)
	}
	if !strings.Contains(strings.Join(vanished, ","), heap.FileName(2)+" retired") {
		t.Fatalf("vanished: %v", vanished)
	}
}

func TestTickNeverBlocksOnDataFsyncAndNeverStartsASecondBatch(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{})
		e.fill("k", 10, 100)
		e.be.holdFsync()
		ch := e.save()
		<-e.be.heldCh
		e.fill("x", 10, 100) // more dirty keys: a second checkpoint would have work
		type counts struct{ opens, pwrites, chains, barriers, fsyncs int }
		get := func() (c counts) {
			e.on(func() {
				c = counts{e.be.opens, e.be.pwrites, e.be.chains, e.wal.barriers, e.be.fsyncs[heap.FileName(1)]}
			})
			return
		}
		before := get()
		e.on(func() { e.m.o.Interval = time.Nanosecond }) // the timer is due
		for range 20 {
			e.on(e.m.Tick) // returns: the loop is not blocked
		}
		if after := get(); after != before {
			t.Fatalf("ticks started I/O while the heap fsync is outstanding: %+v → %+v", before, after)
		}
		if s := e.stats(); s.State != Syncing || s.DataFsyncPending != 1 {
			t.Fatalf("stats %+v", s)
		}
		e.on(e.be.release)
		if err := e.wait(ch); err != nil {
			t.Fatal(err)
		}
	})
}

func TestWALCeilingTriggerNeverWaitsOnDataFsync(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{})
		e.fill("k", 10, 100)
		var started bool
		e.on(func() {
			e.be.holdFsync()
			started = e.m.MaybeWALFull(2<<30, 1<<30)
		})
		if !started {
			t.Fatal("WAL ceiling did not start a checkpoint")
		}
		<-e.be.heldCh
		e.fill("x", 10, 100)
		var again bool
		var barriers, pwrites int
		e.on(func() { barriers, pwrites = e.wal.barriers, e.be.pwrites })
		for range 20 {
			e.on(func() { again = again || e.m.MaybeWALFull(4<<30, 1<<30) })
		}
		var b2, p2 int
		e.on(func() { b2, p2 = e.wal.barriers, e.be.pwrites })
		if again || b2 != barriers || p2 != pwrites {
			t.Fatalf("WAL ceiling trigger started work while the fsync is outstanding (again %v, barriers %d→%d, pwrites %d→%d)", again, barriers, b2, pwrites, p2)
		}
		if s := e.stats(); s.State != Syncing || s.Completed != 0 {
			t.Fatalf("stats %+v", s)
		}
		// Finishing is the tick's.
		e.on(e.be.release)
		e.waitFor("the checkpoint to finalize", func() bool { e.m.Tick(); return e.m.Stats().Completed == 1 })
	})
}

func TestShutdownCompletesThroughTheOutstandingFsyncWithinItsBound(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{})
		e.fill("k", 10, 100)
		e.be.holdFsync()
		e.save()
		<-e.be.heldCh
		ch := make(chan error, 1)
		e.on(func() {
			e.m.Shutdown(func(err error) { ch <- err })
			e.be.release()
		})
		if err := e.wait(ch); err != nil {
			t.Fatal(err)
		}
		if s := e.stats(); s.Completed != 1 || e.published1() == 1 {
			t.Fatalf("stats %+v", s)
		}
	})
}

func TestShutdownGivesUpOnAHungFsyncAfterItsBound(t *testing.T) {
	e := newEnv(t, runtime.KindPool, envOpts{shutdownWait: 50 * time.Millisecond})
	e.fill("k", 10, 100)
	e.be.holdFsync()
	ch := make(chan error, 1)
	e.on(func() { e.m.Shutdown(func(err error) { ch <- err }) })
	<-e.be.heldCh
	if err := e.wait(ch); !errors.Is(err, ErrShutdownTimeout) {
		t.Fatalf("shutdown: %v, want ErrShutdownTimeout", err)
	}
	if e.published1() != 1 {
		t.Fatal("redo published without the heap fsync")
	}
	e.on(e.be.release)
}

func TestDeletedKeyIsFreedInTheCheckpointThatCoversTheDelete(t *testing.T) {
	e := newEnv(t, runtime.KindPool, envOpts{})
	e.fill("k", 4, 100)
	if err := e.wait(e.save()); err != nil {
		t.Fatal(err)
	}
	var k1old heap.RecordID
	e.on(func() {
		k1old = e.src.keys["k1"].loc
		e.src.del("k0")
		e.src.set("k1", []byte("new"))
	})
	if err := e.wait(e.save()); err != nil {
		t.Fatal(err)
	}
	// On disk, after the checkpoint that covers the DEL: k0 is gone.
	man, _, err := manifest.Read(vfs.Default, e.dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	ix := heap.NewIndex()
	h2, err := heap.Open(heap.Options{Dir: filepath.Join(e.dir, heap.DirName), Files: man.Live(), Cache: heap.NewCache(1 << 20), ReadMisses: true, OnRecord: ix.Add})
	if err != nil {
		t.Fatal(err)
	}
	h2.Close()
	if _, ok := ix.Keys["k0"]; ok {
		t.Fatal("deleted key still in the durable heap after the checkpoint that covers the DEL")
	}
	if _, ok := ix.Keys["k1"]; !ok {
		t.Fatal("k1 missing from the durable heap")
	}
	e.on(func() {
		// The superseded version was freed after finalize (deferred).
		if r, err := e.h.Read(k1old, nil); err == nil && string(r.Key) == "k1" && string(r.Value) != "new" {
			t.Errorf("superseded version of k1 still live after finalize")
		}
		r, err := e.h.Read(e.src.keys["k1"].loc, nil)
		if err != nil || !bytes.Equal(r.Value, []byte("new")) {
			t.Errorf("new version: %v %q", err, r.Value)
		}
		if e.m.Deferred().Len() != 0 {
			t.Errorf("%d deferred frees left", e.m.Deferred().Len())
		}
	})
}

func TestRecyclableKeepsEverySegmentHoldingLSNsAtOrAboveRedo(t *testing.T) {
	firsts := []uint64{1, 100, 200, 300}
	for _, c := range []struct {
		redo uint64
		want int
	}{{1, 0}, {100, 1}, {150, 1}, {200, 2}, {301, 3}, {1000, 3}} {
		got := Recyclable(firsts, c.redo)
		if len(got) != c.want {
			t.Errorf("redo %d: %v, want %d segments", c.redo, got, c.want)
		}
		for _, f := range got {
			if f >= c.redo {
				t.Errorf("redo %d: recycles segment %d", c.redo, f)
			}
		}
	}
}

func TestNewHeapFileDirectoryEntryIsFsyncedBeforeTheManifestCommit(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{})
		e.fill("k", 10, 100)
		if err := e.wait(e.save()); err != nil {
			t.Fatal(err)
		}
		var ops []string
		e.on(func() { ops = slices.Clone(e.be.ops) })
		want := []string{"syncdir heap", "rename manifest.tmp", "syncdir " + filepath.Base(e.dir), "rename control.tmp", "syncdir " + filepath.Base(e.dir)}
		if !slices.Equal(ops, want) {
			t.Fatalf("ops %v, want %v", ops, want)
		}
		// A checkpoint that creates no file does not fsync the heap directory.
		e.fill("k", 10, 90)
		e.on(func() { e.be.ops = nil })
		if err := e.wait(e.save()); err != nil {
			t.Fatal(err)
		}
		e.on(func() { ops = slices.Clone(e.be.ops) })
		if slices.Contains(ops, "syncdir heap") {
			t.Fatalf("ops %v", ops)
		}
	})
}

func TestOpenFailureOtherThanNotFoundIsRetried(t *testing.T) {
	e := newEnv(t, runtime.KindPool, envOpts{})
	e.fill("k", 10, 100)
	rule := e.be.fail(vfs.OpOpen|vfs.OpCreate, heap.FileName(1), syscall.EACCES)
	ch := e.save()
	e.waitFor("the open to fail", func() bool { return strings.Contains(e.m.Stats().LastError, "open") })
	for range 3 {
		e.on(e.m.Tick)
	}
	if s := e.stats(); s.State != Flushing || s.VanishedRetired+s.VanishedUnexpected != 0 || e.published1() != 1 {
		t.Fatalf("stats %+v", s)
	}
	e.be.Delete(rule)
	// The answer of the last failed open may still be on its way, and the
	// retry it schedules waits for a tick: tick until the checkpoint ends.
	e.waitFor("the retried open to let the checkpoint finish", func() bool {
		e.m.Tick()
		return e.m.Stats().Completed == 1
	})
	if err := e.wait(ch); err != nil {
		t.Fatal(err)
	}
}

func TestFailedWALBarrierLeavesTheBatchUnflushed(t *testing.T) {
	e := newEnv(t, runtime.KindPool, envOpts{batchPages: 2})
	e.fill("k", 8, 1800) // 4 pages, 2 batches
	e.on(func() { e.wal.barrierErr = syscall.EIO })
	ch := e.save()
	e.waitFor("the pass to end", func() bool { return e.m.Stats().LastFlush.Failed == 4 })
	var pwrites int
	e.on(func() { pwrites = e.be.pwrites })
	if s := e.stats(); pwrites != 0 || s.Completed != 0 || e.published1() != 1 {
		t.Fatalf("pages written or redo published after a failed barrier: pwrites %d, %+v", pwrites, s)
	}
	e.on(func() { e.wal.barrierErr = nil; e.m.Tick() })
	if err := e.wait(ch); err != nil {
		t.Fatal(err)
	}
	if s := e.stats(); s.LastFlush != (FlushResult{Flushed: 4}) {
		t.Fatalf("stats %+v", s)
	}
	// The images were appended by the failed try, and no barrier has made
	// them durable: the retry's barrier must reach them, not only the
	// pages' LSNs.
	e.on(func() {
		if v := e.wal.order.violations; len(v) > 0 {
			t.Errorf("pages written before their images were durable: %q", v)
		}
	})
}

// TestCheckpointPassesEveryCrashStepInOrder: the test-only crash hook sees
// each step at the point its name promises: the FPIs before the page
// writes, every write before the first fsync, the fsyncs before the
// control file, the control file before anything is recycled
// (OnPublished). The end-to-end tests kill the process there.
//
// The page writes are linked after the WAL's fdatasync, so there is no
// point in the process between the barrier and the writes: after-barrier
// and mid-pwrite are reached by holding the writes in the backend (the
// shard's crash hook, shard/crash.go), never through OnStep.
func TestCheckpointPassesEveryCrashStepInOrder(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{batchPages: 2})
		e.fill("k", 200, 100)
		var redo uint64
		e.on(func() { redo = e.wal.next })
		if err := e.wait(e.save()); err != nil {
			t.Fatal(err)
		}
		var steps []Step
		var begins, published []uint64
		e.on(func() { steps, begins, published = slices.Clone(e.steps), e.begins, e.published })
		if len(begins) != 1 || begins[0] != redo {
			t.Fatalf("OnBegin saw %v, want [%d]", begins, redo)
		}
		if len(published) != 1 {
			t.Fatalf("published %v", published)
		}
		if n := slices.Index(steps, StepPwritten); n < 2 || slices.Contains(steps[n:], StepFPIAppended) {
			t.Fatalf("steps %v: want after-fpi for several batches, all before after-pwrite", steps)
		}
		if want := []Step{StepFPIAppended, StepPwritten, StepFsynced, StepControlWritten}; !slices.Equal(slices.Compact(steps), want) {
			t.Fatalf("linked writes passed %v, want %v", steps, want)
		}
	})
}

// TestBeginRecordIsLoggedAtTheRedoPoint: the shard's record (the database
// map) gets the redo LSN itself, so recovery replays it first; when it
// cannot be appended the checkpoint does not begin (a redo point without
// it would restart replay with the wrong map), and the tick retries.
func TestBeginRecordIsLoggedAtTheRedoPoint(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		dbmap := record.AppendDBMap(nil, []int{1, 0, 2})
		e := newEnv(t, kind, envOpts{beginRecord: func() []byte { return dbmap }})
		e.fill("k", 20, 100)
		failures := 1
		e.on(func() {
			e.wal.appendErr = func(p []byte) error {
				if p[0] == record.KindDBMap && failures > 0 {
					failures--
					return errors.New("injected: WAL refuses records")
				}
				return nil
			}
		})
		ch := e.save()
		var st State
		var begins int
		e.on(func() { st, begins = e.m.State(), len(e.begins) })
		if st != Idle || begins != 0 {
			t.Fatalf("a checkpoint began (state %v, %d begins) although its redo record was refused", st, begins)
		}
		e.on(e.m.Tick)
		if err := e.wait(ch); err != nil {
			t.Fatal(err)
		}
		redo := e.published1()
		var payload []byte
		e.on(func() { payload = e.wal.payloads[redo-1] }) // the fake WAL's LSNs start at 1
		m, err := record.DecodeDBMap(payload)
		if err != nil || !slices.Equal(m, []int{1, 0, 2}) {
			t.Fatalf("record at the redo point %d: %v, %v", redo, m, err)
		}
		// The retried request was served by that one checkpoint: no
		// second one follows it.
		e.on(e.m.Tick)
		e.on(func() { st, begins = e.m.State(), len(e.begins) })
		if st != Idle || begins != 1 {
			t.Fatalf("after the retried checkpoint: state %v, %d begins, want idle and 1", st, begins)
		}
	})
}

// Every batch's WAL barrier reaches the full-page images the batch
// appended, not only its pages' LSNs: a page written before its image is
// durable can tear with nothing in the log to repair it.
func TestFlushBarrierCoversTheBatchFullPageImages(t *testing.T) {
	e := newEnv(t, runtime.KindPool, envOpts{batchPages: 2})
	e.fill("k", 40, 300)
	if err := e.wait(e.save()); err != nil {
		t.Fatal(err)
	}
	e.fill("k", 40, 310) // the pages are on disk now: their next writes log images
	if err := e.wait(e.save()); err != nil {
		t.Fatal(err)
	}
	var fpis int
	var uncovered []string
	e.on(func() { fpis, uncovered = e.wal.fpis(), e.wal.uncovered })
	if fpis == 0 {
		t.Fatal("no full-page image logged: the test tests nothing")
	}
	if len(uncovered) > 0 {
		t.Fatalf("%d barriers below their batch's full-page images: %v", len(uncovered), uncovered)
	}
}

// A WAL failure that cancels a batch's linked page writes is what
// LastError reports, not the cancellations it caused.
func TestLinkedWritesCanceledByTheWALKeepTheWALErrorInLastError(t *testing.T) {
	e := newEnv(t, runtime.KindPool, envOpts{})
	e.fill("k", 10, 100)
	e.on(func() { e.wal.barrierErr, e.wal.cancelRes = syscall.EIO, true })
	ch := e.save()
	e.waitFor("a failed pass", func() bool { return e.m.Stats().PagesFailed > 0 })
	var last string
	e.on(func() { last = e.m.Stats().LastError })
	if !strings.Contains(last, "WAL barrier") || !strings.Contains(last, syscall.EIO.Error()) {
		t.Fatalf("LastError %q, want the WAL barrier's %v", last, syscall.EIO)
	}
	e.on(func() { e.wal.barrierErr = nil; e.m.Tick() })
	if err := e.wait(ch); err != nil {
		t.Fatal(err)
	}
}

// A manifest-listed heap file found missing whose tombstone fails leaves
// both in LastError: the loss, and the tombstone's error.
func TestVanishedFileWhoseTombstoneFailsKeepsBothErrors(t *testing.T) {
	e := newEnv(t, runtime.KindPool, envOpts{})
	e.fill("k", 10, 100)
	if err := e.wait(e.save()); err != nil {
		t.Fatal(err)
	}
	var last string
	e.on(func() {
		if !e.man.IsLive(1) {
			t.Error("heap file 1 not live in the manifest")
		}
		// Redo 0 is a checkpoint the manifest refuses to tombstone at.
		e.m.redo = 0
		e.m.vanish(1)
		last = e.m.Stats().LastError
	})
	for _, want := range []string{"vanished while the manifest lists it", "tombstone"} {
		if !strings.Contains(last, want) {
			t.Errorf("LastError %q lacks %q", last, want)
		}
	}
}
