package shard

import "github.com/moond-db/moond/persistence/wal"

// The acknowledgement rule, in one place: a reply that depends on a write
// leaves only once the WAL holds the write's record — durably under
// appendfsync always, written (in the kernel's page cache, so that it
// survives the process being killed, as Redis's AOF write() before replying
// does) otherwise. A write whose record can never be made durable (the WAL
// is poisoned) is never acknowledged.

// heldReply is a reply that may leave only once the WAL holds lsn. fail
// runs instead of release when the WAL is poisoned before it does.
type heldReply struct {
	lsn     uint64
	release func()
	fail    func()
}

// ackedLSN is how far the WAL must have got before a write is acknowledged.
// While a log opened again after appendonly no has no checkpoint above
// its gap record (aof.go), the records after the gap would not be
// replayed: nothing after it is acknowledged before that checkpoint
// publishes.
func (s *Shard) ackedLSN(w *wal.Writer) uint64 {
	app := w.Appender()
	acked := app.WrittenLSN()
	if w.Policy == wal.FsyncAlways {
		acked = app.DurableLSN()
	}
	if s.gapLSN != 0 {
		acked = min(acked, s.gapLSN)
	}
	return acked
}

// logWriter is the writer replies wait on: the open one, else the one
// being closed (appendonly no), else nil.
func (s *Shard) logWriter() *wal.Writer {
	if s.wal != nil {
		return s.wal
	}
	return s.closing
}

// WhenDurable runs release once the WAL holds every record up to lsn (see
// above): at once when it already does, or when lsn is 0. It runs fail
// instead when the records can never be made durable (the WAL is
// poisoned). Either runs on the loop's thread. LSNs only grow, so the queue
// stays sorted.
func (s *Shard) WhenDurable(lsn uint64, release, fail func()) {
	w := s.logWriter()
	if w == nil || lsn <= s.ackedLSN(w) {
		release()
		return
	}
	if w.Appender().Poisoned() != nil {
		fail()
		return
	}
	s.held = append(s.held, heldReply{lsn: lsn, release: release, fail: fail})
}

// walProgress runs when the WAL's written or durable LSN moved or its
// error state changed: release held replies, resume paused readers, update
// whether writes are refused.
func (s *Shard) walProgress() {
	w := s.logWriter()
	if w == nil {
		return
	}
	app := w.Appender()
	s.logWALState(app)
	s.refusing = app.Poisoned() != nil || app.LastError() != nil || s.heapPoisoned() != nil
	if s.ckpt != nil && s.ckpt.barrier != nil && s.wal != nil {
		s.ckpt.barrier.Progress()
	}
	acked := s.ackedLSN(w)
	for len(s.held) > 0 && s.held[0].lsn <= acked {
		h := s.held[0]
		s.held[0] = heldReply{}
		s.held = s.held[1:]
		h.release()
	}
	if app.Poisoned() != nil && len(s.held) > 0 {
		// These writes will never be durable: nothing may acknowledge them.
		held := s.held
		s.held = nil
		for _, h := range held {
			h.fail()
		}
	}
	s.resumeReaders()
}

// ReadsPaused reports whether connections must stop reading: too much WAL
// is unwritten, or the WAL reached --max-wal-size while a checkpoint runs
// (walfull.go). A connection that finds it true waits with WhenReadable.
func (s *Shard) ReadsPaused() bool {
	w := s.logWriter()
	if w == nil {
		return false
	}
	return w.Appender().Unwritten() > s.o.WALBackpressure || (s.ckpt != nil && s.ckpt.walFull)
}

// WhenReadable runs fn, on the loop's thread, once reading may go on: the
// unwritten WAL is below half the back-pressure mark and the WAL is not
// full.
func (s *Shard) WhenReadable(fn func()) { s.readable = append(s.readable, fn) }

// PausedReaders is how many connections wait in WhenReadable.
func (s *Shard) PausedReaders() int { return len(s.readable) }

// resumeReaders restarts the paused connections once neither reason of
// ReadsPaused holds.
func (s *Shard) resumeReaders() {
	if len(s.readable) == 0 {
		return
	}
	if w := s.logWriter(); w != nil && (w.Appender().Unwritten() >= s.o.WALBackpressure/2 || (s.ckpt != nil && s.ckpt.walFull)) {
		return
	}
	waiting := s.readable
	s.readable = nil
	for _, fn := range waiting {
		fn()
	}
}

// ReadBarrier is the LSN a reply that only read must wait for: the last
// record appended, when the WAL does not hold it yet, else 0. A reader
// must not see another client's write that a crash could still take:
// Redis writes its AOF (and, under always, fsyncs it) before it sends any
// reply of the event-loop iteration, reads included, and this is the same
// rule for a shard. It is conservative (it waits for every record
// appended, not only those the read saw), which costs a reader at most
// the group commit that is under way, and nothing while no write is in
// flight.
//
// While the WAL refuses writes (a failed write being retried, poison), and
// while records after an appendonly gap wait for their checkpoint, reads
// do not wait: the records ahead of them may take that long or never be
// durable, and reads go on as Redis's go on when its AOF cannot be
// written. Loop thread only.
func (s *Shard) ReadBarrier() uint64 {
	w := s.logWriter()
	if w == nil || s.refusing || s.gapLSN != 0 {
		return 0
	}
	last := w.Appender().NextLSN() - 1
	if last <= s.ackedLSN(w) {
		return 0
	}
	return last
}
