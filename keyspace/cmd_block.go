package keyspace

import (
	"math"
	"math/big"
	"strings"

	"github.com/moond-db/moond/resp"
)

// The blocking pops: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN,
// BZPOPMAX and BZMPOP.
//
// In the keyspace a blocking command is its non-blocking form over the
// first of its keys that holds data, journaled as that form (LPOP k 1,
// MOOND.APPLY CMD ... for a move, ZREM, or DEL when the value empties):
// replay never sees a blocking command. When none of its keys holds data
// it replies nothing and sets Client.WouldBlock; the server then parks the
// client (server/block.go) and, once a write touches one of the keys, runs
// the command again for that key alone (BlockSpec.ServeArgs) with
// Client.Serving set. The keyspace keeps no blocking state.
//
// Redis 7.0's rules kept here: the timeout is parsed first (after
// BLMOVE's LEFT|RIGHT, and after BLMPOP's and BZMPOP's other arguments);
// a key of another kind met before one with data is WRONGTYPE when the
// command is called, but not when it is served: a blocked client waits
// on until the key holds its kind again (7.0's serveClientsBlockedOnKey
// looks only at keys of the kind waited for).

// BlockSpec tells the server how a blocking command waits.
type BlockSpec struct {
	// TimeoutArg is the index of the timeout argument; negative counts from
	// the end (-1 is the last argument).
	TimeoutArg int
	// WaitKeys appends to dst the indexes in args of the keys the command
	// waits on, in the order it tries them (BLMOVE waits on its source
	// only). args passed the command's own checks.
	WaitKeys func(args [][]byte, dst []int) []int
	// ServeArgs appends to dst the arguments that serve the command from
	// the key at index pos of args alone, and returns the result (the
	// server passes a slice it reuses: serving allocates none).
	ServeArgs func(args [][]byte, pos int, dst [][]byte) [][]byte
	kind      Kind // what it pops
	// check replies the error args get whatever the keys hold.
	check func(args [][]byte, w ReplyWriter) bool
}

// CheckArgs returns the error reply that args (past the arity check) get
// whatever their keys hold, or "" when none: the server checks a command
// it does not run at once (its keys are on several shards) with it.
func (b *BlockSpec) CheckArgs(args [][]byte) string {
	var w resp.Writer
	if b.check(args, &w) {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(string(w.Buf), "-"), "\r\n")
}

// checkTimeoutLast checks the timeout of CMD key [key ...] timeout.
func checkTimeoutLast(args [][]byte, w ReplyWriter) bool {
	return blockTimeoutOK(args[len(args)-1], w)
}

// Timeout returns the timeout argument of args.
func (b *BlockSpec) Timeout(args [][]byte) []byte {
	i := b.TimeoutArg
	if i < 0 {
		i += len(args)
	}
	return args[i]
}

var (
	fWBlock        = []string{"write", "noscript", "blocking"}
	fWDenyBlock    = []string{"write", "denyoom", "noscript", "blocking"}
	fWFastBlock    = []string{"write", "noscript", "blocking", "fast"}
	fWBlockMovable = []string{"write", "blocking", "movablekeys"}
	cListBlock     = []string{"@write", "@list", "@slow", "@blocking"}
	cZBlockFast    = []string{"@write", "@sortedset", "@fast", "@blocking"}
	cZBlockSlow    = []string{"@write", "@sortedset", "@slow", "@blocking"}
	argZero        = []byte("0")
	argOne         = []byte("1")
)

