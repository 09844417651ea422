package keyspace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"
)

// Sorted sets (Redis's t_zset.c): members, each with a float64 score,
// kept in (score, member) order, member bytes compared as memcmp does.
//
// Two representations, named as OBJECT ENCODING names Redis's:
//
//   - "listpack" (zsetLP, zset_listpack.go): one flat byte slice of the
//     pairs in order. Small sets are the common case; a flat slice costs a
//     few bytes per member and one allocation, and a linear walk of a
//     cache-resident slice beats pointer chasing at these sizes.
//   - "skiplist" (zskiplist, zset_skiplist.go): a skiplist with spans, as
//     Redis's, for O(log n) insert, delete, rank and range, plus a dict
//     member -> node for O(1) ZSCORE. A skiplist was chosen over an
//     order-statistic B-tree because its nodes never move: the dict can
//     point at them, an update that keeps a member's place only rewrites
//     its score, and the code stays small and easy to check.
//
// A set is created as a listpack (unless zset-max-listpack-entries is 0 or
// the first member is longer than zset-max-listpack-value) and becomes a
// skiplist when an insert would take it past zset-max-listpack-entries
// members or adds a member longer than zset-max-listpack-value; it never
// goes back, except for the results of the *STORE commands, which, as in
// Redis, take the listpack form whenever they fit it.
//
// Heap encoding (heap records and MOOND.APPLY PUT), the same for both
// representations:
//
//	uvarint(count) ‖ count × ( uvarint(len(member)) ‖ member ‖ score )
//
// score being the 8 bytes of the IEEE 754 float64, little endian, and the
// pairs in (score, member) order. decode refuses an empty set, a NaN
// score, a repeated member, pairs out of order, a count that does not
// match, a uvarint not in its shortest form and trailing bytes. The
// listpack form (zset_listpack.go) is this layout without the count and
// with integral scores in 1-8 bytes: encoding a listpack is one walk.
type zset struct {
	lp zsetLP     // the listpack form, when sk is nil
	sk *zskiplist // the skiplist form, or nil
}

func init() {
	registerObjectType(KindZSet, &objectType{
		encoding: func(p unsafe.Pointer) string {
			if (*zset)(p).sk != nil {
				return "skiplist"
			}
			return "listpack"
		},
		heapBytes: func(p unsafe.Pointer) int64 { return (*zset)(p).heapBytes() },
		encode:    func(p unsafe.Pointer, dst []byte) []byte { return (*zset)(p).encode(dst) },
		decode: func(b []byte, lim *EncodingLimits) (unsafe.Pointer, error) {
			z, err := decodeZSet(b, lim)
			return unsafe.Pointer(z), err
		},
		clone:   func(p unsafe.Pointer) unsafe.Pointer { return unsafe.Pointer((*zset)(p).clone()) },
		chunked: zsetChunked,
	})
}

// zsetStructBytes is the allocation of a zset header.
var zsetStructBytes = allocSize(int64(unsafe.Sizeof(zset{})))

// newZSet returns an empty sorted set in the form the limits give a new
// set whose first member is firstLen bytes long.
func newZSet(lim *EncodingLimits, firstLen int) *zset {
	z := &zset{}
	if lim.ZSetMaxListpackEntries == 0 || int64(firstLen) > lim.ZSetMaxListpackValue {
		z.sk = newZSkiplist()
	}
	return z
}

// zsetFits reports whether a set of n members, the longest maxLen bytes,
// takes the listpack form.
func zsetFits(lim *EncodingLimits, n, maxLen int) bool {
	return int64(n) <= lim.ZSetMaxListpackEntries && int64(maxLen) <= lim.ZSetMaxListpackValue
}

func (z *zset) card() int {
	if z.sk != nil {
		return z.sk.length
	}
	return z.lp.count()
}

func (z *zset) heapBytes() int64 {
	if z.sk != nil {
		return zsetStructBytes + z.sk.heapBytes()
	}
	return zsetStructBytes + z.lp.heapBytes()
}

// score returns member's score.
func (z *zset) score(member []byte) (float64, bool) {
	if z.sk != nil {
		return z.sk.score(member)
	}
	return z.lp.score(member)
}

// rank returns member's 0-based rank in ascending order.
func (z *zset) rank(member []byte) (int, bool) {
	if z.sk != nil {
		return z.sk.rank(member)
	}
	return z.lp.rank(member)
}

// countWhile returns the number of leading members (in order) for which
// before holds; before must hold for a prefix of the order and fail after
// it (a range bound).
func (z *zset) countWhile(before func(m []byte, s float64) bool) int {
	if z.sk != nil {
		return z.sk.countWhile(before)
	}
	return z.lp.countWhile(before)
}

// each calls fn with the members of ranks start..end (inclusive, 0 <=
// start <= end < card), in ascending order or, if rev, descending. fn
// must not change the set; the member bytes are valid only during the
// call.
func (z *zset) each(start, end int, rev bool, fn func(m []byte, s float64)) {
	if z.sk != nil {
		z.sk.each(start, end, rev, fn)
		return
	}
	z.lp.each(start, end, rev, fn)
}

