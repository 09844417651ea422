package vfs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/runtime/looptest"
)

// backendEnv is a FaultyBackend over the backend of a real loop, and a temp
// directory.
type backendEnv struct {
	t    *testing.T
	loop *runtime.Loop
	be   *FaultyBackend
	dir  string
}

func forEachBackend(t *testing.T, f func(t *testing.T, e *backendEnv)) {
	for _, k := range []runtime.Kind{runtime.KindUring, runtime.KindPool} {
		t.Run(k.String(), func(t *testing.T) {
			if k == runtime.KindUring {
				if ok, why, _ := runtime.ProbeUring(); !ok {
					t.Skip(why)
				}
			}
			loop := runtime.NewLoop(runtime.Config{Backend: k, CPU: -1})
			if err := loop.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(loop.Stop)
			e := &backendEnv{t: t, loop: loop, dir: t.TempDir()}
			e.on(func() { e.be = NewFaultyBackend(loop, loop.Backend()) })
			f(t, e)
		})
	}
}

// on runs f on the loop's thread.
func (e *backendEnv) on(f func()) {
	e.t.Helper()
	looptest.On(e.t, e.loop, f)
}

// await starts an operation on the loop's thread and waits for its
// callback. start gets the completion to call; it fails the test when the
// callback runs inside the call that started the operation.
func await[T any](e *backendEnv, start func(done func(T))) T {
	e.t.Helper()
	ch := make(chan T, 1)
	e.on(func() {
		inCall := true
		start(func(v T) {
			if inCall {
				e.t.Error("callback ran inside the call")
			}
			ch <- v
		})
		inCall = false
	})
	select {
	case v := <-ch:
		return v
	case <-e.loop.Done():
		e.t.Fatal("loop stopped")
	}
	var zero T
	return zero
}

type fdResult struct {
	fd  runtime.FD
	err error
}

type nResult struct {
	n   int
	err error
}

// open opens name in the env's directory for writing, creating it.
func (e *backendEnv) open(name string) (runtime.FD, string) {
	e.t.Helper()
	path := filepath.Join(e.dir, name)
	r := await(e, func(done func(fdResult)) {
		e.be.Open(path, os.O_CREATE|os.O_RDWR, 0o644, func(fd runtime.FD, err error) { done(fdResult{fd, err}) })
	})
	if r.err != nil {
		e.t.Fatal(r.err)
	}
	return r.fd, path
}

func (e *backendEnv) pwrite(fd runtime.FD, s string) nResult {
	return await(e, func(done func(nResult)) {
		e.be.Pwrite(fd, []byte(s), 0, func(n int, err error) { done(nResult{n, err}) })
	})
}

func (e *backendEnv) fdatasync(fd runtime.FD) error {
	return await(e, func(done func(error)) { e.be.Fdatasync(fd, done) })
}

func (e *backendEnv) chain(ops []runtime.Op) []runtime.Result {
	return await(e, func(done func([]runtime.Result)) { e.be.Chain(ops, done) })
}

func TestFaultyBackendWithoutRulesPassesThrough(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		fd, path := e.open("x.tmp")
		if r := e.pwrite(fd, "abc"); r.n != 3 || r.err != nil {
			t.Fatalf("pwrite: %+v", r)
		}
		res := e.chain([]runtime.Op{
			{Kind: runtime.OpPwrite, FD: fd, Buf: []byte("de"), Off: 3},
			{Kind: runtime.OpFdatasync, FD: fd},
			{Kind: runtime.OpRename, Path: path, NewPath: filepath.Join(e.dir, "x")},
		})
		if i := runtime.FailedStep(res); i >= 0 {
			t.Fatalf("chain: %+v", res)
		}
		if err := await(e, func(done func(error)) { e.be.SyncDir(e.dir, done) }); err != nil {
			t.Fatal(err)
		}
		var renamed string
		e.on(func() { renamed, _ = e.be.Path(fd) })
		if renamed != filepath.Join(e.dir, "x") {
			t.Fatalf("the descriptor's path is %q after the rename", renamed)
		}
		if err := await(e, func(done func(error)) { e.be.Close(fd, done) }); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(e.dir, "x")); string(b) != "abcde" {
			t.Fatalf("content %q", b)
		}
		if c := e.be.Counts(); c.Total() != 0 {
			t.Fatalf("counts %+v", c)
		}
	})
}

