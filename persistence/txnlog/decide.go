package txnlog

import "slices"

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
		return
	}
	if s.Ends == nil {
		s.Ends = make(map[uint64][]uint32)
	}
	s.Ends[m.Txid] = m.Parts
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

// Decide decides every txn that an END above some shard's redo point names,
// from the summaries of all shards (indexed by shard id; a missing one
// holds no part): committed when no shard logged its ABORT and every shard
// the END names holds its part. A part above a redo point whose txn has no
// END there anywhere is not committed either.
func Decide(shards map[uint32]*Summary) *Decision {
	d := &Decision{committed: make(map[uint64]bool)}
	aborted := func(txid uint64) bool {
		for _, s := range shards {
			if s.Aborted[txid] {
				return true
			}
		}
		return false
	}
	for _, s := range shards {
		d.max = max(d.max, s.Max)
		for txid, parts := range s.Ends {
			if _, done := d.committed[txid]; done {
				continue
			}
			d.committed[txid] = !aborted(txid) && !slices.ContainsFunc(parts, func(p uint32) bool { return !shards[p].has(txid) })
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
