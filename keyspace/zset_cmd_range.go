package keyspace

import (
	"unsafe"
)

// The range commands: ZRANGE and its legacy forms, ZRANGESTORE and
// ZREMRANGEBY*, as Redis's zrangeGenericCommand.

type zrangeType int

const (
	zrangeAuto zrangeType = iota
	zrangeRank
	zrangeScore
	zrangeLex
)

// zrangeSpec is a parsed range request.
type zrangeSpec struct {
	typ           zrangeType
	rev           bool
	withScores    bool
	offset, limit int64
	start, end    int64
	score         scoreRange
	lex           lexRange
}

// parseZRange parses args[first+1:] (min, max, options) as
// zrangeGenericCommand; typ and rev are the command's preset ones.
func parseZRange(args [][]byte, first int, store bool, typ zrangeType, rev bool, w ReplyWriter) (zrangeSpec, bool) {
	sp := zrangeSpec{typ: typ, rev: rev, limit: -1}
	dirAuto := !rev && typ == zrangeAuto
	for j := first + 3; j < len(args); j++ {
		left := len(args) - j - 1
		a := args[j]
		switch {
		case !store && equalFold(a, "withscores"):
			sp.withScores = true
		case equalFold(a, "limit") && left >= 2:
			var ok1, ok2 bool
			sp.offset, ok1 = parseInt(args[j+1])
			sp.limit, ok2 = parseInt(args[j+2])
			if !ok1 || !ok2 {
				w.Error(errNotInteger)
				return sp, false
			}
			j += 2
		case dirAuto && !sp.rev && equalFold(a, "rev"):
			sp.rev = true
		case sp.typ == zrangeAuto && equalFold(a, "bylex"):
			sp.typ = zrangeLex
		case sp.typ == zrangeAuto && equalFold(a, "byscore"):
			sp.typ = zrangeScore
		default:
			w.Error(errSyntax)
			return sp, false
		}
	}
	if sp.typ == zrangeAuto {
		sp.typ = zrangeRank
	}
	if sp.limit != -1 && sp.typ == zrangeRank {
		w.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return sp, false
	}
	if sp.withScores && sp.typ == zrangeLex {
		w.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return sp, false
	}
	minArg, maxArg := args[first+1], args[first+2]
	if sp.rev && sp.typ != zrangeRank {
		minArg, maxArg = maxArg, minArg
	}
	var ok bool
	switch sp.typ {
	case zrangeRank:
		var ok2 bool
		sp.start, ok = parseInt(minArg)
		sp.end, ok2 = parseInt(maxArg)
		if !ok || !ok2 {
			w.Error(errNotInteger)
			return sp, false
		}
	case zrangeScore:
		if sp.score, ok = parseScoreRange(minArg, maxArg); !ok {
			w.Error(errZRangeFloat)
			return sp, false
		}
	case zrangeLex:
		if sp.lex, ok = parseLexRange(minArg, maxArg); !ok {
			w.Error(errZRangeLex)
			return sp, false
		}
	}
	return sp, true
}

// rankRange clamps start and end as Redis does for a set of n members and
// returns the ascending ranks [lo, hi] the range covers, or false.
func rankRange(start, end int64, n int, rev bool) (int, int, bool) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if end < 0 {
		end += ln
	}
	start = max(start, 0)
	if start > end || start >= ln {
		return 0, 0, false
	}
	end = min(end, ln-1)
	if rev {
		return int(ln - 1 - end), int(ln - 1 - start), true
	}
	return int(start), int(end), true
}

// ranks returns the ascending ranks [lo, hi] a parsed range selects in z,
// after LIMIT, or false when none.
func (sp *zrangeSpec) ranks(z *zset) (int, int, bool) {
	if sp.typ == zrangeRank {
		return rankRange(sp.start, sp.end, z.card(), sp.rev)
	}
	var lo, hi int
	if sp.typ == zrangeScore {
		if sp.score.empty() {
			return 0, 0, false
		}
		lo, hi = zbounds(z, sp.score.belowMin, sp.score.notAboveMax)
	} else {
		if sp.lex.empty() {
			return 0, 0, false
		}
		lo, hi = zbounds(z, sp.lex.belowMin, sp.lex.notAboveMax)
	}
	if sp.offset < 0 || sp.offset >= int64(hi-lo) {
		return 0, 0, false
	}
	n := int64(hi-lo) - sp.offset
	if sp.limit >= 0 {
		n = min(n, sp.limit)
	}
	if n == 0 {
		return 0, 0, false
	}
	if sp.rev {
		return hi - int(sp.offset) - int(n), hi - int(sp.offset) - 1, true
	}
	return lo + int(sp.offset), lo + int(sp.offset) + int(n) - 1, true
}

// replyZRange writes ranks [lo, hi] of z, in the spec's direction.
func (ks *Keyspace) replyZRange(z *zset, lo, hi int, rev, withScores bool, w ReplyWriter) {
	n := hi - lo + 1
	pairs := withScores && isRESP3(w)
	if withScores && !pairs {
		w.ArrayHeader(2 * n)
	} else {
		w.ArrayHeader(n)
	}
	z.each(lo, hi, rev, func(m []byte, s float64) {
		if pairs {
			w.ArrayHeader(2)
		}
		w.Bulk(m)
		if withScores {
			w.Double(s)
		}
	})
}

