package keyspace

// testLog is a Log for tests: onAppend sees each record, lsn says what the
// last one's LSN is. Either may be nil.
type testLog struct {
	onAppend func(db int, args [][]byte)
	lsn      func() uint64
}

func (l *testLog) Append(db int, args [][]byte) uint64 {
	if l.onAppend != nil {
		l.onAppend(db, args)
	}
	return l.LastLSN()
}

func (l *testLog) LastLSN() uint64 {
	if l.lsn == nil {
		return 0
	}
	return l.lsn()
}

// logOf returns ks's testLog, giving it one first if it has none.
func logOf(ks *Keyspace) *testLog {
	if l, ok := ks.Log.(*testLog); ok {
		return l
	}
	l := &testLog{}
	ks.Log = l
	return l
}

// setJournal makes fn see every record ks logs.
func setJournal(ks *Keyspace, fn func(db int, args [][]byte)) { logOf(ks).onAppend = fn }

// setLastLSN makes fn the LSN of ks's last logged record.
func setLastLSN(ks *Keyspace, fn func() uint64) { logOf(ks).lsn = fn }
