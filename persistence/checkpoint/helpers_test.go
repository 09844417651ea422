package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/checkpoint/record"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/manifest"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/runtime/looptest"
)

// faultBackend is the checkpoint's backend in tests: a vfs.FaultyBackend,
// whose rules inject failures and hold operations, that also counts the
// operations the checkpoint asks for.
type faultBackend struct {
	*vfs.FaultyBackend

	holdRule vfs.RuleID
	holdGate chan struct{}
	heldCh   chan string // told the base name of each held fsync

	ops                    []string // renames and directory fsyncs, in order
	opens, pwrites, chains int
	fsyncs                 map[string]int
	order                  *writeOrder // the invariants' record (invariants_test.go)
}

func newFaultBackend(loop *runtime.Loop) *faultBackend {
	f := &faultBackend{
		FaultyBackend: vfs.NewFaultyBackend(loop, loop.Backend()),
		fsyncs:        make(map[string]int),
		heldCh:        make(chan string, 64),
		order:         newWriteOrder(),
	}
	f.order.pathOf = func(fd runtime.FD) string { p, _ := f.Path(fd); return p }
	return f
}

// fail makes op on files whose base name matches name fail with err, until
// the returned rule is deleted.
func (f *faultBackend) fail(op vfs.Op, name string, err error) vfs.RuleID {
	return f.Add(vfs.Rule{Op: op, Path: name, Fault: vfs.FaultError, Err: err})
}

// holdFsync holds the fsyncs of heap files until release; heldCh is told
// the base name of each.
func (f *faultBackend) holdFsync() {
	f.holdGate = make(chan struct{})
	entered := make(chan string)
	f.holdRule = f.Add(vfs.Rule{Op: vfs.OpSync, Fault: vfs.FaultHang, Gate: f.holdGate, Entered: entered,
		Filter: func(c vfs.Call) bool { _, ok := heap.ParseFileName(filepath.Base(c.Path)); return ok }})
	go func(gate chan struct{}) {
		for {
			select {
			case p := <-entered:
				f.heldCh <- filepath.Base(p)
			case <-gate:
				return
			}
		}
	}(f.holdGate)
}

// release lets the held fsyncs run, and stops holding new ones.
func (f *faultBackend) release() {
	f.Delete(f.holdRule)
	close(f.holdGate)
}

func (f *faultBackend) Open(path string, flag int, perm uint32, cb func(runtime.FD, error)) {
	f.opens++
	f.FaultyBackend.Open(path, flag, perm, cb)
}

func (f *faultBackend) Pwrite(fd runtime.FD, buf []byte, off int64, cb func(int, error)) {
	f.pwrites++
	f.FaultyBackend.Pwrite(fd, buf, off, func(n int, err error) {
		f.order.pwriteDone(fd, err)
		cb(n, err)
	})
}

func (f *faultBackend) Fsync(fd runtime.FD, cb func(error)) {
	path, _ := f.Path(fd)
	f.fsyncs[filepath.Base(path)]++
	start := f.order.fsyncStarted()
	f.FaultyBackend.Fsync(fd, func(err error) {
		f.order.fsyncDone(fd, start, err)
		cb(err)
	})
}

func (f *faultBackend) Chain(ops []runtime.Op, cb func([]runtime.Result)) {
	f.chains++
	f.FaultyBackend.Chain(ops, cb)
}

func (f *faultBackend) Rename(oldpath, newpath string, cb func(error)) {
	f.ops = append(f.ops, "rename "+filepath.Base(oldpath))
	f.FaultyBackend.Rename(oldpath, newpath, cb)
}

func (f *faultBackend) SyncDir(dir string, cb func(error)) {
	f.ops = append(f.ops, "syncdir "+filepath.Base(dir))
	f.FaultyBackend.SyncDir(dir, cb)
}

