package keyspace

import (
	"hash/maphash"
	"time"
)

// DefaultDatabases is Redis's default number of databases.
const DefaultDatabases = 16

// maxDatabases is the most databases a keyspace may have: a physical id
// fits the dirty list's references (see refGone).
const maxDatabases = 1 << 30

// DefaultMaxBulkLen is Redis's default proto-max-bulk-len: the longest
// string APPEND and SETRANGE may build.
const DefaultMaxBulkLen = 512 << 20

// Client is the per-connection state the data commands need.
type Client struct {
	// DB is the selected database. The server keeps it in range: see
	// [Keyspace.SelectIndex].
	DB int
	// NoTouch is CLIENT NO-TOUCH: reads leave the keys' LRU clocks alone
	// (TOUCH still updates them).
	NoTouch bool
	// WouldBlock is set by a blocking command (BLPOP, ...) that found no
	// data in any of its keys: it replied nothing, and the server waits
	// for a write to them (see cmd_block.go). The caller clears it.
	WouldBlock bool
	// NoBlock makes a blocking command that finds no data reply as on a
	// timeout instead of waiting (inside MULTI, as Redis does).
	NoBlock bool
	// Serving is set while the server runs a blocked command again for a
	// key that was written: a key of another kind there is not ready (the
	// client waits on) rather than WRONGTYPE.
	Serving bool
	// ID is the client's CLIENT ID, 0 for none. The keyspace does not read
	// it: the server does, to tell CLIENT TRACKING's NOLOOP clients their
	// own writes (tracking.go in package server).
	ID int64
}

// Keyspace is one shard's slice of the data: its databases and the state
// that command execution, expiry and the statistics share.
type Keyspace struct {
	// pf, pfHash and pfSink are Prefetch's scratch: the slots it found,
	// the keys' hashes, and what it read, kept so that the reads are not
	// dropped.
	pf     [64]*slot[entry]
	pfHash [64]uint64
	pfSink uint64
	// pfHashElems and pfSetElems are PrefetchElements' scratch.
	pfHashElems []elemAhead[uint64]
	pfSetElems  []elemAhead[struct{}]

	// Now returns the current unix time in milliseconds. Exec reads it once
	// per command; every expiry decision of the command uses that reading.
	Now func() int64

	// Log, when set, receives every effective write in deterministic form
	// (see journal.go): the shard's write-ahead log.
	Log Log

	// Loading is set while the journal is replayed: keys never expire, an
	// expiry time in the past is stored rather than acted on, and nothing
	// is journaled, as Redis does while it loads an AOF.
	Loading bool

	// MaxBulkLen is proto-max-bulk-len, the longest string APPEND and
	// SETRANGE may build.
	MaxBulkLen int64

	// Limits are the encoding thresholds (object.go).
	Limits EncodingLimits

	// TrackDirty makes the keyspace the checkpoint's source (see
	// source.go): every change marks its key dirty for the next
	// checkpoint. The server sets it when persistence is on, before any
	// key exists (BeginLoad sets it too); off, nothing is tracked.
	TrackDirty bool

	// watched is the number of registered watches (watch.go): the write
	// path's one test, next to TrackDirty's.
	watched int

	// Eviction is the maxmemory policy and its tunables (evict.go); set
	// with SetEviction, which also sets lfu.
	Eviction Eviction
	lfu      bool // Eviction.Policy counts accesses (LFU) instead of stamping times
	evict    evictState
	spare    spareStrings // evicted keys' string buffers, for new values (spare.go)

	// Tracker receives the keys writes change, for CLIENT TRACKING
	// (tracker.go); the server sets Tracking while it has anything to
	// invalidate, so that the write path pays one test otherwise.
	Tracker  Tracker
	Tracking bool

	// Notifier hears of keyspace events (notify.go) of the classes in
	// notifyOn, which SetNotify sets: 0 while notify-keyspace-events is
	// off, so that the write path pays one test otherwise.
	Notifier Notifier
	notifyOn EventClass

	dbs      []*db // by logical index, SELECT's: SWAPDB permutes it (see DBMap)
	pdbs     []*db // by physical id, the database heap keys name: fixed
	seed     maphash.Seed
	now      int64 // Now() as read for the command being executed
	stats    Stats
	expireDB int // next database ActiveExpire visits
	// expiryPaused: CLIENT PAUSE is on (SetExpiryPaused); keepExpired:
	// the command running writes nothing, so an expired key it meets is
	// reported missing and kept.
	expiryPaused, keepExpired bool

	scratch  []byte    // reply and parse scratch
	keysTmp  []string  // keys collected by KEYS and SCAN
	jargs    [][]byte  // journal record being built
	execLSN  uint64    // LSN of the last record the running command logged
	jnum     []byte    // digits of numbers in the journal record
	loadDB   []byte    // the database digits of the MOOND.LOAD record being built (cmd_load.go)
	loadEnts []loadEnt // MOOND.LOAD's chunk of entries (cmd_load.go)
	delArgs  [2][]byte // journal record of an expiration

	applyOps []applyOp // MOOND.APPLY's ops being applied

	src  source    // the checkpoint source's state (source.go)
	cold coldState // the cold tier (cold.go)

	// Cold reads cold values synchronously (cold.go): the shard's heap.
	Cold ColdReader
	take taking    // the take in progress (take.go)
	load loadState // the state of a recovery (recovery.go)

	watch watchState // WATCH's registry (watch.go)
}

