package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/moond-db/moond/persistence/checkpoint/record"
	"github.com/moond-db/moond/persistence/control"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/manifest"
	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/runtime"
)

// State is where the checkpoint state machine is.
type State uint8

const (
	Idle       State = iota // no checkpoint running
	Writing                 // writing the dirty keys' versions into pages
	Flushing                // FPI → WAL barrier → pwrite, batch by batch
	Syncing                 // waiting for the heap files' fsyncs
	Finalizing              // manifest, checkpoint record, control file
	Poisoned                // an fsync failed: never again (fsyncgate)
)

func (s State) String() string {
	return [...]string{"idle", "writing", "flushing", "syncing", "finalizing", "poisoned"}[s]
}

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

// WAL is what the checkpoint needs from the shard's log.
type WAL interface {
	// NextLSN is the LSN the next appended record gets.
	NextLSN() uint64
	// Append appends a record and returns its LSN (wal.Appender.Append).
	Append(typ wal.RecordType, payload []byte) (uint64, error)
	// Barrier calls done, on the loop's thread and never inside the
	// call, once every record through lsn is durable, or with the error
	// that keeps it from being so. Under appendfsync always it waits for
	// the group commit; otherwise it forces an fdatasync.
	Barrier(lsn uint64, done func(error))
	// WriteAfter runs ops (page writes) once every record through lsn is
	// durable and calls done with their results, on the loop's thread
	// and never inside the call: linked after the fdatasync that makes
	// lsn durable (wal.Writer.WriteAfterDurable), so the kernel enforces
	// log before data. err is the WAL's failure, which cancels them (res
	// is then ECANCELED or nil).
	WriteAfter(lsn uint64, ops []runtime.Op, done func(res []runtime.Result, err error))
}

// Version is a dirty key's state at the moment the checkpoint writes it.
type Version struct {
	// Live is false when the key was deleted; DelLSN is then the LSN of
	// the deletion.
	Live   bool
	Record heap.Record
	DelLSN uint64
	// Old is where the key's last checkpointed version lives, when HasOld.
	Old    heap.RecordID
	HasOld bool
}

// Source is the shard's keyspace as the checkpoint sees it.
type Source interface {
	// TakeDirty returns the keys changed since the last call, and
	// forgets them.
	TakeDirty() [][]byte
	// Version returns key's current state.
	Version(key []byte) Version
	// Placed tells the keyspace where key's version now lives in the heap
	// (live), or that it has no record there any more (!live).
	Placed(key []byte, id heap.RecordID, live bool)
}