// fakeWAL stands in for the shard's WAL writer: LSNs, records, and
// barriers that complete asynchronously.
type fakeWAL struct {
	loop       *runtime.Loop
	be         runtime.Backend // page writes of WriteAfter go through it, one by one
	next       uint64
	durable    uint64
	types      []wal.RecordType
	payloads   [][]byte
	barriers   int
	appendErr  func(payload []byte) error
	barrierErr error
	// cancelRes: a failed WriteAfter answers, like wal.Writer, ECANCELED
	// for every write it canceled (otherwise res is nil).
	cancelRes bool
	// lastFPI is the LSN of the last full-page image appended since the
	// last barrier; uncovered lists the barriers (Barrier and WriteAfter)
	// that did not reach it: the pages written after such a barrier could
	// tear with their image not durable.
	lastFPI   uint64
	uncovered []string
	order     *writeOrder // the invariants' record (invariants_test.go)
}

// cover checks a barrier through lsn against the full-page images
// appended since the previous one.
func (w *fakeWAL) cover(kind string, lsn uint64) {
	if lsn < w.lastFPI {
		w.uncovered = append(w.uncovered, fmt.Sprintf("%s through %d below FPI %d", kind, lsn, w.lastFPI))
	}
	w.lastFPI = 0
}

func (w *fakeWAL) NextLSN() uint64 { return w.next }

func (w *fakeWAL) Append(typ wal.RecordType, payload []byte) (uint64, error) {
	if w.appendErr != nil {
		if err := w.appendErr(payload); err != nil {
			return 0, err
		}
	}
	lsn := w.next
	w.next++
	if typ == wal.RecordCheckpoint && len(payload) > 0 && payload[0] == record.KindFPI {
		w.lastFPI = lsn
	}
	w.types = append(w.types, typ)
	w.payloads = append(w.payloads, payload)
	if typ == wal.RecordCheckpoint {
		w.order.appended(lsn, payload)
	}
	return lsn, nil
}

func (w *fakeWAL) Barrier(lsn uint64, done func(error)) {
	w.barriers++
	w.cover("Barrier", lsn)
	err := w.barrierErr
	w.loop.AfterFunc(0, func() {
		if err == nil {
			w.durable = max(w.durable, lsn)
		}
		done(err)
	})
}

// WriteAfter is Barrier followed by the page writes, each through the
// (fault-injecting) backend, so that injected write failures apply.
func (w *fakeWAL) WriteAfter(lsn uint64, ops []runtime.Op, done func([]runtime.Result, error)) {
	w.barriers++
	w.cover("WriteAfter", lsn)
	err := w.barrierErr
	cancel := w.cancelRes
	w.loop.AfterFunc(0, func() {
		if err != nil {
			var res []runtime.Result
			if cancel {
				res = make([]runtime.Result, len(ops))
				for i := range res {
					res[i].Err = syscall.ECANCELED
				}
			}
			done(res, err)
			return
		}
		w.durable = max(w.durable, lsn)
		w.order.checkWrites(lsn, ops)
		res := make([]runtime.Result, len(ops))
		pending := len(ops)
		for i, op := range ops {
			w.be.Pwrite(op.FD, op.Buf, op.Off, func(n int, err error) {
				res[i] = runtime.Result{N: n, Err: err}
				if pending--; pending == 0 {
					done(res, nil)
				}
			})
		}
	})
}

func (w *fakeWAL) fpis() int {
	n := 0
	for _, p := range w.payloads {
		if len(p) > 0 && p[0] == record.KindFPI {
			n++
		}
	}
	return n
}

// fakeSource is a tiny keyspace.
type fakeSource struct {
	w      WAL // where set and del log their records
	keys   map[string]*keyState
	dirty  []string
	taking [][]byte // the take in progress (nil: none)
}

type keyState struct {
	val    []byte
	lsn    uint64
	live   bool
	loc    heap.RecordID
	hasLoc bool
}

