package keyspace

// WATCH (optimistic locking for MULTI/EXEC), by Redis 7.0's rules
// (src/multi.c). The server keeps, per client, the Watches it registered
// and asks each one at EXEC whether the transaction must abort; the
// keyspace marks the Watches a write touches.
//
// A Watch names a database by its logical index (SELECT's), as Redis's
// watchedKey names a redisDb: SWAPDB moves the data under the index and
// the watch stays with the index. A touch of a key of the physical
// database d therefore reaches the watches of the logical index d is at
// now (watchState.logicalOf).
//
// What touches a watch (Redis's signalModifiedKey and
// touchAllWatchedKeysInDb):
//   - every effective write of the key: creation (addKey), a change of its
//     value or TTL in place (changed, so changedObject and setKey too),
//     deletion (deleteKey, so DEL, expiry lazy or active, RENAME's and
//     MOVE's source, an emptied collection), and the few writes Redis
//     signals without a change (signalKey's callers);
//   - FLUSHDB and FLUSHALL, for a watched key that exists in the flushed
//     database;
//   - SWAPDB, for a watched key that exists in either of the two databases.
//
// Stale keys (Redis's wk->expired): a key already past its TTL when WATCH
// ran, but not yet deleted, is logically missing. Its deletion (by expiry,
// a flush or a swap that replaces it with nothing) is then no change and
// does not touch the watch; a swap that replaces it with another stale key
// does not either; a swap that replaces a missing key with a stale one
// marks the watch as watching a stale key. At EXEC, a watched key that
// became stale since the WATCH aborts the transaction (isWatchedKeyExpired)
// even if nothing deleted it yet.
//
// The write path pays one test of Keyspace.watched when nothing is watched.

// A Watch is one client's WATCH of one key of one database (Redis's
// watchedKey). It is used on the shard's thread only.
type Watch struct {
	ks  *Keyspace
	db  int    // logical index
	key string // the key's bytes, owned

	// touched is set by a write that touches the key (Redis's
	// CLIENT_DIRTY_CAS, per watch rather than per client).
	touched bool
	// stale: the key was past its TTL but not yet deleted when watched
	// (or a SWAPDB put such a key in place of a missing one).
	stale bool
	// at is the watch's position in its key's list, -1 once unwatched.
	at int
}

// watchState is the keyspace's registry of watches.
type watchState struct {
	// byDB holds, per logical index, the watches of each watched key in
	// the order they were registered; nil for an index with none.
	byDB []map[string][]*Watch
	// logicalOf gives the logical index of each physical database.
	logicalOf []int
}

// init sets up the registry for n databases, none swapped.
func (ws *watchState) init(n int) {
	ws.byDB = make([]map[string][]*Watch, n)
	ws.logicalOf = make([]int, n)
	for i := range ws.logicalOf {
		ws.logicalOf[i] = i
	}
}

// Watch registers a watch of key in the database at logical index db, as
// WATCH does now: a key past its TTL but not yet deleted is watched as a
// stale key. The server keeps at most one Watch per client, database and
// key (Redis ignores a second WATCH of a key the client watches already),
// and does not watch while loading. db must be in range.
func (ks *Keyspace) Watch(db int, key []byte) *Watch {
	w := &Watch{ks: ks, db: db, key: string(key)}
	w.stale = ks.staleKey(ks.dbs[db], key, ks.Now())
	m := ks.watch.byDB[db]
	if m == nil {
		m = make(map[string][]*Watch)
		ks.watch.byDB[db] = m
	}
	list := m[w.key]
	w.at = len(list)
	m[w.key] = append(list, w)
	ks.watched++
	return w
}

// Unwatch drops w (UNWATCH, EXEC, DISCARD, a closing client). It is
// idempotent; a touched watch has left the registry already.
func (ks *Keyspace) Unwatch(w *Watch) {
	if w.at < 0 {
		return
	}
	m := ks.watch.byDB[w.db]
	list := m[w.key]
	copy(list[w.at:], list[w.at+1:])
	list[len(list)-1] = nil
	list = list[:len(list)-1]
	for _, o := range list[w.at:] {
		o.at--
	}
	if len(list) == 0 {
		delete(m, w.key)
	} else {
		m[w.key] = list
	}
	w.at = -1
	ks.watched--
}

// Touched reports whether EXEC must abort because of w: a write touched
// the key since the Watch, or the key, not stale when watched, is past its
// TTL now (deleted or not yet), by the keyspace's clock read now. After
// Unwatch it still reports the touches seen before.
func (w *Watch) Touched() bool {
	if w.touched {
		return true
	}
	if w.stale || w.at < 0 {
		return false
	}
	return w.ks.staleKey(w.ks.dbs[w.db], unsafeBytes(w.key), w.ks.Now())
}

