package shard

import (
	"time"

	"github.com/moond-db/moond/persistence/checkpoint"
)

// maxWALPause is how long a checkpoint may make no progress while the
// shard does not read for --max-wal-size.
const maxWALPause = time.Second

// walAppended is how many WAL bytes the shard has appended: written, or
// queued to be. Only with a log (appendonly yes).
func (s *Shard) walAppended() int64 {
	return s.wal.Stats().Bytes + int64(s.wal.Appender().Unwritten())
}

// walBytesSinceCheckpoint is the WAL above the published redo point: 0
// while appendonly is off (the log is sealed, s.wal nil, though the
// checkpoint manager stays).
func (s *Shard) walBytesSinceCheckpoint() int64 {
	if s.wal == nil {
		return 0
	}
	return max(s.walAppended()-s.ckpt.bytesAtPublished, 0)
}

// maybeWALFull is the --max-wal-size trigger, once per loop iteration. It
// only ever starts a checkpoint; it never waits on one.
//
// It fires at half of --max-wal-size: the WAL keeps growing while the
// checkpoint runs (the writes, and the checkpoint's own full-page images,
// about the size of the dirty part of the heap), and only its publication
// lets the segments below the new redo point go. Starting at the full size
// would overshoot it by a whole checkpoint's worth every time; as in
// PostgreSQL, the limit is kept when the hot set's heap pages are well
// below it.
//
// Should the WAL still reach seven eighths of the size while the
// checkpoint runs (a write burst, a slow disk), the shard stops reading
// from its clients until the checkpoint publishes its redo point: the
// last eighth is room for the commands already read and the checkpoint's
// own full-page images, and --max-wal-size is then a bound, not a hope.
// The pause holds while the checkpoint makes progress; one that makes none
// for maxWALPause (a failing heap disk) must not stop the server, so the
// shard reads again, logs that the limit is exceeded, and does not pause
// again before the next checkpoint publishes.
func (s *Shard) maybeWALFull() {
	c := s.ckpt
	if !s.Checkpoints() || c.maxWAL <= 0 {
		return
	}
	since := s.walBytesSinceCheckpoint()
	c.mgr.MaybeWALFull(since, c.maxWAL/2)
	if c.walFull || c.walStuck || since < c.maxWAL-c.maxWAL/8 || !c.mgr.Stats().InProgress {
		return
	}
	c.walFull = true
	c.walProgress = checkpointProgress(c.mgr.Stats())
	var check func()
	check = func() {
		if !c.walFull {
			return
		}
		if p := checkpointProgress(c.mgr.Stats()); p != c.walProgress {
			c.walProgress = p
			s.loop.AfterFunc(maxWALPause, check)
			return
		}
		s.log.Warn("WAL over --max-wal-size and the checkpoint makes no progress: clients are read again",
			"shard", s.id, "wal_bytes_since_checkpoint", s.walBytesSinceCheckpoint(), "max_wal_size", c.maxWAL)
		c.walFull, c.walStuck = false, true
		s.resumeReaders()
	}
	s.loop.AfterFunc(maxWALPause, check)
}

// checkpointProgress is a figure that changes whenever the running
// checkpoint moves on.
func checkpointProgress(st checkpoint.Stats) int64 {
	return st.PagesFlushed + st.Fsyncs + st.Barriers + int64(st.State) + st.KeysWritten
}
