package keyspace

// The list commands that take elements out: LPOP, RPOP, LMPOP, LMOVE and
// RPOPLPUSH. listPopReply, listMove and listMPop serve one key that has
// data, so that the blocking forms can call them when a key they wait on
// gets some.

const (
	errNumkeys    = "ERR numkeys should be greater than 0"
	errCountAbove = "ERR count should be greater than 0"
)

// listPopReply pops up to count elements from the front or the back of
// the list in sl (key in the client's database), replying with them as an
// array (asArray) or, for count 1 and !asArray, as a bulk string. It
// deletes the key when the list empties and journals the pop.
func (ks *Keyspace) listPopReply(c *Client, sl *slot[entry], h uint64, key []byte, front bool, count int, asArray bool, w ReplyWriter) {
	d := ks.db(c)
	l := listOf(sl)
	count = min(count, l.len())
	lim := ks.listLim()
	before := ks.listChanging(d, sl)
	if asArray {
		w.ArrayHeader(count)
	}
	for range count {
		w.Bulk(l.pop(front, lim))
	}
	listResized(d, l, before)
	if l.len() == 0 {
		ks.deleteKey(d, h, key)
		ks.journal(c.DB, "DEL", key)
		ks.notify(NotifyList, popLower(front), key, c.DB)
		ks.notify(NotifyGeneric, "del", key, c.DB)
		return
	}
	ks.notify(NotifyList, popLower(front), key, c.DB)
	if ks.journaling() {
		ks.jstart(popName(front))
		ks.jadd(key)
		ks.jint(int64(count))
		ks.jend(c.DB)
	}
}

// LPOP|RPOP key [count]
func (ks *Keyspace) popCommand(c *Client, args [][]byte, w ReplyWriter, front bool) {
	if len(args) > 3 {
		w.Error(errArity(popLower(front)))
		return
	}
	hasCount := len(args) == 3
	count := int64(1)
	if hasCount {
		var ok bool
		if count, ok = parseInt(args[2]); !ok || count < 0 {
			w.Error(errMustBePos)
			return
		}
	}
	key := args[1]
	sl, h, ok := ks.writeList(c, key, w)
	switch {
	case !ok:
	case sl == nil && hasCount:
		w.NullArray()
	case sl == nil:
		w.Null()
	case count == 0:
		w.ArrayHeader(0)
	default:
		ks.listPopReply(c, sl, h, key, front, int(min(count, 1<<62)), hasCount, w)
	}
}

func popLower(front bool) string {
	if front {
		return "lpop"
	}
	return "rpop"
}

func cmdLPop(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.popCommand(c, args, w, true)
}

func cmdRPop(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.popCommand(c, args, w, false)
}

// parseMoveSides parses [B]LMOVE's wherefrom and whereto, replying the
// syntax error when either is not LEFT or RIGHT.
func parseMoveSides(from, to []byte, w ReplyWriter) (fromFront, toFront, ok bool) {
	fromFront, ok1 := parseWhere(from)
	toFront, ok2 := parseWhere(to)
	if !ok1 || !ok2 {
		w.Error(errSyntax)
		return false, false, false
	}
	return fromFront, toFront, true
}

