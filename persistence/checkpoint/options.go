package checkpoint

import (
	"time"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/manifest"
	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/runtime"
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
	// Parts are more records of a live version, written with Record in
	// the same step: the chunks of a large value that changed since they
	// were last written (keyspace/chunk.go). Record names them; a reader
	// takes a version only when every part it names is there.
	Parts []heap.Record
	// OldParts are records of earlier versions that this one no longer
	// uses (chunks rewritten, or a value no longer stored in chunks). They
	// are freed as superseded versions are, once the checkpoint finalizes,
	// even when the key was deleted: until then a crash may boot the
	// older version, which needs them.
	OldParts []heap.RecordID
}

// Source is the shard's keyspace as the checkpoint sees it.
type Source interface {
	// BeginTake starts taking the keys changed since the last take began:
	// every one of them is returned by TakeSome before it reports done.
	// The checkpoint calls it at its redo point. It is cheap (it never
	// stalls the loop), and no take may be in progress.
	BeginTake()
	// TakeSome returns up to max more keys of the take in progress, and
	// whether the take is done. It does a bounded slice of work, so it may
	// return none before it is done; the loop serves clients between two
	// calls. The keys are valid until the next TakeSome. A key that changes
	// after it was returned is returned by a later take: the checkpoint
	// reads its Version only after it was returned.
	TakeSome(max int) (keys [][]byte, done bool)
	// Version returns key's current state.
	Version(key []byte) Version
	// Placed tells the keyspace where key's version now lives in the heap
	// (live: id, and parts[i] for the version's Parts[i]), or that it has
	// no record there any more (!live); parts is valid for the call only. It follows the Version call for
	// the same key with nothing in between, and only once every record of
	// the version was inserted: a version that failed to be written is
	// taken again with a new Version.
	Placed(key []byte, id heap.RecordID, parts []heap.RecordID, live bool)
}

// DeadPeeker is what a Source may offer the look-ahead for cold pages: the
// record of a deleted key (whose free needs its page), without building
// the version of a live one, which may be large.
type DeadPeeker interface {
	// DeadOld returns the record of key's last checkpointed version when
	// key is deleted and has one.
	DeadOld(key []byte) (heap.RecordID, bool)
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
	// WriteChunk bounds the keys written into pages per loop step, and
	// the keys a step takes from the Source (default 1024).
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
	// in the file dirty again (the next take returns them), and a checkpoint
	// that is running writes them again, with its redo point, before it
	// finalizes: its redo never moves over a key whose only copy above the
	// old redo point was in the lost file.
	OnVanished func(file uint32, retired bool)
	// LoadPages reads pages that heap operations need and the cache does
	// not hold (heap.ErrNotResident) into the cache (Cache.AddClean),
	// through the backend, all at once, and calls done on the loop's
	// thread, never inside the call, once every read finished: nil, or
	// the first failure (the step is then retried after a backoff). A
	// page whose file is missing is not an error: the loader reports the
	// file with Manager.FileMissing, before done, and the heap then needs
	// nothing from it. A checkpoint that misses pages while Writing waits
	// for done (waitLoad), so that N cold pages cost N divided by what
	// the disk reads at once, not one retry each.
	LoadPages func(pages []heap.PageID, done func(error))
	// OnBegin is called when a checkpoint begins, with its redo point.
	OnBegin func(redo uint64)
	// BeginRecord, when set, returns a wal.RecordCheckpoint payload to log
	// at the redo point itself (its LSN is the redo LSN, so recovery
	// replays it first), or nil for none: state that replay needs as of
	// the redo point, such as the database map. A checkpoint whose record
	// cannot be appended does not begin; the tick tries again.
	BeginRecord func() []byte
	// Held, when set and true, keeps the checkpoint from beginning and
	// from taking keys (Writing) for now: the shard is held by a txn across
	// shards whose parts are not all durable yet, and neither the heap nor
	// a redo point may depend on them (persistence/txnlog). The tick tries
	// again.
	Held func() bool
	// OnStep, when set, is called as the checkpoint passes each Step: the
	// crash points end-to-end tests stop the process at. StepBarrier and
	// StepMidPwrite lie inside a linked chain, where the process cannot
	// stop: they are never passed here (see Step).
	OnStep func(Step)
}
