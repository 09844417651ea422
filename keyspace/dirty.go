package keyspace

import "unsafe"

// The list of dirty pairs (see source.go): how a change, a creation and a
// removal mark a pair for the next checkpoint, walk mode, and compaction.

// changed marks the key in sl, of database d, dirty: it changed in place.
// It touches the key's watches too (watch.go).
// This is the hot path: a key already dirty, with nothing watched, costs
// three tests. A key that the take in progress has yet to take (its prev
// bit) is left as it is: the take returns it, and the checkpoint reads its
// Version, which covers this change, only after that.
func (ks *Keyspace) changed(d *db, sl *slot[entry]) {
	if ks.TrackDirty && sl.v.loc&locDirtyAny == 0 || ks.watched != 0 || ks.Tracking {
		ks.changedSlow(d, sl)
	}
}

// changedSlow is changed's slow path, kept out of line so that changed
// inlines.
//
//go:noinline
func (ks *Keyspace) changedSlow(d *db, sl *slot[entry]) {
	if ks.TrackDirty && sl.v.loc&locDirtyAny == 0 {
		ks.becameDirty(d, sl)
	}
	if ks.watched != 0 {
		ks.touchWatched(d, sl.keyBytes())
	}
	if ks.Tracking {
		ks.track(sl.keyBytes())
	}
}

// changedQuietly is changed without the touch of the key's watches, for
// a command that marks the key before it knows whether it changes it (or
// that changes only its representation): it signals the watches itself
// (signalKey) where Redis does.
func (ks *Keyspace) changedQuietly(d *db, sl *slot[entry]) {
	if ks.TrackDirty && sl.v.loc&locDirtyAny == 0 {
		ks.becameDirty(d, sl)
	}
}

// becameDirty marks the key in sl, clean until now, dirty.
func (ks *Keyspace) becameDirty(d *db, sl *slot[entry]) {
	sl.v.loc |= ks.src.cur()
	if ks.dirtied(d, sl) {
		ks.pushDirty(refOf(d, sl))
	}
}

// dirtied counts the live key in sl, of database d, whose dirty bit was
// just set, and reports whether it must be listed (not in walk mode).
func (ks *Keyspace) dirtied(d *db, sl *slot[entry]) bool {
	dd := &ks.src.dbs[d.phys]
	dd.live++
	dd.liveLen += int(sl.kw & kwLenMask)
	return !dd.walking
}

// created marks a new key dirty. Its pair may already be listed, from a
// key of the same name that was removed since the list was emptied.
func (ks *Keyspace) created(d *db, sl *slot[entry]) {
	sl.v.loc |= ks.src.cur()
	if !ks.dirtied(d, sl) {
		return
	}
	r := refOf(d, sl)
	if ks.src.deaths > 0 {
		ks.src.maybeDup = true
		r.db |= refDup
	}
	ks.pushDirty(r)
}

// removed is called for the key in sl, of database d, before it leaves
// its pair: its location goes to the pair's grave and the pair is listed.
func (ks *Keyspace) removed(d *db, sl *slot[entry]) {
	if r, ok := ks.leaving(d, sl); ok {
		ks.pushDirty(r)
	}
}

// removedRaw is removed without the compaction and walk mode checks, for
// walks of a table: compaction looks keys up, and must see a consistent
// keyspace.
func (ks *Keyspace) removedRaw(d *db, sl *slot[entry]) {
	if r, ok := ks.leaving(d, sl); ok {
		ks.listRef(r)
	}
}

// leaving is removed but for the listing: it returns the reference to
// list, if the pair needs one.
func (ks *Keyspace) leaving(d *db, sl *slot[entry]) (dirtyRef, bool) {
	if id, ok := ks.takeLoc(d.phys, sl); ok {
		ks.addGrave(d.phys, sl.key(), id)
	}
	ks.src.deaths++
	r := refOf(d, sl)
	r.db |= refGone
	if sl.v.loc&ks.src.prev() != 0 {
		// The take in progress has yet to take the pair: it will, and the
		// Version the checkpoint reads then covers this removal.
		ks.take.leaving(d.phys, r)
		return r, false
	}
	if sl.v.loc&ks.src.cur() == 0 {
		sl.v.loc |= ks.src.cur() // the key is still there: a compaction must see it listed
		return r, true
	}
	dd := &ks.src.dbs[d.phys]
	dd.live--
	dd.liveLen -= int(sl.kw & kwLenMask)
	if !dd.walking {
		// Listed already, by a reference that now names a pair that may
		// have no key.
		dd.hidden = true
		ks.src.removedDirty.add(sl.kp)
		return r, false
	}
	// In walk mode the pair may be unlisted, or listed by a reference
	// that names a key removed before.
	r.db |= refDup
	ks.src.maybeDup = true
	return r, true
}

