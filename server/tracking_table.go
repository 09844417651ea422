package server

import (
	"slices"
	"sync/atomic"
)

// shardTracking is one shard's side of CLIENT TRACKING (tracking.go): the
// keys of this shard that tracking clients read, and the invalidations
// its writes caused during the loop's iteration. It is the keyspace's
// Tracker. Touched on the shard's thread only, but for the counters INFO
// reads.
type shardTracking struct {
	w *worker
	// keys maps a key (of any database: Redis's table ignores them) to
	// the clients that may cache it.
	keys map[string]trackedBy
	// nkeys and nitems are len(keys) and the ids in it (INFO's
	// tracking_total_keys and tracking_total_items), summed over shards.
	nkeys, nitems atomic.Int64
	// caller is the id of the client whose command runs now on this shard
	// (0: none, as for expiry): NOLOOP clients skip their own writes.
	caller int64
	// out holds the invalidations due, by the home shard of their target
	// client; targets lists the shards with some, in order.
	out     [][]invalidation
	targets []int
	// bcast holds, per BCAST prefix, the keys changed in this iteration
	// that it matches, with the id of the client that changed each last.
	bcast map[string]map[string]int64
	// flushed: a flush or SWAPDB ran here in this iteration; every
	// tracking client of this shard hears it once.
	flushed bool
	// overLimit counts the ticks the table stayed over its share of
	// tracking-table-max-keys (Redis's timeout_counter: the effort grows).
	overLimit int
}

func (t *shardTracking) init(w *worker) {
	t.w = w
	t.keys = make(map[string]trackedBy)
	t.out = make([][]invalidation, w.srv.nshards)
}

// remember records that client id may cache key (Redis's
// trackingRememberKeys, for one key).
func (t *shardTracking) remember(key []byte, id int64) {
	by, ok := t.keys[string(key)] // no copy of key for the lookup
	if by.has(id) {
		return
	}
	if !ok {
		t.nkeys.Add(1)
	}
	t.keys[string(key)] = by.with(id)
	t.nitems.Add(1)
	if t.w.ks != nil {
		t.w.ks.Tracking = true
	}
}

// KeyModified is the keyspace's report of a changed key (Redis's
// trackingInvalidateKey): the clients that may cache it are told, and the
// key leaves the table until a tracking client reads it again.
func (t *shardTracking) KeyModified(key []byte) {
	if t.w.srv.tracking.hasPrefixes() {
		t.noteBroadcast(key)
	}
	by, ok := t.keys[string(key)]
	if !ok {
		t.updateGate()
		return
	}
	t.forget(string(key), by)
	k := [][]byte{append([]byte(nil), key...)}
	by.each(func(id int64) {
		t.queue(id, invalidation{target: id, kind: invalidateKeys, keys: k, modifier: t.caller})
	})
}

// forget drops key, read by by, from the table.
func (t *shardTracking) forget(key string, by trackedBy) {
	delete(t.keys, key)
	t.nkeys.Add(-1)
	t.nitems.Add(-int64(1 + len(by.more)))
	t.updateGate()
}

// Flushed is the keyspace's report of a flush or a SWAPDB (Redis's
// trackingInvalidateKeysOnFlush): the table empties, and every tracking
// client whose home is this shard gets one null invalidation. Every shard
// runs a flush, so each tracking client hears it once.
func (t *shardTracking) Flushed() {
	if len(t.keys) > 0 {
		clear(t.keys)
		t.nkeys.Store(0)
		t.nitems.Store(0)
		t.updateGate()
	}
	if t.w.srv.tracking.clients.Load() > 0 {
		t.flushed = true
	}
}

// updateGate sets the keyspace's Tracking flag: writes report their keys
// while this table holds any or some client broadcasts.
func (t *shardTracking) updateGate() {
	if t.w.ks == nil {
		return // while the shard loads: boot sets the gate
	}
	t.w.ks.Tracking = len(t.keys) > 0 || t.w.srv.tracking.hasPrefixes()
}

// limit keeps the table within this shard's share of
// tracking-table-max-keys (Redis's trackingLimitUsedSlots, run from the
// tick): keys chosen at random are invalidated as if written, 100 per
// tick and 100 more each tick the table stays over.
func (t *shardTracking) limit() {
	most := t.w.srv.trackingShare(t.w.id)
	if most < 0 || len(t.keys) <= most {
		t.overLimit = 0
		return
	}
	effort := 100 * (t.overLimit + 1)
	for key, by := range t.keys { // Go's map order is random
		if effort == 0 || len(t.keys) <= most {
			break
		}
		effort--
		t.forget(key, by)
		k := [][]byte{[]byte(key)}
		by.each(func(id int64) {
			t.queue(id, invalidation{target: id, kind: invalidateKeys, keys: k})
		})
	}
	if len(t.keys) > most {
		t.overLimit++
	} else {
		t.overLimit = 0
	}
}

// trackingShare is shard's share of tracking-table-max-keys: the limit
// split evenly, the remainder to the first shards; -1 for no limit.
func (s *Server) trackingShare(shard int) int {
	s.cfgMu.RLock()
	most := s.cfg.TrackingTableMaxKeys
	s.cfgMu.RUnlock()
	if most == 0 {
		return -1
	}
	share := most / s.nshards
	if shard < most%s.nshards {
		share++
	}
	return share
}

// trackedTotals sums the shards' tables: keys and (key, client) items.
func (s *Server) trackedTotals() (keys, items int64) {
	for _, w := range s.workers {
		keys += w.track.nkeys.Load()
		items += w.track.nitems.Load()
	}
	return keys, items
}

// trackedBy are the clients that may cache one key: the first inline, so
// that the common key read by one client costs no allocation of its own.
// A present entry always has id set.
type trackedBy struct {
	id   int64
	more []int64
}

func (b trackedBy) has(id int64) bool {
	return b.id == id || slices.Contains(b.more, id)
}

// with returns b with id added (b may be the zero value).
func (b trackedBy) with(id int64) trackedBy {
	if b.id == 0 {
		return trackedBy{id: id}
	}
	b.more = append(b.more, id)
	return b
}

func (b trackedBy) each(f func(id int64)) {
	f(b.id)
	for _, id := range b.more {
		f(id)
	}
}