// Options configures a Manager.
type Options struct {
	Loop     *runtime.Loop
	Backend  runtime.Backend // normally Loop.Backend(); tests wrap it
	ShardDir string          // heap files live in ShardDir/heap
	Shard    uint32
	WAL      WAL
	Source   Source
	Heap     *heap.Heap
	Manifest *manifest.Manifest
	// Deferred and Sync are created when nil.
	Deferred *heap.DeferredFrees
	Sync     *heap.SyncTracker
	// Files are the heap files that exist on disk at boot (the manifest's
	// live files, fsynced by boot). Any other file the heap places pages
	// in is new: the checkpoint creates it (O_EXCL) and fsyncs the heap
	// directory before the manifest commit.
	Files []uint32
	// PublishedRedo is the control file's redo LSN at boot.
	PublishedRedo uint64
	// Interval is --checkpoint-timeout (default 300 s): Tick starts a
	// checkpoint when this long passed since the last one began.
	Interval time.Duration
	// BatchPages bounds a flush batch (default 64, at most
	// runtime.MaxChainLen-2: a batch's writes share a chain with the WAL
	// write and fdatasync).
	BatchPages int
	// WriteChunk bounds the keys written into pages per loop step
	// (default 1024).
	WriteChunk int
	// StepBudget bounds the time one loop step spends writing keys into
	// pages (default 200 µs): between steps the loop serves its clients,
	// so this is the longest a checkpoint delays a reply.
	StepBudget time.Duration
	// RetryBackoff is the first delay before a failed step is retried by
	// a later Tick (default 10 ms, doubling up to 1 s).
	RetryBackoff time.Duration
	// ShutdownWait bounds Shutdown (default 5 s).
	ShutdownWait time.Duration

	// OnPublished is called after the control file published redo: the
	// WAL below it may be recycled, and tombstoned files whose tombstone
	// the manifest commit covered may be unlinked.
	OnPublished func(redo uint64)
	// OnPoison is called once, when an fsync failed: the shard refuses
	// writes from now on.
	OnPoison func(error)
	// OnVanished is called when a heap file was found missing. When
	// retired is false the manifest still listed it: an unexpected loss,
	// to be logged as an error. The shard marks the keys whose record was
	// in the file dirty again (TakeDirty returns them), and a checkpoint
	// that is running writes them again, with its redo point, before it
	// finalizes: its redo never moves over a key whose only copy above the
	// old redo point was in the lost file.
	OnVanished func(file uint32, retired bool)
	// OnNeedPage is called when a heap operation needs a page that is
	// not cached (heap.ErrNotResident): the shard loads it (Cache.AddClean)
	// and a later Tick retries.
	OnNeedPage func(heap.PageID)
	// OnBegin is called when a checkpoint begins, with its redo point.
	OnBegin func(redo uint64)
	// BeginRecord, when set, returns a wal.RecordCheckpoint payload to log
	// at the redo point itself (its LSN is the redo LSN, so recovery
	// replays it first), or nil for none: state that replay needs as of
	// the redo point, such as the database map. A checkpoint whose record
	// cannot be appended does not begin; the tick tries again.
	BeginRecord func() []byte
	// OnStep, when set, is called as the checkpoint passes each Step: the
	// crash points end-to-end tests stop the process at. Production
	// leaves it nil.
	OnStep func(Step)
	// UnlinkedWrites (tests only) waits for the WAL barrier's completion
	// before submitting a batch's page writes, one by one, instead of
	// linking them after the WAL's fdatasync: StepBarrier and
	// StepMidPwrite are points in the process only then.
	UnlinkedWrites bool
}

// Step names a point inside a checkpoint that tests crash at on purpose.
type Step string

// The steps, in the order a checkpoint passes them.
const (
	StepFPIAppended    Step = "after-fpi"     // a batch's full-page images appended, barrier not yet asked
	StepBarrier        Step = "after-barrier" // the batch's WAL barrier is durable, no page written yet
	StepMidPwrite      Step = "mid-pwrite"    // a page of a batch written while others of it are not yet
	StepPwritten       Step = "after-pwrite"  // every page written, no heap fsync yet
	StepFsynced        Step = "after-fsync"   // heap files durable, manifest and control file not yet written
	StepControlWritten Step = "after-control" // control file published, WAL not yet recycled
)

// Steps lists every Step.
var Steps = []Step{StepFPIAppended, StepBarrier, StepMidPwrite, StepPwritten, StepFsynced, StepControlWritten}

func (m *Manager) step(s Step) {
	if m.o.OnStep != nil {
		m.o.OnStep(s)
	}
}

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
	KeysWritten         int64     // key versions written into pages (and deletions freed)
}