// zrangeGeneric runs ZRANGE and its legacy forms.
func (ks *Keyspace) zrangeGeneric(c *Client, args [][]byte, typ zrangeType, rev bool, w ReplyWriter) {
	sp, ok := parseZRange(args, 1, false, typ, rev, w)
	if !ok {
		return
	}
	z, ok := ks.zsetRead(c, args[1], w)
	if !ok {
		return
	}
	if z == nil {
		w.ArrayHeader(0)
		return
	}
	lo, hi, ok := sp.ranks(z)
	if !ok {
		w.ArrayHeader(0)
		return
	}
	ks.replyZRange(z, lo, hi, sp.rev, sp.withScores, w)
}

func cmdZRange(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zrangeGeneric(c, args, zrangeAuto, false, w)
}

func cmdZRevRange(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zrangeGeneric(c, args, zrangeRank, true, w)
}

func cmdZRangeByScore(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zrangeGeneric(c, args, zrangeScore, false, w)
}

func cmdZRevRangeByScore(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zrangeGeneric(c, args, zrangeScore, true, w)
}

func cmdZRangeByLex(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zrangeGeneric(c, args, zrangeLex, false, w)
}

func cmdZRevRangeByLex(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zrangeGeneric(c, args, zrangeLex, true, w)
}

// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
func cmdZRangeStore(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sp, ok := parseZRange(args, 2, true, zrangeAuto, false, w)
	if !ok {
		return
	}
	z, ok := ks.zsetRead(c, args[2], w)
	if !ok {
		return
	}
	var body []byte
	n, maxLen := 0, 0
	if z != nil {
		if lo, hi, found := sp.ranks(z); found {
			z.each(lo, hi, false, func(m []byte, s float64) {
				body = appendZEntry(body, m, s)
				maxLen = max(maxLen, len(m))
			})
			n = hi - lo + 1
		}
	}
	ks.zstore(c, args[1], body, n, maxLen, "zrangestore", w)
}

// zstore stores a *STORE result, pairs in order in body, under dst (or
// deletes dst when empty), notifies event (or del) and replies with its
// size.
func (ks *Keyspace) zstore(c *Client, dst, body []byte, n, maxLen int, event string, w ReplyWriter) {
	d := ks.db(c)
	sl, h := ks.lookupWrite(c, dst)
	if n == 0 {
		if sl != nil {
			ks.deleteKey(d, h, dst)
			ks.journal(c.DB, "DEL", dst)
			ks.notify(NotifyGeneric, "del", dst, c.DB)
		}
		w.Int(0)
		return
	}
	v := objectValue(KindZSet, unsafe.Pointer(zsetFromSorted(body, n, maxLen, &ks.Limits)))
	ks.setKey(d, h, sl, dst, v, false)
	if ks.journaling() {
		ks.jstart(applyName)
		ks.jput(c.DB, dst, v, 0)
		ks.jend(c.DB)
	}
	ks.notify(NotifyZSet, event, dst, c.DB)
	w.Int(int64(n))
}

// zremRangeGeneric is ZREMRANGEBYRANK, ZREMRANGEBYSCORE and
// ZREMRANGEBYLEX, journaled as ZREM of the members removed (DEL when all).
func (ks *Keyspace) zremRangeGeneric(c *Client, args [][]byte, typ zrangeType, w ReplyWriter) {
	sp := zrangeSpec{typ: typ, limit: -1}
	var ok bool
	switch typ {
	case zrangeRank:
		var ok2 bool
		sp.start, ok = parseInt(args[2])
		sp.end, ok2 = parseInt(args[3])
		if !ok || !ok2 {
			w.Error(errNotInteger)
			return
		}
	case zrangeScore:
		if sp.score, ok = parseScoreRange(args[2], args[3]); !ok {
			w.Error(errZRangeFloat)
			return
		}
	case zrangeLex:
		if sp.lex, ok = parseLexRange(args[2], args[3]); !ok {
			w.Error(errZRangeLex)
			return
		}
	}
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
	z := zsetAt(sl)
	lo, hi, found := sp.ranks(z)
	if !found {
		w.Int(0)
		return
	}
	ks.zremRanks(c, sl, h, key, lo, hi, zremEvents[typ])
	w.Int(int64(hi - lo + 1))
}

// zremRanks removes ranks [lo, hi] of the set of key, whose slot is sl,
// journals the removal and notifies event (then del if the set empties).
func (ks *Keyspace) zremRanks(c *Client, sl *slot[entry], h uint64, key []byte, lo, hi int, event string) {
	z, d := zsetAt(sl), ks.db(c)
	if lo == 0 && hi == z.card()-1 {
		ks.deleteKey(d, h, key)
		ks.journal(c.DB, "DEL", key)
		ks.notify(NotifyZSet, event, key, c.DB)
		ks.notify(NotifyGeneric, "del", key, c.DB)
		return
	}
	var members [][]byte
	z.each(lo, hi, false, func(m []byte, _ float64) { members = append(members, append([]byte(nil), m...)) })
	before := ks.changedObject(d, sl)
	for _, m := range members {
		z.remove(m)
	}
	ks.objectResized(d, sl, before)
	if ks.journaling() {
		ks.jstart("ZREM")
		ks.jadd(key)
		ks.jadd(members...)
		ks.jend(c.DB)
	}
	ks.notify(NotifyZSet, event, key, c.DB)
}

// zremEvents are the events of ZREMRANGEBY*, by range type.
var zremEvents = [...]string{zrangeRank: "zremrangebyrank", zrangeScore: "zremrangebyscore", zrangeLex: "zremrangebylex"}

func cmdZRemRangeByRank(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zremRangeGeneric(c, args, zrangeRank, w)
}

func cmdZRemRangeByScore(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zremRangeGeneric(c, args, zrangeScore, w)
}

func cmdZRemRangeByLex(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zremRangeGeneric(c, args, zrangeLex, w)
}
