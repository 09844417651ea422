package shard

// The shard is its keyspace's keyspace.Log: every effective write arrives
// here in deterministic form and becomes one WAL record.
//
// No write is acknowledged, or even applied, unless its record can be
// logged. A record has no size limit (the WAL splits one above its record
// limit into continuation records), so what remains that can refuse an
// append is the log itself: poisoned by a failed fsync, or out of LSNs.
// Exec asks the Appender (CanAppend) before a write command runs, because
// undoing a command half applied is not possible in general; a command
// that would not be logged fails with MISCONF and changes nothing.

// Append logs one write and returns its LSN, 0 when nothing is logged
// (appendonly no). Every effective write counts toward
// rdb_changes_since_last_save, logged or not.
func (s *Shard) Append(db int, args [][]byte) uint64 {
	s.changes++
	if f := s.feed.Load(); f != nil {
		s.toFeed(*f, db, args)
	}
	if s.wal == nil {
		return 0
	}
	if s.txn.open != s.txn.begun && s.txn.open != 0 {
		if err := s.beginPart(); err != nil {
			s.refuseAppend(err)
			return 0
		}
	}
	lsn, err := s.wal.Appender().AppendCommand(db, args)
	if err != nil {
		// Not a command's record: Exec checked CanAppend before it ran, and
		// nothing between the check and here can poison the log. This is a
		// key expiring on a poisoned log (active expiry), a deletion no
		// client can tell from the expiry itself; it is latched all the
		// same.
		s.refuseAppend(err)
		return 0
	}
	return lsn
}

// canLog reports why a write command must not run: the WAL would refuse
// its records. It latches the refusal (INFO persistence reports it).
func (s *Shard) canLog() error {
	if s.wal == nil {
		return nil
	}
	err := s.wal.Appender().CanAppend()
	if err != nil {
		s.refuseAppend(err)
	}
	return err
}

// refuseAppend latches the first append the WAL refused, for INFO
// (aof_last_write_status:err, wal_append_refused_reason) until restart,
// and refuses writes.
func (s *Shard) refuseAppend(err error) {
	if s.appendRefused == nil {
		s.appendRefused = err
		s.log.Error("WAL refused a record: writes refused (MISCONF)", "shard", s.id, "err", err)
	}
	s.refusing = true
}

// Refused reports whether the WAL refused a record since the boot
// (refuseAppend): a record may then have been applied and fed to the
// replication stream (a key expiring on a poisoned log, the parts of a
// txn whose END was refused) that the log does not hold.
func (s *Shard) Refused() bool { return s.appendRefused != nil }

// LastLSN is the LSN of the last record appended (after recovery, the last
// one replayed, or the last of a log closed by CONFIG SET appendonly no);
// 0 during the boot.
func (s *Shard) LastLSN() uint64 {
	if w := s.logWriter(); w != nil {
		return w.Appender().NextLSN() - 1
	}
	if s.cont.next == 0 {
		return 0
	}
	return s.cont.next - 1
}
