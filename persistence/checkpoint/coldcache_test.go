package checkpoint

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/manifest"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/runtime"
)

// loadPages is the test's Options.LoadPages: it reads the pages from the
// heap files on disk into the cache, as the shard's loader does on the
// ring, and answers on a later loop iteration.
func (e *env) loadPages(pages []heap.PageID, done func(error)) {
	e.loads++
	var first error
	dir := filepath.Join(e.dir, heap.DirName)
	for _, id := range pages {
		if e.h.Cache().Resident(id) {
			continue
		}
		if err := e.readPage(dir, id); err != nil && first == nil {
			first = err
		}
	}
	e.loop.AfterFunc(0, func() { done(first) })
}

func (e *env) readPage(dir string, id heap.PageID) error {
	f, err := os.Open(heap.FilePath(dir, id.File))
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, heap.PageSize)
	if _, err := f.ReadAt(buf, heap.PageOffset(id.Page)); err != nil {
		return fmt.Errorf("read page %v: %w", id, err)
	}
	_, err = e.h.Cache().AddClean(id, buf)
	return err
}

// durableHeap reads the heap the last published checkpoint left on disk,
// as a boot does: every key's newest version and its value.
func (e *env) durableHeap() map[string]string {
	e.t.Helper()
	man, ok, err := manifest.Read(vfs.Default, e.dir, 0)
	if err != nil || !ok {
		e.t.Fatalf("manifest: %v (exists %v)", err, ok)
	}
	ix := heap.NewIndex()
	h, err := heap.Open(heap.Options{Dir: filepath.Join(e.dir, heap.DirName), Files: man.Live(),
		Cache: heap.NewCache(1 << 20), ReadMisses: true, OnRecord: ix.Add})
	if err != nil {
		e.t.Fatal(err)
	}
	defer h.Close()
	got := make(map[string]string, len(ix.Keys))
	for k, ent := range ix.Keys {
		r, err := h.Read(ent.ID, nil)
		if err != nil {
			e.t.Fatalf("read %q at %v: %v", k, ent.ID, err)
		}
		got[k] = string(r.Value)
	}
	return got
}

// Issue 14: a checkpoint whose dirty pages do not fit the page cache never
// finished. The deletes dirty the pages they free records in, a dirty page
// cannot be evicted, and once dirty pages filled the cache each round of
// cold page reads evicted the clean pages it had just read: Writing loaded
// the same pages again, forever. Here 1,600 records are freed over about
// a thousand cold pages, with a cache of 64.
func TestCheckpointWhoseDirtyPagesExceedThePageCacheFinishes(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		const cachePages, keys = 64, 2000
		// Files of 100 pages: the durability check sees each file written.
		e := newEnv(t, kind, envOpts{cachePages: cachePages, loadPages: true, maxFileSize: 100 * heap.PageSize})
		old := strings.Repeat("v", 1800) // two records a page
		e.fill("k", keys, len(old))
		if err := e.wait(e.save()); err != nil {
			t.Fatal(err)
		}
		want := make(map[string]string)
		e.on(func() {
			if r := e.h.Cache().Stats().Resident; r > cachePages {
				t.Errorf("%d pages resident after the first checkpoint, budget %d", r, cachePages)
			}
			for i := range keys {
				k := fmt.Sprint("k", i)
				switch i % 10 {
				case 0:
					want[k] = old
				case 1:
					want[k] = "new " + k
					e.src.set(k, []byte(want[k]))
				default:
					e.src.del(k)
				}
			}
		})
		before := e.stats()
		if err := e.wait(e.save()); err != nil {
			t.Fatal(err)
		}
		st := e.stats()
		if st.PageLoads == before.PageLoads {
			t.Fatal("no cold page was loaded: the test never reached the case it is for")
		}
		if st.PagesSpilled == before.PagesSpilled || st.PagesFailed != 0 {
			t.Fatalf("pages written while Writing %d, failed %d (stats %+v)", st.PagesSpilled-before.PagesSpilled, st.PagesFailed, st)
		}
		e.on(func() {
			if len(e.wal.order.violations) > 0 || len(e.wal.uncovered) > 0 {
				t.Errorf("log before data broken: %q %q", e.wal.order.violations, e.wal.uncovered)
			}
			if len(e.undurable) > 0 {
				t.Errorf("published over writes not fsynced: %q", e.undurable)
			}
		})
		got := e.durableHeap()
		if len(got) != len(want) {
			t.Fatalf("the durable heap holds %d keys, want %d", len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal([]byte(got[k]), []byte(v)) {
				t.Fatalf("key %q: durable value %.20q, want %.20q", k, got[k], v)
			}
		}
	})
}

// A spill whose page writes fail counts nothing as written: the pages stay
// dirty, Writing waits for a later tick to spill again, and the redo point
// does not move until every page is written.
func TestFailedSpillIsRetriedAndNeverCountsAsWritten(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{cachePages: 64, loadPages: true})
		e.fill("k", 400, 1800)
		if err := e.wait(e.save()); err != nil {
			t.Fatal(err)
		}
		redo := e.published1()
		want := make(map[string]string)
		e.on(func() {
			for i := range 400 {
				k := fmt.Sprint("k", i)
				if i%4 == 0 {
					want[k] = strings.Repeat("v", 1800)
					continue
				}
				e.src.del(k)
			}
		})
		rule := e.be.Add(vfs.Rule{Op: vfs.OpWrite, Fault: vfs.FaultError, Err: syscall.EIO,
			Filter: func(c vfs.Call) bool { _, ok := heap.ParseFileName(filepath.Base(c.Path)); return ok }})
		before := e.stats()
		ch := e.save()
		e.waitFor("a spill whose writes failed", func() bool {
			s := e.m.Stats()
			return s.Spills > before.Spills && s.PagesFailed > before.PagesFailed && s.State == Writing && e.m.retryAt.After(time.Time{})
		})
		e.on(e.m.Tick) // the spill again: it fails again
		e.waitFor("a second failed spill", func() bool { return e.m.Stats().Spills > before.Spills+1 && !e.m.retryAt.IsZero() })
		if s := e.stats(); s.State != Writing || s.PagesSpilled != before.PagesSpilled || e.published1() != redo {
			t.Fatalf("a failed spill counted as written: %+v", s)
		}
		e.be.Delete(rule)
		// Tick until the checkpoint ends: a write already on its way when
		// the rule went may still fail, and its retry needs a later tick.
		if err := e.waitTicking(ch); err != nil {
			t.Fatal(err)
		}
		e.on(func() {
			if len(e.wal.order.violations) > 0 || len(e.undurable) > 0 {
				t.Errorf("invariants broken: %q %q", e.wal.order.violations, e.undurable)
			}
		})
		if got := e.durableHeap(); !maps.Equal(got, want) {
			t.Fatalf("the durable heap holds %d keys, want %d", len(got), len(want))
		}
	})
}
