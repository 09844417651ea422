package keyspace

import (
	"math"
	"time"
)

// Eviction under maxmemory (Redis 7.0's evict.c). The server gives each
// shard its share of maxmemory and calls Evict before and after writes;
// Evict deletes keys chosen by the policy until the shard's data fits.
// An evicted key is deleted like an expired one: its DEL goes to the
// journal first (so the write-ahead log holds it ahead of every write it
// made room for), then the key leaves the tables, its watchers and
// tracking clients are told, and it counts in evicted_keys. Under
// tiered-storage (Eviction.Tiered) a victim is made cold instead (cold.go):
// only a key whose current version is durable in the heap may be, nothing
// is journaled, and no key is deleted.

// EvictionPolicy is maxmemory-policy.
type EvictionPolicy uint8

const (
	NoEviction EvictionPolicy = iota
	AllKeysLRU
	AllKeysLFU
	AllKeysRandom
	VolatileLRU
	VolatileLFU
	VolatileRandom
	VolatileTTL
)

var policyNames = [...]string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random",
	"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}

// ParseEvictionPolicy returns the policy named name (as CONFIG spells it).
func ParseEvictionPolicy(name string) (EvictionPolicy, bool) {
	for i, n := range policyNames {
		if n == name {
			return EvictionPolicy(i), true
		}
	}
	return NoEviction, false
}

func (p EvictionPolicy) String() string { return policyNames[p] }

// LFU reports whether the policy ranks keys by access frequency.
func (p EvictionPolicy) LFU() bool { return p == AllKeysLFU || p == VolatileLFU }

// allKeys reports whether every key may go, not only those with a TTL.
func (p EvictionPolicy) allKeys() bool { return p >= AllKeysLRU && p <= AllKeysRandom }

func (p EvictionPolicy) random() bool { return p == AllKeysRandom || p == VolatileRandom }

// Eviction is the maxmemory policy and its tunables.
type Eviction struct {
	Policy       EvictionPolicy
	Samples      int // maxmemory-samples: keys sampled per database per pool refill
	LFULogFactor int // lfu-log-factor
	LFUDecayTime int // lfu-decay-time, minutes
	// Tiered is tiered-storage: a victim is made cold instead of deleted,
	// and only a victim whose current version is durable in the heap
	// (cold.go); no key is ever deleted.
	Tiered bool
}

// SetEviction applies the policy and its tunables.
func (ks *Keyspace) SetEviction(e Eviction) {
	ks.Eviction = e
	ks.lfu = e.Policy.LFU()
}

// EvictResult is what Evict achieved (Redis's EVICT_OK, EVICT_RUNNING,
// EVICT_FAIL).
type EvictResult uint8

const (
	// EvictOK: the data fits (or nothing could be evicted now, loading).
	EvictOK EvictResult = iota
	// EvictRunning: still over, but the time limit ran out; the next
	// call goes on. Commands are not refused.
	EvictRunning
	// EvictFail: over, and nothing may be evicted (noeviction, or no key
	// the policy allows): commands that add data are refused.
	EvictFail
)

// evictPoolSize is EVPOOL_SIZE: the best candidates kept across calls.
const evictPoolSize = 16

// evictCandidate is an entry of the eviction pool: its score, higher for
// a better candidate, its database, and which of the pool's key buffers
// holds its key. An entry holds no pointer, so keeping the pool sorted
// moves a few plain words per insert rather than slices (a copy with a
// write barrier for each, 5% of a SET's CPU under eviction).
type evictCandidate struct {
	score uint64
	db    int32
	buf   uint8 // the index of its key's buffer in evictState.keys
	used  bool
}

// evictState is the eviction's state across calls.
type evictState struct {
	pool [evictPoolSize]evictCandidate // the used entries are a prefix, in ascending score
	// keys are the pool's key buffers, reused: the pool's entries name
	// each one exactly once (their buf fields are a permutation of the
	// indexes, set by init), whether used or not.
	keys    [evictPoolSize][]byte
	scratch []byte // the key of a random or cold pick
	nextDB  int    // the random policies' next database
	samples []*slot[entry]
	vsamp   []*slot[int64]
	cold    coldCursor // tiered-storage's scan for victims (cold_evict.go)
}

