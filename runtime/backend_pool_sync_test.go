package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// holdSyncs makes the pool backend's fsyncs and fdatasyncs of files whose
// name starts with prefix block until the returned release is called;
// entered counts those that blocked. Set before the loop starts.
func holdSyncs(t *testing.T, prefix string) (entered *atomic.Int64, release func()) {
	t.Helper()
	gate := make(chan struct{})
	entered = new(atomic.Int64)
	real := poolSync
	poolSync = func(f *os.File, data bool) error {
		if strings.HasPrefix(filepath.Base(f.Name()), prefix) {
			entered.Add(1)
			<-gate
		}
		return real(f, data)
	}
	released := false
	release = func() {
		if !released {
			released = true
			close(gate)
		}
	}
	// Cleanups run last-registered first: the loop (registered after this)
	// stops before poolSync is restored, and the gate opens before both.
	t.Cleanup(func() { poolSync = real })
	return entered, release
}

// On the pool backend, heap fsyncs that hang on a failing disk, more of
// them than there are file workers, hold up neither the WAL's writes nor
// its fdatasyncs (standalone and linked in a chain) on another file.
func TestPoolHungSyncsHoldUpNoOtherFile(t *testing.T) {
	entered, release := holdSyncs(t, "heap-")
	l := startLoop(t, KindPool)
	t.Cleanup(release)
	dir := t.TempDir()
	workers := l.cfg.PoolWorkers
	heapFiles := workers + 1
	fds := make([]FD, heapFiles+1) // the last one is the WAL
	for i := range fds {
		name := "wal.log"
		if i < heapFiles {
			name = "heap-" + string(rune('a'+i))
		}
		ch := make(chan error, 1)
		onLoop(t, l, func() {
			l.Backend().Open(filepath.Join(dir, name), os.O_CREATE|os.O_RDWR, 0o644, func(fd FD, err error) {
				fds[i] = fd
				ch <- err
			})
		})
		if err := await(t, ch, "open "+name); err != nil {
			t.Fatal(err)
		}
	}
	var heapDone atomic.Int64
	onLoop(t, l, func() {
		for _, fd := range fds[:heapFiles] {
			for _, data := range []bool{false, true} { // two per file: one waits in its lane
				cb := func(err error) {
					if err != nil {
						t.Errorf("heap sync: %v", err)
					}
					heapDone.Add(1)
				}
				if data {
					l.Backend().Fdatasync(fd, cb)
				} else {
					l.Backend().Fsync(fd, cb)
				}
			}
		}
	})
	waitFor(t, testDeadline, "the heap syncs to take every file worker", func() bool {
		return entered.Load() >= int64(workers)
	})

	wal := fds[heapFiles]
	ch := make(chan error, 3)
	onLoop(t, l, func() {
		be := l.Backend()
		be.Pwrite(wal, []byte("record"), 0, func(_ int, err error) {
			if err != nil {
				ch <- err
				return
			}
			be.Fdatasync(wal, func(err error) { ch <- err })
		})
		be.Chain([]Op{{Kind: OpPwrite, FD: wal, Buf: []byte("group"), Off: 6}, {Kind: OpFdatasync, FD: wal}},
			func(res []Result) {
				for _, r := range res {
					if r.Err != nil {
						ch <- r.Err
						return
					}
				}
				ch <- nil
			})
		be.Fsync(wal, func(err error) { ch <- err })
	})
	for range 3 {
		if err := await(t, ch, "the WAL's write and syncs while heap syncs hang"); err != nil {
			t.Fatal(err)
		}
	}
	if n := heapDone.Load(); n != 0 {
		t.Fatalf("%d heap syncs completed while held", n)
	}
	release()
	waitFor(t, testDeadline, "the held heap syncs to complete", func() bool {
		return heapDone.Load() == int64(2*heapFiles)
	})
}