// DB returns the logical index of the database w watches.
func (w *Watch) DB() int { return w.db }

// Key returns the key w watches. The caller must not modify it.
func (w *Watch) Key() []byte { return unsafeBytes(w.key) }

// Watching returns the number of registered watches: those not yet
// touched nor unwatched.
func (ks *Keyspace) Watching() int { return ks.watched }

// staleKey is Redis's keyIsExpired: key exists in d with a TTL that now
// is past. Nothing is stale while Loading.
func (ks *Keyspace) staleKey(d *db, key []byte, now int64) bool {
	if ks.Loading || d.expires.count == 0 {
		return false
	}
	h := d.keys.hash(key)
	sl := d.keys.find(h, key)
	if sl == nil || sl.kw&kwTTL == 0 {
		return false
	}
	return now > d.expires.find(h, key).v
}

// hasKey reports whether key is in d, whatever its TTL (Redis's dictFind
// on the main dict).
func hasKey(d *db, key []byte) bool {
	return d.keys.find(d.keys.hash(key), key) != nil
}

// signalKey is Redis's signalModifiedKey for the writes that signal
// without going through changed, addKey or deleteKey: it touches the
// watches of key in d and tells the Tracker. The key's new state must be
// in place.
func (ks *Keyspace) signalKey(d *db, key []byte) {
	if ks.watched != 0 {
		ks.touchWatched(d, key)
	}
	if ks.Tracking {
		ks.track(key)
	}
}

// touchWatched is Redis's touchWatchedKey: key of the physical database d
// was written. A watch of a stale key is not touched: if the key is gone,
// it was deleted (no logical change) and the watch now watches a missing
// key; if it is still there, nothing changed it (writes delete a stale key
// first). Redis 7.0.15 stops at such a watch and leaves the later watches
// of the key untouched too (a `break`); here they are touched.
//
//go:noinline
func (ks *Keyspace) touchWatched(d *db, key []byte) {
	m := ks.watch.byDB[ks.watch.logicalOf[d.phys]]
	list := m[string(key)]
	touched := false
	for _, w := range list {
		if w.stale {
			if !hasKey(d, key) {
				w.stale = false
			}
			continue
		}
		w.touched = true
		touched = true
	}
	if touched {
		ks.dropTouched(m, list)
	}
}

// dropTouched takes the touched watches out of list, the watches of one
// key in m, as Redis unwatches a client once it is dirty: a touched watch
// stays touched, and later writes of its key need not visit it.
func (ks *Keyspace) dropTouched(m map[string][]*Watch, list []*Watch) {
	key := list[0].key
	j := 0
	for _, w := range list {
		if w.touched {
			w.at = -1
			ks.watched--
			continue
		}
		w.at = j
		list[j] = w
		j++
	}
	clear(list[j:])
	if j == 0 {
		delete(m, key)
	} else {
		m[key] = list[:j]
	}
}

// touchAllWatched is Redis's touchAllWatchedKeysInDb: the database at
// logical index i is emptied (FLUSHDB, FLUSHALL; with: -1) or is about to
// get the contents of the one at logical index with (SWAPDB; called
// before the swap). A watched key present in either is touched, but for
// the stale-key rules: a stale key replaced by nothing or by another
// stale key is no change, nor is a missing key replaced by a stale one
// (the watch then watches a stale key).
func (ks *Keyspace) touchAllWatched(i, with int) {
	emptied := ks.dbs[i]
	var repl *db
	if with >= 0 {
		repl = ks.dbs[with]
	}
	m := ks.watch.byDB[i]
	for key, list := range m {
		k := unsafeBytes(key)
		inEmptied := hasKey(emptied, k)
		inRepl := repl != nil && hasKey(repl, k)
		if !inEmptied && !inRepl {
			continue
		}
		// Below, repl is nil only for a flush, and then the key is in
		// emptied: the cases that read repl are not reached.
		touched := false
		for _, w := range list {
			switch {
			case w.stale && !inRepl:
				w.stale = false // the stale key is deleted: no change
				continue
			case w.stale && ks.staleKey(repl, k, ks.now):
				continue // a stale key stays stale
			case !w.stale && !inEmptied && ks.staleKey(repl, k, ks.now):
				w.stale = true // a missing key becomes a stale one
				continue
			}
			w.touched = true
			touched = true
		}
		if touched {
			ks.dropTouched(m, list) // m's entry for key, during the range: allowed
		}
	}
}
