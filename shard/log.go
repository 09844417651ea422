package shard

// The shard is its keyspace's keyspace.Log: every effective write arrives
// here in deterministic form and becomes one WAL record.

// Append logs one write and returns its LSN, 0 when nothing is logged
// (appendonly no). Every effective write counts toward
// rdb_changes_since_last_save, logged or not.
func (s *Shard) Append(db int, args [][]byte) uint64 {
	s.changes++
	if s.wal == nil {
		return 0
	}
	lsn, err := s.wal.Appender().AppendCommand(db, args)
	if err != nil {
		// Writes are refused while the log cannot take records, so this is
		// a record over the size limit, or the poisoning that happened in
		// this very iteration.
		s.log.Error("write applied in memory but not logged", "shard", s.id, "err", err)
		s.refusing = true
		return 0
	}
	return lsn
}

// LastLSN is the LSN of the last record appended (after recovery, the last
// one replayed); 0 with appendonly no and during the boot.
func (s *Shard) LastLSN() uint64 {
	if s.wal == nil {
		return 0
	}
	return s.wal.Appender().NextLSN() - 1
}
