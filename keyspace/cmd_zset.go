package keyspace

import "unsafe"

// Sorted-set commands (Redis's t_zset.c): the command table and the
// single-member commands. The range commands are in zset_cmd_range.go, the
// pops in zset_cmd_pop.go, the set operations in zset_cmd_setop.go, ZSCAN
// and ZRANDMEMBER in zset_cmd_scan.go.

var (
	fWMovable   = []string{"write", "movablekeys"}
	fWDenyMov   = []string{"write", "denyoom", "movablekeys"}
	fROMovable  = []string{"readonly", "movablekeys"}
	cZReadFast  = []string{"@read", "@sortedset", "@fast"}
	cZReadSlow  = []string{"@read", "@sortedset", "@slow"}
	cZWriteFast = []string{"@write", "@sortedset", "@fast"}
	cZWriteSlow = []string{"@write", "@sortedset", "@slow"}
)

// zsetSpecs are the sorted-set commands.
var zsetSpecs = []*CommandSpec{
	{Name: "zadd", Arity: -4, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZWriteFast, run: cmdZAdd},
	{Name: "zincrby", Arity: 4, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZWriteFast, run: cmdZIncrBy},
	{Name: "zrem", Arity: -3, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZWriteFast, run: cmdZRem},
	{Name: "zcard", Arity: 2, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZReadFast, run: cmdZCard},
	{Name: "zcount", Arity: 4, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZReadFast, run: cmdZCount},
	{Name: "zlexcount", Arity: 4, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZReadFast, run: cmdZLexCount},
	{Name: "zscore", Arity: 3, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZReadFast, run: cmdZScore},
	{Name: "zmscore", Arity: -3, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZReadFast, run: cmdZMScore},
	{Name: "zrank", Arity: 3, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZReadFast, run: cmdZRank},
	{Name: "zrevrank", Arity: 3, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZReadFast, run: cmdZRevRank},
	{Name: "zrange", Arity: -4, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZReadSlow, run: cmdZRange},
	{Name: "zrangestore", Arity: -5, Flags: fWDeny, FirstKey: 1, LastKey: 2, Step: 1, ACLCategories: cZWriteSlow, run: cmdZRangeStore},
	{Name: "zrevrange", Arity: -4, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZReadSlow, run: cmdZRevRange},
	{Name: "zrangebyscore", Arity: -4, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZReadSlow, run: cmdZRangeByScore},
	{Name: "zrevrangebyscore", Arity: -4, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZReadSlow, run: cmdZRevRangeByScore},
	{Name: "zrangebylex", Arity: -4, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZReadSlow, run: cmdZRangeByLex},
	{Name: "zrevrangebylex", Arity: -4, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZReadSlow, run: cmdZRevRangeByLex},
	{Name: "zremrangebyrank", Arity: 4, Flags: fW, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZWriteSlow, run: cmdZRemRangeByRank},
	{Name: "zremrangebyscore", Arity: 4, Flags: fW, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZWriteSlow, run: cmdZRemRangeByScore},
	{Name: "zremrangebylex", Arity: 4, Flags: fW, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZWriteSlow, run: cmdZRemRangeByLex},
	{Name: "zpopmin", Arity: -2, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZWriteFast, run: cmdZPopMin},
	{Name: "zpopmax", Arity: -2, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZWriteFast, run: cmdZPopMax},
	{Name: "zmpop", Arity: -4, Flags: fWMovable, ACLCategories: cZWriteSlow, MovableKeys: numkeysKeys(1), run: cmdZMPop},
	{Name: "zrandmember", Arity: -2, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZReadSlow, run: cmdZRandMember},
	{Name: "zunion", Arity: -3, Flags: fROMovable, ACLCategories: cZReadSlow, MovableKeys: numkeysKeys(1), run: cmdZUnion},
	{Name: "zinter", Arity: -3, Flags: fROMovable, ACLCategories: cZReadSlow, MovableKeys: numkeysKeys(1), run: cmdZInter},
	{Name: "zdiff", Arity: -3, Flags: fROMovable, ACLCategories: cZReadSlow, MovableKeys: numkeysKeys(1), run: cmdZDiff},
	{Name: "zintercard", Arity: -3, Flags: fROMovable, ACLCategories: cZReadSlow, MovableKeys: numkeysKeys(1), run: cmdZInterCard},
	{Name: "zunionstore", Arity: -4, Flags: fWDenyMov, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZWriteSlow, MovableKeys: storeKeys, run: cmdZUnionStore},
	{Name: "zinterstore", Arity: -4, Flags: fWDenyMov, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZWriteSlow, MovableKeys: storeKeys, run: cmdZInterStore},
	{Name: "zdiffstore", Arity: -4, Flags: fWDenyMov, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZWriteSlow, MovableKeys: storeKeys, run: cmdZDiffStore},
	{Name: "zscan", Arity: -3, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cZReadSlow, run: cmdZScan},
}