// insert adds member, which the set must not hold, converting a listpack
// that would outgrow the limits first.
func (z *zset) insert(member []byte, score float64, lim *EncodingLimits) {
	if z.sk == nil && (int64(z.lp.n)+1 > lim.ZSetMaxListpackEntries || int64(len(member)) > lim.ZSetMaxListpackValue ||
		!z.lp.fitsOneMore(member, score)) {
		z.toSkiplist()
	}
	if z.sk != nil {
		z.sk.insert(string(member), score)
		return
	}
	z.lp.insert(member, score)
}

// update changes the score of member, which holds old.
func (z *zset) update(member []byte, old, score float64) {
	if z.sk != nil {
		z.sk.update(member, old, score)
		return
	}
	z.lp.remove(member)
	z.lp.insert(member, score)
}

// remove deletes member and reports whether it was there.
func (z *zset) remove(member []byte) bool {
	if z.sk != nil {
		return z.sk.remove(member)
	}
	return z.lp.remove(member)
}

// toSkiplist converts a listpack set.
func (z *zset) toSkiplist() {
	sk := newZSkiplist()
	if z.lp.n > 0 {
		z.lp.each(0, z.lp.count()-1, false, func(m []byte, s float64) { sk.insert(string(m), s) })
	}
	z.sk, z.lp = sk, zsetLP{}
}

// encode appends the heap encoding.
func (z *zset) encode(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(z.card()))
	if z.sk == nil {
		return z.lp.appendHeap(dst)
	}
	for x := z.sk.header.lv(0).forward; x != nil; x = x.lv(0).forward {
		dst = appendZEntry(dst, unsafeBytes(x.member), x.score)
	}
	return dst
}

// appendZEntry appends one pair in the heap layout.
func appendZEntry(dst, member []byte, score float64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(member)))
	dst = append(dst, member...)
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(score))
}

var errZSetEncoding = errors.New("malformed sorted set")

// decodeZSet builds a set from its heap encoding, checking it whole.
func decodeZSet(b []byte, lim *EncodingLimits) (*zset, error) {
	count, k := binary.Uvarint(b)
	if k <= 0 || k != uvarintLen(count) || count == 0 || count > uint64(len(b)) {
		// No key holds an empty set: a count of 0 is damage too.
		return nil, fmt.Errorf("%w: bad count", errZSetEncoding)
	}
	body := b[k:]
	maxLen, n := 0, 0
	var members [][]byte
	var prevM []byte
	prevS := 0.0
	for off := 0; off < len(body); n++ {
		m, s, next, ok := zlpEntryChecked(body, off)
		if !ok {
			return nil, fmt.Errorf("%w: truncated pair %d", errZSetEncoding, n)
		}
		if math.IsNaN(s) {
			return nil, fmt.Errorf("%w: NaN score", errZSetEncoding)
		}
		if n > 0 && !zless(prevS, prevM, s, m) {
			return nil, fmt.Errorf("%w: pairs out of order or repeated", errZSetEncoding)
		}
		prevM, prevS, off = m, s, next
		maxLen = max(maxLen, len(m))
		members = append(members, m)
	}
	// The order is by score first: a member may repeat under two scores.
	slices.SortFunc(members, bytes.Compare)
	for i := 1; i < len(members); i++ {
		if bytes.Equal(members[i-1], members[i]) {
			return nil, fmt.Errorf("%w: member repeated", errZSetEncoding)
		}
	}
	if uint64(n) != count {
		return nil, fmt.Errorf("%w: %d pairs, count says %d", errZSetEncoding, n, count)
	}
	z := &zset{}
	if zsetFits(lim, n, maxLen) {
		z.lp = zlpFromHeap(body, n)
		return z, nil
	}
	z.sk = newZSkiplist()
	z.sk.appendSorted(body)
	return z, nil
}

// zless is the set's order: by score, then by member bytes.
func zless(s1 float64, m1 []byte, s2 float64, m2 []byte) bool {
	return s1 < s2 || s1 == s2 && string(m1) < string(m2)
}

// clone is COPY's deep copy.
func (z *zset) clone() *zset {
	if z.sk == nil {
		return &zset{lp: z.lp.clone()}
	}
	c := &zset{sk: newZSkiplist()}
	c.sk.appendSorted(z.encode(nil)[uvarintLen(uint64(z.card())):])
	return c
}

// zsetFromSorted builds a store command's result from pairs in order (the
// heap layout, without the count): a listpack when it fits, as Redis's
// zsetConvertToListpackIfNeeded leaves a *STORE result.
func zsetFromSorted(body []byte, n, maxLen int, lim *EncodingLimits) *zset {
	if zsetFits(lim, n, maxLen) {
		return &zset{lp: zlpFromHeap(body, n)}
	}
	z := &zset{sk: newZSkiplist()}
	z.sk.appendSorted(body)
	return z
}
