package keyspace

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/moond-db/moond/resp"
)

// ZSCAN and ZRANDMEMBER.

// ZSCAN key cursor [MATCH pattern] [COUNT count]. A listpack is returned
// whole with cursor 0, as Redis does; a skiplist is walked through its
// dict with the keyspace's reverse-binary cursor (see cmdScan), so that a
// member present for the whole scan is returned at least once.
func cmdZScan(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	cursor, ok := parseCursor(args[2])
	if !ok {
		w.Error(errInvalidCur)
		return
	}
	z, ok := ks.zsetRead(c, args[1], w)
	if !ok {
		return
	}
	if z == nil {
		w.ArrayHeader(2)
		w.BulkString("0")
		w.ArrayHeader(0)
		return
	}
	count, pattern, _, msg := parseScanOptions(args, 3, false)
	if msg != "" {
		w.Error(msg)
		return
	}
	var found []zpair
	keep := func(m []byte, s float64) {
		if pattern == nil || Match(pattern, m, false) {
			found = append(found, zpair{string(m), s})
		}
	}
	if z.sk == nil {
		cursor = 0
		if z.card() > 0 {
			z.each(0, z.card()-1, false, keep)
		}
	} else {
		visited := int64(0)
		collect := func(sl *slot[*zslNode]) {
			visited++
			keep(unsafeBytes(sl.v.member), sl.v.score)
		}
		for iterations := count * 10; ; iterations-- {
			cursor = z.sk.dict.scan(cursor, collect)
			if cursor == 0 || iterations == 0 || visited >= count {
				break
			}
		}
	}
	w.ArrayHeader(2)
	ks.scratch = strconv.AppendUint(ks.scratch[:0], cursor, 10)
	w.Bulk(ks.scratch)
	w.ArrayHeader(2 * len(found))
	for _, p := range found {
		w.BulkString(p.m)
		ks.scratch = resp.AppendDouble(ks.scratch[:0], p.s)
		w.Bulk(ks.scratch)
	}
}

// at returns the member of rank r.
func (z *zset) at(r int) (m []byte, s float64) {
	if z.sk != nil {
		x := z.sk.nodeAt(r)
		return unsafeBytes(x.member), x.score
	}
	z.lp.each(r, r, false, func(mb []byte, sc float64) { m, s = mb, sc })
	return m, s
}

// ZRANDMEMBER key [count [WITHSCORES]]
func cmdZRandMember(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if len(args) == 2 {
		z, ok := ks.zsetRead(c, args[1], w)
		switch {
		case !ok:
		case z == nil:
			w.Null()
		default:
			m, _ := z.at(rand.IntN(z.card()))
			w.Bulk(m)
		}
		return
	}
	count, ok := parseInt(args[2])
	if !ok {
		w.Error(errNotInteger)
		return
	}
	if count == math.MinInt64 {
		w.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	withScores := false
	if len(args) > 4 || len(args) == 4 && !equalFold(args[3], "withscores") {
		w.Error(errSyntax)
		return
	} else if len(args) == 4 {
		withScores = true
		if count < -math.MaxInt64/2 || count > math.MaxInt64/2 {
			w.Error("ERR value is out of range")
			return
		}
	}
	z, ok := ks.zsetRead(c, args[1], w)
	switch {
	case !ok:
		return
	case z == nil || count == 0:
		w.ArrayHeader(0)
		return
	}
	ks.zrandWithCount(z, count, withScores, w)
}

// zrandWithCount replies with count members: repeats allowed when count
// is negative, else distinct ones (all when count covers the set).
func (ks *Keyspace) zrandWithCount(z *zset, count int64, withScores bool, w ReplyWriter) {
	size := z.card()
	pairs := withScores && isRESP3(w)
	reply := func(m []byte, s float64) {
		if pairs {
			w.ArrayHeader(2)
		}
		w.Bulk(m)
		if withScores {
			w.Double(s)
		}
	}
	header := func(n int) {
		if withScores && !pairs {
			w.ArrayHeader(2 * n)
		} else {
			w.ArrayHeader(n)
		}
	}
	switch {
	case count < 0:
		header(int(-count))
		for range -count {
			reply(z.at(rand.IntN(size)))
		}
	case count >= int64(size):
		header(size)
		z.each(0, size-1, false, reply)
	case count*3 > int64(size):
		// Most of the set: a random permutation's prefix, rather than
		// drawing until count distinct ranks came up.
		header(int(count))
		for _, r := range rand.Perm(size)[:count] {
			reply(z.at(r))
		}
	default:
		picked := make(map[int]struct{}, count)
		header(int(count))
		for int64(len(picked)) < count {
			r := rand.IntN(size)
			if _, dup := picked[r]; dup {
				continue
			}
			picked[r] = struct{}{}
			reply(z.at(r))
		}
	}
}
