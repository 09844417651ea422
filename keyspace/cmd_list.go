package keyspace

import "unsafe"

// List commands (Redis's t_list.c). The blocking forms (BLPOP, BRPOP,
// BLMOVE, BRPOPLPUSH, BLMPOP) are in cmd_block.go; they call listPopReply,
// listMove and listMPop once a key has data.
//
// Journal forms (see journal.go):
//
//	LPUSH, RPUSH; LPUSHX, RPUSHX that pushed   LPUSH|RPUSH k elem ...
//	LPOP, RPOP, LMPOP                          LPOP|RPOP k <count popped>, or DEL k when the list emptied
//	LSET, LINSERT (inserted), LREM (removed)   themselves, or DEL k when LREM emptied the list
//	LTRIM that removed elements                itself, or DEL k when it emptied the list
//	LMOVE, RPOPLPUSH, src != dst (db d)        MOOND.APPLY CMD d 3 LPOP|RPOP src 1 CMD d 3 LPUSH|RPUSH dst elem
//	                                           (DEL d src instead of the pop when src emptied)
//	LMOVE, RPOPLPUSH, src == dst               LMOVE k k LEFT|RIGHT LEFT|RIGHT
//
// Each depends only on its keys' prior state.

var (
	cListWriteFast = []string{"@write", "@list", "@fast"}
	cListWriteSlow = []string{"@write", "@list", "@slow"}
	cListReadFast  = []string{"@read", "@list", "@fast"}
	cListReadSlow  = []string{"@read", "@list", "@slow"}
)

// listSpecs are the list commands.
var listSpecs = []*CommandSpec{
	{Name: "lpush", Arity: -3, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cListWriteFast, run: cmdLPush},
	{Name: "rpush", Arity: -3, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cListWriteFast, run: cmdRPush},
	{Name: "lpushx", Arity: -3, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cListWriteFast, run: cmdLPushX},
	{Name: "rpushx", Arity: -3, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cListWriteFast, run: cmdRPushX},
	{Name: "linsert", Arity: 5, Flags: fWDeny, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cListWriteSlow, run: cmdLInsert},
	{Name: "rpop", Arity: -2, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cListWriteFast, run: cmdRPop},
	{Name: "lpop", Arity: -2, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cListWriteFast, run: cmdLPop},
	{Name: "lmpop", Arity: -4, Flags: []string{"write", "movablekeys"}, ACLCategories: cListWriteSlow, MovableKeys: lmpopKeys, run: cmdLMPop},
	{Name: "rpoplpush", Arity: 3, Flags: fWDeny, FirstKey: 1, LastKey: 2, Step: 1, ACLCategories: cListWriteSlow, run: cmdRPopLPush},
	{Name: "lmove", Arity: 5, Flags: fWDeny, FirstKey: 1, LastKey: 2, Step: 1, ACLCategories: cListWriteSlow, run: cmdLMove},
	{Name: "llen", Arity: 2, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cListReadFast, run: cmdLLen},
	{Name: "lindex", Arity: 3, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cListReadSlow, run: cmdLIndex},
	{Name: "lset", Arity: 4, Flags: fWDeny, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cListWriteSlow, run: cmdLSet},
	{Name: "lrange", Arity: 4, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cListReadSlow, run: cmdLRange},
	{Name: "ltrim", Arity: 4, Flags: fW, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cListWriteSlow, run: cmdLTrim},
	{Name: "lpos", Arity: -3, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cListReadSlow, run: cmdLPos},
	{Name: "lrem", Arity: 4, Flags: fW, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cListWriteSlow, run: cmdLRem},
}

const (
	errIndexRange    = "ERR index out of range"
	errMustBePos     = "ERR value is out of range, must be positive"
	errRankZero      = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	errRankRange     = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	errCountNegative = "ERR COUNT can't be negative"
	errMaxlenNeg     = "ERR MAXLEN can't be negative"
)

// listLim is the node limit of the keyspace's list-max-listpack-size.
func (ks *Keyspace) listLim() listLimit { return limitOf(ks.Limits.ListMaxListpackSize) }

func listOf(sl *slot[entry]) *list { return (*list)(sl.v.p) }

