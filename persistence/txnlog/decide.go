package txnlog

import (
	"maps"
	"slices"
)

// Summary is what one shard's log says about txns, from its redo point on:
// the recovery's first pass collects it (Add), Decide reads every shard's.
type Summary struct {
	// Mark is the highest txid whose part on this shard lies below the
	// redo point (0: none), from the record at the redo point.
	Mark uint64
	// Ends maps the txid of each END at or above the redo point to the
	// shards it names.
	Ends map[uint64][]uint32
	// Aborted holds the txids of the ABORT markers at or above the redo
	// point.
	Aborted map[uint64]bool
	// Begun holds the txids of the BEGIN markers at or above the redo
	// point: a txn whose part began in a log counts for its group even
	// when no END of it was logged anywhere.
	Begun map[uint64]bool
	// Groups maps the txid of each END above the redo point that names a
	// group to that group's first txid (Marker.Group).
	Groups map[uint64]uint64
	// Max is the highest txid the shard's log names (Mark included): the
	// next txn's id must exceed every shard's.
	Max uint64
}

// Add records a marker read at or above the redo point.
func (s *Summary) Add(m Marker) {
	s.Max = max(s.Max, m.Txid)
	if m.Abort {
		if s.Aborted == nil {
			s.Aborted = make(map[uint64]bool)
		}
		s.Aborted[m.Txid] = true
		return
	}
	if !m.End {
		if s.Begun == nil {
			s.Begun = make(map[uint64]bool)
		}
		s.Begun[m.Txid] = true
		return
	}
	if s.Ends == nil {
		s.Ends = make(map[uint64][]uint32)
	}
	s.Ends[m.Txid] = m.Parts
	if m.Group != 0 {
		if s.Groups == nil {
			s.Groups = make(map[uint64]uint64)
		}
		s.Groups[m.Txid] = m.Group
	}
}

// SetMark records the mark of the record at the redo point.
func (s *Summary) SetMark(mark uint64) {
	s.Mark = mark
	s.Max = max(s.Max, mark)
}

// has reports whether the shard's part of txid is in its log: its END at or
// above the redo point, or below it (the redo point passed it).
func (s *Summary) has(txid uint64) bool {
	if s == nil {
		return false
	}
	if _, ok := s.Ends[txid]; ok {
		return true
	}
	return txid <= s.Mark
}

// Decision says which txns committed: those whose every part is in its
// shard's log.
type Decision struct {
	committed map[uint64]bool
	max       uint64
}

// Decide decides every txn that a marker above some shard's redo point
// names, from the summaries of all shards (indexed by shard id; a missing
// one holds no part). A txn commits when no shard logged its ABORT, every
// shard its END names holds its part, and, when its END names a group,
// every txn of that group below it that some log names committed: a txn
// of a group may have read what the earlier ones wrote, so it never
// outlives them (a coordinator acknowledges it only after them). A part
// above a redo point whose txn has no END there anywhere is not committed
// either.
func Decide(shards map[uint32]*Summary) *Decision {
	d := &Decision{committed: make(map[uint64]bool)}
	named := map[uint64]bool{} // the txids some log names above its redo point
	ends := map[uint64][]uint32{}
	groups := map[uint64]uint64{}
	aborted := map[uint64]bool{}
	for _, s := range shards {
		d.max = max(d.max, s.Max)
		for txid, parts := range s.Ends {
			named[txid], ends[txid] = true, parts
		}
		for txid, g := range s.Groups {
			groups[txid] = g
		}
		for txid := range s.Aborted {
			named[txid], aborted[txid] = true, true
		}
		for txid := range s.Begun {
			named[txid] = true
		}
	}
	ids := slices.Sorted(maps.Keys(named))
	var failed []uint64 // ascending: the named txids that did not commit
	for _, txid := range ids {
		parts, ended := ends[txid]
		ok := ended && !aborted[txid] &&
			!slices.ContainsFunc(parts, func(p uint32) bool { return !shards[p].has(txid) })
		if g := groups[txid]; ok && g != 0 {
			// A failed txn of the group below txid: the first failed id
			// at or above g, if it is below txid.
			i, _ := slices.BinarySearch(failed, g)
			ok = i == len(failed) || failed[i] >= txid
		}
		if ended {
			d.committed[txid] = ok
		}
		if !ok {
			failed = append(failed, txid)
		}
	}
	return d
}

// Committed reports whether txid committed. A nil Decision commits
// nothing.
func (d *Decision) Committed(txid uint64) bool { return d != nil && d.committed[txid] }

// Max is the highest txid any shard's log names: txids handed out after
// the boot start above it.
func (d *Decision) Max() uint64 {
	if d == nil {
		return 0
	}
	return d.max
}