// db is one numbered database.
type db struct {
	// phys is the database's physical id, the one its heap keys name:
	// its index at creation, kept for good. SWAPDB moves the database to
	// another logical index (Keyspace.dbs) and leaves phys alone, so that
	// no key changes pair (see DBMap).
	phys    int
	keys    dict[entry]
	expires dict[int64] // unix ms of expiry, for the keys whose kw has kwTTL

	// dataBytes is the allocator's share for keys and values, as allocSize
	// estimates it; the tables' own memory comes from dict.memory.
	dataBytes int64
	// coldKeys and coldBytes are its cold keys and the memory their
	// values took when warm (cold.go).
	coldKeys, coldBytes int64

	expireCursor uint64 // where ActiveExpire's walk of expires resumes
	avgTTL       int64  // running estimate of the TTL of keys not yet expired
}

// NewKeyspace returns an empty keyspace of n databases (DefaultDatabases if
// n <= 0) whose clock is now (the system clock if nil).
func NewKeyspace(n int, now func() int64) *Keyspace {
	if n <= 0 {
		n = DefaultDatabases
	}
	if n > maxDatabases {
		panic("keyspace: too many databases")
	}
	if now == nil {
		now = func() int64 { return time.Now().UnixMilli() }
	}
	ks := &Keyspace{Now: now, MaxBulkLen: DefaultMaxBulkLen, Limits: DefaultEncodingLimits(), seed: maphash.MakeSeed()}
	ks.dbs = make([]*db, n)
	ks.pdbs = make([]*db, n)
	ks.src.dbs = make([]dbDirty, n)
	for i := range ks.dbs {
		ks.dbs[i] = ks.newDB(i)
		ks.pdbs[i] = ks.dbs[i]
	}
	ks.evict.init()
	ks.watch.init(n)
	ks.delArgs[0] = []byte("DEL")
	return ks
}

func (ks *Keyspace) newDB(phys int) *db {
	return &db{phys: phys, keys: newDict[entry](ks.seed), expires: newDict[int64](ks.seed)}
}

// NumDBs is the number of databases.
func (ks *Keyspace) NumDBs() int { return len(ks.dbs) }

func (ks *Keyspace) db(c *Client) *db { return ks.dbs[c.DB] }

// lru is the LRU clock stamp of the current command: seconds, 24 bits, as
// Redis's LRU_CLOCK.
func (ks *Keyspace) lru() uint64 {
	return uint64(ks.now/1000) << kwLRUShift & kwLRUMask
}

// touch records an access of the key in sl: its LRU clock, or its LFU
// counter under an LFU maxmemory-policy.
func (ks *Keyspace) touch(sl *slot[entry]) {
	if ks.lfu {
		sl.kw = sl.kw&^kwLRUMask | ks.lfuAccess(sl.kw)
		return
	}
	sl.kw = sl.kw&^kwLRUMask | ks.lru()
}

// stamp is the LRU/LFU field of a key just created.
func (ks *Keyspace) stamp() uint64 {
	if ks.lfu {
		return ks.lfuNew()
	}
	return ks.lru()
}

// lookup finds key in database dbi, deleting it first if its time has come.
// It returns the key's slot (nil if absent) and its hash.
//
// A slot pointer stays valid only until the next insert or delete in the
// same database, and a lookup deletes when it expires a key: copy what you
// need from a slot before looking up another key of its database.
func (ks *Keyspace) lookup(dbi int, key []byte) (*slot[entry], uint64) {
	d := ks.dbs[dbi]
	h := d.keys.hash(key)
	sl := d.keys.find(h, key)
	if sl != nil && sl.kw&kwTTL != 0 && ks.expired(d, h, key) {
		if !ks.keepExpired {
			ks.expireKey(dbi, h, key)
		}
		return nil, h
	}
	return sl, h
}

// lookupRead is Redis's lookupKeyRead: a lookup that counts a keyspace hit
// or miss and refreshes the key's LRU clock unless the client asked for
// NO-TOUCH.
func (ks *Keyspace) lookupRead(c *Client, key []byte) (*slot[entry], uint64) {
	sl, h := ks.lookupReadNoTouch(c, key)
	if sl != nil && !c.NoTouch {
		ks.touch(sl)
	}
	return sl, h
}