// readList looks key up for a read: its list, or nil with nothing replied
// when the key is missing, or nil and ok false after WRONGTYPE.
func (ks *Keyspace) readList(c *Client, key []byte, w ReplyWriter) (l *list, ok bool) {
	sl, _ := ks.lookupRead(c, key)
	if sl == nil {
		return nil, true
	}
	if sl.v.kind() != KindList {
		w.Error(errWrongType)
		return nil, false
	}
	return listOf(sl), true
}

// writeList is readList for a write: it returns the key's slot and hash.
func (ks *Keyspace) writeList(c *Client, key []byte, w ReplyWriter) (*slot[entry], uint64, bool) {
	sl, h := ks.lookupWrite(c, key)
	if sl != nil && sl.v.kind() != KindList {
		w.Error(errWrongType)
		return nil, h, false
	}
	return sl, h, true
}

// listPush pushes elems to key's list, creating it unless onlyExisting,
// and returns the list's length (0 when nothing was pushed: a missing key
// and onlyExisting); sl is the key's slot from writeList.
func (ks *Keyspace) listPush(d *db, sl *slot[entry], h uint64, key []byte, elems [][]byte, front, onlyExisting bool) int {
	lim := ks.listLim()
	if sl == nil {
		if onlyExisting {
			return 0
		}
		l := newList()
		l.pushAll(elems, front, lim)
		ks.addKey(d, h, key, "", objectValue(KindList, unsafe.Pointer(l)))
		return l.len()
	}
	l := listOf(sl)
	before := ks.listChanging(d, sl)
	l.pushAll(elems, front, lim)
	listResized(d, l, before)
	return l.len()
}

// listChanging is changedObject for the list in sl, without the call
// through the kind's table: the key becomes dirty, and the list's memory
// before the change is returned for listResized.
func (ks *Keyspace) listChanging(d *db, sl *slot[entry]) int64 {
	ks.changed(d, sl)
	return listOf(sl).memory()
}

// listResized is objectResized for l, which held before bytes.
func listResized(d *db, l *list, before int64) { d.dataBytes += l.memory() - before }

func (ks *Keyspace) pushCommand(c *Client, args [][]byte, w ReplyWriter, front, onlyExisting bool) {
	key := args[1]
	sl, h, ok := ks.writeList(c, key, w)
	if !ok {
		return
	}
	n := ks.listPush(ks.db(c), sl, h, key, args[2:], front, onlyExisting)
	w.Int(int64(n))
	if n > 0 {
		ks.journal(c.DB, pushName(front), args[1:]...)
		ks.notify(NotifyList, pushLower(front), key, c.DB)
	}
}

func pushName(front bool) string {
	if front {
		return "LPUSH"
	}
	return "RPUSH"
}

func popName(front bool) string {
	if front {
		return "LPOP"
	}
	return "RPOP"
}

func cmdLPush(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.pushCommand(c, args, w, true, false)
}

func cmdRPush(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.pushCommand(c, args, w, false, false)
}

func cmdLPushX(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.pushCommand(c, args, w, true, true)
}

func cmdRPushX(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.pushCommand(c, args, w, false, true)
}

func cmdLLen(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	l, ok := ks.readList(c, args[1], w)
	switch {
	case !ok:
	case l == nil:
		w.Int(0)
	default:
		w.Int(int64(l.len()))
	}
}

// LINDEX key index
func cmdLIndex(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	l, ok := ks.readList(c, args[1], w)
	if !ok {
		return
	}
	if l == nil {
		w.Null()
		return
	}
	i, ok := parseInt(args[2])
	if !ok {
		w.Error(errNotInteger)
		return
	}
	if i < 0 {
		i += int64(l.len())
	}
	if i < 0 || i >= int64(l.len()) {
		w.Null()
		return
	}
	w.Bulk(l.index(int(i)))
}

