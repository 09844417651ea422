package keyspace

// ZPOPMIN, ZPOPMAX and ZMPOP (Redis's genericZpopCommand), journaled as
// ZREM of the members popped, or DEL when the set is emptied. The blocking
// forms (BZPOPMIN, BZPOPMAX, BZMPOP) are in cmd_block.go.

const (
	errZPositive    = "ERR value is out of range, must be positive"
	errZNumkeys     = "ERR numkeys should be greater than 0"
	errZCountAbove0 = "ERR count should be greater than 0"
)

func cmdZPopMin(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zpopCommand(c, args, false, w)
}

func cmdZPopMax(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.zpopCommand(c, args, true, w)
}

// zpopCommand is ZPOPMIN/ZPOPMAX key [count].
func (ks *Keyspace) zpopCommand(c *Client, args [][]byte, max bool, w ReplyWriter) {
	if len(args) > 3 {
		w.Error(errSyntax)
		return
	}
	count := int64(-1)
	if len(args) == 3 {
		n, ok := parseInt(args[2])
		if !ok {
			w.Error(errNotInteger)
			return
		}
		if n < 0 {
			w.Error(errZPositive)
			return
		}
		count = n
	}
	ks.zpopGeneric(c, args[1:2], max, count, false, w)
}

// zpopGeneric pops from the first non-empty set of keys: count members
// (-1: one, replied flat; 0: none, once the keys' types are checked),
// nested as ZMPOP replies when nested.
func (ks *Keyspace) zpopGeneric(c *Client, keys [][]byte, max bool, count int64, nested bool, w ReplyWriter) {
	var sl *slot[entry]
	var h uint64
	var key []byte
	for _, k := range keys {
		s, hs := ks.lookupWrite(c, k)
		if s == nil {
			continue
		}
		if s.v.kind() != KindZSet {
			w.Error(errWrongType)
			return
		}
		sl, h, key = s, hs, k
		break
	}
	if sl == nil || count == 0 {
		if nested {
			w.NullArray()
		} else {
			w.ArrayHeader(0)
		}
		return
	}
	z := zsetAt(sl)
	n := z.card()
	take := n
	if count >= 0 && count < int64(n) {
		take = int(count)
	}
	if count == -1 {
		take = 1
	}
	lo, hi := 0, take-1
	if max {
		lo, hi = n-take, n-1
	}
	pairs := isRESP3(w) && count != -1 || nested
	switch {
	case nested:
		w.ArrayHeader(2)
		w.Bulk(key)
		w.ArrayHeader(take)
	case pairs:
		w.ArrayHeader(take)
	default:
		w.ArrayHeader(2 * take)
	}
	z.each(lo, hi, max, func(m []byte, s float64) {
		if pairs {
			w.ArrayHeader(2)
		}
		w.Bulk(m)
		w.Double(s)
	})
	ks.zremRanks(c, sl, h, key, lo, hi, zpopEvent(max))
}

// zpopEvent is the event a pop of the lowest (or, max, the highest)
// scores notifies.
func zpopEvent(max bool) string {
	if max {
		return "zpopmax"
	}
	return "zpopmin"
}

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
func cmdZMPop(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	keys, max, count, ok := parseZMPop(args, 1, w)
	if !ok {
		return
	}
	ks.zpopGeneric(c, keys, max, count, true, w)
}

// parseZMPop parses [B]ZMPOP's arguments from numkeys (at args[at]) on:
// the keys, MAX, and the count (1 unless given), or replies with the
// error.
func parseZMPop(args [][]byte, at int, w ReplyWriter) (keys [][]byte, max bool, count int64, ok bool) {
	numkeys, ok := parseInt(args[at])
	if !ok || numkeys < 1 {
		w.Error(errZNumkeys)
		return nil, false, 0, false
	}
	whereIdx := int64(at) + 1 + numkeys
	if whereIdx >= int64(len(args)) {
		w.Error(errSyntax)
		return nil, false, 0, false
	}
	switch {
	case equalFold(args[whereIdx], "min"):
	case equalFold(args[whereIdx], "max"):
		max = true
	default:
		w.Error(errSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := int(whereIdx) + 1; j < len(args); j++ {
		if count == -1 && equalFold(args[j], "count") && j+1 < len(args) {
			j++
			n, ok := parseInt(args[j])
			if !ok || n < 1 {
				w.Error(errZCountAbove0)
				return nil, false, 0, false
			}
			count = n
			continue
		}
		w.Error(errSyntax)
		return nil, false, 0, false
	}
	if count == -1 {
		count = 1
	}
	return args[at+1 : whereIdx], max, count, true
}
