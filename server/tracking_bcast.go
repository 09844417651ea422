package server

import (
	"maps"
	"slices"
	"strings"
)

// BCAST mode (tracking.go): a client names prefixes and hears of every
// key written that starts with one of them, whatever it read. The
// prefixes are a server-wide directory, read by every shard's writes
// without a lock and replaced whole (copy on write) when a client adds or
// drops prefixes; each shard collects the keys it changed per prefix
// during its loop's iteration and sends each subscribed client one
// message per prefix before the loop waits, as Redis does in beforeSleep.

// bcastSub is a client subscribed to a prefix, and its home shard.
type bcastSub struct {
	id   int64
	home int
}

// hasPrefixes reports whether some client broadcasts.
func (st *serverTracking) hasPrefixes() bool {
	p := st.prefixes.Load()
	return p != nil && len(*p) > 0
}

// addPrefixes subscribes client id, homed on shard home, to prefixes.
func (st *serverTracking) addPrefixes(prefixes []string, id int64, home int) {
	if len(prefixes) == 0 {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	next := st.copyPrefixes()
	for _, p := range prefixes {
		next[p] = append(slices.Clip(next[p]), bcastSub{id: id, home: home})
	}
	st.prefixes.Store(&next)
}

// removePrefixes unsubscribes client id from prefixes; a prefix left with
// no client leaves the directory.
func (st *serverTracking) removePrefixes(prefixes []string, id int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	next := st.copyPrefixes()
	for _, p := range prefixes {
		subs := slices.DeleteFunc(slices.Clone(next[p]), func(s bcastSub) bool { return s.id == id })
		if len(subs) == 0 {
			delete(next, p)
		} else {
			next[p] = subs
		}
	}
	st.prefixes.Store(&next)
}

func (st *serverTracking) copyPrefixes() map[string][]bcastSub {
	if p := st.prefixes.Load(); p != nil {
		return maps.Clone(*p)
	}
	return map[string][]bcastSub{}
}

// noteBroadcast records a changed key under every prefix it matches, with
// the client that changed it (Redis's trackingRememberKeyToBroadcast).
func (t *shardTracking) noteBroadcast(key []byte) {
	for prefix := range *t.w.srv.tracking.prefixes.Load() {
		if !strings.HasPrefix(string(key), prefix) {
			continue
		}
		if t.bcast == nil {
			t.bcast = map[string]map[string]int64{}
		}
		keys := t.bcast[prefix]
		if keys == nil {
			keys = map[string]int64{}
			t.bcast[prefix] = keys
		}
		keys[string(key)] = t.caller
	}
}

// queueBroadcasts queues, for each prefix with changed keys, one message
// with all of them to each client subscribed to it now: prefixes and keys
// in byte order, as Redis's radix trees give them.
func (t *shardTracking) queueBroadcasts() {
	dir := *t.w.srv.tracking.prefixes.Load()
	for _, prefix := range slices.Sorted(maps.Keys(t.bcast)) {
		subs := dir[prefix]
		if len(subs) == 0 {
			continue
		}
		changed := t.bcast[prefix]
		names := slices.Sorted(maps.Keys(changed))
		keys := make([][]byte, len(names))
		mods := make([]int64, len(names))
		for i, k := range names {
			keys[i], mods[i] = []byte(k), changed[k]
		}
		for _, s := range subs {
			t.queue(s.id, invalidation{target: s.id, kind: invalidateBroadcast, keys: keys, modifiers: mods})
		}
	}
	clear(t.bcast)
}

// prefixCount is the number of prefixes some client broadcasts on (INFO
// tracking_total_prefixes).
func (st *serverTracking) prefixCount() int {
	if p := st.prefixes.Load(); p != nil {
		return len(*p)
	}
	return 0
}
