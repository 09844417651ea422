package shard

import (
	"time"

	"github.com/moond-db/moond/persistence/checkpoint"
	"github.com/moond-db/moond/persistence/wal"
)

// WALStats and CheckpointStats are the WAL writer's and the checkpoint
// manager's counters, as INFO reports them.
type (
	WALStats        = wal.WriterStats
	CheckpointStats = checkpoint.Stats
	// CheckpointState is a checkpoint's phase; CheckpointStats.PhaseSeconds
	// is indexed by it.
	CheckpointState = checkpoint.State
	// WALHistogram is one of WALStats's histograms.
	WALHistogram = wal.Histogram
)

// The bucket bounds of WALStats's histograms (GroupRecords, SyncSeconds),
// for the server's /metrics, which imports no persistence package.
var (
	WALGroupRecordBounds = wal.GroupRecordBounds[:]
	WALSyncSecondsBounds = wal.SyncSecondsBounds[:]
)

// Info is what one shard contributes to INFO persistence, gathered on its
// thread.
type Info struct {
	Changes    int64 // writes since the last save (rdb_changes_since_last_save)
	WAL        WALInfo
	Checkpoint CheckpointInfo
}

// WALInfo is the shard's WAL state.
type WALInfo struct {
	Enabled    bool
	NextLSN    uint64
	DurableLSN uint64
	Stats      WALStats
	LastErr    error // the failed write being retried, or nil
	Poison     error // the fdatasync failure that poisoned the shard, or nil
	// AppendRefused is the first record the WAL refused to take (a write
	// refused before it ran), latched until restart; nil when none.
	AppendRefused  error
	Unwritten      int
	RecoveredBytes int64 // WAL bytes replayed at boot
	Policy         string
	// Rewriting: the log was opened again (CONFIG SET appendonly yes)
	// and the checkpoint that makes it whole has not published yet.
	Rewriting bool
}

// CheckpointInfo is the shard's checkpoint and heap state.
type CheckpointInfo struct {
	Stats     CheckpointStats
	HeapFiles int
	HeapPages int
	HeapBytes int64
	// WALSegments is the number of WAL segment files on disk (those
	// recycling has not unlinked yet).
	WALSegments int
	WALSince    int64 // WAL bytes above the published redo point
	DirtyKeys   int
	Recycled    int64 // WAL segments recycled
	LastSave    time.Time
	LastStatus  string // "ok" or "err", as rdb_last_bgsave_status
	// PeerSyncs counts the syncs of every shard's WAL its checkpoints
	// asked for after parts of txns (txnsync.go).
	PeerSyncs int64
}

// Info gathers the shard's figures.
func (s *Shard) Info() Info {
	return Info{Changes: s.changes, WAL: s.walInfo(), Checkpoint: s.checkpointInfo()}
}

func (s *Shard) walInfo() WALInfo {
	wi := WALInfo{RecoveredBytes: s.walRecovered, AppendRefused: s.appendRefused}
	if s.wal == nil {
		return wi
	}
	app := s.wal.Appender()
	wi.Enabled = true
	wi.NextLSN, wi.DurableLSN = app.NextLSN(), app.DurableLSN()
	wi.Stats = s.wal.Stats()
	wi.LastErr, wi.Poison = app.LastError(), app.Poisoned()
	wi.Unwritten = app.Unwritten()
	wi.Policy = s.wal.Policy.String()
	wi.Rewriting = s.Rewriting()
	return wi
}

func (s *Shard) checkpointInfo() CheckpointInfo {
	ci := CheckpointInfo{LastSave: s.LastSave(), LastStatus: "ok", PeerSyncs: s.txn.peerSyncs}
	c := s.ckpt
	if c == nil {
		return ci
	}
	hs := c.heap.Stats()
	ci.HeapFiles, ci.HeapPages, ci.HeapBytes = hs.Files, hs.Pages, hs.Bytes
	ci.WALSegments = len(c.segs)
	if c.mgr == nil {
		return ci
	}
	ci.Stats = c.mgr.Stats()
	ci.WALSince = s.walBytesSinceCheckpoint()
	ci.DirtyKeys = s.ks.DirtyKeys()
	ci.Recycled = c.recycled
	if ci.Stats.Poisoned || (ci.Stats.LastError != "" && ci.Stats.InProgress) {
		ci.LastStatus = "err"
	}
	return ci
}
