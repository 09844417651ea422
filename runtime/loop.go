package runtime

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes one loop.
type Config struct {
	// ID names the loop (the shard number) in errors and logs.
	ID int
	// Backend is the I/O backend. KindAuto resolves through Select.
	Backend Kind
	// CPU pins the loop's thread to one CPU (sched_setaffinity on Linux,
	// ignored elsewhere); -1 leaves it unpinned.
	CPU int
	// MailboxSize bounds the messages queued for the loop and not yet run
	// (default 4096). Post returns ErrMailboxFull beyond it.
	MailboxSize int
	// RingEntries is the io_uring submission queue size (default 1024, at
	// least 2*MaxChainLen).
	RingEntries uint32
	// RingFlags are the io_uring setup flags to ask for (default
	// uring.DefaultSetupFlags); the kernel may refuse some, see ProbeUring.
	RingFlags uint32
	// PoolWorkers is the pool backend's number of file workers (default 4).
	PoolWorkers int
	// StopGrace bounds how long Stop waits for operations that cannot be
	// cancelled (a running fsync) before it abandons them (default 5s).
	StopGrace time.Duration
}

const (
	defaultMailboxSize = 4096
	defaultRingEntries = 1024
	defaultPoolWorkers = 4
	defaultStopGrace   = 5 * time.Second

	// reapBudget bounds the completions run per iteration, so that a flood
	// of I/O never starves the mailbox and the timers.
	reapBudget = 4096
)

func (c Config) withDefaults() Config {
	if c.MailboxSize <= 0 {
		c.MailboxSize = defaultMailboxSize
	}
	if c.RingEntries == 0 {
		c.RingEntries = defaultRingEntries
	}
	if c.RingEntries < 2*MaxChainLen {
		c.RingEntries = 2 * MaxChainLen
	}
	if c.PoolWorkers <= 0 {
		c.PoolWorkers = defaultPoolWorkers
	}
	if c.StopGrace <= 0 {
		c.StopGrace = defaultStopGrace
	}
	return c
}

// Loop states. A loop moves only forward: created → running → stopping →
// stopped, or created → stopped (Start failed or Stop before Start).
const (
	stateCreated int32 = iota
	stateRunning
	stateStopping
	stateStopped
)

// Loop is one shard's event loop: a goroutine locked to its OS thread that
// owns one backend and runs everything of the shard: completion callbacks,
// mailbox messages and timers, one at a time, never blocking on I/O.
//
// Only Start, Stop, Post, PostWait, Call, ID, Kind and Done may be called
// from other goroutines; everything else belongs to the loop's thread.
type Loop struct {
	cfg  Config
	kind Kind // resolved backend kind, set by Start

	state   atomic.Int32
	stateMu sync.Mutex // serialises Start and Stop transitions

	mb *mailbox
	// sleeping is set by the loop just before its final look at the mailbox
	// ahead of a blocking wait, and cleared when the wait returns. A producer
	// that finds it set (and clears it) owes the loop a wake-up; one that
	// finds it clear knows the loop will look at the mailbox again.
	sleeping atomic.Bool

	// drv is set by the loop goroutine before Start returns and read by
	// wakers; drvReady publishes it.
	drv      driver
	drvReady atomic.Bool

	tid int // OS thread id of the loop (Linux), 0 elsewhere

	// Loop-thread state.
	now        time.Time
	timers     timerHeap
	timerSeq   uint64
	beforeWait []func()

	done chan struct{}
	err  error // why the loop ended abnormally; read after done
}

// NewLoop returns a loop that does nothing until Start.
func NewLoop(cfg Config) *Loop {
	cfg = cfg.withDefaults()
	return &Loop{
		cfg:  cfg,
		mb:   newMailbox(cfg.MailboxSize),
		done: make(chan struct{}),
	}
}

// ID is the loop's Config.ID.
func (l *Loop) ID() int { return l.cfg.ID }

// Kind is the backend the loop runs (known once Start returned nil).
func (l *Loop) Kind() Kind { return l.kind }

// Backend is the loop's I/O backend. Loop thread only.
func (l *Loop) Backend() Backend { return l.drv }

// Now is the time cached at the start of the current iteration. Loop thread
// only.
func (l *Loop) Now() time.Time { return l.now }

// Done is closed once the loop's goroutine has exited.
func (l *Loop) Done() <-chan struct{} { return l.done }