func TestFaultyBackendFdatasyncErrorOnlyForMatchingPath(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		id := e.be.Add(EIOOnSync("*.log"))
		log, _ := e.open("a.log")
		dat, _ := e.open("a.dat")
		if err := e.fdatasync(log); err != syscall.EIO {
			t.Fatalf("fdatasync of a.log: %v, want EIO", err)
		}
		if err := e.fdatasync(dat); err != nil {
			t.Fatalf("fdatasync of a.dat: %v", err)
		}
		if h := e.be.Hits(id); h != 1 {
			t.Fatalf("hits %d, want 1", h)
		}
		if c := e.be.Counts(); c.Errors != 1 || c.Total() != 1 {
			t.Fatalf("counts %+v", c)
		}
	})
}

func TestFaultyBackendShortPwrite(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		e.be.Add(Rule{Op: OpWrite, Path: "x", Fault: FaultShortWrite, N: 3, Count: 2})
		fd, path := e.open("x")
		if r := e.pwrite(fd, "abcdefgh"); r.n != 3 || r.err != nil {
			t.Fatalf("lone pwrite: %+v, want 3 bytes and no error", r)
		}
		res := e.chain([]runtime.Op{
			{Kind: runtime.OpPwrite, FD: fd, Buf: []byte("ABCDEFGH")},
			{Kind: runtime.OpFdatasync, FD: fd},
		})
		if res[0].N != 3 || res[0].Err != runtime.ErrShort || res[1].Err != syscall.ECANCELED {
			t.Fatalf("chain: %+v, want a short step and the next cancelled", res)
		}
		if b, _ := os.ReadFile(path); string(b) != "ABC" {
			t.Fatalf("content %q", b)
		}
		if r := e.pwrite(fd, "12345678"); r.n != 8 || r.err != nil {
			t.Fatalf("pwrite after the rule retired: %+v", r)
		}
	})
}

func TestFaultyBackendHoldsAnFsyncUntilReleased(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		gate := make(chan struct{})
		entered := make(chan string, 1)
		id := e.be.Add(Rule{Op: OpSync, Path: "held", Fault: FaultHang, Gate: gate, Entered: entered})
		fd, path := e.open("held")
		done := make(chan error, 1)
		e.on(func() { e.be.Fsync(fd, func(err error) { done <- err }) })
		if p := <-entered; p != path {
			t.Fatalf("entered %q, want %q", p, path)
		}
		// The loop is free while the fsync is held, and the fsync is not done.
		other, _ := e.open("other")
		if err := await(e, func(done func(error)) { e.be.Fsync(other, done) }); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("held fsync completed before the release: %v", err)
		default:
		}
		e.be.Delete(id)
		close(gate)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("released fsync: %v", err)
			}
		case <-e.loop.Done():
			t.Fatal("loop stopped")
		}
		if c := e.be.Counts(); c.Hangs != 1 {
			t.Fatalf("counts %+v", c)
		}
	})
}

func TestFaultyBackendHoldThenFail(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		gate := make(chan struct{})
		close(gate)
		e.be.Add(Rule{Op: OpDatasync, Fault: FaultHang, Gate: gate, Err: syscall.EIO})
		fd, _ := e.open("x")
		if err := e.fdatasync(fd); err != syscall.EIO {
			t.Fatalf("fdatasync: %v, want EIO after the hold", err)
		}
	})
}