// blockSpecs are the blocking list and sorted-set commands.
var blockSpecs = []*CommandSpec{
	{Name: "blpop", Arity: -3, Flags: fWBlock, FirstKey: 1, LastKey: -2, Step: 1, ACLCategories: cListBlock, Block: blockKeysThenTimeout, run: cmdBLPop},
	{Name: "brpop", Arity: -3, Flags: fWBlock, FirstKey: 1, LastKey: -2, Step: 1, ACLCategories: cListBlock, Block: blockKeysThenTimeout, run: cmdBRPop},
	{Name: "brpoplpush", Arity: 4, Flags: fWDenyBlock, FirstKey: 1, LastKey: 2, Step: 1, ACLCategories: cListBlock, Block: blockMove, run: cmdBRPopLPush},
	{Name: "blmove", Arity: 6, Flags: fWDenyBlock, FirstKey: 1, LastKey: 2, Step: 1, ACLCategories: cListBlock, Block: blockMove, run: cmdBLMove},
	{Name: "blmpop", Arity: -5, Flags: fWBlockMovable, ACLCategories: cListBlock, MovableKeys: numkeysKeys(2), Block: blockMPop, run: cmdBLMPop},
	{Name: "bzpopmin", Arity: -3, Flags: fWFastBlock, FirstKey: 1, LastKey: -2, Step: 1, ACLCategories: cZBlockFast, Block: blockZKeysThenTimeout, run: cmdBZPopMin},
	{Name: "bzpopmax", Arity: -3, Flags: fWFastBlock, FirstKey: 1, LastKey: -2, Step: 1, ACLCategories: cZBlockFast, Block: blockZKeysThenTimeout, run: cmdBZPopMax},
	{Name: "bzmpop", Arity: -5, Flags: fWBlockMovable, ACLCategories: cZBlockSlow, MovableKeys: numkeysKeys(2), Block: blockZMPop, run: cmdBZMPop},
}

// blockKeysThenTimeout: CMD key [key ...] timeout (BLPOP, BRPOP, BZPOPMIN,
// BZPOPMAX), served as CMD key 0.
var blockKeysThenTimeout = blockPops(KindList)

// blockZKeysThenTimeout is blockKeysThenTimeout for sorted sets.
var blockZKeysThenTimeout = blockPops(KindZSet)

func blockPops(k Kind) *BlockSpec {
	return &BlockSpec{
		kind:       k,
		TimeoutArg: -1,
		check:      checkTimeoutLast,
		WaitKeys: func(args [][]byte, dst []int) []int {
			for i := 1; i < len(args)-1; i++ {
				dst = append(dst, i)
			}
			return dst
		},
		ServeArgs: func(args [][]byte, pos int, dst [][]byte) [][]byte {
			return append(dst, args[0], args[pos], argZero)
		},
	}
}

// blockMove: BLMOVE src dst LEFT|RIGHT LEFT|RIGHT timeout and BRPOPLPUSH
// src dst timeout wait on src; served as themselves with timeout 0.
var blockMove = &BlockSpec{
	kind:       KindList,
	TimeoutArg: -1,
	check: func(args [][]byte, w ReplyWriter) bool {
		if len(args) == 6 { // BLMOVE's LEFT|RIGHT come first
			_, ok1 := parseWhere(args[3])
			_, ok2 := parseWhere(args[4])
			if !ok1 || !ok2 {
				w.Error(errSyntax)
				return false
			}
		}
		return checkTimeoutLast(args, w)
	},
	WaitKeys: func(args [][]byte, dst []int) []int { return append(dst, 1) },
	ServeArgs: func(args [][]byte, _ int, dst [][]byte) [][]byte {
		dst = append(dst, args[:len(args)-1]...)
		return append(dst, argZero)
	},
}

// blockMPop: BLMPOP|BZMPOP timeout numkeys key [key ...] side [COUNT n],
// served as CMD 0 1 key side [COUNT n].
var blockMPop = mpops(KindList)

// blockZMPop is blockMPop for BZMPOP.
var blockZMPop = mpops(KindZSet)