// listRef appends r to the dirty list, with no check.
func (ks *Keyspace) listRef(r dirtyRef) {
	ks.src.dirty = append(ks.src.dirty, r)
	ks.src.dbs[r.phys()].listed++
}

// pushDirty lists r, then compacts the list or puts r's database in walk
// mode if it is time to.
func (ks *Keyspace) pushDirty(r dirtyRef) {
	ks.listRef(r)
	if len(ks.src.dirty) >= ks.src.compactAt {
		ks.compactDirty()
	}
	ks.checkWalk(r.phys())
}

// checkWalk puts the database of physical id phys in walk mode if its
// references in the list have passed the bound (see dirtyListRatio).
func (ks *Keyspace) checkWalk(phys int) {
	dd := &ks.src.dbs[phys]
	if !dd.walking && dd.listed >= dirtyListMin && dd.listed*dirtyListRatio > ks.pdbs[phys].keys.count {
		ks.walkDB(phys)
	}
}

// walkDB puts the database of physical id phys in walk mode: it drops the
// database's references to live keys (whose dirty bits are set: TakeDirty
// walks the table for them), and releases the list's memory if it is
// mostly free. The references that may name a pair with no key stay:
// those marked refGone, and those whose key removedDirty may hold (a
// live key's kept by mistake is taken once all the same).
func (ks *Keyspace) walkDB(phys int) {
	dd := &ks.src.dbs[phys]
	dd.walking = true
	refs := ks.src.dirty
	j, kept := 0, 0
	for _, r := range refs {
		if r.phys() == phys {
			if !r.gone() && (!dd.hidden || !ks.src.removedDirty.has(unsafe.Pointer(r.p))) {
				continue
			}
			kept++
		}
		refs[j] = r
		j++
	}
	clear(refs[j:])
	refs = refs[:j]
	if cap(refs) > 2*j+256 {
		refs = append(make([]dirtyRef, 0, j+j/2+16), refs...)
	}
	ks.src.dirty = refs
	dd.listed = kept
	ks.src.compactAt = 2*j + 1024
}

// findRef returns the slot of the key a dirty reference names, or nil.
func (ks *Keyspace) findRef(r dirtyRef) *slot[entry] {
	d := ks.pdbs[r.phys()]
	key := unsafeBytes(r.key())
	return d.keys.find(d.keys.hash(key), key)
}

// dedupeDirty drops the references that name a pair named before, and
// those of pairs with neither a key nor a record, in place, and returns
// the rest. It clears the dirty bit of every live key
// it keeps: the bit marks the pair as seen.
func (ks *Keyspace) dedupeDirty() []dirtyRef {
	refs := ks.src.dirty
	j := 0
	for _, r := range refs {
		if sl := ks.findRef(r); sl != nil {
			if sl.v.loc&ks.src.cur() == 0 {
				continue
			}
			sl.v.loc &^= ks.src.cur()
		} else {
			p := r.pair()
			if !ks.pairHasRecord(p) {
				// No key and no record: the checkpoint would have nothing
				// to write or free for the pair (writeKey of such a
				// Version changes nothing), and the reference would keep
				// the removed key's bytes alive until the next take. With
				// appendonly no there is no next take until SAVE: keys
				// that come and go (expiry, eviction) would grow the list
				// without bound.
				continue
			}
			if ks.src.seen == nil {
				ks.src.seen = make(map[pairKey]struct{})
			}
			if _, ok := ks.src.seen[p]; ok {
				continue
			}
			ks.src.seen[p] = struct{}{}
		}
		refs[j] = r
		j++
	}
	clear(refs[j:])
	clear(ks.src.seen)
	return refs[:j]
}

// pairHasRecord reports whether a pair with no key still has a record in
// the heap that a checkpoint must free: its grave, or the chunk records of
// its last version.
func (ks *Keyspace) pairHasRecord(p pairKey) bool {
	if _, ok := ks.src.graves[p]; ok {
		return true
	}
	return ks.src.chunks[p] != nil
}

// compactDirty drops duplicate references from the dirty list when there
// may be some, and sets the length at which it is looked at again: twice
// what is left, so that compaction costs O(1) per reference.
func (ks *Keyspace) compactDirty() {
	if ks.src.maybeDup {
		refs := ks.dedupeDirty()
		for _, r := range refs {
			if sl := ks.findRef(r); sl != nil {
				sl.v.loc |= ks.src.cur()
			}
		}
		ks.src.dirty = refs
		ks.src.maybeDup = false
		for i := range ks.src.dbs {
			ks.src.dbs[i].listed = 0
		}
		for _, r := range refs {
			ks.src.dbs[r.phys()].listed++
		}
	}
	ks.src.compactAt = 2*len(ks.src.dirty) + 1024
}
