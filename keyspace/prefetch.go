package keyspace

import "unsafe"

// prefetchMinKeys is the table size below which Prefetch does nothing: a
// smaller table (a few MB with its keys and values) mostly sits in the
// CPU's caches, and reading ahead would only hash every key twice.
const prefetchMinKeys = 1 << 15

// WantsPrefetch reports whether Prefetch would read anything for the
// database at logical index db: whether its table is large enough.
func (ks *Keyspace) WantsPrefetch(db int) bool {
	return db >= 0 && db < len(ks.dbs) && ks.dbs[db].keys.count >= prefetchMinKeys
}

// PrefetchMax is the most keys one Prefetch reads for.
const PrefetchMax = len(Keyspace{}.pf)

// Prefetch reads, for every key in keys, the memory a lookup of it in the
// database at logical index db will read: the key's segment, the first
// slot there whose hash tag matches, the bytes of that slot's key, and
// the first bytes of its value. It changes nothing and answers nothing.
//
// A lookup in a large table is a chain of cache misses (segment, slot,
// key bytes, value bytes), each waiting for the one before. Run one command
// after another and a pipeline pays every miss in turn; read the same
// memory for the whole pipeline first, in tight loops of independent
// loads, and the misses overlap, so that the commands then find their
// memory in the cache. Slots past the first whose tag matches are not
// followed: a tag (7 bits) rarely matches another key of the segment.
func (ks *Keyspace) Prefetch(db int, keys [][]byte) {
	if db < 0 || db >= len(ks.dbs) || len(keys) < 2 {
		return
	}
	d := &ks.dbs[db].keys
	if d.count < prefetchMinKeys {
		return
	}
	n := min(len(keys), len(ks.pf))
	pf, hs := ks.pf[:n], ks.pfHash[:n]
	var sink uint64
	for i, k := range keys[:n] {
		hs[i] = d.hash(k)
		sink += uint64(d.segs[d.segIndex(hs[i])].used) // the segment's cache line
	}
	for i, k := range keys[:n] {
		pf[i] = d.candidate(hs[i], len(k)) // reads the slot
	}
	for _, sl := range pf {
		if sl != nil && sl.kp != nil {
			sink += uint64(*(*byte)(sl.kp)) // the key's bytes
		}
	}
	for _, sl := range pf {
		if sl != nil && sl.v.p != nil && sl.v.p != unsafe.Pointer(&intMark) && sl.v.tag() == tagBytes {
			sink += uint64(*(*byte)(sl.v.p)) // the value's first bytes
		}
	}
	ks.pfSink += sink
	clear(pf) // keep no slot array alive past this call
}

// prefetchLoad reads, for each record FlushLoad is about to place, the
// memory placing it touches, so that the cache misses overlap instead of
// coming one after the other. Each stage is a loop with no dependence
// between records that reads only what the stage before brought in, so
// that no branch waits on a miss (a mispredicted one would throw away the
// loads issued after it), and the loops that miss are short, so that many
// of their iterations fit in the processor's window at once: the keys'
// segments; then, from each segment's header, the slot the insert will
// fill and the first slot whose tag is the key's (about one record in
// sixteen at a table's load of 16 keys a segment: a 7-bit tag), which the
// lookup before the insert reads; then both ends of those slots (the
// insert writes all 40 bytes, across two cache lines half the time); then
// the first bytes of the tagged slots' keys, which the lookup compares.
func (ks *Keyspace) prefetchLoad(pend []pendingRecord) {
	var sink uint64
	for i := range pend {
		p := &pend[i]
		d := &p.d.keys
		sink += uint64(d.segs[d.segIndex(p.h)].used)
	}
	ins, tagged := ks.load.ins[:0], ks.load.tagged[:0]
	for i := range pend {
		p := &pend[i]
		tg, sl := p.d.keys.insertTargets(p.h)
		if sl != nil {
			ins = append(ins, sl)
		}
		if tg != nil {
			tagged = append(tagged, tg)
		}
	}
	for _, sl := range ins {
		sink += sl.touch()
	}
	for _, sl := range tagged {
		sink += sl.touch()
	}
	for _, sl := range tagged {
		sink += uint64(*(*byte)(sl.kp))
	}
	ks.pfSink += sink
	clear(ins) // keep no slot array alive past this call
	clear(tagged)
}

