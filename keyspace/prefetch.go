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