// Err reports why the loop ended on its own (a backend failure), or nil.
// Valid once Done is closed.
func (l *Loop) Err() error {
	<-l.done
	return l.err
}

// Start starts the loop's goroutine, which locks its OS thread, pins it when
// asked, and creates the backend on that thread. It returns the backend's
// setup error, if any; the loop is then stopped.
func (l *Loop) Start() error {
	l.stateMu.Lock()
	defer l.stateMu.Unlock()
	if l.state.Load() != stateCreated {
		return fmt.Errorf("runtime: loop %d: Start on a loop that was started or stopped", l.cfg.ID)
	}
	kind := l.cfg.Backend
	if kind == KindAuto {
		k, _, err := Select(KindAuto)
		if err != nil {
			l.finish(err)
			return err
		}
		kind = k
	}
	l.kind = kind
	setup := make(chan error, 1)
	go l.run(setup)
	if err := <-setup; err != nil {
		<-l.done
		return err
	}
	// The loop may already have failed and finished on its own: then it
	// stays stopped, and Err says why.
	l.state.CompareAndSwap(stateCreated, stateRunning)
	return nil
}

// run is the loop's goroutine. It never unlocks its thread, so the thread
// (with its ring and its CPU mask) dies with the goroutine.
func (l *Loop) run(setup chan<- error) {
	goruntime.LockOSThread()
	if err := l.setup(); err != nil {
		l.finish(err)
		setup <- err
		return
	}
	setup <- nil
	err := l.serve()
	l.shutdown()
	if cerr := l.drv.close(); err == nil {
		err = cerr
	}
	unregisterThread(l)
	l.finish(err)
}

// setup runs on the locked thread: identity, affinity, backend.
func (l *Loop) setup() error {
	l.tid = threadID()
	if l.cfg.CPU >= 0 {
		if err := pinThread(l.cfg.CPU); err != nil {
			return fmt.Errorf("runtime: loop %d: pin to CPU %d: %w", l.cfg.ID, l.cfg.CPU, err)
		}
	}
	var drv driver
	var err error
	switch l.kind {
	case KindUring:
		drv, err = newUringBackend(l)
	case KindPool:
		drv, err = newPoolBackend(l)
	default:
		err = fmt.Errorf("runtime: unknown backend kind %v", l.kind)
	}
	if err != nil {
		return fmt.Errorf("runtime: loop %d: %s backend: %w", l.cfg.ID, l.kind, err)
	}
	l.drv = drv
	l.drvReady.Store(true)
	registerThread(l)
	return nil
}

// finish marks the loop stopped and releases everyone waiting on it.
func (l *Loop) finish(err error) {
	l.err = err
	l.mb.close()
	l.state.Store(stateStopped)
	close(l.done)
}

// serve runs iterations until Stop is requested or the backend fails.
//
// One iteration: reap completions and run their callbacks → drain the
// mailbox → run due timers → run the before-wait hooks → submit and wait
// for the next completion, mailbox wake-up or timer deadline.
func (l *Loop) serve() error {
	for {
		l.now = time.Now()
		l.drv.reap(reapBudget)
		l.drainMailbox()
		l.runTimers(l.now)
		l.runBeforeWait()
		if l.state.Load() == stateStopping {
			return nil
		}
		if err := l.sleep(); err != nil {
			return err
		}
	}
}

// BeforeWait registers f to run once per iteration, after the callbacks,
// messages and timers of that iteration and before the loop submits and
// waits. It is where work that everything in an iteration contributed to
// goes out as one: a WAL group commit, one message per target shard. Loop
// thread only; hooks run in the order they were added.
func (l *Loop) BeforeWait(f func()) { l.beforeWait = append(l.beforeWait, f) }

func (l *Loop) runBeforeWait() {
	for _, f := range l.beforeWait {
		f()
	}
}

// sleep submits queued work and waits for something to do.
//
// No lost wake-ups: sleeping is set before the last look at the mailbox. A
// producer either queued its message before that look (the loop sees it and
// does not block) or after it, in which case it finds sleeping set and wakes
// the loop.
func (l *Loop) sleep() error {
	timeout := time.Duration(-1)
	if when, ok := l.nextTimer(); ok {
		timeout = max(time.Until(when), 0)
	}
	if timeout != 0 {
		l.sleeping.Store(true)
		if l.mb.pending() || l.state.Load() == stateStopping {
			timeout = 0
		}
	}
	err := l.drv.wait(timeout)
	l.sleeping.Store(false)
	return err
}

