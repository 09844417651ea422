package keyspace

import (
	"math"
	"math/rand/v2"
	"strconv"
	"unsafe"
)

// HRANDFIELD and HSCAN: the hash commands that walk or sample a hash.

// hashPair is one field and value, aliasing the hash.
type hashPair struct{ f, v []byte }

// hashRandom returns a pair picked at random.
func hashRandom(p unsafe.Pointer) hashPair {
	if hashIsTable(p) {
		sl := (*hashTable)(p).d.random()
		return hashPair{sl.keyBytes(), pairValue(sl)}
	}
	lp := lpOf(p)
	i := rand.IntN(lp.count())
	off := lpHeader
	for ; i > 0; i-- {
		_, _, off = lp.entry(off)
	}
	f, v, _ := lp.entry(off)
	return hashPair{f, v}
}

// HRANDFIELD key [count [WITHVALUES]]
func cmdHRandField(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if len(args) >= 3 {
		l, ok := parseInt(args[2])
		if !ok {
			w.Error(errNotInteger)
			return
		}
		if l < -math.MaxInt64 {
			w.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
			return
		}
		if len(args) > 4 || len(args) == 4 && !equalFold(args[3], "withvalues") {
			w.Error(errSyntax)
			return
		}
		withValues := len(args) == 4
		if withValues && (l < -math.MaxInt64/2 || l > math.MaxInt64/2) {
			w.Error("ERR value is out of range")
			return
		}
		ks.hrandfieldWithCount(c, args[1], l, withValues, w)
		return
	}
	p, ok := ks.hashForRead(c, args[1], w)
	switch {
	case !ok:
	case p == nil:
		w.Null()
	default:
		w.Bulk(hashRandom(p).f)
	}
}

// hrandfieldWithCount is HRANDFIELD with a count l: that many distinct
// fields (at most the hash's) when l >= 0, else -l fields picked
// independently. With values, a RESP3 client gets [field, value] pairs, a
// RESP2 client one flat array, as Redis 7.0 replies.
func (ks *Keyspace) hrandfieldWithCount(c *Client, key []byte, l int64, withValues bool, w ReplyWriter) {
	p, ok := ks.hashForRead(c, key, w)
	if !ok {
		return
	}
	if p == nil || l == 0 {
		w.ArrayHeader(0)
		return
	}
	pairs := resp3Pairs(withValues, w)
	emit := func(pr hashPair) {
		if pairs {
			w.ArrayHeader(2)
		}
		w.Bulk(pr.f)
		if withValues {
			w.Bulk(pr.v)
		}
	}
	header := func(n int64) {
		if withValues && !pairs {
			n *= 2
		}
		w.ArrayHeader(int(n))
	}
	size := int64(hashLen(p))
	switch {
	case l < 0 || l == 1:
		count := max(l, -l)
		header(count)
		for range count {
			emit(hashRandom(p))
		}
	case l >= size:
		header(size)
		hashEach(p, func(f, v []byte) bool {
			emit(hashPair{f, v})
			return true
		})
	default:
		picked := hashSample(p, int(l))
		header(l)
		for _, pr := range picked {
			emit(pr)
		}
	}
}

// resp3Pairs reports whether HRANDFIELD's pairs are nested arrays.
func resp3Pairs(withValues bool, w ReplyWriter) bool { return withValues && isRESP3(w) }

// hashSample picks k distinct pairs of the hash, 0 < k < its length: every
// pair with the same chance, by selection sampling in the hash's order.
func hashSample(p unsafe.Pointer, k int) []hashPair {
	out := make([]hashPair, 0, k)
	left := hashLen(p)
	hashEach(p, func(f, v []byte) bool {
		if rand.IntN(left) < k-len(out) {
			out = append(out, hashPair{f, v})
		}
		left--
		return len(out) < k
	})
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// HSCAN key cursor [MATCH pattern] [COUNT count]
//
// A listpack is returned whole with cursor 0, as Redis does. A hashtable
// is walked with the dict's cursor (see dict.scan), until COUNT elements
// (fields and values, as Redis counts them) are gathered or ten times
// COUNT steps were taken; MATCH filters the fields afterwards.
func cmdHScan(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	cursor, ok := parseCursor(args[2])
	if !ok {
		w.Error(errInvalidCur)
		return
	}
	p, ok := ks.hashForRead(c, args[1], w)
	if !ok {
		return
	}
	if p == nil {
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

	var found []hashPair
	collect := func(f, v []byte) bool {
		if pattern == nil || Match(pattern, f, false) {
			found = append(found, hashPair{f, v})
		}
		return true
	}
	if hashIsTable(p) {
		t := (*hashTable)(p)
		seen := int64(0)
		visit := func(sl *slot[uint64]) {
			seen += 2
			collect(sl.keyBytes(), pairValue(sl))
		}
		for iterations := count * 10; ; iterations-- {
			cursor = t.d.scan(cursor, visit)
			if cursor == 0 || iterations == 0 || seen >= count {
				break
			}
		}
	} else {
		hashEach(p, collect)
		cursor = 0
	}

	w.ArrayHeader(2)
	ks.scratch = strconv.AppendUint(ks.scratch[:0], cursor, 10)
	w.Bulk(ks.scratch)
	w.ArrayHeader(2 * len(found))
	for _, pr := range found {
		w.Bulk(pr.f)
		w.Bulk(pr.v)
	}
}
