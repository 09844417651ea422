package vfs

import (
	"context"
	"net"
	"os"
	"syscall"

	"github.com/moond-db/moond/runtime"
)

// FaultyBackend is a runtime.Backend that injects faults into the file
// operations of another, chosen by the same Rules as Faulty: the same Op
// bits, path patterns, Skip and Count, and faults. It is errorfs for the
// asynchronous stack.
//
// It knows the path of every file descriptor it opened (and follows
// renames), so a rule can say "fail the second fdatasync of wal-*.log" or
// "hold fsyncs of heap files until the gate opens". Sockets, and
// descriptors it did not open, pass through untouched.
//
// How each fault looks through the Backend:
//   - FaultError: the operation does not reach the inner backend; its
//     callback gets Rule.Err as is (a bare syscall.Errno, as the backends
//     report them). Close is the exception: the descriptor is closed
//     anyway, so that tests do not leak it, and the callback gets Rule.Err.
//   - FaultShortWrite: the first Rule.N bytes (at most all but one) are
//     written. A lone Pwrite or Pwritev reports the short count with no
//     error, as the backends report a short lone write; a Chain step
//     reports runtime.ErrShort and cancels the steps after it.
//   - FaultTornWrite: as FaultShortWrite with N capped at the whole buffer,
//     and the step reports ErrCrashed; every later mutating operation fails
//     with ErrCrashed until Reset.
//   - FaultHang: the operation (and, in a Chain, every step after it) is
//     parked without blocking the loop. A goroutine reports it on
//     Rule.Entered, waits for Rule.Gate to close and hands it back to the
//     loop, which performs it then, or fails it with Rule.Err when that is
//     set. An operation still parked when the loop stops never completes.
//
// Every callback runs on the loop's thread, exactly once, never inside the
// call that started the operation: injected results are delivered through a
// no-op on the inner backend. Like any Backend its methods, and Path, belong
// to the loop's thread; the rule methods (Add, Delete, Hits, Counts,
// Crashed, Reset) may be called from any goroutine.
type FaultyBackend struct {
	ruleSet
	inner runtime.Backend
	loop  *runtime.Loop
	paths map[runtime.FD]string
}

var _ runtime.Backend = (*FaultyBackend)(nil)

// NewFaultyBackend returns a Backend that passes every call to inner, the
// backend of loop, until rules say otherwise. Loop thread only.
func NewFaultyBackend(loop *runtime.Loop, inner runtime.Backend) *FaultyBackend {
	return &FaultyBackend{inner: inner, loop: loop, paths: make(map[runtime.FD]string)}
}

// Path returns the path fd was opened with (or renamed to), and whether fd
// is a file this backend opened and has not closed. Loop thread only.
func (b *FaultyBackend) Path(fd runtime.FD) (string, bool) {
	p, ok := b.paths[fd]
	return p, ok
}

// later runs f on the loop's thread after the current call has returned:
// behind a no-op of the inner backend, so that a loop that stops still runs
// it (with the stop's cancellation in the no-op's result, which f ignores).
func (b *FaultyBackend) later(f func()) {
	b.inner.Chain([]runtime.Op{{Kind: runtime.OpNop}}, func([]runtime.Result) { f() })
}

// park holds an operation of rule r on path until the rule's gate opens,
// then runs resume on the loop's thread with r.Err. It never blocks the
// caller.
func (b *FaultyBackend) park(r *Rule, path string, resume func(err error)) {
	go func() {
		if r.Entered != nil {
			select {
			case r.Entered <- path:
			case <-r.Gate:
			case <-b.loop.Done():
				return
			}
		}
		select {
		case <-r.Gate:
		case <-b.loop.Done():
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-b.loop.Done():
				cancel()
			case <-ctx.Done():
			}
		}()
		_ = b.loop.PostWait(ctx, func() { resume(r.Err) })
	}()
}

// fileCall is the Call of a file operation on fd, and whether fd is a file
// this backend knows (only those are subject to rules).
func (b *FaultyBackend) fileCall(op Op, fd runtime.FD, off int64) (Call, bool) {
	p, ok := b.paths[fd]
	return Call{Op: op, Path: p, Off: off}, ok
}

