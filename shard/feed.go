package shard

// The replication feed: while a master has replicas (server/master*.go),
// every record the shard's keyspace logs is also handed to the feed, on
// the shard's thread, in the order the writes were applied, whether or
// not a WAL takes it (appendonly no). With no feed set the write path
// pays one atomic load per record.

// Feed receives one journal record (keyspace/journal.go) of database db;
// args are valid only during the call.
type Feed func(db int, args [][]byte)

// SetFeed sets the feed, nil for none. It may be called from any
// goroutine: a record appended meanwhile reaches the old feed or the new.
func (s *Shard) SetFeed(f Feed) {
	if f == nil {
		s.feed.Store(nil)
		return
	}
	s.feed.Store(&f)
}
