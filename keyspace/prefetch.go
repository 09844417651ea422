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
// database at logical index db will read: the key's home slot, the bytes
// of the key stored there when its hash tag matches, and the first bytes
// of its value. It changes nothing and answers nothing.
//
// A lookup in a large table is a chain of cache misses (slot array, key
// bytes, value bytes), each waiting for the one before. Run one command
// after another and a pipeline pays every miss in turn; read the same
// memory for the whole pipeline first, in tight loops of independent
// loads, and the misses overlap, so that the commands then find their
// memory in the cache. Keys past the home slot (probe chains) are not
// followed: most keys sit in their home slot.
func (ks *Keyspace) Prefetch(db int, keys [][]byte) {
	if db < 0 || db >= len(ks.dbs) || len(keys) < 2 {
		return
	}
	d := &ks.dbs[db].keys
	if d.count < prefetchMinKeys {
		return
	}
	n := min(len(keys), len(ks.pf))
	pf := ks.pf[:n]
	var sink uint64
	for i, k := range keys[:n] {
		h := d.hash(k)
		s := &d.segs[d.segIndex(h)]
		pf[i] = nil
		if m := len(s.slots); m > 0 {
			sl := &s.slots[home(h, m)]
			sink += sl.kw // the slot's cache line
			if sl.kw&(kwLenMask|kwTagMask) == uint64(len(k))|tagBits(h) {
				pf[i] = sl
			}
		}
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
