package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// poolBackend runs a loop's I/O without io_uring, on any OS: network
// operations block one goroutine each in Go's netpoller, file operations run
// on a bounded pool of worker goroutines, except standalone fsyncs and
// fdatasyncs, which run in their file's own lane (syncLane), and every
// completion comes back to the loop through a queue plus a wake-up channel,
// to run on the loop's thread.
//
// Invariants:
//   - table, ops, deferred and closing belong to the loop's thread. Goroutines
//     and workers only see the objects (net.Conn, *os.File) resolved for them
//     when the operation started, and hand results back through deliver.
//   - Every operation is in ops from the call that starts it until its
//     callback runs, so cancelAll reaches it and inflight counts it.
//   - wakeCh holds a token whenever a completion was delivered after the
//     loop last emptied it, so wait never sleeps past a completion.
type poolBackend struct {
	loop   *Loop
	wakeCh chan struct{}
	timer  *time.Timer

	mu   sync.Mutex   // guards done
	done []poolResult // delivered completions, in delivery order
	run  []poolResult // loop-thread scratch for reap

	table    poolTable
	ops      map[uint64]*poolOp
	nextID   uint64
	deferred []func() // completions decided at call time (bad FD, closing)
	closing  bool

	work *workQueue
}

// poolOp is one operation in flight on the pool backend.
type poolOp struct {
	id        uint64
	cancelled atomic.Bool
	cancel    func() // unblocks the goroutine doing the operation; may be nil
}

type poolResult struct {
	op *poolOp
	fn func()
}

// pollDeadline is a deadline in the past: setting it makes a pending network
// or pollable-file operation return os.ErrDeadlineExceeded at once.
var pollDeadline = time.Unix(1, 0)

func newPoolBackend(l *Loop) (driver, error) {
	p := &poolBackend{
		loop:   l,
		wakeCh: make(chan struct{}, 1),
		timer:  time.NewTimer(time.Hour),
		ops:    make(map[uint64]*poolOp),
		work:   newWorkQueue(),
	}
	p.timer.Stop()
	for range l.cfg.PoolWorkers {
		go p.worker()
	}
	return p, nil
}

func (p *poolBackend) Name() string { return "pool" }

// --- loop hooks ---

func (p *poolBackend) reap(budget int) int {
	n := 0
	for len(p.deferred) > 0 && n < budget {
		batch := p.deferred
		p.deferred = nil
		for _, fn := range batch {
			fn()
		}
		n += len(batch)
	}
	p.mu.Lock()
	p.run, p.done = p.done, p.run[:0]
	p.mu.Unlock()
	for i, r := range p.run {
		delete(p.ops, r.op.id)
		r.fn()
		p.run[i] = poolResult{}
	}
	n += len(p.run)
	p.run = p.run[:0]
	return n
}

func (p *poolBackend) wait(timeout time.Duration) error {
	if timeout == 0 || len(p.deferred) > 0 {
		return nil
	}
	if timeout < 0 {
		<-p.wakeCh
		return nil
	}
	p.timer.Reset(timeout)
	select {
	case <-p.wakeCh:
	case <-p.timer.C:
	}
	p.timer.Stop()
	return nil
}

func (p *poolBackend) wake() {
	select {
	case p.wakeCh <- struct{}{}:
	default:
	}
}

func (p *poolBackend) cancelAll() {
	p.closing = true
	for _, op := range p.ops {
		op.cancelled.Store(true)
		if op.cancel != nil {
			op.cancel()
		}
	}
}

func (p *poolBackend) inflight() int { return len(p.ops) + len(p.deferred) }

func (p *poolBackend) close() error {
	p.work.close()
	var first error
	for fd := range p.table.slots {
		if e := p.table.slots[fd]; e != nil {
			if err := e.close(); err != nil && first == nil {
				first = err
			}
		}
	}
	p.table = poolTable{}
	return first
}

