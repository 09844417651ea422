package shard

import "time"

// SAVE, BGSAVE and BGREWRITEAOF map onto checkpoints: a checkpoint is what
// bounds the WAL (the AOF rewrite's job in Redis) and what a restart starts
// from (the RDB's).

// Checkpoints reports whether the shard runs checkpoints (appendonly yes).
func (s *Shard) Checkpoints() bool { return s.ckpt != nil && s.ckpt.mgr != nil && s.wal != nil }

// RequestCheckpoint starts a checkpoint on this shard; done runs on this
// shard's loop: once it finalized (wait), with its error, or at once.
func (s *Shard) RequestCheckpoint(wait bool, done func(error)) {
	if !s.Checkpoints() {
		s.loop.AfterFunc(0, func() { done(nil) })
		return
	}
	if !wait {
		s.ckpt.mgr.Request(nil)
		s.loop.AfterFunc(0, func() { done(nil) })
		return
	}
	s.ckpt.mgr.Request(done)
}

// LastSave is this shard's last finalized checkpoint: this run's, else the
// one the control file recorded, else the server's start.
func (s *Shard) LastSave() time.Time {
	if s.Checkpoints() {
		if t := s.ckpt.mgr.Stats().LastFinalized; !t.IsZero() {
			return t
		}
	}
	if s.ckpt != nil && !s.ckpt.bootSave.IsZero() {
		return s.ckpt.bootSave
	}
	return s.o.Started
}
