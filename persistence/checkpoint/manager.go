package checkpoint

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/runtime"
)

// Errors.
var (
	// ErrPoisoned wraps the error of the fsync that poisoned the shard.
	ErrPoisoned = errors.New("checkpoint: poisoned by a failed fsync")
	// ErrShutdownTimeout: shutdown gave up waiting for the checkpoint (an
	// outstanding fsync) after Options.ShutdownWait. The published redo
	// point did not move; the WAL above it holds everything.
	ErrShutdownTimeout = errors.New("checkpoint: shutdown gave up waiting for the checkpoint")
	// ErrShuttingDown answers a request queued behind the checkpoint that
	// shutdown finished: no further checkpoint starts.
	ErrShuttingDown = errors.New("checkpoint: shutting down")
	// ErrNotFlushed: a pass over the dirty pages left some unwritten (a
	// failed FPI append, WAL barrier or page write); the checkpoint
	// flushes again with the same redo point.
	ErrNotFlushed = errors.New("checkpoint: pages not flushed")
)

// FlushResult is the outcome of one pass over the dirty pages.
type FlushResult struct {
	Flushed int // pages written
	Failed  int // pages not written (FPI append, barrier or write failed)
}

// Stats are the checkpoint's figures for INFO persistence.
type Stats struct {
	State               State
	InProgress          bool   // checkpoint_in_progress
	LastRedoLSN         uint64 // last_checkpoint_redo_lsn (published)
	Completed           int64  // checkpoints_completed
	LastDurationMs      int64  // checkpoint_last_duration_ms
	PagesFlushed        int64  // checkpoint_pages_flushed
	PagesFailed         int64  // checkpoint_pages_failed
	DataFsyncPending    int    // data_fsync_pending: outstanding heap fsyncs
	VanishedRetired     int64  // heap_vanished_retired
	VanishedUnexpected  int64  // heap_vanished_unexpected
	Poisoned            bool   // poisoned
	PoisonReason        string // its reason
	Barriers            int64  // WAL barriers taken by flush batches
	Fsyncs              int64  // heap-file fsyncs issued
	LastFlush           FlushResult
	LastError           string    // the last failure that was retried
	LastFinalized       time.Time // LASTSAVE
	DeferredFreeRetries int64     // deferred frees postponed (page not cached)
	PageLoads           int64     // rounds of cold page reads Writing waited for (load.go)
	PagesLoaded         int64     // pages those rounds asked for
	Spills              int64     // spills: dirty pages written while Writing, the cache being full of them (spill.go)
	PagesSpilled        int64     // pages the spills wrote (PagesFlushed counts them too)
	KeysWritten         int64     // key versions written into pages (and deletions freed)
	PartsWritten        int64     // parts of large values written with their versions (Version.Parts)
	// PhaseSeconds is the time spent in each phase (Writing, Flushing,
	// Syncing, Finalizing), indexed by State, summed over the checkpoints
	// and counted when the phase ends; Idle's entry stays 0.
	PhaseSeconds [Poisoned]float64
}

// Manager runs one shard's checkpoints. Loop thread only.
type Manager struct {
	o        Options
	be       runtime.Backend
	heapDir  string
	cache    *heap.Cache
	deferred *heap.DeferredFrees
	sync     *heap.SyncTracker
	partIDs  []heap.RecordID // writeKey's scratch

	state State
	// wait is the operation of the current step in flight (waitNone:
	// none); gen counts the checkpoints begun, so that a completion can
	// assert it belongs to the running one.
	wait      wait
	gen       uint64
	redo      uint64
	published uint64
	began     time.Time
	lastBegin time.Time
	// phaseSince is when the current state was entered (PhaseSeconds).
	phaseSince time.Time
	retryAt    time.Time
	retryGap   time.Duration

	// Writing: the chunk of keys taken from the Source, the next to
	// write, and whether the take is done.
	keys   [][]byte
	keyIdx int
	taken  bool

	// spill: the pass over the oldest dirty pages that Writing runs when
	// they fill the page cache (spill.go); nil when none runs. spillIdle:
	// the last spill found nothing to write, so none starts again until a
	// key was written.
	spill     *flushPass
	spillIdle bool

	// Flushing: the pass over the dirty pages (nil: none begun).
	pass    *flushPass
	fds     map[uint32]runtime.FD
	onDisk  map[uint32]bool
	created bool // files were created: the heap directory needs an fsync
	fileGen map[uint32]uint64

	// Syncing.
	fsyncOut int
	// verify: files this checkpoint fsynced whose path is yet to be
	// opened again before finalize (verify.go).
	verify map[uint32]bool
	// rewrite: a heap file that the manifest lists vanished during this
	// checkpoint; the keys it held (re-dirtied by the shard through
	// OnVanished) are written again, with the same redo, before finalize.
	rewrite bool

	// Finalizing.
	fin     finalizeStep
	ckptLSN uint64

	waiters     []func(error)
	nextWaiters []func(error)
	requested   bool
	shutdown    *shutdownWait

	poisonErr error
	stats     Stats
}