// --- operation plumbing ---

// begin registers an operation; cancel (may be nil) unblocks it.
func (p *poolBackend) begin(cancel func()) *poolOp {
	p.nextID++
	op := &poolOp{id: p.nextID, cancel: cancel}
	p.ops[op.id] = op
	return op
}

// deliver hands a completion to the loop. Any goroutine.
func (p *poolBackend) deliver(op *poolOp, fn func()) {
	p.mu.Lock()
	p.done = append(p.done, poolResult{op: op, fn: fn})
	p.mu.Unlock()
	p.wake()
}

// later runs fn on the loop's thread at the next reap: for operations that
// are decided at call time, so that no callback runs inside its call.
func (p *poolBackend) later(fn func()) { p.deferred = append(p.deferred, fn) }

// spawn runs do on a new goroutine (network operations) and delivers the
// completion it returns.
func (p *poolBackend) spawn(cancel func(), do func(cancelled bool) func()) {
	op := p.begin(cancel)
	go func() { p.deliver(op, do(op.cancelled.Load())) }()
}

// queue runs do on a file worker and delivers the completion it returns.
// do learns whether the operation was cancelled before it started.
func (p *poolBackend) queue(cancel func(), do func(op *poolOp) func()) {
	op := p.begin(cancel)
	p.work.push(workItem{op: op, do: do})
}

func (p *poolBackend) worker() {
	for {
		it, ok := p.work.pop()
		if !ok {
			return
		}
		p.deliver(it.op, it.do(it.op))
	}
}

// fileOf resolves fd to an open file, or nil.
func (p *poolBackend) fileOf(fd FD) *os.File {
	if e := p.table.get(fd); e != nil {
		return e.f
	}
	return nil
}

// cancelFiles returns a cancel function that unblocks reads and writes on
// pollable files (pipes, FIFOs). Regular files cannot be interrupted; their
// operations run to completion.
func cancelFiles(fs ...*os.File) func() {
	return func() {
		for _, f := range fs {
			if f != nil {
				_ = f.SetDeadline(pollDeadline)
			}
		}
	}
}

// --- sockets ---

func (p *poolBackend) Listen(network, addr string) (FD, net.Addr, error) {
	lc := net.ListenConfig{Control: reusePortControl}
	ln, err := lc.Listen(context.Background(), network, addr)
	if err != nil {
		return -1, nil, fmt.Errorf("runtime: listen %s %s: %w", network, addr, errnoOf(err))
	}
	fd := p.table.add(&poolEntry{ln: ln})
	return fd, ln.Addr(), nil
}

type deadliner interface{ SetDeadline(time.Time) error }

func (p *poolBackend) Accept(l FD, cb func(c FD, err error)) {
	e := p.table.get(l)
	if p.closing || e == nil || e.ln == nil {
		err := p.refusal(e == nil || e.ln == nil)
		p.later(func() { cb(-1, err) })
		return
	}
	ln := e.ln
	cancel := func() {
		if d, ok := ln.(deadliner); ok {
			_ = d.SetDeadline(pollDeadline)
		}
	}
	p.spawn(cancel, func(bool) func() {
		conn, err := ln.Accept()
		return func() {
			if err != nil {
				cb(-1, errnoOf(err))
				return
			}
			cb(p.table.add(&poolEntry{conn: conn}), nil)
		}
	})
}

func (p *poolBackend) Recv(c FD, buf []byte, cb func(n int, err error)) {
	e := p.table.get(c)
	if p.closing || e == nil || e.conn == nil {
		err := p.refusal(e == nil || e.conn == nil)
		p.later(func() { cb(0, err) })
		return
	}
	conn := e.conn
	p.spawn(func() { _ = conn.SetReadDeadline(pollDeadline) }, func(bool) func() {
		n, err := conn.Read(buf)
		if n > 0 || errors.Is(err, io.EOF) {
			err = nil
		}
		err = errnoOf(err)
		return func() { cb(n, err) }
	})
}

