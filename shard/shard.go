package shard

import (
	"context"
	"fmt"
	"github.com/moond-db/moond/persistence/txnlog"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/runtime"
)

// Options configure a shard. The server builds them from its configuration;
// what CONFIG SET may change later is read through Tunables.
type Options struct {
	ID  int
	Dir string // the shard's own directory, <dir>/shard-NNN
	Log *slog.Logger

	Databases       int
	ProtoMaxBulkLen int64
	EncodingLimits  keyspace.EncodingLimits // the data types' thresholds
	Eviction        keyspace.Eviction       // maxmemory-policy and its tunables
	// ColdLoadAbove, under tiered-storage, is the shard's share of
	// maxmemory: the boot loads heap records cold (location only) once
	// the data is over it (keyspace/cold_load.go). 0 loads every value.
	ColdLoadAbove int64

	AppendOnly     bool   // persistence on: a WAL, a heap, checkpoints
	AppendFsync    string // always | everysec | no
	WALSegmentSize int64
	WALSalvage     bool  // boot past a damaged WAL segment (--wal-salvage)
	PageCacheSize  int64 // this shard's share of --pagecache-size
	// WALBackpressure is how many unwritten WAL bytes the shard tolerates
	// before its readers pause (ReadsPaused); 0 means the default.
	WALBackpressure int

	// Tunables returns the settings CONFIG SET may change; the shard reads
	// them at every tick. Nil means the zero Tunables.
	Tunables func() Tunables

	// Started is when the server started: the last save time before the
	// first checkpoint, as Redis reports its start before any save.
	Started time.Time

	// CrashAt is the test-only crash hook (moond --test-crash-at).
	CrashAt CrashPoint
	// WALRecordLimit is the largest payload of one WAL record; a write's
	// record above it is split into continuation records. 0 means the
	// format's limit (wal.MaxPayload); tests lower it.
	WALRecordLimit int

	// WrapBackend, when set, wraps the backend the shard's storage I/O
	// uses (tests inject faults with it).
	WrapBackend func(runtime.Backend) runtime.Backend

	// Progress, when set, receives how far the boot has got (INFO's
	// loading_* fields); the caller may read it from any thread.
	Progress *LoadProgress

	// Txns returns the decision of the boot's first pass over every
	// shard's log (ScanTxns, txnlog.Decide): the parts of txns across
	// shards that the replay applies. The boot calls it after the heap
	// load, before the replay, so the pass may run meanwhile (it may wait).
	// Nil: the shard decides from its own log alone, as the only shard.
	Txns func() *txnlog.Decision
	// Held, when set, reports whether a txn holds the shard: its
	// checkpoint neither begins nor takes keys meanwhile, so that the heap
	// never holds a part whose txn is not decided.
	Held func() bool
	// SyncPeers, when set, makes every shard's WAL durable through what it
	// holds and calls done on this shard's thread (txnsync.go).
	SyncPeers func(done func(error))

	// OnLatency, when set, is told how long each WAL fdatasync
	// ("wal-fsync"), each checkpoint, from its start to its redo point's
	// publication ("checkpoint"), and each active expire cycle
	// ("expire-cycle") took: the server's latency monitor.
	OnLatency func(event string, took time.Duration)

	// BootHold is the test-only boot hold (moond --test-hold-boot): when
	// set, the boot calls it after the heap load and before the WAL
	// replay, and it returns when the shard may go on loading.
	BootHold func()
}

// Tunables are the shard's settings that may change while it runs.
type Tunables struct {
	MaxWALSize        int64         // --max-wal-size; 0 for no size trigger
	CheckpointTimeout time.Duration // --checkpoint-timeout
}

// defaultWALBackpressure is how many unwritten WAL bytes a shard tolerates
// before it stops reading from its clients; reading resumes below half of
// it.
const defaultWALBackpressure = 64 << 20