// simple is an operation without a byte count: it fires the rules for c
// and runs do, or injects the fault into cb.
func (b *FaultyBackend) simple(c Call, known bool, do func(cb func(error)), cb func(error)) {
	var r *Rule
	if known {
		r = b.fire(c)
	}
	switch {
	case r == nil:
		do(cb)
	case r.Fault == FaultHang:
		b.park(r, c.Path, func(err error) {
			if err != nil {
				cb(err)
				return
			}
			do(cb)
		})
	default:
		err := r.Err
		b.later(func() { cb(err) })
	}
}

func (b *FaultyBackend) Name() string { return b.inner.Name() }

func (b *FaultyBackend) Listen(network, addr string) (runtime.FD, net.Addr, error) {
	return b.inner.Listen(network, addr)
}

func (b *FaultyBackend) Accept(l runtime.FD, cb func(c runtime.FD, err error)) {
	b.inner.Accept(l, cb)
}

func (b *FaultyBackend) Recv(c runtime.FD, buf []byte, cb func(n int, err error)) {
	b.inner.Recv(c, buf, cb)
}

func (b *FaultyBackend) RecvMulti(c runtime.FD, cb func(data []byte, err error, done bool)) {
	b.inner.RecvMulti(c, cb)
}

func (b *FaultyBackend) Send(c runtime.FD, buf []byte, cb func(n int, err error)) {
	b.inner.Send(c, buf, cb)
}

func (b *FaultyBackend) LocalAddr(fd runtime.FD) net.Addr  { return b.inner.LocalAddr(fd) }
func (b *FaultyBackend) RemoteAddr(fd runtime.FD) net.Addr { return b.inner.RemoteAddr(fd) }

func (b *FaultyBackend) Open(path string, flag int, perm uint32, cb func(fd runtime.FD, err error)) {
	op := OpOpen
	if flag&os.O_CREATE != 0 {
		op = OpCreate
	}
	do := func() {
		b.inner.Open(path, flag, perm, func(fd runtime.FD, err error) {
			if err == nil {
				b.paths[fd] = path
			}
			cb(fd, err)
		})
	}
	b.simple(call(op, path), true, func(func(error)) { do() }, func(err error) { cb(-1, err) })
}

func (b *FaultyBackend) Close(fd runtime.FD, cb func(err error)) {
	c, known := b.fileCall(OpClose, fd, -1)
	delete(b.paths, fd)
	var r *Rule
	if known {
		r = b.fire(c)
	}
	if r == nil {
		b.inner.Close(fd, cb)
		return
	}
	finish := func(err error) {
		if cb != nil {
			cb(err)
		}
	}
	if r.Fault == FaultHang {
		b.park(r, c.Path, func(err error) {
			b.inner.Close(fd, func(cerr error) {
				if err == nil {
					err = cerr
				}
				finish(err)
			})
		})
		return
	}
	err := r.Err
	b.inner.Close(fd, func(error) { finish(err) })
}

func (b *FaultyBackend) Pread(fd runtime.FD, buf []byte, off int64, cb func(n int, err error)) {
	b.lone(runtime.Op{Kind: runtime.OpPread, FD: fd, Buf: buf, Off: off},
		func() { b.inner.Pread(fd, buf, off, cb) }, cb)
}

func (b *FaultyBackend) Pwrite(fd runtime.FD, buf []byte, off int64, cb func(n int, err error)) {
	b.lone(runtime.Op{Kind: runtime.OpPwrite, FD: fd, Buf: buf, Off: off},
		func() { b.inner.Pwrite(fd, buf, off, cb) }, cb)
}

func (b *FaultyBackend) Pwritev(fd runtime.FD, bufs [][]byte, off int64, cb func(n int, err error)) {
	b.lone(runtime.Op{Kind: runtime.OpPwritev, FD: fd, Bufs: bufs, Off: off},
		func() { b.inner.Pwritev(fd, bufs, off, cb) }, cb)
}

