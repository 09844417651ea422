package shard

import (
	"fmt"

	"github.com/moond-db/moond/persistence/checkpoint"
	"github.com/moond-db/moond/persistence/checkpoint/record"
	"github.com/moond-db/moond/persistence/wal"
)

// CONFIG SET appendonly at run time.
//
// Redis turns its AOF off by flushing and closing it, and on by starting a
// rewrite: the AOF is whole only once the rewrite finished. moond's
// equivalent of the rewrite is a checkpoint, and of the AOF its WAL:
//
//   - yes → no: the shard runs a last checkpoint while it still logs (the
//     heap then holds every key as of a published redo point), waits until
//     no checkpoint runs, and seals the WAL (wal.Writer.Close: everything
//     appended is written and fdatasynced, the segment gets its seal).
//     From the moment the seal is queued, writes are not logged
//     (Shard.Append returns 0, replies do not wait) and no checkpoint
//     starts; the keyspace keeps tracking dirty keys, as it does from the
//     boot on. A restart loads the heap and replays the WAL, as a shard
//     booted with appendonly no does: what was written while off is lost,
//     as in Redis without an AOF.
//   - no → yes: the shard opens a writer that continues the log where the
//     seal (or the boot's recovery) left it — the next LSN, a new segment
//     linked to the sealed one — appends a gap record (record.KindGap) as
//     its first record and starts a checkpoint, whose redo point is then
//     above the gap and which writes every key changed while off (all of
//     them dirty). The WAL records after the gap only hold on top of that
//     checkpoint: they may be deltas (APPEND, SETRANGE) of values the WAL
//     never saw. So recovery from a redo point below a gap stops applying
//     records at the gap (boot.go, replayer), and no reply that depends on
//     a record after the gap leaves before a checkpoint with its redo
//     point above the gap published (ackedLSN): a kill -9 before then
//     loses only unacknowledged writes, and never replays a delta over a
//     base that lacks the changes made while off. A boot that stopped at
//     an uncovered gap is in the same state and does the same: its new
//     records wait for a checkpoint above the gap (start).
//
// CONFIG SET replies at once, as Redis's does; INFO persistence reports
// aof_rewrite_in_progress while the checkpoint that covers a gap runs.
// Transitions are serialized: a change asked for while one runs is made
// when it ends. A poisoned shard changes nothing: its log's end is not
// known to be durable, and continuing it would fork the chain.

// aof is the shard's appendonly state.
type aof struct {
	want    bool        // the last CONFIG SET appendonly
	busy    bool        // a transition runs
	closing *wal.Writer // the writer appendonly no is sealing
	cont    logEnd      // where the log continues, while no writer is open
	offBoot *bootState  // the boot's state when it booted with appendonly no
	gapLSN  uint64      // the gap record no published checkpoint covers yet, 0 for none

	closeWaiters []func() // Close calls waiting for the seal
	replayGap    uint64   // the gap the boot's replay stopped at
	gapSkipped   int64    // records after it, not replayed
}

// logEnd is where the log continues: the next LSN and the link to the
// last sealed segment.
type logEnd struct {
	next uint64
	tail wal.ChainLink
}

// AppendOnly reports whether the shard logs its writes now.
func (s *Shard) AppendOnly() bool { return s.wal != nil }

// Rewriting reports whether a checkpoint that makes the log whole again
// after appendonly no → yes has yet to publish (aof_rewrite_in_progress).
func (s *Shard) Rewriting() bool { return s.wal != nil && s.gapLSN != 0 }

// SetAppendOnly applies CONFIG SET appendonly on this shard (see above).
// It returns at once; the transition runs on the loop's thread.
func (s *Shard) SetAppendOnly(on bool) {
	s.want = on
	s.aofStep()
}

// aofStep starts the transition to the wanted state, if one is needed and
// none runs.
func (s *Shard) aofStep() {
	if s.busy || s.ckpt == nil || s.want == (s.wal != nil) {
		return
	}
	if err := s.poisoned(); err != nil {
		s.log.Error("CONFIG SET appendonly not applied: the shard is poisoned until restart", "shard", s.id, "err", err)
		return
	}
	if s.want {
		s.logOn()
		return
	}
	s.busy = true
	s.log.Info("appendonly no: a last checkpoint, then the WAL is sealed", "shard", s.id)
	s.offWhenIdle()
}