// Shard is one shard: its keyspace and its storage. Everything in it is
// touched only on its loop's thread.
type Shard struct {
	o    Options
	id   int
	log  *slog.Logger
	loop *runtime.Loop
	be   runtime.Backend // storage I/O (Options.WrapBackend applied)
	ks   *keyspace.Keyspace

	changes int64 // writes since the last save (rdb_changes_since_last_save)

	feed  atomic.Pointer[Feed] // replicas' stream (feed.go), nil without replicas
	fpart feedPart             // a txn part's records kept for the feed

	// The log (log.go, ack.go, refusal.go).
	wal             *wal.Writer // nil with appendonly no
	policy          wal.FsyncPolicy
	walRecovered    int64 // WAL bytes replayed at boot
	replayFailures  int64 // records whose replay answered an error
	replayedData    int64 // data records replayed at boot
	refusing        bool  // writes get MISCONF (refusal.go)
	appendRefused   error // the first append the WAL refused, latched (log.go)
	walLoggedErr    bool  // a write failure was logged and not yet its recovery
	walLoggedPoison bool
	held            []heldReply // replies waiting for the WAL (ack.go)
	readable        []func()    // readers paused until ReadsPaused turns false

	ckpt *ckpt // heap and checkpoints (checkpoint.go); mgr nil with appendonly no
	// coldBuf is the record buffer of cold reads on the ring (cold.go),
	// reused read after read: nothing keeps its bytes past InstallCold.
	coldBuf []byte

	aof // CONFIG SET appendonly at run time (aof.go)

	txn      txnState // parts of txns across shards (txnpart.go)
	abortLSN uint64   // the boot's last ABORT, durable before the shard serves

	crashFaults *vfs.FaultyBackend // the crash hook's, inside linked chains (crash.go)

	progress *LoadProgress // the boot's (loading.go)
}

// Open builds the shard on loop and restores its data: the heap, then the
// WAL above the redo point. With persistence on it then opens the WAL
// writer and the checkpoint manager. It runs on the loop's thread, which
// serves nothing else meanwhile; Boot is Open with the recovery off it.
func Open(loop *runtime.Loop, o Options) (*Shard, error) {
	s := newShard(loop, o)
	b, err := s.recoverData()
	if err != nil {
		return nil, err
	}
	if err := s.start(b); err != nil {
		return nil, err
	}
	return s, nil
}

// Boot is Open for a loop that goes on serving while the shard recovers:
// it returns at once, the recovery (which reads files synchronously) runs
// on a goroutine of its own, and the writer and the checkpoints start on
// the loop's thread, where done then runs with the shard or the boot's
// error. Boot runs on the loop's thread; shards boot in parallel. If the
// loop stops before the recovery ends, the recovered files are closed and
// done never runs.
func Boot(loop *runtime.Loop, o Options, done func(*Shard, error)) {
	s := newShard(loop, o)
	go func() {
		b, err := s.recoverData()
		finish := func() {
			if err == nil {
				err = s.start(b)
			}
			if err != nil {
				done(nil, err)
				return
			}
			if s.abortLSN == 0 || s.ckpt.barrier == nil {
				done(s, nil)
				return
			}
			// The ABORTs are durable before anything else runs: a later
			// boot must decide as this one did.
			s.ckpt.barrier.Barrier(s.abortLSN, func(err error) {
				if err != nil {
					done(nil, fmt.Errorf("shard %d: log the aborts of transactions: %w", s.id, err))
					return
				}
				done(s, nil)
			})
		}
		if perr := loop.PostWait(context.Background(), finish); perr != nil && b != nil {
			b.st.Heap.Close()
		}
	}()
}

// newShard builds the shard and its empty keyspace on loop.
func newShard(loop *runtime.Loop, o Options) *Shard {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Tunables == nil {
		o.Tunables = func() Tunables { return Tunables{} }
	}
	if o.WALBackpressure <= 0 {
		o.WALBackpressure = defaultWALBackpressure
	}
	if o.Progress == nil {
		o.Progress = new(LoadProgress)
	}
	s := &Shard{o: o, id: o.ID, log: o.Log, loop: loop, be: loop.Backend(), progress: o.Progress}
	if o.WrapBackend != nil {
		s.be = o.WrapBackend(s.be)
	}
	s.be = s.crashBackend(s.be)
	// The keyspace reads the time of the loop's iteration: one clock read
	// per iteration rather than per command, as Redis caches its time per
	// event-loop turn.
	s.ks = keyspace.NewKeyspace(o.Databases, func() int64 { return loop.Now().UnixMilli() })
	s.ks.MaxBulkLen = o.ProtoMaxBulkLen
	s.ks.Limits = o.EncodingLimits
	s.ks.SetEviction(o.Eviction)
	s.ks.Log = s
	return s
}

// ID is the shard's number.
func (s *Shard) ID() int { return s.id }

// Keyspace is the shard's data, for what reads it without changing it
// (INFO, SCAN cursors, read-ahead) and for the server's commands that act
// on it. Writes go through Exec, so that they are logged and refused as
// the shard's state requires.
func (s *Shard) Keyspace() *keyspace.Keyspace { return s.ks }