func mpops(k Kind) *BlockSpec {
	return &BlockSpec{
		kind:       k,
		TimeoutArg: 1,
		check: func(args [][]byte, w ReplyWriter) bool {
			var ok bool
			if k == KindList {
				_, _, _, ok = parseMPop(args, 2, w)
			} else {
				_, _, _, ok = parseZMPop(args, 2, w)
			}
			return ok && blockTimeoutOK(args[1], w)
		},
		WaitKeys: numkeysKeys(2),
		ServeArgs: func(args [][]byte, pos int, dst [][]byte) [][]byte {
			n, _ := parseInt(args[2])
			dst = append(dst, args[0], argZero, argOne, args[pos])
			return append(dst, args[3+int(n):]...)
		},
	}
}

// Blocking timeouts, as Redis 7.0's getTimeoutFromObjectOrReply words
// them.
const (
	errTimeoutFloat = "ERR timeout is not a float or out of range"
	errTimeoutNeg   = "ERR timeout is negative"
)

// ParseBlockTimeout parses a blocking command's timeout in seconds (a
// long double, as Redis reads it) into milliseconds, rounded up as Redis
// 7.0's (long long)ceill(seconds*1000) rounds (0.0001 s waits 1 ms, and
// -0.0001 s is 0: for ever). It returns the error reply when the argument
// is refused. Redis 7.0 has no upper bound: a timeout whose deadline
// (now + ms) overflows is taken, and never fires (7.2 added "timeout is
// out of range").
func ParseBlockTimeout(b []byte) (ms int64, msg string) {
	if n, ok := parseInt(b); ok {
		// Whole seconds, the common case, without the long double.
		if n < 0 || n > math.MaxInt64/1000 {
			return 0, errTimeoutNeg
		}
		return n * 1000, ""
	}
	f, ok := parseLongDouble(b)
	if !ok {
		return 0, errTimeoutFloat
	}
	x := new(big.Float).SetPrec(ldPrec).Mul(f, big.NewFloat(1000))
	if x.IsInf() {
		return 0, errTimeoutNeg
	}
	ms, acc := x.Int64() // toward zero: the ceiling of a negative x
	if x.Sign() > 0 && acc == big.Below {
		// Past the int64 range C's conversion yields LLONG_MIN on the
		// machines Redis runs on, which Redis then calls negative.
		if ms == math.MaxInt64 {
			return 0, errTimeoutNeg
		}
		ms++
	}
	if ms < 0 {
		return 0, errTimeoutNeg
	}
	return ms, ""
}

// blockTimeoutOK checks the timeout argument, replying the error if it is
// refused.
func blockTimeoutOK(b []byte, w ReplyWriter) bool {
	if _, msg := ParseBlockTimeout(b); msg != "" {
		w.Error(msg)
		return false
	}
	return true
}

// noData ends a blocking command none of whose keys holds data: a client
// that may not block gets the timeout's reply, any other waits.
func noData(c *Client, nullBulk bool, w ReplyWriter) {
	switch {
	case !c.NoBlock:
		c.WouldBlock = true
	case nullBulk:
		w.Null()
	default:
		w.NullArray()
	}
}

// firstWithData returns the index in keys of the first key that holds a
// value of kind k (collections are never empty), with its slot and hash
// from the lookup, or -1 when none does; a key of another kind before it
// is WRONGTYPE (replied, -2), but when the command is being served, where
// it is passed over.
func (ks *Keyspace) firstWithData(c *Client, keys [][]byte, k Kind, w ReplyWriter) (int, *slot[entry], uint64) {
	for i, key := range keys {
		sl, h := ks.lookupWrite(c, key)
		switch {
		case sl == nil:
		case sl.v.kind() == k:
			return i, sl, h
		case !c.Serving:
			w.Error(errWrongType)
			return -2, nil, 0
		}
	}
	return -1, nil, 0
}

func cmdBLPop(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.blockingPop(c, args, true, w)
}

func cmdBRPop(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.blockingPop(c, args, false, w)
}

