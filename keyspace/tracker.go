package keyspace

// A Tracker is told of every change to the keyspace that a client-side
// cache must hear of: CLIENT TRACKING's invalidations (Redis's
// trackingInvalidateKey, which signalModifiedKey calls, and
// trackingInvalidateKeysOnFlush). The server implements it.
//
// Keys are reported where Redis signals a modified key: every effective
// write (creation, change in place, deletion, expiry lazy or active, the
// few writes Redis signals without a change). A key of any database is
// reported by name alone: Redis's tracking table ignores the database.
type Tracker interface {
	// KeyModified is called with a key a write changed or deleted. key
	// is only valid during the call.
	KeyModified(key []byte)
	// Flushed is called when FLUSHDB, FLUSHALL or SWAPDB replaced the
	// contents of a database at once: every cached key may be stale.
	Flushed()
}

// track reports key to the Tracker; callers test ks.Tracking first.
//
//go:noinline
func (ks *Keyspace) track(key []byte) {
	if ks.Tracker != nil {
		ks.Tracker.KeyModified(key)
	}
}

// trackFlush reports a flush or swap of database contents. It is called
// whether or not Tracking is set: a client may track keys of other shards
// only, and still needs to hear that this shard's database was flushed.
func (ks *Keyspace) trackFlush() {
	if ks.Tracker != nil && !ks.Loading {
		ks.Tracker.Flushed()
	}
}