func TestFaultyBackendFaultInTheMiddleOfAChain(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		e.be.Add(ENOSPCOnWrite("b"))
		a, pa := e.open("a")
		b, pb := e.open("b")
		res := e.chain([]runtime.Op{
			{Kind: runtime.OpPwrite, FD: a, Buf: []byte("abc")},
			{Kind: runtime.OpFdatasync, FD: a},
			{Kind: runtime.OpPwrite, FD: b, Buf: []byte("def")},
			{Kind: runtime.OpFdatasync, FD: b},
			{Kind: runtime.OpRename, Path: pa, NewPath: pa + ".renamed"},
		})
		want := []error{nil, nil, syscall.ENOSPC, syscall.ECANCELED, syscall.ECANCELED}
		for i, w := range want {
			if res[i].Err != w {
				t.Fatalf("step %d: %v, want %v (results %+v)", i, res[i].Err, w, res)
			}
		}
		if res[0].N != 3 {
			t.Fatalf("first write: %+v", res[0])
		}
		if got, _ := os.ReadFile(pa); string(got) != "abc" {
			t.Fatalf("a holds %q: the steps before the fault did not run", got)
		}
		if got, _ := os.ReadFile(pb); len(got) != 0 {
			t.Fatalf("b holds %q", got)
		}
		if _, err := os.Stat(pa + ".renamed"); !os.IsNotExist(err) {
			t.Fatalf("the cancelled rename ran: %v", err)
		}
	})
}

func TestFaultyBackendHeldChainStepContinuesTheChain(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		gate := make(chan struct{})
		entered := make(chan string, 1)
		e.be.Add(Rule{Op: OpDatasync, Fault: FaultHang, Gate: gate, Entered: entered, Count: 1})
		fd, path := e.open("x.tmp")
		final := filepath.Join(e.dir, "x")
		done := make(chan []runtime.Result, 1)
		e.on(func() {
			e.be.Chain([]runtime.Op{
				{Kind: runtime.OpPwrite, FD: fd, Buf: []byte("abc")},
				{Kind: runtime.OpFdatasync, FD: fd},
				{Kind: runtime.OpRename, Path: path, NewPath: final},
			}, func(res []runtime.Result) { done <- res })
		})
		<-entered
		if got, _ := os.ReadFile(path); string(got) != "abc" {
			t.Fatalf("the write before the held step did not run: %q", got)
		}
		if _, err := os.Stat(final); !os.IsNotExist(err) {
			t.Fatalf("the step after the held one ran: %v", err)
		}
		close(gate)
		res := <-done
		if i := runtime.FailedStep(res); i >= 0 || res[0].N != 3 {
			t.Fatalf("released chain: %+v", res)
		}
		if got, _ := os.ReadFile(final); string(got) != "abc" {
			t.Fatalf("renamed file holds %q", got)
		}
	})
}

func TestFaultyBackendFollowsRenames(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		e.be.Add(EIOOnSync("*.log"))
		fd, path := e.open("seg.tmp")
		if err := e.fdatasync(fd); err != nil {
			t.Fatalf("fdatasync of the temporary file: %v", err)
		}
		err := await(e, func(done func(error)) { e.be.Rename(path, filepath.Join(e.dir, "seg.log"), done) })
		if err != nil {
			t.Fatal(err)
		}
		if err := e.fdatasync(fd); err != syscall.EIO {
			t.Fatalf("fdatasync after the rename to seg.log: %v, want EIO", err)
		}
	})
}

func TestFaultyBackendFailedCloseStillCloses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		e.be.Add(Rule{Op: OpClose, Fault: FaultError, Err: syscall.EIO})
		fd, _ := e.open("x")
		if err := await(e, func(done func(error)) { e.be.Close(fd, done) }); err != syscall.EIO {
			t.Fatalf("close: %v, want EIO", err)
		}
		var known bool
		e.on(func() { _, known = e.be.Path(fd) })
		if known {
			t.Fatal("the descriptor is still known after Close")
		}
		// The descriptor really is closed: a write to it fails.
		if r := await(e, func(done func(nResult)) {
			e.be.inner.Pwrite(fd, []byte("x"), 0, func(n int, err error) { done(nResult{n, err}) })
		}); r.err == nil {
			t.Fatalf("write to the closed descriptor: %+v", r)
		}
	})
}