// drainMailbox runs every message queued when it began.
func (l *Loop) drainMailbox() int {
	batch := l.mb.take()
	for _, f := range batch {
		f()
	}
	n := len(batch)
	if batch != nil {
		l.mb.recycle(batch)
	}
	return n
}

// shutdown runs on the loop's thread after serve: it runs the messages that
// were accepted, cancels everything in flight and waits (at most StopGrace)
// for the cancelled operations to report, running their callbacks. Timers
// are dropped.
func (l *Loop) shutdown() {
	l.mb.close()
	l.now = time.Now()
	l.drainMailbox()
	l.drv.cancelAll()
	deadline := time.Now().Add(l.cfg.StopGrace)
	for {
		l.now = time.Now()
		l.drv.reap(reapBudget)
		if l.drv.inflight() == 0 || !l.now.Before(deadline) {
			return
		}
		if err := l.drv.wait(min(deadline.Sub(l.now), 50*time.Millisecond)); err != nil {
			return
		}
	}
}

// Stop stops the loop: Post refuses new messages, accepted messages still
// run, operations in flight are cancelled (their callbacks run with
// ECANCELED, or with their result if they finished first), timers are
// dropped, the backend is closed, and Stop returns once the loop's goroutine
// has exited. Stop must not be called on the loop's own thread (it would
// wait for itself); there, use RequestStop. Stop is idempotent.
func (l *Loop) Stop() {
	if onThread(l) {
		panic("runtime: Stop called on the loop's own thread; use RequestStop")
	}
	l.RequestStop()
	<-l.done
}

// RequestStop asks the loop to stop and returns at once; Done is closed when
// it has. Any goroutine, the loop's own included, may call it.
func (l *Loop) RequestStop() {
	l.stateMu.Lock()
	defer l.stateMu.Unlock()
	switch l.state.Load() {
	case stateCreated:
		l.finish(nil)
	case stateRunning:
		l.state.Store(stateStopping)
		l.mb.close()
		l.drv.wake()
	}
}

// Post queues f to run on the loop's thread and wakes the loop if it sleeps.
// Any goroutine may call it, another loop included. It never blocks: when
// the mailbox is full it returns ErrMailboxFull, and after Stop ErrStopped.
// Messages from one sender run in the order they were posted.
func (l *Loop) Post(f func()) error {
	if _, err := l.mb.put(f); err != nil {
		return err
	}
	l.notify()
	return nil
}

// PostWait is Post that waits for room while the mailbox is full, until ctx
// is done. It must not be called on the loop's own thread, and a loop that
// calls it on another loop blocks its own thread: loops use Post.
func (l *Loop) PostWait(ctx context.Context, f func()) error {
	for {
		space, err := l.mb.put(f)
		if err == nil {
			l.notify()
			return nil
		}
		if !errors.Is(err, ErrMailboxFull) {
			return err
		}
		select {
		case <-space:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Call runs f on the loop's thread and returns once it has run (or ctx is
// done first, in which case f may still run later). Not for use on the
// loop's own thread.
func (l *Loop) Call(ctx context.Context, f func()) error {
	ran := make(chan struct{})
	if err := l.PostWait(ctx, func() { f(); close(ran) }); err != nil {
		return err
	}
	select {
	case <-ran:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-l.done:
		select {
		case <-ran:
			return nil
		default:
			return ErrStopped
		}
	}
}

// notify wakes the loop when it is (about to be) asleep. Only the producer
// that clears sleeping sends the wake-up, so a burst of posts costs one.
func (l *Loop) notify() {
	if !l.sleeping.Load() || !l.sleeping.CompareAndSwap(true, false) {
		return
	}
	if !l.drvReady.Load() {
		return // not started: the loop will look at the mailbox first thing
	}
	if src := currentLoop(); src != nil && src != l && src.wakeVia(l) {
		return
	}
	l.drv.wake()
}

// wakeVia lets the loop running on this thread deliver a wake-up to dst
// through its own backend (MSG_RING on io_uring). It reports false when it
// cannot, and the caller wakes dst directly.
func (l *Loop) wakeVia(dst *Loop) bool {
	if l.state.Load() != stateRunning || dst.kind != KindUring {
		return false
	}
	w, ok := l.drv.(ringWaker)
	return ok && w.wakeRing(dst)
}

// ringWaker is implemented by a backend that can wake another loop's ring
// from its own.
type ringWaker interface {
	wakeRing(dst *Loop) bool
}