// RecvMulti loops one-shot reads into a buffer of the connection's own, each
// one a goroutine blocked in the netpoller like Recv.
func (p *poolBackend) RecvMulti(c FD, cb func(data []byte, err error, done bool)) {
	e := p.table.get(c)
	if p.closing || e == nil || e.conn == nil {
		err := p.refusal(e == nil || e.conn == nil)
		p.later(func() { cb(nil, err, true) })
		return
	}
	open := func() bool { return !p.closing && p.table.get(c) == e }
	recvByReads(p, c, make([]byte, recvMultiBufSize), open, cb)
}

func (p *poolBackend) Send(c FD, buf []byte, cb func(n int, err error)) {
	e := p.table.get(c)
	if p.closing || e == nil || e.conn == nil {
		err := p.refusal(e == nil || e.conn == nil)
		p.later(func() { cb(0, err) })
		return
	}
	conn := e.conn
	p.spawn(func() { _ = conn.SetWriteDeadline(pollDeadline) }, func(bool) func() {
		n, err := conn.Write(buf)
		err = errnoOf(err)
		return func() { cb(n, err) }
	})
}

func (p *poolBackend) Close(fd FD, cb func(err error)) {
	e := p.table.remove(fd)
	if e == nil {
		if cb != nil {
			p.later(func() { cb(syscall.EBADF) })
		}
		return
	}
	do := func(*poolOp) func() {
		err := errnoOf(e.close())
		return func() {
			if cb != nil {
				cb(err)
			}
		}
	}
	if e.f != nil {
		p.queue(nil, do)
		return
	}
	p.spawn(nil, func(bool) func() { return do(nil) })
}

func (p *poolBackend) LocalAddr(fd FD) net.Addr {
	switch e := p.table.get(fd); {
	case e == nil:
		return nil
	case e.conn != nil:
		return e.conn.LocalAddr()
	case e.ln != nil:
		return e.ln.Addr()
	}
	return nil
}

func (p *poolBackend) RemoteAddr(fd FD) net.Addr {
	if e := p.table.get(fd); e != nil && e.conn != nil {
		return e.conn.RemoteAddr()
	}
	return nil
}

// refusal is the error for an operation refused at call time.
func (p *poolBackend) refusal(badFD bool) error {
	if badFD {
		return syscall.EBADF
	}
	return syscall.ECANCELED
}

// --- files ---

func (p *poolBackend) Open(path string, flag int, perm uint32, cb func(fd FD, err error)) {
	if p.closing {
		p.later(func() { cb(-1, syscall.ECANCELED) })
		return
	}
	p.queue(nil, func(op *poolOp) func() {
		if op.cancelled.Load() {
			return func() { cb(-1, syscall.ECANCELED) }
		}
		f, err := os.OpenFile(path, flag, os.FileMode(perm))
		if err != nil {
			err = errnoOf(err)
			return func() { cb(-1, err) }
		}
		return func() { cb(p.table.add(&poolEntry{f: f}), nil) }
	})
}

// fileOp runs one single-step file operation on a worker.
func (p *poolBackend) fileOp(op Op, cb func(Result)) {
	if p.closing {
		p.later(func() { cb(Result{Err: syscall.ECANCELED}) })
		return
	}
	f, err := p.resolve(&op)
	if err != nil {
		p.later(func() { cb(Result{Err: err}) })
		return
	}
	do := func(po *poolOp) func() {
		var r Result
		if po.cancelled.Load() {
			r.Err = syscall.ECANCELED
		} else {
			r = runStep(&op, f)
			if r.Err == ErrShort { // a lone step reports its count as is
				r.Err = nil
			}
		}
		return func() { cb(r) }
	}
	if op.Kind == OpFsync || op.Kind == OpFdatasync {
		p.queueSync(p.table.get(op.FD), cancelFiles(f), do)
		return
	}
	p.queue(cancelFiles(f), do)
}