func (b *FaultyBackend) Fsync(fd runtime.FD, cb func(err error)) {
	b.lone(runtime.Op{Kind: runtime.OpFsync, FD: fd},
		func() { b.inner.Fsync(fd, cb) }, func(_ int, err error) { cb(err) })
}

func (b *FaultyBackend) Fdatasync(fd runtime.FD, cb func(err error)) {
	b.lone(runtime.Op{Kind: runtime.OpFdatasync, FD: fd},
		func() { b.inner.Fdatasync(fd, cb) }, func(_ int, err error) { cb(err) })
}

func (b *FaultyBackend) Rename(oldpath, newpath string, cb func(err error)) {
	op := runtime.Op{Kind: runtime.OpRename, Path: oldpath, NewPath: newpath}
	b.lone(op, func() {
		b.inner.Rename(oldpath, newpath, func(err error) {
			b.track([]runtime.Op{op}, []runtime.Result{{Err: err}})
			cb(err)
		})
	}, func(_ int, err error) { cb(err) })
}

func (b *FaultyBackend) Unlink(path string, cb func(err error)) {
	b.lone(runtime.Op{Kind: runtime.OpUnlink, Path: path},
		func() { b.inner.Unlink(path, cb) }, func(_ int, err error) { cb(err) })
}

func (b *FaultyBackend) SyncDir(dir string, cb func(err error)) {
	b.simple(call(OpSync, dir), true, func(cb func(error)) { b.inner.SyncDir(dir, cb) }, cb)
}

// lone is one file operation outside a Chain: direct, the inner backend's
// own call, when no rule breaks it; otherwise the fault is applied as to a
// chain of one, and reported as a lone operation reports it (a short count
// with no error, as the backends do).
func (b *FaultyBackend) lone(op runtime.Op, direct func(), cb func(n int, err error)) {
	c, ok := b.opOf(&op)
	var r *Rule
	if ok {
		r = b.fire(c)
	}
	if r == nil {
		direct()
		return
	}
	b.fault([]runtime.Op{op}, make([]runtime.Result, 1), 0, r, c.Path, func(res []runtime.Result) {
		r := res[0]
		if r.Err == runtime.ErrShort {
			r.Err = nil
		}
		cb(r.N, r.Err)
	})
}

// opOf maps a chain step to the rules' vocabulary, and reports whether
// rules apply to it at all (a step on a descriptor this backend did not
// open, a pipe or a socket, and a no-op never match).
func (b *FaultyBackend) opOf(op *runtime.Op) (Call, bool) {
	switch op.Kind {
	case runtime.OpRead:
		return b.fileCall(OpRead, op.FD, -1)
	case runtime.OpPread:
		return b.fileCall(OpRead, op.FD, op.Off)
	case runtime.OpWrite:
		return b.fileCall(OpWrite, op.FD, -1)
	case runtime.OpPwrite, runtime.OpPwritev:
		return b.fileCall(OpWrite, op.FD, op.Off)
	case runtime.OpFsync:
		return b.fileCall(OpSync, op.FD, -1)
	case runtime.OpFdatasync:
		return b.fileCall(OpDatasync, op.FD, -1)
	case runtime.OpClose:
		return b.fileCall(OpClose, op.FD, -1)
	case runtime.OpRename:
		return Call{Op: OpRename, Path: op.Path, NewPath: op.NewPath, Off: -1}, true
	case runtime.OpUnlink:
		return call(OpRemove, op.Path), true
	}
	return Call{}, false
}

// Chain runs ops as the inner backend would, with the rules applied step by
// step: the steps before the first one a rule breaks run as one real chain,
// then the fault is applied to that step (see FaultyBackend), and the rest
// continues the same way once a held step is released. A chain no rule
// touches goes to the inner backend unchanged, as one chain.
func (b *FaultyBackend) Chain(ops []runtime.Op, cb func(results []runtime.Result)) {
	if len(ops) == 0 || len(ops) > runtime.MaxChainLen {
		b.inner.Chain(ops, cb) // the inner backend refuses it as it would
		return
	}
	b.chainFrom(ops, make([]runtime.Result, len(ops)), 0, false, cb)
}