// poisoned is the error that poisoned the shard's log or heap, or nil.
func (s *Shard) poisoned() error {
	if err := s.heapPoisoned(); err != nil {
		return err
	}
	if s.wal != nil {
		return s.wal.Appender().Poisoned()
	}
	return nil
}

// offWhenIdle runs a checkpoint and seals the log once it finalized and no
// other one began after it.
func (s *Shard) offWhenIdle() {
	s.ckpt.mgr.Request(func(err error) {
		if err != nil {
			s.log.Warn("appendonly no: the last checkpoint failed; the WAL is sealed all the same", "shard", s.id, "err", err)
		}
		s.loop.AfterFunc(0, func() {
			if st := s.ckpt.mgr.State(); st != checkpoint.Idle && st != checkpoint.Poisoned {
				s.offWhenIdle()
				return
			}
			s.sealLog()
		})
	})
}

// sealLog stops logging: later writes are not logged, the writer seals
// the segment and makes every record durable, and the replies that wait
// on it leave once it did.
func (s *Shard) sealLog() {
	w := s.wal
	s.wal, s.closing = nil, w
	w.Close(func(err error) {
		s.closing = nil
		acked := s.ackedLSN(w)
		if err != nil {
			s.log.Error("appendonly no: sealing the WAL failed; it cannot be continued before a restart", "shard", s.id, "err", err)
		} else {
			next, tail := w.Appender().Continuation()
			s.cont = logEnd{next: next, tail: tail}
			s.log.Info("appendonly no: WAL sealed, writes are no longer logged", "shard", s.id, "next_lsn", next)
		}
		// Every record is written and durable now, or never will be; those
		// after an uncovered gap will not be replayed.
		held := s.held
		s.held = nil
		for _, h := range held {
			if err == nil && h.lsn <= acked {
				h.release()
			} else {
				h.fail()
			}
		}
		s.refusing = s.heapPoisoned() != nil
		if err == nil {
			s.busy = false // else it stays: the log's end is unknown
		}
		s.resumeReaders()
		waiters := s.closeWaiters
		s.closeWaiters = nil
		for _, fn := range waiters {
			fn()
		}
		s.aofStep()
	})
}

// logOn opens the log again after the sealed segment, logs the gap and
// starts the checkpoint that covers it.
func (s *Shard) logOn() {
	s.openLog()
	c := s.ckpt
	if c.mgr == nil {
		b := s.offBoot
		s.offBoot = nil
		s.startCheckpoints(b.st, b.superseded)
	} else {
		c.barrier.App, c.barrier.Writer, c.barrier.Force = s.wal.Appender(), s.wal, s.wal.Sync
	}
	// The new writer counts its bytes from 0: so does the WAL above the
	// published redo point, until the checkpoint below publishes.
	c.bytesAtPublished = 0
	gap, err := s.wal.Appender().Append(wal.RecordCheckpoint, record.AppendGap(nil))
	if err != nil {
		// A fresh appender refuses only at the end of the LSN space.
		panic(fmt.Sprintf("shard %d: appending the gap record: %v", s.id, err))
	}
	s.gapLSN = gap
	s.log.Info("appendonly yes: WAL opened again; replies to writes wait for the checkpoint that covers the gap",
		"shard", s.id, "gap_lsn", gap)
	s.ckpt.mgr.Request(nil)
}

// gapCovered runs when a checkpoint published redo: once it is above the
// gap, the log is whole again and the held replies may leave.
func (s *Shard) gapCovered(redo uint64) {
	if s.gapLSN == 0 || redo <= s.gapLSN {
		return
	}
	s.log.Info("checkpoint above the WAL gap published: the log is whole again", "shard", s.id, "gap_lsn", s.gapLSN, "redo", redo)
	s.gapLSN = 0
	s.loop.AfterFunc(0, s.walProgress)
}

// kickLog is the loop's BeforeWait hook: the open writer's and the
// closing one's group commit.
func (s *Shard) kickLog() {
	if s.wal != nil {
		s.wal.Kick()
	}
	if s.closing != nil {
		s.closing.Kick()
	}
}