func (s *fakeSource) set(key string, val []byte) {
	lsn, _ := s.w.Append(wal.RecordData, []byte("set "+key))
	k := s.keys[key]
	if k == nil {
		k = &keyState{}
		s.keys[key] = k
	}
	k.val, k.lsn, k.live = val, lsn, true
	s.dirty = append(s.dirty, key)
}

func (s *fakeSource) del(key string) {
	lsn, _ := s.w.Append(wal.RecordData, []byte("del "+key))
	k := s.keys[key]
	k.live, k.lsn = false, lsn
	s.dirty = append(s.dirty, key)
}

// vanished re-dirties the keys whose record was in file.
func (s *fakeSource) vanished(file uint32) {
	for k, st := range s.keys {
		if st.hasLoc && st.loc.File == file {
			st.hasLoc = false
			s.dirty = append(s.dirty, k)
		}
	}
}

// BeginTake takes the dirty keys at once; TakeSome hands them out a few
// at a time, so that a take spans loop steps.
func (s *fakeSource) BeginTake() {
	if s.taking != nil {
		panic("fakeSource: BeginTake while a take is in progress")
	}
	seen := map[string]bool{}
	s.taking = [][]byte{}
	for _, k := range s.dirty {
		if !seen[k] {
			seen[k] = true
			s.taking = append(s.taking, []byte(k))
		}
	}
	s.dirty = nil
}

func (s *fakeSource) TakeSome(max int) ([][]byte, bool) {
	if s.taking == nil {
		panic("fakeSource: TakeSome with no take in progress")
	}
	n := min(max, len(s.taking), 7)
	out := s.taking[:n]
	s.taking = s.taking[n:]
	if len(s.taking) == 0 {
		s.taking = nil
		return out, true
	}
	return out, false
}

func (s *fakeSource) Version(key []byte) Version {
	k := s.keys[string(key)]
	v := Version{Live: k.live, Old: k.loc, HasOld: k.hasLoc}
	if k.live {
		v.Record = heap.Record{Key: key, Kind: 1, KeyLSN: k.lsn, Value: k.val}
	} else {
		v.DelLSN = k.lsn
	}
	return v
}

func (s *fakeSource) Placed(key []byte, id heap.RecordID, _ []heap.RecordID, live bool) {
	k := s.keys[string(key)]
	k.loc, k.hasLoc = id, live
}

type env struct {
	t    testing.TB
	loop *runtime.Loop
	dir  string
	be   *faultBackend
	wal  *fakeWAL
	src  *fakeSource
	man  *manifest.Manifest
	h    *heap.Heap
	m    *Manager

	poisoned  error
	published []uint64
	vanished  []string
	steps     []Step // the crash-hook steps passed, in order
	begins    []uint64
	undurable []string // files written and not fsynced since, at a publish
	loads     int      // LoadPages calls (envOpts.loadPages)
}

type envOpts struct {
	beginRecord  func() []byte
	batchPages   int
	maxFileSize  int64
	shutdownWait time.Duration
	cachePages   int  // the page cache's budget (default 64 MiB)
	loadPages    bool // give the manager a page loader (env.loadPages)
}