// parseWhere parses LEFT or RIGHT: front for LEFT.
func parseWhere(b []byte) (front, ok bool) {
	switch {
	case equalFold(b, "left"):
		return true, true
	case equalFold(b, "right"):
		return false, true
	}
	return false, false
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT
func cmdLMove(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	from, to, ok := parseMoveSides(args[3], args[4], w)
	if !ok {
		return
	}
	ks.lmoveCommand(c, args[1], args[2], from, to, w)
}

// RPOPLPUSH source destination
func cmdRPopLPush(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.lmoveCommand(c, args[1], args[2], false, true, w)
}

func (ks *Keyspace) lmoveCommand(c *Client, src, dst []byte, from, to bool, w ReplyWriter) {
	sl, h, ok := ks.writeList(c, src, w)
	if !ok {
		return
	}
	if sl == nil {
		w.Null()
		return
	}
	ks.listMove(c, sl, h, src, dst, from, to, w)
}

// listMove moves one element from the list in sl (key src) to the list
// dst, replying with the element, or WRONGTYPE when dst holds another
// kind (nothing moves then).
func (ks *Keyspace) listMove(c *Client, sl *slot[entry], h uint64, src, dst []byte, from, to bool, w ReplyWriter) {
	if string(src) != string(dst) {
		if dsl, _ := ks.lookupWrite(c, dst); dsl != nil && dsl.v.kind() != KindList {
			w.Error(errWrongType)
			return
		}
	}
	d := ks.db(c)
	l := listOf(sl)
	lim := ks.listLim()
	before := ks.changedObject(d, sl)
	// The element is copied out: the push may reuse the bytes it was in.
	ks.scratch = append(ks.scratch[:0], l.pop(from, lim)...)
	elem := ks.scratch
	if string(src) == string(dst) {
		l.push(elem, to, lim)
		ks.objectResized(d, sl, before)
		w.Bulk(elem)
		if ks.journaling() {
			ks.jstart("LMOVE")
			ks.jadd(src, dst, whereWord(from), whereWord(to))
			ks.jend(c.DB)
		}
		ks.notify(NotifyList, pushLower(to), dst, c.DB)
		ks.notify(NotifyList, popLower(from), src, c.DB)
		return
	}
	ks.objectResized(d, sl, before)
	emptied := l.len() == 0
	if emptied {
		ks.deleteKey(d, h, src)
	}
	dsl, dh := ks.lookupWrite(c, dst)
	ks.listPush(d, dsl, dh, dst, [][]byte{elem}, to, false)
	w.Bulk(elem)
	// Redis pushes first, then tells of the pop (lmoveGenericCommand).
	ks.notify(NotifyList, pushLower(to), dst, c.DB)
	ks.notify(NotifyList, popLower(from), src, c.DB)
	if emptied {
		ks.notify(NotifyGeneric, "del", src, c.DB)
	}
	if !ks.journaling() {
		return
	}
	ks.jstart(applyName)
	if emptied {
		ks.jdel(c.DB, src)
	} else {
		ks.jadd(kwOpCmd)
		ks.jint(int64(c.DB))
		ks.jint(3)
		ks.jadd(unsafeBytes(popName(from)), src)
		ks.jint(1)
	}
	ks.jadd(kwOpCmd)
	ks.jint(int64(c.DB))
	ks.jint(3)
	ks.jadd(unsafeBytes(pushName(to)), dst, elem)
	ks.jend(c.DB)
}

var (
	kwLeft  = []byte("LEFT")
	kwRight = []byte("RIGHT")
)

func whereWord(front bool) []byte {
	if front {
		return kwLeft
	}
	return kwRight
}

// lmpopKeys is LMPOP's MovableKeys: the numkeys keys after numkeys.
func lmpopKeys(args [][]byte, dst []int) []int {
	if len(args) < 2 {
		return dst
	}
	n, ok := parseInt(args[1])
	if !ok || n <= 0 {
		return dst
	}
	for i := 2; i < len(args) && int64(i-2) < n; i++ {
		dst = append(dst, i)
	}
	return dst
}

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]
func cmdLMPop(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	keys, front, count, ok := parseMPop(args, 1, w)
	if !ok {
		return
	}
	if !ks.listMPop(c, keys, front, count, w) {
		w.NullArray()
	}
}

// parseMPop parses [B]LMPOP's arguments from numkeys (at args[at]) on:
// the keys, the side, and the count (1 unless given), or replies with the
// error.
func parseMPop(args [][]byte, at int, w ReplyWriter) (keys [][]byte, front bool, count int64, ok bool) {
	numkeys, ok := parseInt(args[at])
	if !ok || numkeys <= 0 {
		w.Error(errNumkeys)
		return nil, false, 0, false
	}
	if numkeys >= int64(len(args)-at-1) {
		w.Error(errSyntax)
		return nil, false, 0, false
	}
	whereAt := at + 1 + int(numkeys)
	if front, ok = parseWhere(args[whereAt]); !ok {
		w.Error(errSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := whereAt + 1; j < len(args); j++ {
		if count == -1 && equalFold(args[j], "count") && j+1 < len(args) {
			j++
			if count, ok = parseInt(args[j]); !ok || count <= 0 {
				w.Error(errCountAbove)
				return nil, false, 0, false
			}
			continue
		}
		w.Error(errSyntax)
		return nil, false, 0, false
	}
	if count == -1 {
		count = 1
	}
	return args[at+1 : whereAt], front, count, true
}

// listMPop pops from the first of keys that holds a list, replying
// [key, [elements]]; false, with nothing replied, when none does. A key
// of another kind before it is WRONGTYPE (true).
func (ks *Keyspace) listMPop(c *Client, keys [][]byte, front bool, count int64, w ReplyWriter) bool {
	for _, key := range keys {
		sl, h, ok := ks.writeList(c, key, w)
		if !ok {
			return true
		}
		if sl == nil {
			continue
		}
		w.ArrayHeader(2)
		w.Bulk(key)
		ks.listPopReply(c, sl, h, key, front, int(min(count, 1<<62)), true, w)
		return true
	}
	return false
}
