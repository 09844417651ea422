package keyspace

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"unsafe"
)

// ZUNION, ZINTER, ZDIFF, ZINTERCARD and the *STORE forms, as Redis's
// zunionInterDiffGenericCommand. An input is a sorted set or, as in Redis,
// a plain set, whose members all have score 1.

type zsetOpKind int

const (
	zopUnion zsetOpKind = iota
	zopInter
	zopDiff
)

type zaggregate int

const (
	zaggSum zaggregate = iota
	zaggMin
	zaggMax
)

// zsrc is one input: its set (nil when the key is missing) and weight.
type zsrc struct {
	z      *zset
	weight float64
}

// zpair is a member of a result.
type zpair struct {
	m string
	s float64
}

func (s *zsrc) card() int {
	if s.z == nil {
		return 0
	}
	return s.z.card()
}

// aggregate folds v into t, NaN (inf - inf) counting as 0, as Redis's
// zunionInterAggregate.
func (a zaggregate) aggregate(t, v float64) float64 {
	switch a {
	case zaggMin:
		return min(t, v)
	case zaggMax:
		return max(t, v)
	}
	t += v
	if math.IsNaN(t) {
		return 0
	}
	return t
}

// weighted is score times weight, NaN (inf * 0) counting as 0.
func weighted(s, w float64) float64 {
	v := s * w
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// zsetOpArgs are a set operation's parsed arguments.
type zsetOpArgs struct {
	srcs       []zsrc
	agg        zaggregate
	withScores bool
	limit      int64
}

// parseZSetOp parses numkeys at args[idx], looks the keys up and parses
// the options; false means it replied.
func (ks *Keyspace) parseZSetOp(c *Client, args [][]byte, idx int, op zsetOpKind, store, cardOnly bool, w ReplyWriter) (zsetOpArgs, bool) {
	var a zsetOpArgs
	n, ok := parseInt(args[idx])
	if !ok {
		w.Error(errNotInteger)
		return a, false
	}
	if n < 1 {
		w.Error("ERR at least 1 input key is needed for '" + strings.ToLower(string(args[0])) + "' command")
		return a, false
	}
	if n > int64(len(args)-idx-1) {
		w.Error(errSyntax)
		return a, false
	}
	a.srcs = make([]zsrc, n)
	for i := range a.srcs {
		var sl *slot[entry]
		if store {
			// Redis's sources are read lookups even so: a miss is a
			// keymiss event.
			if sl, _ = ks.lookupWrite(c, args[idx+1+i]); sl == nil {
				ks.notify(NotifyKeyMiss, "keymiss", args[idx+1+i], c.DB)
			}
		} else {
			sl, _ = ks.lookupRead(c, args[idx+1+i])
		}
		a.srcs[i].weight = 1
		if sl == nil {
			continue
		}
		switch sl.v.kind() {
		case KindZSet:
			a.srcs[i].z = zsetAt(sl)
		case KindSet:
			a.srcs[i].z = zsetOfSet(sl.v.p, &ks.Limits)
		default:
			w.Error(errWrongType)
			return a, false
		}
	}
	return a, a.parseOptions(args[idx+1+int(n):], op, store, cardOnly, w)
}

// parseOptions parses WEIGHTS, AGGREGATE, WITHSCORES and LIMIT.
func (a *zsetOpArgs) parseOptions(opts [][]byte, op zsetOpKind, store, cardOnly bool, w ReplyWriter) bool {
	setOp := op != zopDiff && !cardOnly
	// Each option may be given once.
	var weights, aggregate, limit bool
	for j := 0; j < len(opts); {
		left := len(opts) - j
		o := opts[j]
		switch {
		case setOp && !weights && left >= len(a.srcs)+1 && equalFold(o, "weights"):
			weights = true
			for i := range a.srcs {
				f, ok := parseScore(opts[j+1+i])
				if !ok {
					w.Error("ERR weight value is not a float")
					return false
				}
				a.srcs[i].weight = f
			}
			j += 1 + len(a.srcs)
		case setOp && !aggregate && left >= 2 && equalFold(o, "aggregate"):
			aggregate = true
			switch v := opts[j+1]; {
			case equalFold(v, "sum"):
				a.agg = zaggSum
			case equalFold(v, "min"):
				a.agg = zaggMin
			case equalFold(v, "max"):
				a.agg = zaggMax
			default:
				w.Error(errSyntax)
				return false
			}
			j += 2
		case !store && !cardOnly && !a.withScores && equalFold(o, "withscores"):
			a.withScores = true
			j++
		case cardOnly && !limit && left >= 2 && equalFold(o, "limit"):
			limit = true
			n, ok := parseInt(opts[j+1])
			if !ok || n < 0 {
				w.Error("ERR LIMIT can't be negative")
				return false
			}
			a.limit = n
			j += 2
		default:
			w.Error(errSyntax)
			return false
		}
	}
	return true
}

// compute returns the operation's result in (score, member) order. With
// limit > 0 (ZINTERCARD) an intersection stops at limit members.
func (a *zsetOpArgs) compute(op zsetOpKind) []zpair {
	acc := map[string]float64{}
	var order []string
	switch op {
	case zopUnion:
		srcs := slices.Clone(a.srcs)
		slices.SortStableFunc(srcs, func(x, y zsrc) int { return cmp.Compare(x.card(), y.card()) })
		for _, s := range srcs {
			if s.z == nil || s.z.card() == 0 {
				continue
			}
			s.z.each(0, s.z.card()-1, false, func(m []byte, sc float64) {
				v := weighted(sc, s.weight)
				if t, ok := acc[string(m)]; ok {
					acc[string(m)] = a.agg.aggregate(t, v)
					return
				}
				acc[string(m)] = v
				order = append(order, string(m))
			})
		}
	case zopInter:
		srcs := slices.Clone(a.srcs)
		slices.SortStableFunc(srcs, func(x, y zsrc) int { return cmp.Compare(x.card(), y.card()) })
		if srcs[0].card() == 0 {
			return nil
		}
		first := srcs[0]
		first.z.each(0, first.z.card()-1, false, func(m []byte, sc float64) {
			if a.limit > 0 && int64(len(order)) >= a.limit {
				return
			}
			t := weighted(sc, first.weight)
			for _, o := range srcs[1:] {
				os, ok := o.z.score(m)
				if !ok {
					return
				}
				t = a.agg.aggregate(t, weighted(os, o.weight))
			}
			acc[string(m)] = t
			order = append(order, string(m))
		})
	case zopDiff:
		first := a.srcs[0]
		if first.card() == 0 {
			return nil
		}
		first.z.each(0, first.z.card()-1, false, func(m []byte, sc float64) {
			for _, o := range a.srcs[1:] {
				if o.z != nil {
					if _, ok := o.z.score(m); ok {
						return
					}
				}
			}
			acc[string(m)] = sc
			order = append(order, string(m))
		})
	}
	out := make([]zpair, len(order))
	for i, m := range order {
		out[i] = zpair{m, acc[m]}
	}
	slices.SortFunc(out, func(x, y zpair) int {
		if c := cmp.Compare(x.s, y.s); c != 0 {
			return c
		}
		return strings.Compare(x.m, y.m)
	})
	return out
}

// zsetOpGeneric runs ZUNION, ZINTER and ZDIFF (dst nil) and their *STORE
// forms, numkeys being args[idx].
func (ks *Keyspace) zsetOpGeneric(c *Client, args [][]byte, idx int, dst []byte, op zsetOpKind, w ReplyWriter) {
	a, ok := ks.parseZSetOp(c, args, idx, op, dst != nil, false, w)
	if !ok {
		return
	}
	res := a.compute(op)
	if dst != nil {
		var body []byte
		maxLen := 0
		for _, p := range res {
			body = appendZEntry(body, unsafeBytes(p.m), p.s)
			maxLen = max(maxLen, len(p.m))
		}
		ks.zstore(c, dst, body, len(res), maxLen, zstoreEvents[op], w)
		return
	}
	pairs := a.withScores && isRESP3(w)
	if a.withScores && !pairs {
		w.ArrayHeader(2 * len(res))
	} else {
		w.ArrayHeader(len(res))
	}
	for _, p := range res {
		if pairs {
			w.ArrayHeader(2)
		}
		w.BulkString(p.m)
		if a.withScores {
			w.Double(p.s)
		}
	}
}

func cmdZUnion(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zsetOpGeneric(c, args, 1, nil, zopUnion, w)
}

func cmdZInter(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zsetOpGeneric(c, args, 1, nil, zopInter, w)
}

func cmdZDiff(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zsetOpGeneric(c, args, 1, nil, zopDiff, w)
}

func cmdZUnionStore(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zsetOpGeneric(c, args, 2, args[1], zopUnion, w)
}

func cmdZInterStore(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zsetOpGeneric(c, args, 2, args[1], zopInter, w)
}

func cmdZDiffStore(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zsetOpGeneric(c, args, 2, args[1], zopDiff, w)
}

// ZINTERCARD numkeys key [key ...] [LIMIT limit]
func cmdZInterCard(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	a, ok := ks.parseZSetOp(c, args, 1, zopInter, false, true, w)
	if !ok {
		return
	}
	w.Int(int64(len(a.compute(zopInter))))
}

// zsetOfSet returns a sorted set holding the members of the set p, each
// with score 1: a plain set as an input of ZUNION, ZINTER and ZDIFF. It is
// a copy built for the command, never stored.
func zsetOfSet(p unsafe.Pointer, lim *EncodingLimits) *zset {
	members := setMembers(p)
	slices.SortFunc(members, bytes.Compare) // equal scores: member order
	var body []byte
	maxLen := 0
	for _, m := range members {
		body = binary.AppendUvarint(body, uint64(len(m)))
		body = append(body, m...)
		body = binary.LittleEndian.AppendUint64(body, math.Float64bits(1))
		maxLen = max(maxLen, len(m))
	}
	return zsetFromSorted(body, len(members), maxLen, lim)
}

// zstoreEvents are the events of the *STORE forms, by operation.
var zstoreEvents = [...]string{zopUnion: "zunionstore", zopInter: "zinterstore", zopDiff: "zdiffstore"}
