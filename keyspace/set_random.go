package keyspace

import (
	"math"
	"math/rand/v2"
	"unsafe"
)

// SRANDMEMBER and SPOP: the set commands that pick members at random.
// SPOP's journal record names the members it removed (cmd_set.go), so
// that replay does not depend on chance.

const (
	errSRandRange = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	errSPopCount  = "ERR value is out of range, must be positive"
)

// SRANDMEMBER key [count]
func cmdSRandMember(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if len(args) > 3 {
		w.Error(errSyntax)
		return
	}
	if len(args) == 3 {
		srandMemberCount(ks, c, args, w)
		return
	}
	sl, _, ok := ks.setLookup(c, args[1], false, w)
	switch {
	case !ok:
	case sl == nil:
		w.Null()
	default:
		w.Bulk(setRandom(sl.v.p, &ks.scratch))
	}
}

// srandMemberCount is SRANDMEMBER key count: a negative count may repeat
// members (an array of exactly -count), a positive one does not (at most
// the whole set). Replies are arrays, as in Redis 7.0.
func srandMemberCount(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	l, ok := parseInt(args[2])
	if !ok {
		w.Error(errNotInteger)
		return
	}
	if l == math.MinInt64 {
		w.Error(errSRandRange)
		return
	}
	sl, _, ok := ks.setLookup(c, args[1], false, w)
	if !ok {
		return
	}
	if sl == nil || l == 0 {
		w.ArrayHeader(0)
		return
	}
	p := sl.v.p
	size := int64(setCard(p))
	switch {
	case l < 0 || l == 1:
		count := max(l, -l)
		w.ArrayHeader(int(count))
		for range count {
			w.Bulk(setRandom(p, &ks.scratch))
		}
	case l >= size:
		w.ArrayHeader(int(size))
		setEach(p, w.Bulk)
	default:
		sample := setSample(p, int(l))
		w.ArrayHeader(len(sample))
		for _, m := range sample {
			w.Bulk(m)
		}
	}
}

// setSample returns count distinct members of p picked at random, count
// below p's size. The members stay valid after they are removed from p.
func setSample(p unsafe.Pointer, count int) [][]byte {
	n := setCard(p)
	if setEnc(p) == setEncHash && count*3 <= n {
		// Few of many: random picks, repeats dropped. The picks alias the
		// table's member strings, which removal leaves alone.
		t := setTab(p)
		seen := make(map[string]struct{}, count)
		out := make([][]byte, 0, count)
		for len(out) < count {
			m := tableRandom(t)
			if _, dup := seen[unsafe.String(unsafe.SliceData(m), len(m))]; dup {
				continue
			}
			seen[unsafe.String(unsafe.SliceData(m), len(m))] = struct{}{}
			out = append(out, m)
		}
		return out
	}
	all := setMembers(p)
	for i := range count {
		j := i + rand.IntN(n-i)
		all[i], all[j] = all[j], all[i]
	}
	return all[:count]
}

// SPOP key [count]
func cmdSPop(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if len(args) > 3 {
		w.Error(errSyntax)
		return
	}
	if len(args) == 3 {
		spopCount(ks, c, args, w)
		return
	}
	key := args[1]
	sl, h, ok := ks.setLookup(c, key, true, w)
	if !ok {
		return
	}
	if sl == nil {
		w.Null()
		return
	}
	before := ks.changedObject(ks.db(c), sl) // SPOP always removes one
	m := append([]byte(nil), setRandom(sl.v.p, &ks.scratch)...)
	p, _ := setRemove(sl.v.p, m)
	deleted := ks.setChanged(ks.db(c), h, key, sl, p, before)
	ks.journal(c.DB, "SREM", key, m)
	ks.notify(NotifySet, "spop", key, c.DB)
	if deleted {
		ks.notify(NotifyGeneric, "del", key, c.DB)
	}
	w.Bulk(m)
}

// spopCount is SPOP key count. It replies with a set; popping the whole
// set deletes the key and is journaled as DEL.
func spopCount(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	count, ok := parseInt(args[2])
	if !ok || count < 0 { // Redis's getPositiveLong: one error for both
		w.Error(errSPopCount)
		return
	}
	key := args[1]
	sl, h, ok := ks.setLookup(c, key, true, w)
	if !ok {
		return
	}
	if sl == nil || count == 0 {
		w.SetHeader(0)
		return
	}
	d, p := ks.db(c), sl.v.p
	size := int64(setCard(p))
	if count >= size {
		replySet(w, p)
		ks.deleteKey(d, h, key)
		ks.journal(c.DB, "DEL", key)
		ks.notify(NotifySet, "spop", key, c.DB)
		ks.notify(NotifyGeneric, "del", key, c.DB)
		return
	}
	before := ks.changedObject(d, sl) // count < size: members go
	wasTable := setEnc(p) == setEncHash
	sample := setSample(p, int(count))
	for _, m := range sample {
		p, _ = setRemove(p, m)
	}
	if wasTable && (size-count)*5 <= count {
		// Redis builds the few members left into a new set, which starts
		// as a listpack.
		np := ptrOf(newListpack(0, lpHdr))
		setEach(p, func(m []byte) { np, _ = setAdd(np, m, &ks.Limits) })
		p = np
	}
	ks.setStore(d, sl, p, before)
	if ks.journaling() {
		ks.jstart("SREM")
		ks.jadd(key)
		ks.jadd(sample...)
		ks.jend(c.DB)
	}
	ks.notify(NotifySet, "spop", key, c.DB)
	w.SetHeader(len(sample))
	for _, m := range sample {
		w.Bulk(m)
	}
}
