package keyspace

import "math/rand/v2"

// sample appends to dst up to n slots of d picked at random, as Redis's
// dictGetSomeKeys does for eviction: from a random position in a random
// segment onwards, segment after segment, so that a sample costs a few
// cache lines rather than n random probes. The slots are distinct; they
// are valid until d next changes.
func (d *dict[V]) sample(dst []*slot[V], n int) []*slot[V] {
	if d.count == 0 || n <= 0 {
		return dst
	}
	n = min(n, d.count)
	segs := len(d.segs)
	first := rand.IntN(segs)
	for i := 0; i < segs && n > 0; i++ {
		s := &d.segs[(first+i)%segs]
		used := int(s.used)
		if used == 0 {
			continue
		}
		start := 0
		if i == 0 {
			start = rand.IntN(used)
		}
		for j := start; j < used && n > 0; j++ {
			dst = append(dst, &s.slots[j])
			n--
		}
	}
	return dst
}