// lookupReadNoTouch counts the hit or miss but leaves the LRU clock alone,
// as TTL, TYPE, EXISTS and OBJECT do.
func (ks *Keyspace) lookupReadNoTouch(c *Client, key []byte) (*slot[entry], uint64) {
	sl, h := ks.lookup(c.DB, key)
	if sl == nil {
		ks.stats.KeyspaceMisses++
		ks.notify(NotifyKeyMiss, "keymiss", key, c.DB)
	} else {
		ks.stats.KeyspaceHits++
	}
	return sl, h
}

// lookupWrite is Redis's lookupKeyWrite: no statistics, LRU refreshed.
func (ks *Keyspace) lookupWrite(c *Client, key []byte) (*slot[entry], uint64) {
	sl, h := ks.lookup(c.DB, key)
	if sl != nil {
		ks.touch(sl)
	}
	return sl, h
}

// setKey stores v under key, whose slot from a lookup is sl (nil if the key
// is absent) and whose hash is h, and returns the key's slot. The key's TTL
// survives only if keepTTL.
func (ks *Keyspace) setKey(d *db, h uint64, sl *slot[entry], key []byte, v value, keepTTL bool) *slot[entry] {
	if sl == nil {
		return ks.addKey(d, h, key, "", v)
	}
	if ks.cold.keys > 0 && sl.v.isCold() {
		ks.coldGone(d, sl) // overwritten without a read (cold.go)
	}
	d.dataBytes += v.heapBytes() - sl.v.heapBytes()
	sl.v.value = v
	if !keepTTL && sl.kw&kwTTL != 0 {
		d.expires.remove(h, key)
		sl.kw &^= kwTTL
	}
	ks.touch(sl)
	ks.changed(d, sl)
	return sl
}

// setString is setKey for a string given as bytes (SET, MSET, GETSET): a
// key that holds a string of the same allocation size keeps its memory,
// overwritten in place (see overwriteString).
func (ks *Keyspace) setString(d *db, h uint64, sl *slot[entry], key, b []byte, keepTTL bool) *slot[entry] {
	if sl != nil {
		if v, ok := overwriteString(sl.v.value, b); ok {
			return ks.setKey(d, h, sl, key, v, keepTTL)
		}
	}
	if v, ok := ks.spareString(b); ok {
		return ks.setKey(d, h, sl, key, v, keepTTL)
	}
	return ks.setKey(d, h, sl, key, newStringValue(b), keepTTL)
}

// addKey inserts key, which must be absent, reusing the string k when the
// caller has one it may share (a key moving between databases), else
// copying key. The new key has no heap location: whatever record the
// pair had belongs to its grave.
func (ks *Keyspace) addKey(d *db, h uint64, key []byte, k string, v value) *slot[entry] {
	sl := ks.insertKey(d, h, key, k, v)
	if ks.TrackDirty {
		ks.created(d, sl)
	}
	if ks.watched != 0 {
		ks.touchWatched(d, key)
	}
	if ks.Tracking {
		ks.track(key)
	}
	ks.notifyDB(NotifyNew, "new", key, d)
	return sl
}

// insertKey is addKey without dirty tracking.
func (ks *Keyspace) insertKey(d *db, h uint64, key []byte, k string, v value) *slot[entry] {
	if k == "" && len(key) > 0 {
		k = string(key)
	}
	d.dataBytes += allocSize(int64(len(k))) + v.heapBytes()
	return d.keys.insert(h, k, entry{value: v}, ks.stamp())
}

// deleteKey removes key and its TTL, and reports whether it was there. It
// does not check expiry: callers look the key up first.
func (ks *Keyspace) deleteKey(d *db, h uint64, key []byte) bool {
	s, i := d.keys.lookup(h, key)
	if i < 0 {
		return false
	}
	ks.deleteAt(d, h, key, s, i)
	return true
}

// deleteAt is deleteKey for a key its caller has looked up: in slot i of
// segment s of d's keys table (eviction has, to keep its value's buffer).
func (ks *Keyspace) deleteAt(d *db, h uint64, key []byte, s *segment[entry], i int) {
	sl := &s.slots[i]
	if ks.TrackDirty {
		ks.removed(d, sl)
	}
	if sl.kw&kwTTL != 0 {
		d.expires.remove(h, key)
	}
	if ks.cold.keys > 0 && sl.v.isCold() {
		ks.coldGone(d, sl)
	}
	d.dataBytes -= allocSize(int64(len(key))) + sl.v.heapBytes()
	d.keys.removeAt(s, i)
	if ks.watched != 0 {
		ks.touchWatched(d, key)
	}
	if ks.Tracking {
		ks.track(key)
	}
}

// SelectIndex parses SELECT's argument and checks it against the number of
// databases. It returns the index, or the error reply ("" when none).
func (ks *Keyspace) SelectIndex(arg []byte) (int, string) {
	n, ok := parseInt(arg)
	if !ok || n < -1<<31 || n > 1<<31-1 {
		return 0, errNotInteger
	}
	if n < 0 || n >= int64(len(ks.dbs)) {
		return 0, errDBRange
	}
	return int(n), ""
}