// resolve finds the file a step operates on (nil for path-only steps).
func (p *poolBackend) resolve(op *Op) (*os.File, error) {
	switch op.Kind {
	case OpNop, OpRename, OpUnlink:
		return nil, nil
	}
	f := p.fileOf(op.FD)
	if f == nil {
		return nil, syscall.EBADF
	}
	return f, nil
}

func (p *poolBackend) Pread(fd FD, buf []byte, off int64, cb func(n int, err error)) {
	p.fileOp(Op{Kind: OpPread, FD: fd, Buf: buf, Off: off}, func(r Result) { cb(r.N, r.Err) })
}

func (p *poolBackend) Pwrite(fd FD, buf []byte, off int64, cb func(n int, err error)) {
	p.fileOp(Op{Kind: OpPwrite, FD: fd, Buf: buf, Off: off}, func(r Result) { cb(r.N, r.Err) })
}

func (p *poolBackend) Pwritev(fd FD, bufs [][]byte, off int64, cb func(n int, err error)) {
	p.fileOp(Op{Kind: OpPwritev, FD: fd, Bufs: bufs, Off: off}, func(r Result) { cb(r.N, r.Err) })
}

func (p *poolBackend) Fsync(fd FD, cb func(err error)) {
	p.fileOp(Op{Kind: OpFsync, FD: fd}, func(r Result) { cb(r.Err) })
}

func (p *poolBackend) Fdatasync(fd FD, cb func(err error)) {
	p.fileOp(Op{Kind: OpFdatasync, FD: fd}, func(r Result) { cb(r.Err) })
}

func (p *poolBackend) Rename(oldpath, newpath string, cb func(err error)) {
	p.fileOp(Op{Kind: OpRename, Path: oldpath, NewPath: newpath}, func(r Result) { cb(r.Err) })
}

func (p *poolBackend) Unlink(path string, cb func(err error)) {
	p.fileOp(Op{Kind: OpUnlink, Path: path}, func(r Result) { cb(r.Err) })
}

func (p *poolBackend) SyncDir(dir string, cb func(err error)) {
	if p.closing {
		p.later(func() { cb(syscall.ECANCELED) })
		return
	}
	p.queue(nil, func(op *poolOp) func() {
		err := error(syscall.ECANCELED)
		if !op.cancelled.Load() {
			err = errnoOf(syncDir(dir))
		}
		return func() { cb(err) }
	})
}

// Chain runs the steps one after another on one worker. A step closes its
// FD from the table only once the close ran, so a chain cancelled before its
// close leaves the FD open, as on io_uring.
func (p *poolBackend) Chain(ops []Op, cb func(results []Result)) {
	if res := validChain(ops); res != nil {
		p.later(func() { cb(res) })
		return
	}
	if p.closing {
		p.later(func() { cb(cancelledResults(len(ops))) })
		return
	}
	ops = append([]Op(nil), ops...)
	files := make([]*os.File, len(ops))
	results := make([]Result, len(ops))
	for i := range ops {
		f, err := p.resolve(&ops[i])
		if err != nil {
			// The step fails when its turn comes, as it would on io_uring.
			results[i].Err = err
		}
		files[i] = f
	}
	p.queue(cancelFiles(files...), func(po *poolOp) func() {
		broken := false
		for i := range ops {
			switch {
			case broken || po.cancelled.Load():
				results[i] = Result{Err: syscall.ECANCELED}
			case results[i].Err != nil:
				broken = true
			default:
				results[i] = runStep(&ops[i], files[i])
				broken = results[i].Err != nil
			}
		}
		return func() {
			for i := range ops {
				if ops[i].Kind == OpClose && results[i].Err == nil {
					p.table.remove(ops[i].FD)
				}
			}
			cb(results)
		}
	})
}