// numkeysKeys returns the key positions of a command whose argument at
// idx is numkeys, followed by the keys.
func numkeysKeys(idx int) func(args [][]byte, dst []int) []int {
	return func(args [][]byte, dst []int) []int {
		if idx >= len(args) {
			return dst
		}
		n, ok := parseInt(args[idx])
		if !ok || n < 1 {
			return dst
		}
		for i := idx + 1; i < len(args) && int64(i-idx) <= n; i++ {
			dst = append(dst, i)
		}
		return dst
	}
}

// storeKeys are the keys of ZUNIONSTORE and friends: the destination and
// the numkeys sources.
func storeKeys(args [][]byte, dst []int) []int {
	if len(args) < 2 {
		return dst
	}
	return numkeysKeys(2)(args, append(dst, 1))
}

// Error replies of the sorted-set commands.
const (
	errZNaN        = "ERR resulting score is not a number (NaN)"
	errZRangeFloat = "ERR min or max is not a float"
	errZRangeLex   = "ERR min or max not valid string range item"
)

// zsetAt is the sorted set of the key in sl.
func zsetAt(sl *slot[entry]) *zset { return (*zset)(sl.v.p) }

// zsetRead looks key up for reading: its set, or nil when absent; false
// means it replied WRONGTYPE.
func (ks *Keyspace) zsetRead(c *Client, key []byte, w ReplyWriter) (*zset, bool) {
	sl, _ := ks.lookupRead(c, key)
	if sl == nil {
		return nil, true
	}
	if sl.v.kind() != KindZSet {
		w.Error(errWrongType)
		return nil, false
	}
	return zsetAt(sl), true
}

// jscore adds a score to the journal record.
func (ks *Keyspace) jscore(f float64) {
	start := len(ks.jnum)
	ks.jnum = formatScore(ks.jnum, f)
	ks.jargs = append(ks.jargs, ks.jnum[start:len(ks.jnum):len(ks.jnum)])
}

// ZADD options, as Redis's ZADD_IN_*.
const (
	zaddIncr = 1 << iota
	zaddNX
	zaddXX
	zaddGT
	zaddLT
	zaddCH
)

func cmdZAdd(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zaddGeneric(c, args, 0, w)
}

func cmdZIncrBy(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zaddGeneric(c, args, zaddIncr, w)
}

// parseZAddFlags parses ZADD's options from args[2]; it returns them and
// the index of the first score.
func parseZAddFlags(args [][]byte, flags int) (int, int) {
	i := 2
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case equalFold(a, "nx"):
			flags |= zaddNX
		case equalFold(a, "xx"):
			flags |= zaddXX
		case equalFold(a, "ch"):
			flags |= zaddCH
		case equalFold(a, "incr"):
			flags |= zaddIncr
		case equalFold(a, "gt"):
			flags |= zaddGT
		case equalFold(a, "lt"):
			flags |= zaddLT
		default:
			return flags, i
		}
	}
	return flags, i
}