// Element prefetch: the same reading ahead, one level down, for commands
// that name an element (a field or a member) of a hash or a set held in a
// table (HGET, HSET, SADD, SISMEMBER, ...: CommandSpec.PrefetchesElement).
// A pipeline of such commands on one large hash or set misses the cache
// for each element as a GET of a large database does for each key: the
// element's segment, its slot, its bytes. The container itself is one key
// that every command of the pipeline reads, and stays in the cache.

// WantsPrefetchElement reports whether PrefetchElements would read
// anything for an element of key in the database at logical index db:
// whether key holds a hash or a set table of at least prefetchMinKeys
// elements. It changes nothing (no LRU clock, no statistic, no expiry).
func (ks *Keyspace) WantsPrefetchElement(db int, key []byte) bool {
	if db < 0 || db >= len(ks.dbs) {
		return false
	}
	hd, sd := ks.elemDicts(ks.dbs[db], key)
	return hd != nil || sd != nil
}

// elemDicts returns the dict of the hash or set table at key when it has
// at least prefetchMinKeys elements (at most one is not nil).
func (ks *Keyspace) elemDicts(d *db, key []byte) (*dict[uint64], *dict[struct{}]) {
	sl := d.keys.find(d.keys.hash(key), key)
	if sl == nil || sl.v.isCold() {
		return nil, nil
	}
	switch p := sl.v.p; sl.v.kind() {
	case KindHash:
		if hashIsTable(p) && (*hashTable)(p).d.count >= prefetchMinKeys {
			return &(*hashTable)(p).d, nil
		}
	case KindSet:
		if setEnc(p) == setEncHash && setTab(p).d.count >= prefetchMinKeys {
			return nil, &setTab(p).d
		}
	}
	return nil, nil
}

// elemAhead is one element PrefetchElements reads for: its table's dict,
// its hash and length, then its candidate slot.
type elemAhead[V any] struct {
	d  *dict[V]
	h  uint64
	n  int
	sl *slot[V]
}

// PrefetchElements reads, for every i, the memory a lookup of elems[i] in
// the hash or set at keys[i] (of the database at logical index db) will
// read, where that is a table of at least prefetchMinKeys elements: the
// element's segment, its candidate slot and the slot's bytes (a hash
// field's value follows them). It changes nothing and answers nothing. A
// run of the same key costs one lookup of it.
func (ks *Keyspace) PrefetchElements(db int, keys, elems [][]byte) {
	if db < 0 || db >= len(ks.dbs) || len(keys) != len(elems) {
		return
	}
	d := ks.dbs[db]
	hs, ss := ks.pfHashElems[:0], ks.pfSetElems[:0]
	var hd *dict[uint64]
	var sd *dict[struct{}]
	for i, k := range keys[:min(len(keys), PrefetchMax)] {
		if i == 0 || string(k) != string(keys[i-1]) {
			hd, sd = ks.elemDicts(d, k)
		}
		switch e := elems[i]; {
		case hd != nil:
			hs = append(hs, elemAhead[uint64]{d: hd, h: hd.hash(e), n: len(e)})
		case sd != nil:
			ss = append(ss, elemAhead[struct{}]{d: sd, h: sd.hash(e), n: len(e)})
		}
	}
	sink := prefetchElems(hs)
	for _, e := range hs {
		if sl := e.sl; sl != nil && sl.v > 0 {
			sink += uint64(*(*byte)(unsafe.Add(sl.kp, e.n))) // the value's first byte (pairValue)
		}
	}
	sink += prefetchElems(ss)
	ks.pfSink += sink
	clear(hs) // keep no table alive past this call
	clear(ss)
	ks.pfHashElems, ks.pfSetElems = hs[:0], ss[:0]
}

// prefetchElems reads, in stages of independent loads (see Prefetch),
// each element's segment header, then its candidate slot, then the
// first byte of that slot's key; it leaves the candidates in items.
func prefetchElems[V any](items []elemAhead[V]) uint64 {
	var sink uint64
	for i := range items {
		e := &items[i]
		sink += uint64(e.d.segs[e.d.segIndex(e.h)].used)
	}
	for i := range items {
		e := &items[i]
		e.sl = e.d.candidate(e.h, e.n)
	}
	for _, e := range items {
		if e.sl != nil && e.n > 0 {
			sink += uint64(*(*byte)(e.sl.kp))
		}
	}
	return sink
}
