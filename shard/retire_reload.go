package shard

import "github.com/moond-db/moond/persistence/checkpoint"

// Retire closes the shard for DEBUG RELOAD, which then boots a new one on
// the same loop and directory. With checkpoint set it is Close (the
// shutdown checkpoint, then the WAL sealed); without, the WAL is sealed
// and the heap released with no checkpoint, so that the next boot replays
// everything above the last redo point, unless a checkpoint is already
// under way, which Close then finishes (the heap must not be released
// under it). Afterwards the shard's loop hooks find no log to kick: the
// retired shard does nothing more. done runs on the loop's thread.
func (s *Shard) Retire(checkpoint bool, done func(error)) {
	finish := func(err error) {
		s.wal, s.closing = nil, nil
		done(err)
	}
	if checkpoint || s.closing != nil || s.checkpointBusy() {
		s.Close(finish)
		return
	}
	if s.wal == nil {
		s.closeHeap()
		finish(nil)
		return
	}
	s.wal.Close(func(err error) {
		s.closeHeap()
		finish(err)
	})
}

// checkpointBusy reports whether a checkpoint is under way.
func (s *Shard) checkpointBusy() bool {
	return s.ckpt != nil && s.ckpt.mgr != nil && s.ckpt.mgr.State() != checkpoint.Idle
}