type shutdownWait struct {
	done  func(error)
	timer *runtime.Timer
}

// New returns an idle Manager. Call it on the loop's thread.
func New(o Options) *Manager {
	if o.Backend == nil {
		o.Backend = o.Loop.Backend()
	}
	if o.Deferred == nil {
		o.Deferred = &heap.DeferredFrees{}
	}
	if o.Sync == nil {
		o.Sync = heap.NewSyncTracker()
	}
	if o.Interval <= 0 {
		o.Interval = 300 * time.Second
	}
	if o.BatchPages <= 0 {
		o.BatchPages = 64
	}
	o.BatchPages = min(o.BatchPages, runtime.MaxChainLen-2)
	if o.WriteChunk <= 0 {
		o.WriteChunk = 1024
	}
	if o.StepBudget <= 0 {
		o.StepBudget = 200 * time.Microsecond
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = 10 * time.Millisecond
	}
	if o.ShutdownWait <= 0 {
		o.ShutdownWait = 5 * time.Second
	}
	m := &Manager{
		o:         o,
		be:        o.Backend,
		heapDir:   filepath.Join(o.ShardDir, heap.DirName),
		cache:     o.Heap.Cache(),
		deferred:  o.Deferred,
		sync:      o.Sync,
		published: o.PublishedRedo,
		lastBegin: time.Now(),
		fds:       make(map[uint32]runtime.FD),
		onDisk:    make(map[uint32]bool),
		fileGen:   make(map[uint32]uint64),
		verify:    make(map[uint32]bool),
	}
	for _, id := range o.Files {
		m.onDisk[id] = true
	}
	m.stats.LastRedoLSN = m.published
	return m
}

// State is the current state.
func (m *Manager) State() State { return m.state }

// SetInterval changes --checkpoint-timeout (CONFIG SET); d <= 0 is ignored.
func (m *Manager) SetInterval(d time.Duration) {
	if d > 0 {
		m.o.Interval = d
	}
}

// PublishedRedo is the redo point the control file holds: WAL records
// below it are no longer needed.
func (m *Manager) PublishedRedo() uint64 { return m.published }

// Deferred is the manager's deferred-free list (boot files superseded
// versions in it under the published redo point).
func (m *Manager) Deferred() *heap.DeferredFrees { return m.deferred }

// Poisoned returns the error that poisoned the shard, or nil.
func (m *Manager) Poisoned() error { return m.poisonErr }

// Stats returns the figures.
func (m *Manager) Stats() Stats {
	s := m.stats
	s.State = m.state
	s.InProgress = m.state != Idle && m.state != Poisoned
	s.LastRedoLSN = m.published
	s.DataFsyncPending = m.fsyncOut
	return s
}

// Tick is the periodic timer (a fraction of a second): it starts a
// checkpoint when --checkpoint-timeout passed (or the page cache is over
// its budget), and otherwise moves a running one on: retries after a
// failure, polls fsyncs. It never waits.
func (m *Manager) Tick() {
	switch m.state {
	case Poisoned:
	case Idle:
		if m.requested || time.Since(m.lastBegin) >= m.o.Interval || m.cache.OverBudget() {
			m.begin()
		}
	default:
		m.advance()
	}
}

// MaybeWALFull is the --max-wal-size trigger, run on the serving path: it
// starts a checkpoint when walBytes (since the published redo point)
// reached max and none is running, and reports whether it did. It never
// waits, and never moves a running checkpoint on (finishing it is the
// tick's).
func (m *Manager) MaybeWALFull(walBytes, max int64) bool {
	if m.state != Idle || walBytes < max {
		return false
	}
	m.begin()
	return true
}