// blockingPop is BLPOP|BRPOP key [key ...] timeout: [key, element].
func (ks *Keyspace) blockingPop(c *Client, args [][]byte, front bool, w ReplyWriter) {
	if !blockTimeoutOK(args[len(args)-1], w) {
		return
	}
	keys := args[1 : len(args)-1]
	switch i, sl, h := ks.firstWithData(c, keys, KindList, w); {
	case i >= 0:
		w.ArrayHeader(2)
		w.Bulk(keys[i])
		ks.listPopReply(c, sl, h, keys[i], front, 1, false, w)
	case i == -1:
		noData(c, false, w)
	}
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
func cmdBLMove(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	from, to, ok := parseMoveSides(args[3], args[4], w)
	if !ok {
		return
	}
	ks.blockingMove(c, args[1], args[2], from, to, args[5], w)
}

// BRPOPLPUSH source destination timeout
func cmdBRPopLPush(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.blockingMove(c, args[1], args[2], false, true, args[3], w)
}

func (ks *Keyspace) blockingMove(c *Client, src, dst []byte, from, to bool, timeout []byte, w ReplyWriter) {
	if !blockTimeoutOK(timeout, w) {
		return
	}
	switch i, sl, h := ks.firstWithData(c, [][]byte{src}, KindList, w); {
	case i >= 0:
		ks.listMove(c, sl, h, src, dst, from, to, w)
	case i == -1:
		noData(c, true, w)
	}
}

// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
func cmdBLMPop(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	// Redis 7.0 checks numkeys, the side and COUNT before the timeout.
	keys, front, count, ok := parseMPop(args, 2, w)
	if !ok || !blockTimeoutOK(args[1], w) {
		return
	}
	switch i, _, _ := ks.firstWithData(c, keys, KindList, w); {
	case i >= 0:
		ks.listMPop(c, keys[i:i+1], front, count, w)
	case i == -1:
		noData(c, false, w)
	}
}

func cmdBZPopMin(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.blockingZPop(c, args, false, w)
}

func cmdBZPopMax(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.blockingZPop(c, args, true, w)
}

// blockingZPop is BZPOPMIN|BZPOPMAX key [key ...] timeout: [key, member,
// score].
func (ks *Keyspace) blockingZPop(c *Client, args [][]byte, max bool, w ReplyWriter) {
	if !blockTimeoutOK(args[len(args)-1], w) {
		return
	}
	keys := args[1 : len(args)-1]
	i, sl, h := ks.firstWithData(c, keys, KindZSet, w)
	if i == -1 {
		noData(c, false, w)
	}
	if i < 0 {
		return
	}
	key := keys[i]
	z := zsetAt(sl)
	at := 0
	if max {
		at = z.card() - 1
	}
	w.ArrayHeader(3)
	w.Bulk(key)
	z.each(at, at, max, func(m []byte, s float64) {
		w.Bulk(m)
		w.Double(s)
	})
	ks.zremRanks(c, sl, h, key, at, at, zpopEvent(max))
}

// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
func cmdBZMPop(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	keys, max, count, ok := parseZMPop(args, 2, w)
	if !ok || !blockTimeoutOK(args[1], w) {
		return
	}
	switch i, _, _ := ks.firstWithData(c, keys, KindZSet, w); {
	case i >= 0:
		ks.zpopGeneric(c, keys[i:i+1], max, count, true, w)
	case i == -1:
		noData(c, false, w)
	}
}

// PeekKind returns the kind of key in database db, and whether it exists
// and has not expired, without touching it, counting a hit or expiring
// it: the server's look, off any command, at whether a key some blocked
// client waits on holds another kind.
func (ks *Keyspace) PeekKind(db int, key []byte) (Kind, bool) {
	d := ks.dbs[db]
	h := d.keys.hash(key)
	sl := d.keys.find(h, key)
	if sl == nil {
		return 0, false
	}
	if sl.kw&kwTTL != 0 && !ks.Loading && ks.Now() > d.expires.find(h, key).v {
		return 0, false
	}
	return sl.v.kind(), true
}

// Pops is the kind a blocking command pops: KindList for the list
// commands, KindZSet for the sorted-set ones.
func (b *BlockSpec) Pops() Kind { return b.kind }
