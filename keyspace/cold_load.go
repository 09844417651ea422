package keyspace

// Cold keys at boot (tiered-storage, cold.go). Once the keyspace's data is
// over the memory share the shard gives it (SetColdLoad), each further
// heap record is loaded as its key, kind, expiry and location only: a
// cold key, whose value the record is (a loaded key is clean). So a data
// set larger than memory restarts. Chunked values load whole. The WAL
// replay that follows runs commands on keys that may be cold: whatever a
// replayed command needs is read through Cold first (ExecSpec and
// applyCmd while Loading), synchronously, from the heap just loaded.

// SetColdLoad makes the load that follows (BeginLoad) load records cold
// once DatasetMemory is over above bytes; 0 loads every value.
func (ks *Keyspace) SetColdLoad(above int64) { ks.load.coldAbove = above }

// loadCold reports whether a record of kind k is to be loaded cold.
func (ks *Keyspace) loadCold(k Kind) bool {
	if ks.load.coldAbove <= 0 || !knownKind(k) {
		return false
	}
	return ks.DatasetMemory() > ks.load.coldAbove
}

// knownKind reports whether values of kind k decode: a record of another
// kind is decoded at load, which reports its error.
func knownKind(k Kind) bool {
	return k == KindString || int(k) < len(objectTypes) && objectTypes[k] != nil
}

// countLoadedCold counts a key just placed with a cold value.
func (ks *Keyspace) countLoadedCold(d *db, v value) {
	d.coldKeys++
	d.coldBytes += v.coldSize()
	ks.cold.keys++
}

// warmForReplay reads the cold values a replayed command needs. A value
// that cannot be read makes the command answer the error, counted as a
// replay failure by the shard.
func (ks *Keyspace) warmForReplay(c *Client, spec *CommandSpec, args [][]byte, w ReplyWriter) bool {
	if !ks.Loading || ks.cold.keys == 0 {
		return true
	}
	if msg := ks.WarmSync(c, spec, args); msg != "" {
		w.Error(msg)
		return false
	}
	return true
}
