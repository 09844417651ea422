package keyspace

// DumpForMigrate is what MIGRATE sends of key in database db: its DUMP
// payload and the milliseconds it has left to live (0 for no TTL, at
// least 1 otherwise, as Redis sends them), or false when the key does not
// exist or has expired. A due key is expired on the way, as any read
// does (and journaled as a DEL).
func (ks *Keyspace) DumpForMigrate(db int, key []byte) (payload []byte, ttl int64, ok bool) {
	ks.now = ks.Now()
	c := &Client{DB: db}
	sl, h := ks.lookupRead(c, key)
	if sl == nil {
		return nil, 0, false
	}
	if when := ks.expiryOf(ks.db(c), h, sl); when != -1 {
		ttl = max(when-ks.now, 1)
	}
	v, err := ks.valueOf(ks.db(c), sl)
	if err != nil {
		return nil, 0, false // a cold value that cannot be read: counted (cold.go)
	}
	return appendDump(nil, v), ttl, true
}