func newEnv(t testing.TB, kind runtime.Kind, eo envOpts) *env {
	t.Helper()
	loop := runtime.NewLoop(runtime.Config{Backend: kind, CPU: -1})
	if err := loop.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(loop.Stop)
	e := &env{t: t, loop: loop, dir: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(e.dir, heap.DirName), 0o755); err != nil {
		t.Fatal(err)
	}
	e.man = manifest.New(0)
	cacheBytes := int64(64 << 20)
	if eo.cachePages > 0 {
		cacheBytes = int64(eo.cachePages) * heap.PageSize
	}
	h, err := heap.Open(heap.Options{
		Dir:         filepath.Join(e.dir, heap.DirName),
		Cache:       heap.NewCache(cacheBytes),
		FileIDs:     e.man,
		MaxFileSize: eo.maxFileSize,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.h = h
	e.on(func() {
		e.be = newFaultBackend(loop)
		e.wal = &fakeWAL{loop: loop, be: e.be, next: 1, order: e.be.order}
		var load func([]heap.PageID, func(error))
		if eo.loadPages {
			load = e.loadPages
		}
		e.src = &fakeSource{w: e.wal, keys: map[string]*keyState{}}
		e.m = New(Options{
			Loop:          loop,
			Backend:       e.be,
			ShardDir:      e.dir,
			WAL:           e.wal,
			Source:        e.src,
			Heap:          h,
			Manifest:      e.man,
			PublishedRedo: 1,
			Interval:      time.Hour,
			BatchPages:    eo.batchPages,
			RetryBackoff:  time.Nanosecond,
			ShutdownWait:  eo.shutdownWait,
			LoadPages:     load,
			OnPublished: func(redo uint64) {
				e.published = append(e.published, redo)
				e.undurable = append(e.undurable, e.be.order.undurable(filepath.Join(e.dir, heap.DirName))...)
			},
			OnPoison: func(err error) { e.poisoned = err },
			OnStep:   func(s Step) { e.steps = append(e.steps, s) },
			OnBegin: func(redo uint64) {
				e.begins = append(e.begins, redo)
				e.be.order.cycle = redo
			},
			BeginRecord: eo.beginRecord,
			OnVanished: func(f uint32, retired bool) {
				e.vanished = append(e.vanished, heap.FileName(f)+map[bool]string{true: " retired", false: " unexpected"}[retired])
				if !retired {
					e.src.vanished(f)
				}
			},
		})
	})
	return e
}

// on runs f on the loop's thread.
func (e *env) on(f func()) {
	e.t.Helper()
	looptest.On(e.t, e.loop, f)
}

// waitFor waits until cond, read on the loop's thread, holds: a logical
// condition, with a generous deadline only against hangs.
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	if !looptest.Until(e.t, e.loop, cond) {
		var st Stats
		e.on(func() { st = e.m.Stats() })
		e.t.Fatalf("timed out waiting for %s (stats %+v)", what, st)
	}
}

// fill sets n keys with values of size bytes.
func (e *env) fill(prefix string, n, size int) {
	e.on(func() {
		for i := range n {
			e.src.set(fmt.Sprintf("%s%d", prefix, i), []byte(strings.Repeat("v", size)))
		}
	})
}

// save runs Request and returns a channel that gets its result.
func (e *env) save() chan error {
	ch := make(chan error, 1)
	e.on(func() { e.m.Request(func(err error) { ch <- err }) })
	return ch
}

func (e *env) wait(ch chan error) error {
	e.t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(20 * time.Second):
		e.t.Fatal("timed out waiting for the checkpoint")
		return nil
	}
}

// waitTicking is wait for a checkpoint that may need the manager's Tick to
// retry a failed step: it ticks, as the shard does, until ch answers.
func (e *env) waitTicking(ch chan error) error {
	e.t.Helper()
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-ch:
			return err
		case <-tick.C:
			e.on(e.m.Tick)
		case <-deadline:
			e.t.Fatal("timed out waiting for the checkpoint")
			return nil
		}
	}
}

func (e *env) stats() Stats {
	var s Stats
	e.on(func() { s = e.m.Stats() })
	return s
}

func (e *env) published1() uint64 {
	var r uint64
	e.on(func() { r = e.m.PublishedRedo() })
	return r
}

func forEachKind(t *testing.T, f func(t *testing.T, kind runtime.Kind)) {
	for _, k := range []runtime.Kind{runtime.KindPool, runtime.KindUring} {
		t.Run(k.String(), func(t *testing.T) {
			if k == runtime.KindUring {
				if ok, why, _ := runtime.ProbeUring(); !ok {
					t.Skip(why)
				}
			}
			f(t, k)
		})
	}
}