// runStep performs one file step on a worker, the way the kernel would: a
// transfer step that moves fewer bytes than asked reports ErrShort.
func runStep(op *Op, f *os.File) Result {
	var n int
	var err error
	switch op.Kind {
	case OpNop:
	case OpRead:
		n, err = f.Read(op.Buf)
	case OpWrite:
		n, err = f.Write(op.Buf)
	case OpPread:
		n, err = f.ReadAt(op.Buf, op.Off)
	case OpPwrite:
		n, err = f.WriteAt(op.Buf, op.Off)
	case OpPwritev:
		n, err = pwritev(f, op.Bufs, op.Off)
	case OpFsync:
		err = poolSync(f, false)
	case OpFdatasync:
		err = poolSync(f, true)
	case OpClose:
		err = f.Close()
	case OpRename:
		err = os.Rename(op.Path, op.NewPath)
	case OpUnlink:
		err = unlink(op.Path)
	default:
		err = syscall.EINVAL
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if err == nil && op.Kind.isTransfer() && n < op.wantBytes() {
		err = ErrShort
	}
	return Result{N: n, Err: errnoOf(err)}
}

// errnoOf reduces an error from the os and net packages to the errno it
// carries, so that both backends report the same values. Deadlines are only
// ever set to cancel, and a closed handle means the operation was cut off by
// Close, so both become ECANCELED.
func errnoOf(err error) error {
	if err == nil || err == ErrShort {
		return err
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return en
	}
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrClosed) {
		return syscall.ECANCELED
	}
	return err
}

// --- the table of handles ---

// poolEntry is one open handle: exactly one of ln, conn, f is set. lane
// runs the file's standalone syncs; it is made by the first one.
type poolEntry struct {
	ln   net.Listener
	conn net.Conn
	f    *os.File
	lane *syncLane
}

func (e *poolEntry) close() error {
	switch {
	case e.ln != nil:
		return e.ln.Close()
	case e.conn != nil:
		return e.conn.Close()
	case e.f != nil:
		return e.f.Close()
	}
	return nil
}

// poolTable maps FDs to handles. Like the kernel's table it reuses freed
// numbers; loop thread only.
type poolTable struct {
	slots []*poolEntry
	free  []FD
}

func (t *poolTable) add(e *poolEntry) FD {
	if n := len(t.free); n > 0 {
		fd := t.free[n-1]
		t.free = t.free[:n-1]
		t.slots[fd] = e
		return fd
	}
	t.slots = append(t.slots, e)
	return FD(len(t.slots) - 1)
}

func (t *poolTable) get(fd FD) *poolEntry {
	if fd < 0 || int(fd) >= len(t.slots) {
		return nil
	}
	return t.slots[fd]
}

func (t *poolTable) remove(fd FD) *poolEntry {
	e := t.get(fd)
	if e != nil {
		t.slots[fd] = nil
		t.free = append(t.free, fd)
	}
	return e
}

// --- the file workers' queue ---

type workItem struct {
	op *poolOp
	do func(op *poolOp) func()
}

// workQueue is an unbounded FIFO feeding the file workers: the loop never
// blocks handing work over, and the number of workers bounds the file
// operations running at once.
type workQueue struct {
	mu     sync.Mutex
	cond   sync.Cond
	items  []workItem
	head   int
	closed bool
}

func newWorkQueue() *workQueue {
	q := &workQueue{}
	q.cond.L = &q.mu
	return q
}

func (q *workQueue) push(it workItem) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock()
	q.cond.Signal()
}

// pop blocks for the next item; false once the queue is closed and empty.
func (q *workQueue) pop() (workItem, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head == len(q.items) {
		if q.closed {
			return workItem{}, false
		}
		q.cond.Wait()
	}
	it := q.items[q.head]
	q.items[q.head] = workItem{}
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return it, true
}

// len is the number of items no worker has taken yet.
func (q *workQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}

func (q *workQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}