// LSET key index element
func cmdLSet(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sl, _, ok := ks.writeList(c, args[1], w)
	if !ok {
		return
	}
	if sl == nil {
		w.Error(errNoSuchKey)
		return
	}
	i, ok := parseInt(args[2])
	if !ok {
		w.Error(errNotInteger)
		return
	}
	l := listOf(sl)
	if i < 0 {
		i += int64(l.len())
	}
	if i < 0 || i >= int64(l.len()) {
		w.Error(errIndexRange)
		return
	}
	d := ks.db(c)
	before := ks.changedObject(d, sl)
	l.set(int(i), args[3], ks.listLim())
	ks.objectResized(d, sl, before)
	replyOK(w)
	ks.journal(c.DB, "LSET", args[1:]...)
	ks.notify(NotifyList, "lset", args[1], c.DB)
}

// LINSERT key BEFORE|AFTER pivot element
func cmdLInsert(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	var after bool
	switch {
	case equalFold(args[2], "after"):
		after = true
	case equalFold(args[2], "before"):
	default:
		w.Error(errSyntax)
		return
	}
	sl, _, ok := ks.writeList(c, args[1], w)
	if !ok {
		return
	}
	if sl == nil {
		w.Int(0)
		return
	}
	l := listOf(sl)
	it := l.iterAt(0, false)
	i := 0
	for {
		e, more := it.next()
		if !more {
			w.Int(-1)
			return
		}
		if string(e) == string(args[3]) {
			break
		}
		i++
	}
	d := ks.db(c)
	before := ks.changedObject(d, sl)
	l.insert(i, after, args[4], ks.listLim())
	ks.objectResized(d, sl, before)
	w.Int(int64(l.len()))
	ks.journal(c.DB, "LINSERT", args[1:]...)
	ks.notify(NotifyList, "linsert", args[1], c.DB)
}

// listRange clamps LRANGE's and LTRIM's start and end to a list of
// length n, as Redis does; empty is true for an empty range.
func listRange(start, end int64, n int) (s, e int, empty bool) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if end < 0 {
		end += ln
	}
	start = max(start, 0)
	if start > end || start >= ln {
		return 0, 0, true
	}
	end = min(end, ln-1)
	return int(start), int(end), false
}

// parseRange parses LRANGE's and LTRIM's start and end.
func parseRange(args [][]byte, w ReplyWriter) (start, end int64, ok bool) {
	start, ok1 := parseInt(args[2])
	end, ok2 := parseInt(args[3])
	if !ok1 || !ok2 {
		w.Error(errNotInteger)
		return 0, 0, false
	}
	return start, end, true
}

// LRANGE key start stop
func cmdLRange(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	start, end, ok := parseRange(args, w)
	if !ok {
		return
	}
	l, ok := ks.readList(c, args[1], w)
	if !ok {
		return
	}
	if l == nil {
		w.ArrayHeader(0)
		return
	}
	s, e, empty := listRange(start, end, l.len())
	if empty {
		w.ArrayHeader(0)
		return
	}
	w.ArrayHeader(e - s + 1)
	it := l.iterAt(s, false)
	for i := s; i <= e; i++ {
		x, _ := it.next()
		w.Bulk(x)
	}
}

// LTRIM key start stop
func cmdLTrim(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	start, end, ok := parseRange(args, w)
	if !ok {
		return
	}
	key := args[1]
	sl, h, ok := ks.writeList(c, key, w)
	if !ok {
		return
	}
	if sl == nil {
		replyOK(w)
		return
	}
	l := listOf(sl)
	s, e, empty := listRange(start, end, l.len())
	ltrim, rtrim := s, l.len()-e-1
	if empty {
		ltrim, rtrim = l.len(), 0
	}
	d := ks.db(c)
	switch {
	case ltrim+rtrim == 0:
		ks.signalKey(d, key) // nothing to trim: Redis signals all the same
		ks.notify(NotifyList, "ltrim", key, c.DB)
	case ltrim+rtrim == l.len():
		ks.deleteKey(d, h, key)
		ks.journal(c.DB, "DEL", key)
		ks.notify(NotifyList, "ltrim", key, c.DB)
		ks.notify(NotifyGeneric, "del", key, c.DB)
	default:
		before := ks.changedObject(d, sl)
		l.trim(ltrim, rtrim, ks.listLim())
		ks.objectResized(d, sl, before)
		ks.journal(c.DB, "LTRIM", args[1:]...)
		ks.notify(NotifyList, "ltrim", key, c.DB)
	}
	replyOK(w)
}