// zaddGeneric is ZADD and ZINCRBY (flags zaddIncr), as zaddGenericCommand.
func (ks *Keyspace) zaddGeneric(c *Client, args [][]byte, flags int, w ReplyWriter) {
	flags, scoreIdx := parseZAddFlags(args, flags)
	elements := len(args) - scoreIdx
	incr, nx, xx := flags&zaddIncr != 0, flags&zaddNX != 0, flags&zaddXX != 0
	gt, lt := flags&zaddGT != 0, flags&zaddLT != 0
	switch {
	case elements%2 != 0 || elements == 0:
		w.Error(errSyntax)
		return
	case nx && xx:
		w.Error("ERR XX and NX options at the same time are not compatible")
		return
	case gt && nx || lt && nx || gt && lt:
		w.Error("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	case incr && elements > 2:
		w.Error("ERR INCR option supports a single increment-element pair")
		return
	}
	pairs := args[scoreIdx:]
	for i := 0; i < len(pairs); i += 2 {
		if _, ok := parseScore(pairs[i]); !ok {
			w.Error(errNotFloat)
			return
		}
	}

	key := args[1]
	sl, h := ks.lookupWrite(c, key)
	if sl != nil && sl.v.kind() != KindZSet {
		w.Error(errWrongType)
		return
	}
	d := ks.db(c)
	if sl == nil {
		if xx {
			if incr {
				w.Null()
			} else {
				w.Int(0)
			}
			return
		}
		sl = ks.addKey(d, h, key, "", objectValue(KindZSet, unsafe.Pointer(newZSet(&ks.Limits, len(pairs[1])))))
	}
	z := zsetAt(sl)
	before := sl.v.heapBytes()
	ks.changedQuietly(d, sl) // the watches only if a member is added or updated
	journal := ks.journaling()
	if journal {
		ks.jstart("ZADD")
		ks.jadd(key)
	}
	added, updated, processed := 0, 0, 0
	var newScore float64
	nan := false
	for i := 0; i < len(pairs); i += 2 {
		score, _ := parseScore(pairs[i])
		m := pairs[i+1]
		cur, exists := z.score(m)
		switch {
		case exists && nx, !exists && xx:
			continue
		case exists:
			if incr {
				score += cur
				if score != score {
					nan = true
				}
			}
			if nan || lt && score >= cur || gt && score <= cur {
				continue
			}
			if score != cur {
				z.update(m, cur, score)
				updated++
			} else {
				processed++
				newScore = score
				continue
			}
		default:
			z.insert(m, score, &ks.Limits)
			added++
		}
		processed++
		newScore = score
		if journal {
			ks.jscore(score)
			ks.jadd(m)
		}
	}
	if added+updated > 0 {
		ks.signalKey(d, key)
	}
	deleted := ks.zsetDone(d, h, sl, key, before)
	if journal {
		if added+updated > 0 {
			ks.jend(c.DB)
		} else {
			clear(ks.jargs)
			ks.jargs = ks.jargs[:0]
		}
	}
	if added+updated > 0 {
		event := "zadd"
		if incr {
			event = "zincr"
		}
		ks.notify(NotifyZSet, event, key, c.DB)
	}
	if deleted {
		ks.notify(NotifyGeneric, "del", key, c.DB)
	}
	switch {
	case nan:
		w.Error(errZNaN)
	case incr && processed > 0:
		w.Double(newScore)
	case incr:
		w.Null()
	case flags&zaddCH != 0:
		w.Int(int64(added + updated))
	default:
		w.Int(int64(added))
	}
}

// ZREM key member [member ...]
func cmdZRem(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key := args[1]
	sl, h := ks.lookupWrite(c, key)
	if sl == nil {
		w.Int(0)
		return
	}
	if sl.v.kind() != KindZSet {
		w.Error(errWrongType)
		return
	}
	z, d := zsetAt(sl), ks.db(c)
	before := sl.v.heapBytes()
	ks.changedQuietly(d, sl) // the watches only if a member goes
	journal := ks.journaling()
	if journal {
		ks.jstart("ZREM")
		ks.jadd(key)
	}
	removed := 0
	for _, m := range args[2:] {
		if z.remove(m) {
			removed++
			if journal {
				ks.jadd(m)
			}
		}
	}
	if removed > 0 {
		ks.signalKey(d, key)
	}
	deleted := ks.zsetDone(d, h, sl, key, before)
	if journal {
		if removed > 0 {
			ks.jend(c.DB)
		} else {
			clear(ks.jargs)
			ks.jargs = ks.jargs[:0]
		}
	}
	if removed > 0 {
		ks.notify(NotifyZSet, "zrem", key, c.DB)
	}
	if deleted {
		ks.notify(NotifyGeneric, "del", key, c.DB)
	}
	w.Int(int64(removed))
}

// zsetDone ends an in-place change of the set in sl: the memory figure,
// and the key deleted (deleted true) if the set is now empty.
func (ks *Keyspace) zsetDone(d *db, h uint64, sl *slot[entry], key []byte, before int64) (deleted bool) {
	ks.objectResized(d, sl, before)
	if zsetAt(sl).card() == 0 {
		ks.deleteKey(d, h, key)
		return true
	}
	return false
}

func cmdZCard(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	z, ok := ks.zsetRead(c, args[1], w)
	switch {
	case !ok:
	case z == nil:
		w.Int(0)
	default:
		w.Int(int64(z.card()))
	}
}

func cmdZScore(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	z, ok := ks.zsetRead(c, args[1], w)
	if !ok {
		return
	}
	if z != nil {
		if s, found := z.score(args[2]); found {
			w.Double(s)
			return
		}
	}
	w.Null()
}

func cmdZMScore(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	z, ok := ks.zsetRead(c, args[1], w)
	if !ok {
		return
	}
	w.ArrayHeader(len(args) - 2)
	for _, m := range args[2:] {
		if z != nil {
			if s, found := z.score(m); found {
				w.Double(s)
				continue
			}
		}
		w.Null()
	}
}

func cmdZRank(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zrankGeneric(c, args, false, w)
}

func cmdZRevRank(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zrankGeneric(c, args, true, w)
}

func (ks *Keyspace) zrankGeneric(c *Client, args [][]byte, rev bool, w ReplyWriter) {
	z, ok := ks.zsetRead(c, args[1], w)
	if !ok {
		return
	}
	if z != nil {
		if r, found := z.rank(args[2]); found {
			if rev {
				r = z.card() - 1 - r
			}
			w.Int(int64(r))
			return
		}
	}
	w.Null()
}

// ZCOUNT key min max
func cmdZCount(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	r, ok := parseScoreRange(args[2], args[3])
	if !ok {
		w.Error(errZRangeFloat)
		return
	}
	z, ok := ks.zsetRead(c, args[1], w)
	switch {
	case !ok:
	case z == nil || r.empty():
		w.Int(0)
	default:
		start, end := zbounds(z, r.belowMin, r.notAboveMax)
		w.Int(int64(end - start))
	}
}

// ZLEXCOUNT key min max
func cmdZLexCount(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	r, ok := parseLexRange(args[2], args[3])
	if !ok {
		w.Error(errZRangeLex)
		return
	}
	z, ok := ks.zsetRead(c, args[1], w)
	switch {
	case !ok:
	case z == nil || r.empty():
		w.Int(0)
	default:
		start, end := zbounds(z, r.belowMin, r.notAboveMax)
		w.Int(int64(end - start))
	}
}