// DatasetMemory is the memory maxmemory bounds: the tables, keys and
// values (UsedMemory without the checkpoint's dirty list). The dirty list
// holds the keys deleted since the last checkpoint: counting it would
// make every eviction cost memory until the next checkpoint, as Redis
// leaves its AOF and replication buffers out of the count for the same
// reason.
func (ks *Keyspace) DatasetMemory() int64 {
	var n int64
	for _, d := range ks.dbs {
		n += d.memory()
	}
	return n
}

// memory is d's part of DatasetMemory.
func (d *db) memory() int64 { return d.keys.memory() + d.expires.memory() + d.dataBytes }

// Evicted is what an Evict call did.
type Evicted struct {
	Result EvictResult
	// LSN is the LSN of the last deletion journaled (0 for none): a reply
	// that must not be acknowledged before the evictions its write caused
	// are durable waits for it.
	LSN uint64
	// Used is DatasetMemory when the call returned.
	Used int64
	// Took is how long the call evicted (0 when it had nothing to
	// evict): the latency monitor's eviction-cycle event.
	Took time.Duration
}

// Evict deletes keys by the eviction policy until DatasetMemory is at most
// limit, for at most timeLimit (checked every 16 keys). It does nothing
// while Loading.
func (ks *Keyspace) Evict(limit int64, timeLimit time.Duration) Evicted {
	used := ks.DatasetMemory()
	if ks.Loading || used <= limit {
		return Evicted{Result: EvictOK, Used: used}
	}
	if ks.Eviction.Policy == NoEviction {
		return Evicted{Result: EvictFail, Used: used}
	}
	ks.now = ks.Now()
	ks.execLSN = 0
	start := time.Since(evictEpoch)
	for n := 1; ; n++ {
		v, ok := ks.evictionPick()
		if !ok {
			ks.cold.failed = ks.Eviction.Tiered
			return Evicted{Result: EvictFail, LSN: ks.execLSN, Used: used, Took: time.Since(evictEpoch) - start}
		}
		// Only this database's memory changes: the others' need not be
		// summed again.
		d := ks.dbs[v.db]
		before := d.memory()
		if ks.Eviction.Tiered {
			ks.coolKey(v.db, v.h, v.key)
		} else {
			ks.evictKey(v)
		}
		if used -= before - d.memory(); used <= limit {
			return Evicted{Result: EvictOK, LSN: ks.execLSN, Used: used, Took: time.Since(evictEpoch) - start}
		}
		if n%16 == 0 {
			if took := time.Since(evictEpoch) - start; took > timeLimit {
				return Evicted{Result: EvictRunning, LSN: ks.execLSN, Used: used, Took: took}
			}
		}
	}
}

// evictEpoch is the origin of Evict's times: time.Since reads the
// monotonic clock alone, where time.Now reads the wall clock too; and the
// time limit is looked at every 16 keys only, as its doc says (it was read
// after every key). An eviction run is about a microsecond, a clock read
// a few percent of it.
var evictEpoch = time.Now()

// victim is the key an eviction picked: its database, hash and bytes
// (valid until the next pick), and where poolPick found it in the keys
// table (seg nil when the pick did not look it up).
type victim struct {
	db  int
	h   uint64
	key []byte
	seg *segment[entry]
	i   int
}

// evictKey deletes the victim, evicted: journaled, then deleted, then
// notified ("evicted", class e), as Redis's performEvictions does.
func (ks *Keyspace) evictKey(v victim) {
	d := ks.dbs[v.db]
	ks.stats.EvictedKeys++
	if ks.journaling() {
		ks.delArgs[1] = v.key
		ks.log(v.db, ks.delArgs[:])
		ks.delArgs[1] = nil
	}
	s, i := v.seg, v.i
	if s == nil {
		s, i = d.keys.lookup(v.h, v.key)
	}
	if i >= 0 {
		ks.keepSpare(s.slots[i].v.value)
		ks.deleteAt(d, v.h, v.key, s, i)
	}
	ks.notify(NotifyEvicted, "evicted", v.key, v.db)
}