// LREM key count element
func cmdLRem(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	n, ok := parseInt(args[2])
	if !ok {
		w.Error(errNotInteger)
		return
	}
	key := args[1]
	sl, h, ok := ks.writeList(c, key, w)
	if !ok {
		return
	}
	if sl == nil {
		w.Int(0)
		return
	}
	l := listOf(sl)
	if !l.contains(args[3]) { // nothing changes: the key stays clean
		w.Int(0)
		return
	}
	d := ks.db(c)
	before := ks.changedObject(d, sl)
	maxN := n
	if n < 0 {
		maxN = -n // -MinInt64 stays negative: no limit, as every element is at most all
	}
	if maxN < 0 || maxN > int64(l.len()) {
		maxN = int64(l.len())
	}
	removed := l.remove(args[3], int(maxN), n < 0, ks.listLim())
	ks.objectResized(d, sl, before)
	w.Int(int64(removed))
	switch {
	case removed == 0:
	case l.len() == 0:
		ks.deleteKey(d, h, key)
		ks.journal(c.DB, "DEL", key)
		ks.notify(NotifyList, "lrem", key, c.DB)
		ks.notify(NotifyGeneric, "del", key, c.DB)
	default:
		ks.journal(c.DB, "LREM", args[1:]...)
		ks.notify(NotifyList, "lrem", key, c.DB)
	}
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
func cmdLPos(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	rank, count, maxlen := int64(1), int64(-1), int64(0) // count -1: not given
	for j := 3; j < len(args); j++ {
		more := j+1 < len(args)
		var ok bool
		switch {
		case equalFold(args[j], "rank") && more:
			j++
			if rank, ok = parseInt(args[j]); !ok {
				w.Error(errNotInteger)
				return
			}
			if rank == -1<<63 {
				w.Error(errRankRange)
				return
			}
			if rank == 0 {
				w.Error(errRankZero)
				return
			}
		case equalFold(args[j], "count") && more:
			j++
			if count, ok = parseInt(args[j]); !ok || count < 0 {
				w.Error(errCountNegative)
				return
			}
		case equalFold(args[j], "maxlen") && more:
			j++
			if maxlen, ok = parseInt(args[j]); !ok || maxlen < 0 {
				w.Error(errMaxlenNeg)
				return
			}
		default:
			w.Error(errSyntax)
			return
		}
	}
	l, ok := ks.readList(c, args[1], w)
	if !ok {
		return
	}
	if l == nil {
		if count != -1 {
			w.ArrayHeader(0)
		} else {
			w.Null()
		}
		return
	}
	backwards := rank < 0
	if backwards {
		rank = -rank
	}
	found := ks.lposMatches(l, args[2], backwards, rank, count, maxlen)
	if count == -1 {
		if len(found) == 0 {
			w.Null()
		} else {
			w.Int(found[0])
		}
		return
	}
	w.ArrayHeader(len(found))
	for _, i := range found {
		w.Int(i)
	}
}

// lposMatches returns the indexes of LPOS's matches: from the rank-th
// match on, up to count of them (all for 0; -1 means one, LPOS without
// COUNT), looking at no more than maxlen elements (0: all).
func (ks *Keyspace) lposMatches(l *list, elem []byte, backwards bool, rank, count, maxlen int64) []int64 {
	var found []int64
	start := 0
	if backwards {
		start = l.len() - 1
	}
	it := l.iterAt(start, backwards)
	matches := int64(0)
	for idx := int64(0); maxlen == 0 || idx < maxlen; idx++ {
		var e []byte
		var more bool
		if backwards {
			e, more = it.prev()
		} else {
			e, more = it.next()
		}
		if !more {
			break
		}
		if string(e) != string(elem) {
			continue
		}
		matches++
		if matches < rank {
			continue
		}
		pos := idx
		if backwards {
			pos = int64(l.len()) - idx - 1
		}
		found = append(found, pos)
		if count == -1 || count > 0 && matches-rank+1 >= count {
			break
		}
	}
	return found
}

// pushLower is the event a push notifies.
func pushLower(front bool) string {
	if front {
		return "lpush"
	}
	return "rpush"
}