// Exec runs a data command on the shard's keyspace and returns the LSN of
// the last WAL record it produced (0 for none); a reply that depends on it
// may leave only through WhenDurable. While the shard cannot log, write
// commands are refused with MISCONF, as Redis refuses them when its AOF
// cannot be written. spec is keyspace.Lookup(args[0]) (nil when unknown).
func (s *Shard) Exec(cl *keyspace.Client, spec *keyspace.CommandSpec, args [][]byte, out *resp.Writer) uint64 {
	if spec.Writes() && s.RefusesWrites() {
		out.Error(s.Misconf())
		return 0
	}
	if s.ks.HasCold() {
		// What the server did not warm on the ring is read here (cold.go).
		if msg := s.ks.WarmSync(cl, spec, args); msg != "" {
			out.Error(msg)
			return 0
		}
	}
	return s.ks.ExecSpec(cl, spec, args, out)
}

// RefusesWrites reports whether write commands are refused now (with
// Misconf's text): the WAL cannot take records, or the shard is poisoned.
func (s *Shard) RefusesWrites() bool { return s.refusing || s.canLog() != nil }

// Tick runs the shard's periodic work, hz times a second: active expiry
// within expireBudget (none when it is 0), and the checkpoint's step.
func (s *Shard) Tick(expireBudget time.Duration) {
	if expireBudget > 0 {
		start := time.Now()
		s.ks.ActiveExpire(expireBudget)
		if s.o.OnLatency != nil {
			s.o.OnLatency("expire-cycle", time.Since(start))
		}
	}
	if s.ckpt != nil && s.ckpt.mgr != nil {
		t := s.o.Tunables()
		s.ckpt.maxWAL = t.MaxWALSize
		s.ckpt.mgr.SetInterval(t.CheckpointTimeout)
		if s.wal != nil { // appendonly no: no checkpoint starts
			s.ckpt.mgr.Tick()
		}
	}
}

// Close runs the shutdown checkpoint (waiting for an outstanding heap
// fsync at most 5 s), seals the WAL (waiting for the writes and fsyncs in
// flight) and releases the heap's files; done runs on the loop's thread
// with the error of the seal.
func (s *Shard) Close(done func(error)) {
	if s.closing != nil { // appendonly no is sealing the log: wait for it
		s.closeWaiters = append(s.closeWaiters, func() { s.Close(done) })
		return
	}
	s.shutdownCheckpoint(func() {
		if s.wal == nil {
			s.closeHeap()
			done(nil)
			return
		}
		s.wal.Close(func(err error) {
			s.closeHeap()
			done(err)
		})
	})
}

// SetEviction applies CONFIG SET of maxmemory-policy and its tunables.
func (s *Shard) SetEviction(e keyspace.Eviction) { s.ks.SetEviction(e) }

// Evict deletes keys by the eviction policy until the shard's data is at
// most limit bytes (keyspace.Evict); under tiered-storage it makes them
// cold instead, and asks for a checkpoint when no key could be (cold.go). A shard that cannot log evicts
// nothing: an evicted key's deletion must reach the WAL before the key
// leaves memory, or a crash would bring it back while the memory it took
// was counted as free.
func (s *Shard) Evict(limit int64, timeLimit time.Duration) keyspace.Evicted {
	if s.refusing || s.canLog() != nil {
		if used := s.ks.DatasetMemory(); used > limit {
			return keyspace.Evicted{Result: keyspace.EvictFail, Used: used}
		}
	}
	ev := s.ks.Evict(limit, timeLimit)
	s.coldStuck()
	return ev
}

// SetEncodingLimits applies CONFIG SET of the encoding thresholds: values
// take them as they are next written, as in Redis.
func (s *Shard) SetEncodingLimits(l keyspace.EncodingLimits) { s.ks.Limits = l }

// SetFsyncPolicy applies CONFIG SET appendfsync ("always", "everysec" or
// "no") on this shard.
func (s *Shard) SetFsyncPolicy(name string) error {
	p, err := wal.ParseFsyncPolicy(name)
	if err != nil {
		return err
	}
	s.policy = p // a log opened later (CONFIG SET appendonly yes) takes it
	if s.wal == nil {
		return nil
	}
	s.wal.Policy = p
	s.walProgress() // replies held for an fdatasync may only need the write now
	return nil
}