// evictionPick returns the key the policy evicts next, and false when no
// key may be evicted. The keys and expires tables share a seed, so the
// hash serves both.
func (ks *Keyspace) evictionPick() (victim, bool) {
	var v victim
	var ok bool
	if ks.Eviction.Policy.random() {
		v.db, v.h, v.key, ok = ks.randomPick()
	} else {
		v, ok = ks.poolPick()
	}
	if !ok && ks.Eviction.Tiered {
		v = victim{}
		v.db, v.h, v.key, ok = ks.coldScan()
	}
	return v, ok
}

// randomPick is allkeys-random and volatile-random: a random key of the
// next database, in turn, that has one.
func (ks *Keyspace) randomPick() (int, uint64, []byte, bool) {
	if !ks.Eviction.Tiered {
		return ks.randomPickOnce()
	}
	for range tieredTries {
		dbi, h, key, ok := ks.randomPickOnce()
		if !ok {
			return dbi, h, key, ok
		}
		d := ks.dbs[dbi]
		if sl := d.keys.find(h, key); sl != nil && ks.coolable(d, sl) {
			return dbi, h, key, true
		}
	}
	return 0, 0, nil, false
}

// tieredTries is how many samples (rounds of the pool's, random keys)
// tiered-storage looks at for a key it may make cold before it gives up
// until the next run: most keys may be cold already, or dirty.
const tieredTries = 16

// randomPickOnce is randomPick's one draw.
func (ks *Keyspace) randomPickOnce() (int, uint64, []byte, bool) {
	all := ks.Eviction.Policy.allKeys()
	for range ks.dbs {
		ks.evict.nextDB = (ks.evict.nextDB + 1) % len(ks.dbs)
		d := ks.dbs[ks.evict.nextDB]
		var key []byte
		if all {
			if sl := d.keys.random(); sl != nil {
				key = sl.keyBytes()
			}
		} else if sl := d.expires.random(); sl != nil {
			key = sl.keyBytes()
		}
		if key != nil {
			buf := &ks.evict.scratch
			*buf = append((*buf)[:0], key...)
			return ks.evict.nextDB, d.keys.hash(*buf), *buf, true
		}
	}
	return 0, 0, nil, false
}

// poolPick is the LRU, LFU and TTL policies: the pool is refilled with
// samples of every database, and its best entry whose key still exists
// is the pick (Redis's evictionPoolPopulate and its use).
func (ks *Keyspace) poolPick() (victim, bool) {
	pool := &ks.evict.pool
	for round := 1; ; round++ {
		if ks.Eviction.Tiered && round > tieredTries {
			return victim{}, false // no sample could be made cold
		}
		total := 0
		for dbi, d := range ks.dbs {
			n := d.expires.count
			if ks.Eviction.Policy.allKeys() {
				n = d.keys.count
			}
			if n > 0 {
				ks.populate(dbi, d)
				total += n
			}
		}
		if total == 0 {
			return victim{}, false
		}
		for k := evictPoolSize - 1; k >= 0; k-- {
			e := &pool[k]
			if !e.used {
				continue
			}
			e.used = false
			d := ks.dbs[e.db]
			key := ks.evict.keys[e.buf]
			h := d.keys.hash(key)
			s, i := d.keys.lookup(h, key)
			found := i >= 0
			if !ks.Eviction.Policy.allKeys() {
				found = d.expires.find(h, key) != nil
			}
			if found && ks.Eviction.Tiered {
				found = i >= 0 && ks.coolable(d, &s.slots[i])
			}
			if found {
				return victim{db: int(e.db), h: h, key: key, seg: s, i: i}, true
			}
		}
	}
}