// Manager runs one shard's checkpoints. Loop thread only.
type Manager struct {
	o        Options
	be       runtime.Backend
	heapDir  string
	cache    *heap.Cache
	deferred *heap.DeferredFrees
	sync     *heap.SyncTracker

	state     State
	busy      bool // an operation of the current step is in flight
	redo      uint64
	published uint64
	began     time.Time
	lastBegin time.Time
	retryAt   time.Time
	retryGap  time.Duration

	// Writing.
	keys   [][]byte
	keyIdx int

	// Flushing.
	inPass  bool
	dirty   []*heap.Frame
	idx     int
	pass    FlushResult
	fds     map[uint32]runtime.FD
	onDisk  map[uint32]bool
	created bool // files were created: the heap directory needs an fsync
	fileGen map[uint32]uint64

	// Syncing.
	fsyncOut int
	// rewrite: a heap file that the manifest lists vanished during this
	// checkpoint; the keys it held (re-dirtied by the shard through
	// OnVanished) are written again, with the same redo, before finalize.
	rewrite bool

	// Finalizing.
	finStep int
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

func (m *Manager) begin() {
	redo := m.o.WAL.NextLSN()
	if m.o.BeginRecord != nil {
		if p := m.o.BeginRecord(); p != nil {
			lsn, err := m.o.WAL.Append(wal.RecordCheckpoint, p)
			if err != nil {
				m.stats.LastError = fmt.Sprintf("checkpoint: append the record at the redo point: %v", err)
				m.requested = true // the next Tick tries again
				return
			}
			if lsn != redo {
				panic(fmt.Sprintf("checkpoint: the record at the redo point got LSN %d, want %d", lsn, redo))
			}
		}
	}
	m.requested = false // a request that waited for this begin is served by it
	m.state = Writing
	m.redo = redo
	m.keys = m.o.Source.TakeDirty()
	m.keyIdx = 0
	m.cache.BeginCycle()
	m.began = time.Now()
	m.lastBegin = m.began
	m.retryAt = time.Time{}
	m.retryGap = 0
	m.inPass = false
	clear(m.fileGen)
	m.finStep = 0
	m.ckptLSN = 0
	m.rewrite = false
	if m.o.OnBegin != nil {
		m.o.OnBegin(m.redo)
	}
	m.advance()
}

// advance runs steps until one waits for a completion or a retry.
func (m *Manager) advance() {
	for !m.busy {
		if !m.retryAt.IsZero() && time.Now().Before(m.retryAt) {
			return
		}
		var more bool
		switch m.state {
		case Writing:
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

// heapFailed handles an error of the heap during Writing.
func (m *Manager) heapFailed(err error) {
	var nr *heap.NotResidentError
	if errors.As(err, &nr) && m.o.OnNeedPage != nil {
		m.o.OnNeedPage(nr.Page)
	}
	m.retryLater(err)
}

// writeSome writes up to WriteChunk keys' versions into pages, for at most
// StepBudget.
func (m *Manager) writeSome() bool {
	start := time.Now()
	for n := 0; m.keyIdx < len(m.keys); n++ {
		if n == m.o.WriteChunk || (n%32 == 31 && time.Since(start) >= m.o.StepBudget) {
			m.busy = true
			m.o.Loop.AfterFunc(0, func() {
				m.busy = false
				m.advance()
			})
			return false
		}
		k := m.keys[m.keyIdx]
		v := m.o.Source.Version(k)
		if v.Live {
			id, err := m.o.Heap.Insert(v.Record)
			if err != nil {
				m.heapFailed(fmt.Errorf("checkpoint: write key version: %w", err))
				return false
			}
			if v.HasOld {
				m.deferred.Add(m.redo, v.Old)
			}
			m.o.Source.Placed(k, id, true)
		} else {
			if v.HasOld {
				if err := m.o.Heap.Free(v.Old, v.DelLSN); err != nil {
					m.heapFailed(fmt.Errorf("checkpoint: free deleted key's record %v: %w", v.Old, err))
					return false
				}
			}
			m.o.Source.Placed(k, heap.RecordID{}, false)
		}
		m.keyIdx++
		m.stats.KeysWritten++
	}
	m.keys = nil
	m.succeeded()
	m.state = Flushing
	return true
}

func (m *Manager) flushable(f *heap.Frame) bool {
	if m.cache.Peek(f.ID()) != f || !f.Dirty() {
		return false
	}
	v, _ := m.cache.Vanished(f.ID().File)
	return !v
}

// flushStep starts the next batch of the pass, or ends the pass.
func (m *Manager) flushStep() bool {
	if !m.inPass {
		m.inPass = true
		m.dirty = m.cache.AppendDirty(m.dirty[:0])
		m.idx = 0
		m.pass = FlushResult{}
	}
	var batch []*heap.Frame
	var missing []uint32
	j := m.idx
	for j < len(m.dirty) && len(batch) < m.o.BatchPages {
		f := m.dirty[j]
		j++
		if !m.flushable(f) {
			continue
		}
		batch = append(batch, f)
		if file := f.ID().File; !slices.Contains(missing, file) {
			if _, ok := m.fds[file]; !ok {
				missing = append(missing, file)
			}
		}
	}
	if len(batch) == 0 {
		m.inPass = false
		m.dirty = m.dirty[:0]
		m.stats.LastFlush = m.pass
		if m.pass.Failed > 0 {
			m.retryLater(fmt.Errorf("%w: %d of %d pages failed", ErrNotFlushed, m.pass.Failed, m.pass.Failed+m.pass.Flushed))
			return false
		}
		m.succeeded()
		m.state = Syncing
		m.step(StepPwritten)
		return true
	}
	if len(missing) > 0 {
		m.openFiles(missing)
		return false
	}
	m.idx = j
	return m.flushBatch(batch)
}

// openFiles opens (or creates, for new files) the heap files a batch
// needs; the batch is collected again once they are all answered.
func (m *Manager) openFiles(ids []uint32) {
	m.busy = true
	pending := len(ids)
	var failed error
	for _, id := range ids {
		flag := os.O_RDWR
		if !m.onDisk[id] {
			flag |= os.O_CREATE | os.O_EXCL
		}
		path := heap.FilePath(m.heapDir, id)
		m.be.Open(path, flag, 0o644, func(fd runtime.FD, err error) {
			switch {
			case err == nil:
				m.fds[id] = fd
				if !m.onDisk[id] {
					m.onDisk[id] = true
					m.created = true
				}
			case errors.Is(err, fs.ErrExist) && !m.onDisk[id]:
				// Created by an earlier try whose answer was lost: open it.
				m.onDisk[id] = true
				m.created = true
				failed = fmt.Errorf("checkpoint: create %s: %w", path, err)
			case errors.Is(err, fs.ErrNotExist) && m.onDisk[id]:
				m.vanish(id)
			default:
				failed = fmt.Errorf("checkpoint: open %s: %w", path, err)
			}
			if pending--; pending > 0 {
				return
			}
			m.busy = false
			if failed != nil {
				m.retryLater(failed)
				return
			}
			m.advance()
		})
	}
}

// flushBatch logs the FPIs of batch, takes one WAL barrier through its
// highest LSN, then writes its pages.
func (m *Manager) flushBatch(batch []*heap.Frame) bool {
	var through uint64
	fpis := false
	write := batch[:0]
	for _, f := range batch {
		if f.FPIPending() {
			fpis = true
			lsn, err := m.o.WAL.Append(wal.RecordCheckpoint, record.AppendFPI(nil, &f.Page))
			if err != nil {
				m.pass.Failed++
				m.stats.PagesFailed++
				m.stats.LastError = fmt.Sprintf("checkpoint: append FPI of %v: %v", f.ID(), err)
				continue
			}
			m.cache.FPILogged(f)
			through = max(through, lsn)
		}
		through = max(through, f.Page.LSN())
		write = append(write, f)
	}
	if len(write) == 0 {
		return true
	}
	if fpis {
		m.step(StepFPIAppended)
	}
	m.busy = true
	m.stats.Barriers++
	if !m.o.UnlinkedWrites {
		m.writeLinked(write, through)
		return false
	}
	m.o.WAL.Barrier(through, func(err error) {
		if err != nil {
			m.busy = false
			m.pass.Failed += len(write)
			m.stats.PagesFailed += int64(len(write))
			m.stats.LastError = fmt.Sprintf("checkpoint: WAL barrier through %d: %v", through, err)
			m.advance()
			return
		}
		m.step(StepBarrier)
		m.writePages(write)
	})
	return false
}

// pageWrite is one page write of a batch: the frame, and the version of
// its bytes that went out.
type pageWrite struct {
	f       *heap.Frame
	id      heap.PageID
	version uint64
}

// writeLinked hands the batch's page writes to the WAL, linked after the
// write and fdatasync that make the batch's FPIs and page LSNs durable.
func (m *Manager) writeLinked(batch []*heap.Frame, through uint64) {
	var pws []pageWrite
	var ops []runtime.Op
	for _, f := range batch {
		if pw, op, ok := m.takePage(f); ok {
			ops = append(ops, op)
			pws = append(pws, pw)
		}
	}
	if len(ops) == 0 {
		m.o.Loop.AfterFunc(0, func() {
			m.busy = false
			m.advance()
		})
		return
	}
	m.o.WAL.WriteAfter(through, ops, func(res []runtime.Result, err error) {
		m.busy = false
		if err != nil {
			m.stats.LastError = fmt.Sprintf("checkpoint: WAL barrier through %d: %v", through, err)
		}
		for i, pw := range pws {
			perr := err
			if i < len(res) {
				perr = res[i].Err
				if perr == nil && res[i].N != heap.PageSize {
					perr = runtime.ErrShort
				}
			} else if perr == nil {
				perr = runtime.ErrShort
			}
			m.pageWritten(pw, perr)
		}
		m.advance()
	})
}

// takePage takes the bytes of f's page for a write: the write's record
// and its operation. ok is false when the page is not to be written now:
// its file vanished (nothing to do), or its FPI is still pending or its
// file is not open (counted as failed; the pass is repeated).
func (m *Manager) takePage(f *heap.Frame) (pageWrite, runtime.Op, bool) {
	if !m.flushable(f) {
		return pageWrite{}, runtime.Op{}, false
	}
	fd, open := m.fds[f.ID().File]
	if f.FPIPending() || !open {
		m.pass.Failed++
		m.stats.PagesFailed++
		return pageWrite{}, runtime.Op{}, false
	}
	pw := pageWrite{f: f, id: f.ID(), version: m.cache.BeginWrite(f)}
	buf := make([]byte, heap.PageSize)
	f.Page.EncodeInto(buf)
	return pw, runtime.Op{Kind: runtime.OpPwrite, FD: fd, Buf: buf, Off: heap.PageOffset(pw.id.Page)}, true
}

// pageWritten records the outcome of one page write.
func (m *Manager) pageWritten(pw pageWrite, err error) {
	if v, _ := m.cache.Vanished(pw.id.File); v {
		return
	}
	if err != nil {
		m.pass.Failed++
		m.stats.PagesFailed++
		m.stats.LastError = fmt.Sprintf("checkpoint: write page %v: %v", pw.id, err)
		return
	}
	m.fileGen[pw.id.File] = m.sync.MarkWritten(pw.id.File)
	m.cache.WriteDone(pw.f, pw.version)
	m.pass.Flushed++
	m.stats.PagesFlushed++
}

// writePages submits the batch's page writes one by one, once the WAL
// barrier completed (UnlinkedWrites).
func (m *Manager) writePages(batch []*heap.Frame) {
	pending := 0
	done := func() {
		if pending--; pending == 0 {
			m.busy = false
			m.advance()
		}
	}
	for _, f := range batch {
		pw, op, ok := m.takePage(f)
		if !ok {
			continue
		}
		pending++
		m.be.Pwrite(op.FD, op.Buf, op.Off, func(n int, err error) {
			if err == nil && n != heap.PageSize {
				err = runtime.ErrShort
			}
			m.pageWritten(pw, err)
			if err == nil && pending > 1 {
				m.step(StepMidPwrite)
			}
			done()
		})
	}
	if pending == 0 {
		m.busy = false
		m.advance()
	}
}

// syncStep starts an fsync of every file written in this checkpoint whose
// write is not durable yet (one outstanding per file), and moves on when
// all are.
func (m *Manager) syncStep() bool {
	waiting := false
	for _, file := range slices.Sorted(maps.Keys(m.fileGen)) {
		if m.sync.Durable(file, m.fileGen[file]) {
			delete(m.fileGen, file)
			continue
		}
		waiting = true
		if m.sync.Syncing(file) {
			continue
		}
		fd, ok := m.fds[file]
		if !ok {
			// Retired while waiting (FileRetired forgets it too).
			delete(m.fileGen, file)
			continue
		}
		gen := m.sync.SyncStarted(file)
		m.fsyncOut++
		m.stats.Fsyncs++
		m.be.Fsync(fd, func(err error) {
			m.fsyncOut--
			m.fsynced(file, gen, err)
		})
	}
	if waiting {
		return false
	}
	if m.rewrite {
		m.rewrite = false
		m.keys = m.o.Source.TakeDirty()
		m.keyIdx = 0
		m.state = Writing
		return true
	}
	m.state = Finalizing
	m.step(StepFsynced)
	return true
}

func (m *Manager) fsynced(file uint32, gen uint64, err error) {
	switch {
	case err == nil:
		m.sync.SyncDone(file, gen)
	case errors.Is(err, fs.ErrNotExist):
		m.sync.SyncFailed(file)
		m.vanish(file)
	default:
		m.sync.SyncFailed(file)
		m.poison(&heap.SyncError{Err: fmt.Errorf("checkpoint: fsync %s: %w", heap.FileName(file), err)})
		return
	}
	if m.state == Syncing {
		m.advance()
	}
}

// vanish handles a heap file found missing.
func (m *Manager) vanish(file uint32) {
	if v, _ := m.cache.Vanished(file); v {
		return
	}
	retired := !m.o.Manifest.IsLive(file)
	m.o.Heap.FileVanished(file, retired)
	m.sync.Forget(file)
	delete(m.fileGen, file)
	m.closeFD(file)
	if retired {
		m.stats.VanishedRetired++
	} else {
		m.stats.VanishedUnexpected++
		m.rewrite = m.state != Idle
		// Its keys are written again in this checkpoint: the manifest
		// this checkpoint commits must not list the file as live, or the
		// next boot would fail to open it.
		if err := m.o.Manifest.Tombstone(file, m.redo); err != nil {
			m.stats.LastError = fmt.Sprintf("checkpoint: tombstone vanished heap file %s: %v", heap.FileName(file), err)
		}
		m.stats.LastError = fmt.Sprintf("checkpoint: heap file %s vanished while the manifest lists it", heap.FileName(file))
	}
	if m.o.OnVanished != nil {
		m.o.OnVanished(file, retired)
	}
}

func (m *Manager) poison(err error) {
	if m.state == Poisoned {
		return
	}
	m.state = Poisoned
	m.poisonErr = fmt.Errorf("%w: %w", ErrPoisoned, err)
	m.stats.Poisoned = true
	m.stats.PoisonReason = err.Error()
	if m.o.OnPoison != nil {
		m.o.OnPoison(m.poisonErr)
	}
	ws := append(m.waiters, m.nextWaiters...)
	m.waiters, m.nextWaiters = nil, nil
	for _, w := range ws {
		w(m.poisonErr)
	}
	if sw := m.shutdown; sw != nil {
		m.shutdown = nil
		sw.timer.Stop()
		sw.done(m.poisonErr)
	}
}

// finalStep runs the finalize steps in order; a failed one is retried.
func (m *Manager) finalStep() bool {
	switch m.finStep {
	case 0: // new heap files' directory entries before the manifest names them
		if !m.created {
			m.finStep = 1
			return true
		}
		m.busy = true
		m.be.SyncDir(m.heapDir, func(err error) {
			m.busy = false
			if err != nil {
				m.poison(&heap.SyncError{Err: fmt.Errorf("checkpoint: fsync directory %s: %w", m.heapDir, err)})
				return
			}
			m.created = false
			m.finStep = 1
			m.advance()
		})
	case 1: // manifest commit
		m.busy = true
		m.atomicWrite(m.o.Manifest.Prepare(m.o.ShardDir), func(err error) {
			m.busy = false
			if m.finishedStep(err) {
				m.finStep = 2
				m.advance()
			}
		})
	case 2: // checkpoint record, durable
		if m.ckptLSN == 0 {
			lsn, err := m.o.WAL.Append(wal.RecordCheckpoint, record.AppendEnd(nil, m.redo))
			if err != nil {
				m.retryLater(fmt.Errorf("checkpoint: append checkpoint record: %w", err))
				return false
			}
			m.ckptLSN = lsn
		}
		m.busy = true
		m.o.WAL.Barrier(m.ckptLSN, func(err error) {
			m.busy = false
			if err != nil {
				m.retryLater(fmt.Errorf("checkpoint: checkpoint record %d not durable: %w", m.ckptLSN, err))
				return
			}
			m.finStep = 3
			m.advance()
		})
	case 3: // control file
		next := min(m.o.Manifest.NextID(), uint64(^uint32(0)))
		c := control.Control{
			Shard:         m.o.Shard,
			RedoLSN:       m.redo,
			CheckpointLSN: m.ckptLSN,
			Time:          time.Now(),
			NextFileID:    uint32(next),
		}
		if err := c.Validate(); err != nil {
			m.retryLater(fmt.Errorf("checkpoint: control file: %w", err))
			return false
		}
		m.busy = true
		m.atomicWrite(control.Prepare(m.o.ShardDir, c), func(err error) {
			m.busy = false
			if m.finishedStep(err) {
				m.publish(c.Time)
			}
		})
	}
	return false
}

// finishedStep sorts a finalize step's outcome: success, a failure to
// retry, or a failed fsync that poisons.
func (m *Manager) finishedStep(err error) bool {
	switch {
	case err == nil:
		m.succeeded()
		return true
	case control.IsSyncFailure(err):
		m.poison(err)
	default:
		m.retryLater(err)
	}
	return false
}

// publish moves the in-memory redo point, once the control file holds it.
func (m *Manager) publish(at time.Time) {
	m.published = m.redo
	m.stats.Completed++
	m.stats.LastDurationMs = time.Since(m.began).Milliseconds()
	m.stats.LastFinalized = at
	m.state = Idle
	// Handles are opened again by the next checkpoint, so that a file
	// that vanished meanwhile is found (ENOENT) rather than written
	// through a stale handle.
	m.Close()
	m.step(StepControlWritten)
	for _, id := range m.deferred.Release(m.redo, nil) {
		if err := m.o.Heap.Free(id, 0); err != nil {
			var nr *heap.NotResidentError
			if !errors.As(err, &nr) {
				m.stats.LastError = fmt.Sprintf("checkpoint: deferred free of %v: %v", id, err)
				continue
			}
			// Freed by the next checkpoint, once the page is loaded.
			m.deferred.Add(m.redo, id)
			m.stats.DeferredFreeRetries++
			if m.o.OnNeedPage != nil {
				m.o.OnNeedPage(nr.Page)
			}
		}
	}
	if m.o.OnPublished != nil {
		m.o.OnPublished(m.redo)
	}
	ws := m.waiters
	m.waiters = nil
	for _, w := range ws {
		w(nil)
	}
	if sw := m.shutdown; sw != nil {
		m.shutdown = nil
		sw.timer.Stop()
		next := m.nextWaiters
		m.nextWaiters = nil
		for _, w := range next {
			w(ErrShuttingDown)
		}
		sw.done(nil)
		return
	}
	if m.requested {
		m.requested = false
		m.waiters, m.nextWaiters = m.nextWaiters, nil
		m.begin()
	}
}

// atomicWrite performs w through the backend: write Temp, fsync it, close
// it, rename it over Final, fsync Dir. A failed fsync is a
// *control.SyncError; before the rename, Final is untouched.
func (m *Manager) atomicWrite(w control.AtomicWrite, done func(error)) {
	m.be.Open(w.Temp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644, func(fd runtime.FD, err error) {
		if err != nil {
			done(fmt.Errorf("create %s: %w", w.Temp, err))
			return
		}
		ops := []runtime.Op{
			{Kind: runtime.OpPwrite, FD: fd, Buf: w.Data},
			{Kind: runtime.OpFsync, FD: fd},
		}
		m.be.Chain(ops, func(res []runtime.Result) {
			m.be.Close(fd, func(cerr error) {
				var err error
				switch {
				case res[0].Err != nil:
					err = fmt.Errorf("write %s: %w", w.Temp, res[0].Err)
				case res[1].Err != nil:
					err = &control.SyncError{Err: fmt.Errorf("fsync %s: %w", w.Temp, res[1].Err)}
				case cerr != nil:
					err = fmt.Errorf("close %s: %w", w.Temp, cerr)
				}
				if err != nil {
					m.be.Unlink(w.Temp, func(error) {})
					done(err)
					return
				}
				m.be.Rename(w.Temp, w.Final, func(err error) {
					if err != nil {
						m.be.Unlink(w.Temp, func(error) {})
						done(fmt.Errorf("rename %s: %w", w.Temp, err))
						return
					}
					m.be.SyncDir(w.Dir, func(err error) {
						if err != nil {
							done(&control.SyncError{Err: fmt.Errorf("fsync directory %s: %w", w.Dir, err)})
							return
						}
						done(nil)
					})
				})
			})
		})
	})
}
