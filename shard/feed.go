package shard

// The replication feed: while a master has replicas (server/master*.go),
// every record the shard's keyspace logs is also handed to the feed, on
// the shard's thread, in the order the writes were applied, whether or
// not a WAL takes it (appendonly no). With no feed set the write path
// pays one atomic load per record.
//
// The records of a txn's part on this shard (txnpart.go: from the first
// record of an open part to its END) are kept and handed over together at
// the END, so that a replica applies them all or none (as MULTI/EXEC):
// the part is whole on the replica, though the txn's parts on other
// shards come separately. Records logged between two steps of the part (a
// key expiring) wait with it, so that the shard's order is kept.

// Feed receives a shard's journal records (keyspace/journal.go); args are
// valid only during the call.
type Feed interface {
	// Record is one record of database db.
	Record(db int, args [][]byte)
	// Part is a txn part's records, in order, recs[i] of database dbs[i].
	Part(dbs []int, recs [][][]byte)
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

// flushFeedPart hands the kept part to the feed (at its END).
func (s *Shard) flushFeedPart() {
	if f := s.feed.Load(); f != nil {
		(*f).Part(s.fpart.dbs, s.fpart.recs)
	}
	s.fpart = feedPart{}
}