// Request starts a checkpoint (SAVE, BGSAVE, BGREWRITEAOF). done, when not
// nil, is called once a checkpoint that began after the request finalized,
// or with the error that stops it. A running checkpoint is finished first.
func (m *Manager) Request(done func(error)) {
	if m.state == Poisoned {
		if done != nil {
			err := m.poisonErr
			m.o.Loop.AfterFunc(0, func() { done(err) })
		}
		return
	}
	if m.state == Idle {
		if done != nil {
			m.waiters = append(m.waiters, done)
		}
		m.begin()
		return
	}
	m.requested = true
	if done != nil {
		m.nextWaiters = append(m.nextWaiters, done)
	}
}

// Shutdown runs the checkpoint to its end (starting one when none runs)
// and calls done: nil once it finalized, the poisoning error, or
// ErrShutdownTimeout when Options.ShutdownWait passed first (counted from
// this call; an fsync that hangs is not waited for longer).
func (m *Manager) Shutdown(done func(error)) {
	if m.state == Poisoned {
		err := m.poisonErr
		m.o.Loop.AfterFunc(0, func() { done(err) })
		return
	}
	sw := &shutdownWait{done: done}
	m.shutdown = sw
	sw.timer = m.o.Loop.AfterFunc(m.o.ShutdownWait, func() {
		if m.shutdown == sw {
			m.shutdown = nil
			sw.done(ErrShutdownTimeout)
		}
	})
	m.requested = false
	if m.state == Idle {
		m.begin()
		return
	}
	// A retry waiting for its backoff is not waited for.
	m.retryAt = time.Time{}
	m.advance()
}

// FileRetired tells the manager that the shard retired heap file id
// (Heap.RetireFile after its tombstone): its handle is closed and it holds
// nothing back.
func (m *Manager) FileRetired(id uint32) {
	m.sync.Forget(id)
	delete(m.fileGen, id)
	delete(m.onDisk, id)
	m.closeFD(id)
}

// Close closes the heap file handles the manager holds.
func (m *Manager) Close() {
	for _, id := range slices.Sorted(maps.Keys(m.fds)) {
		m.closeFD(id)
	}
}

func (m *Manager) closeFD(id uint32) {
	if fd, ok := m.fds[id]; ok {
		m.be.Close(fd, nil)
		delete(m.fds, id)
	}
}

// advance runs steps until one waits for a completion or a retry.
func (m *Manager) advance() {
	for m.wait == waitNone {
		if !m.retryAt.IsZero() && time.Now().Before(m.retryAt) {
			return
		}
		var more bool
		switch m.state {
		case Writing:
			if m.held() {
				return // the next Tick goes on
			}
			more = m.writeSome()
		case Flushing:
			more = m.flushStep()
		case Syncing:
			more = m.syncStep()
		case Finalizing:
			more = m.finalStep()
		}
		if !more {
			return
		}
	}
}

// held reports whether the shard's txn hold keeps the checkpoint from
// beginning or taking keys now (Options.Held).
func (m *Manager) held() bool { return m.o.Held != nil && m.o.Held() }

// enter moves the machine to state to, along one of its edges (Poisoned
// is entered by poison alone); no operation may be in flight.
func (m *Manager) enter(to State) {
	var ok bool
	switch m.state {
	case Idle:
		ok = to == Writing
	case Writing:
		ok = to == Flushing
	case Flushing:
		ok = to == Syncing
	case Syncing:
		ok = to == Writing || to == Finalizing // Writing: keys of a vanished file again
	case Finalizing:
		ok = to == Idle
	}
	if !ok || m.wait != waitNone {
		panic(fmt.Sprintf("checkpoint: %v -> %v waiting for %v", m.state, to, m.wait))
	}
	m.endPhase()
	m.state = to
}

// endPhase adds the time spent in the current phase to PhaseSeconds; it
// runs at each transition (one clock read per phase, never per key).
func (m *Manager) endPhase() {
	now := time.Now()
	if m.state != Idle && m.state != Poisoned {
		m.stats.PhaseSeconds[m.state] += now.Sub(m.phaseSince).Seconds()
	}
	m.phaseSince = now
}

// retryLater records a failure that a later Tick retries after a backoff.
func (m *Manager) retryLater(err error) {
	m.stats.LastError = err.Error()
	m.retryGap = min(max(2*m.retryGap, m.o.RetryBackoff), time.Second)
	m.retryAt = time.Now().Add(m.retryGap)
}

func (m *Manager) succeeded() {
	m.retryGap = 0
	m.retryAt = time.Time{}
}
