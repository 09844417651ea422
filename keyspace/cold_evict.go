package keyspace

// Tiered-storage's victims (cold.go). The policy's samples come first, as
// for eviction; but once most keys are cold (or dirty) the samples may hold
// no key that can be made cold while many further on can. Then coldScan
// walks the tables from where it last stopped, a bounded number of slots
// per call, for the next key that can: the policy's order is kept while
// samples find keys, and a table with any coolable key yields it within a
// few calls.

// coldScanBudget is how many slots one coldScan looks at, at most.
const coldScanBudget = 4096

// coldCursor is where coldScan resumes: a logical database and its
// table's scan cursor.
type coldCursor struct {
	db     int
	cursor uint64
}

// coldScan returns the next key that may be made cold, from the cursor,
// and false when none was found within the budget.
func (ks *Keyspace) coldScan() (int, uint64, []byte, bool) {
	cc := &ks.evict.cold
	seen := 0
	for range len(ks.dbs) + 1 {
		cc.db %= len(ks.dbs)
		d := ks.dbs[cc.db]
		for d.keys.count > 0 && seen < coldScanBudget {
			s1, s2, next := d.keys.scanSegs(cc.cursor)
			for _, s := range [2]*segment[entry]{s1, s2} {
				if s == nil {
					continue
				}
				for i := range s.slots {
					sl := &s.slots[i]
					seen++
					if sl.kp != nil && ks.coolable(d, sl) {
						if !ks.Eviction.Policy.allKeys() && sl.kw&kwTTL == 0 {
							continue // volatile policies take keys with a TTL only
						}
						buf := &ks.evict.scratch
						*buf = append((*buf)[:0], sl.keyBytes()...)
						return cc.db, d.keys.hash(*buf), *buf, true
					}
				}
			}
			cc.cursor = next
			if next == 0 {
				break
			}
		}
		if seen >= coldScanBudget {
			return 0, 0, nil, false
		}
		cc.db, cc.cursor = cc.db+1, 0
	}
	return 0, 0, nil, false
}