// populate samples maxmemory-samples keys of database d and puts those
// that score better than the pool's worst into the pool.
func (ks *Keyspace) populate(dbi int, d *db) {
	n := max(ks.Eviction.Samples, 1)
	p := ks.Eviction.Policy
	if p.allKeys() {
		if ks.Eviction.Tiered {
			n = tieredSamples(n, d)
		}
		ks.evict.samples = d.keys.sample(ks.evict.samples[:0], n)
		for _, sl := range ks.evict.samples {
			if !ks.Eviction.Tiered || ks.coolable(d, sl) {
				ks.poolInsert(dbi, sl.keyBytes(), ks.evictScore(sl.kw))
			}
		}
		clear(ks.evict.samples)
		return
	}
	ks.evict.vsamp = d.expires.sample(ks.evict.vsamp[:0], n)
	for _, es := range ks.evict.vsamp {
		key := es.keyBytes()
		sl := d.keys.find(d.keys.hash(key), key)
		if ks.Eviction.Tiered && (sl == nil || !ks.coolable(d, sl)) {
			continue
		}
		if p == VolatileTTL {
			ks.poolInsert(dbi, key, math.MaxUint64-uint64(es.v))
			continue
		}
		if sl != nil {
			ks.poolInsert(dbi, key, ks.evictScore(sl.kw))
		}
	}
	clear(ks.evict.vsamp)
}

// maxTieredSamples bounds the keys one pool refill samples from a
// database under tiered storage (tieredSamples).
const maxTieredSamples = 256

// tieredSamples is how many keys of d to sample under tiered storage for
// about n keys that may be made cold: a cold key is no candidate, and
// once most keys are cold, n samples would hold one warm key or none, so
// the pick would be near random among the warm keys and hot keys would be
// made cold (read back at once). Scaled by the share of warm keys, the
// pool sees as many candidates as maxmemory-samples says, as the policy
// does without tiered storage.
func tieredSamples(n int, d *db) int {
	total := int64(d.keys.count)
	warm := total - d.coldKeys
	if warm <= 0 {
		return n
	}
	return int(min(int64(n)*total/warm, maxTieredSamples))
}

// evictScore is a key's eviction score from its kw: idle milliseconds
// under LRU, 255 less its access counter under LFU.
func (ks *Keyspace) evictScore(kw uint64) uint64 {
	if ks.lfu {
		return 255 - ks.lfuCounter(lfuBits(kw))
	}
	return ks.idleSeconds(kw) * 1000
}

// idleSeconds is the time since the key with this kw was last accessed,
// from the 24-bit LRU clock (which wraps every 194 days).
func (ks *Keyspace) idleSeconds(kw uint64) uint64 {
	now := ks.lru() >> kwLRUShift
	then := lfuBits(kw)
	if now >= then {
		return now - then
	}
	return now + (lruClockMax - then)
}

// poolInsert puts a candidate in the pool, as Redis does: the used
// entries form a prefix in ascending score (picks take the rightmost), a
// full pool drops its lowest entry for a better candidate and ignores a
// worse one. Each entry owns its key buffer; shifts move the buffers
// with the entries and hand the dropped one to the new entry.
func (ks *Keyspace) poolInsert(dbi int, key []byte, score uint64) {
	pool := &ks.evict.pool
	k := 0
	for k < evictPoolSize && pool[k].used && pool[k].score < score {
		k++
	}
	switch {
	case k == 0 && pool[evictPoolSize-1].used:
		return // worse than the worst of a full pool
	case k < evictPoolSize && !pool[k].used:
		// a free entry right where it belongs
	case !pool[evictPoolSize-1].used:
		// room on the right: shift k.. one to the right
		spare := pool[evictPoolSize-1].buf
		copy(pool[k+1:], pool[k:evictPoolSize-1])
		pool[k].buf = spare
	default:
		// full: drop the lowest, shift ..k-1 one to the left
		k--
		spare := pool[0].buf
		copy(pool[:k], pool[1:k+1])
		pool[k].buf = spare
	}
	e := &pool[k]
	ks.evict.keys[e.buf] = append(ks.evict.keys[e.buf][:0], key...)
	e.score, e.db, e.used = score, int32(dbi), true
}

// init gives the pool's entries their key buffers, one each.
func (e *evictState) init() {
	for i := range e.pool {
		e.pool[i].buf = uint8(i)
	}
}