// chainFrom runs ops[start:] into res and then calls cb with res. When
// exempt, the step at start was released from a hold and runs without
// consulting the rules again.
func (b *FaultyBackend) chainFrom(ops []runtime.Op, res []runtime.Result, start int, exempt bool, cb func([]runtime.Result)) {
	at, rule, path := len(ops), (*Rule)(nil), ""
	for i := start; i < len(ops); i++ {
		if i == start && exempt {
			continue
		}
		c, ok := b.opOf(&ops[i])
		if !ok {
			continue
		}
		if r := b.fire(c); r != nil {
			at, rule, path = i, r, c.Path
			break
		}
	}
	if at == start {
		b.fault(ops, res, at, rule, path, cb)
		return
	}
	b.inner.Chain(ops[start:at], func(sub []runtime.Result) {
		copy(res[start:], sub)
		b.track(ops[start:at], sub)
		if i := runtime.FailedStep(sub); i >= 0 || at == len(ops) {
			if i >= 0 {
				cancelFrom(res, start+i+1)
			}
			cb(res)
			return
		}
		b.fault(ops, res, at, rule, path, cb)
	})
}

// fault applies rule to step i of the chain, whose earlier steps are done.
func (b *FaultyBackend) fault(ops []runtime.Op, res []runtime.Result, i int, rule *Rule, path string, cb func([]runtime.Result)) {
	fail := func(err error) {
		res[i] = runtime.Result{Err: err}
		cancelFrom(res, i+1)
		cb(res)
	}
	switch rule.Fault {
	case FaultHang:
		b.park(rule, path, func(err error) {
			if err != nil {
				fail(err)
				return
			}
			b.chainFrom(ops, res, i, true, cb)
		})
	case FaultShortWrite, FaultTornWrite:
		op := ops[i]
		want := stepBytes(&op)
		n := min(rule.N, want)
		mark := ErrCrashed
		if rule.Fault == FaultShortWrite {
			n, mark = min(rule.N, max(want-1, 0)), runtime.ErrShort
		}
		truncateStep(&op, n)
		b.inner.Chain([]runtime.Op{op}, func(sub []runtime.Result) {
			res[i] = sub[0]
			if res[i].Err == nil || res[i].Err == runtime.ErrShort {
				res[i].Err = mark
			}
			cancelFrom(res, i+1)
			cb(res)
		})
	default:
		err := rule.Err
		b.later(func() { fail(err) })
	}
}

// track follows the descriptors the completed steps renamed or closed.
func (b *FaultyBackend) track(ops []runtime.Op, res []runtime.Result) {
	for i := range ops {
		if res[i].Err != nil {
			return
		}
		switch ops[i].Kind {
		case runtime.OpClose:
			delete(b.paths, ops[i].FD)
		case runtime.OpRename:
			for fd, p := range b.paths {
				if p == ops[i].Path {
					b.paths[fd] = ops[i].NewPath
				}
			}
		}
	}
}

// cancelFrom marks res[from:] as never run.
func cancelFrom(res []runtime.Result, from int) {
	for j := from; j < len(res); j++ {
		res[j] = runtime.Result{Err: syscall.ECANCELED}
	}
}

// stepBytes is the count a write step asks for.
func stepBytes(op *runtime.Op) int {
	if op.Kind == runtime.OpPwritev {
		n := 0
		for _, b := range op.Bufs {
			n += len(b)
		}
		return n
	}
	return len(op.Buf)
}

// truncateStep cuts a write step down to its first n bytes.
func truncateStep(op *runtime.Op, n int) {
	if op.Kind != runtime.OpPwritev {
		op.Buf = op.Buf[:n]
		return
	}
	var bufs [][]byte
	for _, buf := range op.Bufs {
		if n == 0 {
			break
		}
		k := min(n, len(buf))
		bufs = append(bufs, buf[:k])
		n -= k
	}
	op.Bufs = bufs
}
