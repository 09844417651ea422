package shard

// The replication feed: while a master has replicas (server/master*.go),
// every record the shard's keyspace logs is also handed to the feed, on
// the shard's thread, in the order the writes were applied, whether or
// not a WAL takes it (appendonly no). With no feed set the write path
// pays one atomic load per record.
//
// The records of a txn's part on this shard (txnpart.go: from the first
// record of an open part to its END) are kept and handed over together at
// the END, with the txn's id and the shards its END names, even when the
// part is empty: the master's stream assembler (replication/assemble.go)
// waits for every named shard's part and sends the txn as one MULTI/EXEC.
// Records logged between two steps of the part (a key expiring) wait with
// it, so that the shard's order is kept.

import "github.com/moond-db/moond/persistence/txnlog"

// Feed receives a shard's journal records (keyspace/journal.go); args are
// valid only during the call.
type Feed interface {
	// Record is one record of database db.
	Record(db int, args [][]byte)
	// Part is txn txid's part on this shard, its END naming shards:
	// its records in order, recs[i] of database dbs[i] (none for a part
	// that wrote nothing).
	Part(txid uint64, shards []int, dbs []int, recs [][][]byte)
}

// feedPart is the part being kept for the feed.
type feedPart struct {
	dbs  []int
	recs [][][]byte
}

// SetFeed sets the feed, nil for none. It may be called from any
// goroutine: a record appended meanwhile reaches the old feed or the new.
func (s *Shard) SetFeed(f Feed) {
	if f == nil {
		s.feed.Store(nil)
		return
	}
	s.feed.Store(&f)
}

// toFeed hands one record to f, or keeps it with the open part's.
func (s *Shard) toFeed(f Feed, db int, args [][]byte) {
	if s.txn.open == 0 && len(s.fpart.recs) == 0 {
		f.Record(db, args)
		return
	}
	rec := make([][]byte, len(args))
	for i, a := range args {
		rec[i] = append([]byte(nil), a...)
	}
	s.fpart.dbs = append(s.fpart.dbs, db)
	s.fpart.recs = append(s.fpart.recs, rec)
}

// flushFeedPart hands the kept part of txn txid to the feed (at its END).
func (s *Shard) flushFeedPart(txid uint64, shards []int) {
	if f := s.feed.Load(); f != nil {
		(*f).Part(txid, shards, s.fpart.dbs, s.fpart.recs)
	}
	s.fpart = feedPart{}
}

// SkipPart ends txn txid's part here with no END: the step that would
// have ended it did not run (the shard refuses writes, or closes). What
// the part applied before is handed on to the feed, since the master's
// data holds it, and the assembler does not wait for it. When an earlier
// step of the part logged its BEGIN, an ABORT closes it in the log: the
// txn never commits, and the records after it are no longer the part's
// (replay would take them for it, and the next part could not begin).
func (s *Shard) SkipPart(txid uint64, shards []int) {
	s.txn.open = 0
	s.flushFeedPart(txid, shards)
	if s.txn.unended != txid || s.wal == nil {
		return
	}
	if _, err := s.wal.Appender().AppendCommand(0, txnlog.AbortArgs(txid)); err != nil {
		s.log.Error("cannot log the abort of a transaction's part", "shard", s.id, "txn", txid, "err", err)
		return
	}
	s.txn.unended = 0
}
