package keyspace

import (
	"math"
	"math/big"
)

// String commands (Redis's t_string.c).

// Options of SET and GETEX, as Redis's OBJ_SET_NX and friends.
const (
	optNX = 1 << iota
	optXX
	optGet
	optKeepTTL
	optPersist
	optEX
	optPX
	optEXAT
	optPXAT

	optExpire = optEX | optPX | optEXAT | optPXAT
)

// expireOption returns the option flag of an expiry keyword, or 0.
func expireOption(b []byte) int {
	switch {
	case equalFold(b, "ex"):
		return optEX
	case equalFold(b, "px"):
		return optPX
	case equalFold(b, "exat"):
		return optEXAT
	case equalFold(b, "pxat"):
		return optPXAT
	}
	return 0
}

// parseStringOptions parses the options of SET (set) or GETEX (!set) with
// Redis's rules: NX and XX exclude each other, KEEPTTL (SET only) and
// PERSIST (GETEX only) exclude the expiry options, the expiry options
// exclude each other but one may repeat (the last wins), an expiry option
// needs a following argument. Anything else is a syntax error.
func parseStringOptions(args [][]byte, set bool) (flags int, expire []byte, ok bool) {
	start := 2
	if set {
		start = 3
	}
	for j := start; j < len(args); j++ {
		opt := args[j]
		ex := expireOption(opt)
		switch {
		case set && equalFold(opt, "nx") && flags&optXX == 0:
			flags |= optNX
		case set && equalFold(opt, "xx") && flags&optNX == 0:
			flags |= optXX
		case set && equalFold(opt, "get"):
			flags |= optGet
		case set && equalFold(opt, "keepttl") && flags&(optPersist|optExpire) == 0:
			flags |= optKeepTTL
		case !set && equalFold(opt, "persist") && flags&(optExpire|optKeepTTL) == 0:
			flags |= optPersist
		case ex != 0 && j+1 < len(args) && flags&(optKeepTTL|optPersist|optExpire&^ex) == 0:
			flags |= ex
			expire = args[j+1]
			j++
		default:
			return 0, nil, false
		}
	}
	return flags, expire, true
}

// expireMillis turns an expiry argument into an absolute unix-ms time, as
// Redis's getExpireMillisecondsOrReply: seconds for EX and EXAT, relative
// for EX and PX; zero, negative or overflowing times are refused.
func (ks *Keyspace) expireMillis(w ReplyWriter, name string, flags int, arg []byte) (int64, bool) {
	ms, ok := parseInt(arg)
	if !ok {
		w.Error(errNotInteger)
		return 0, false
	}
	seconds := flags&(optEX|optEXAT) != 0
	if ms <= 0 || seconds && ms > math.MaxInt64/1000 {
		w.Error(errInvalidExpire(name))
		return 0, false
	}
	if seconds {
		ms *= 1000
	}
	if flags&(optEX|optPX) != 0 {
		ms += ks.now // wraps negative on overflow, caught below
	}
	if ms <= 0 {
		w.Error(errInvalidExpire(name))
		return 0, false
	}
	return ms, true
}

// getGeneric replies with key's string value or null; false means it
// replied WRONGTYPE.
func (ks *Keyspace) getGeneric(c *Client, key []byte, w ReplyWriter) bool {
	sl, _ := ks.lookupRead(c, key)
	if sl == nil {
		w.Null()
		return true
	}
	if sl.v.kind() != KindString {
		w.Error(errWrongType)
		return false
	}
	ks.replyValue(w, sl.v.value)
	return true
}

func cmdGet(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.getGeneric(c, args[1], w)
}

// setGeneric is SET with its options already parsed, and SETNX, SETEX and
// PSETEX (Redis's setGenericCommand). intReply answers 1/0 (SETNX) instead
// of OK/null.
func (ks *Keyspace) setGeneric(c *Client, w ReplyWriter, name string, flags int, key, val, expire []byte, intReply bool) {
	var when int64
	if expire != nil {
		var ok bool
		if when, ok = ks.expireMillis(w, name, flags, expire); !ok {
			return
		}
	}
	if flags&optGet != 0 && !ks.getGeneric(c, key, w) {
		return
	}
	d := ks.db(c)
	sl, h := ks.lookupWrite(c, key)
	if flags&optNX != 0 && sl != nil || flags&optXX != 0 && sl == nil {
		switch {
		case flags&optGet != 0: // the old value was the reply
		case intReply:
			w.Int(0)
		default:
			w.Null()
		}
		return
	}
	keepTTL := flags&optKeepTTL != 0
	sl = ks.setString(d, h, sl, key, val, keepTTL || expire != nil)
	if expire != nil {
		ks.setExpiry(d, h, sl, when)
	}
	ks.notify(NotifyString, "set", key, c.DB)
	if expire != nil {
		ks.notify(NotifyGeneric, "expire", key, c.DB)
	}
	if ks.journaling() {
		ks.jstart("SET")
		ks.jadd(key, val)
		switch {
		case expire != nil:
			ks.jadd(kwPXAT)
			ks.jint(when)
		case keepTTL:
			ks.jadd(kwKeepTTL)
		}
		ks.jend(c.DB)
	}
	switch {
	case flags&optGet != 0:
	case intReply:
		w.Int(1)
	default:
		replyOK(w)
	}
}

func cmdSet(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	flags, expire, ok := parseStringOptions(args, true)
	if !ok {
		w.Error(errSyntax)
		return
	}
	ks.setGeneric(c, w, "set", flags, args[1], args[2], expire, false)
}

func cmdSetNX(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.setGeneric(c, w, "setnx", optNX, args[1], args[2], nil, true)
}

func cmdSetEX(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.setGeneric(c, w, "setex", optEX, args[1], args[3], args[2], false)
}

func cmdPSetEX(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.setGeneric(c, w, "psetex", optPX, args[1], args[3], args[2], false)
}

func cmdGetSet(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key, val := args[1], args[2]
	if !ks.getGeneric(c, key, w) {
		return
	}
	sl, h := ks.lookupWrite(c, key)
	ks.setString(ks.db(c), h, sl, key, val, false)
	ks.journal(c.DB, "SET", key, val)
	ks.notify(NotifyString, "set", key, c.DB)
}

func cmdGetDel(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key := args[1]
	if !ks.getGeneric(c, key, w) {
		return
	}
	d := ks.db(c)
	if ks.deleteKey(d, d.keys.hash(key), key) {
		ks.journal(c.DB, "DEL", key)
		ks.notify(NotifyGeneric, "del", key, c.DB)
	}
}

// GETEX key [EX s | PX ms | EXAT ts | PXAT ms-ts | PERSIST]
func cmdGetEx(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	flags, expire, ok := parseStringOptions(args, false)
	if !ok {
		w.Error(errSyntax)
		return
	}
	key := args[1]
	sl, h := ks.lookupRead(c, key)
	if sl == nil {
		w.Null()
		return
	}
	if sl.v.kind() != KindString {
		w.Error(errWrongType)
		return
	}
	var when int64
	if expire != nil {
		if when, ok = ks.expireMillis(w, "getex", flags, expire); !ok {
			return
		}
	}
	ks.replyValue(w, sl.v.value)
	d := ks.db(c)
	switch {
	case flags&(optEXAT|optPXAT) != 0 && ks.alreadyExpired(when):
		ks.deleteKey(d, h, key)
		ks.journal(c.DB, "DEL", key)
		ks.notify(NotifyGeneric, "del", key, c.DB)
	case expire != nil:
		ks.setExpiry(d, h, sl, when)
		ks.journalExpireAt(c.DB, key, when)
		ks.notify(NotifyGeneric, "expire", key, c.DB)
	case flags&optPersist != 0:
		if ks.removeExpiry(d, h, sl) {
			ks.journal(c.DB, "PERSIST", key)
			ks.notify(NotifyGeneric, "persist", key, c.DB)
		}
	}
}

func cmdMGet(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	w.ArrayHeader(len(args) - 1)
	for _, key := range args[1:] {
		sl, _ := ks.lookupRead(c, key)
		if sl == nil || sl.v.kind() != KindString {
			w.Null()
			continue
		}
		ks.replyValue(w, sl.v.value)
	}
}

// msetGeneric is MSET and (nx) MSETNX.
func (ks *Keyspace) msetGeneric(c *Client, args [][]byte, w ReplyWriter, name string, nx bool) {
	if len(args)%2 == 0 {
		w.Error(errArity(name))
		return
	}
	if nx {
		for j := 1; j < len(args); j += 2 {
			if sl, _ := ks.lookupWrite(c, args[j]); sl != nil {
				w.Int(0)
				return
			}
		}
	}
	d := ks.db(c)
	for j := 1; j < len(args); j += 2 {
		sl, h := ks.lookupWrite(c, args[j])
		ks.setString(d, h, sl, args[j], args[j+1], false)
		ks.notify(NotifyString, "set", args[j], c.DB)
	}
	ks.journal(c.DB, "MSET", args[1:]...)
	if nx {
		w.Int(1)
	} else {
		replyOK(w)
	}
}

func cmdMSet(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.msetGeneric(c, args, w, "mset", false)
}

func cmdMSetNX(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.msetGeneric(c, args, w, "msetnx", true)
}

// mutableString turns the string in sl into the mutable buffer form, if it
// is not already, and returns the buffer.
// The caller changes it: the key is marked dirty.
func (ks *Keyspace) mutableString(d *db, sl *slot[entry]) *[]byte {
	ks.changed(d, sl)
	return ks.makeMutable(d, sl)
}

// makeMutable is mutableString without the marking.
func (ks *Keyspace) makeMutable(d *db, sl *slot[entry]) *[]byte {
	if !sl.v.isInt() && sl.v.tag() == tagBuf {
		return sl.v.buf()
	}
	old := sl.v.heapBytes()
	sl.v.value = bufValue(sl.v.appendTo(nil))
	d.dataBytes += sl.v.heapBytes() - old
	return sl.v.buf()
}

// tooLong reports whether a string of off+n bytes would exceed
// proto-max-bulk-len (Redis's checkStringLength), without overflowing.
// Replay never refuses (Redis skips the check for the clients it must
// obey): APPEND and SETRANGE records carry the change, and a string that
// was accepted must come back whole even if the limit was lowered since.
func (ks *Keyspace) tooLong(off, n int64) bool {
	if ks.Loading {
		return false
	}
	return n > ks.MaxBulkLen || off > ks.MaxBulkLen-n
}

func cmdAppend(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key, arg := args[1], args[2]
	d := ks.db(c)
	sl, h := ks.lookupWrite(c, key)
	if sl == nil {
		sl = ks.setKey(d, h, nil, key, newStringValue(arg), false)
		w.Int(int64(sl.v.strLen()))
		ks.journalSetValue(c.DB, key, sl.v.value)
		ks.notify(NotifyString, "append", key, c.DB)
		return
	}
	if sl.v.kind() != KindString {
		w.Error(errWrongType)
		return
	}
	if ks.tooLong(int64(sl.v.strLen()), int64(len(arg))) {
		w.Error(errStringTooBig)
		return
	}
	b := ks.mutableString(d, sl)
	oldCap := cap(*b)
	*b = append(*b, arg...)
	d.dataBytes += allocSize(int64(cap(*b))) - allocSize(int64(oldCap))
	w.Int(int64(len(*b)))
	ks.journal(c.DB, "APPEND", key, arg) // the change, not the value: journal.go
	ks.notify(NotifyString, "append", key, c.DB)
}

func cmdStrlen(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sl, _ := ks.lookupRead(c, args[1])
	switch {
	case sl == nil:
		w.Int(0)
	case sl.v.kind() != KindString:
		w.Error(errWrongType)
	default:
		w.Int(int64(sl.v.strLen()))
	}
}

// GETRANGE key start end, and its old name SUBSTR.
func cmdGetRange(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	start, ok1 := parseInt(args[2])
	end, ok2 := parseInt(args[3])
	if !ok1 || !ok2 {
		w.Error(errNotInteger)
		return
	}
	sl, _ := ks.lookupRead(c, args[1])
	if sl == nil {
		w.Bulk(nil)
		return
	}
	if sl.v.kind() != KindString {
		w.Error(errWrongType)
		return
	}
	var s []byte
	if sl.v.isInt() {
		ks.scratch = sl.v.appendTo(ks.scratch[:0])
		s = ks.scratch
	} else {
		s = sl.v.bytes()
	}
	n := int64(len(s))
	if start < 0 && end < 0 && start > end {
		w.Bulk(nil)
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	end = min(end, n-1)
	if start > end || n == 0 {
		w.Bulk(nil)
		return
	}
	w.Bulk(s[start : end+1])
}

func cmdSetRange(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key, arg := args[1], args[3]
	off, ok := parseInt(args[2])
	if !ok {
		w.Error(errNotInteger)
		return
	}
	if off < 0 {
		w.Error("ERR offset is out of range")
		return
	}
	d := ks.db(c)
	sl, h := ks.lookupWrite(c, key)
	if sl == nil {
		if len(arg) == 0 {
			w.Int(0)
			return
		}
		if ks.tooLong(off, int64(len(arg))) {
			w.Error(errStringTooBig)
			return
		}
		b := make([]byte, off+int64(len(arg)))
		copy(b[off:], arg)
		sl = ks.setKey(d, h, nil, key, bufValue(b), false)
		w.Int(int64(len(b)))
		ks.journalSetValue(c.DB, key, sl.v.value)
		ks.notify(NotifyString, "setrange", key, c.DB)
		return
	}
	if sl.v.kind() != KindString {
		w.Error(errWrongType)
		return
	}
	if len(arg) == 0 {
		w.Int(int64(sl.v.strLen()))
		return
	}
	if ks.tooLong(off, int64(len(arg))) {
		w.Error(errStringTooBig)
		return
	}
	b := ks.mutableString(d, sl)
	oldCap := cap(*b)
	if need := int(off) + len(arg); need > len(*b) {
		*b = append(*b, make([]byte, need-len(*b))...)
	}
	copy((*b)[off:], arg)
	d.dataBytes += allocSize(int64(cap(*b))) - allocSize(int64(oldCap))
	w.Int(int64(len(*b)))
	ks.journalSetRange(c.DB, key, off, arg)
	ks.notify(NotifyString, "setrange", key, c.DB)
}

// stringInt reads a string value as an integer (Redis's
// getLongLongFromObject).
func stringInt(v value) (int64, bool) {
	if v.isInt() {
		return v.intVal(), true
	}
	return parseInt(v.bytes())
}

// incrDecr adds incr to key's integer (Redis's incrDecrCommand). The key
// keeps its TTL.
func (ks *Keyspace) incrDecr(c *Client, key []byte, incr int64, w ReplyWriter) {
	sl, h := ks.lookupWrite(c, key)
	var cur int64
	if sl != nil {
		if sl.v.kind() != KindString {
			w.Error(errWrongType)
			return
		}
		var ok bool
		if cur, ok = stringInt(sl.v.value); !ok {
			w.Error(errNotInteger)
			return
		}
	}
	if incr < 0 && cur < 0 && incr < math.MinInt64-cur ||
		incr > 0 && cur > 0 && incr > math.MaxInt64-cur {
		w.Error(errOverflow)
		return
	}
	v := intValue(cur + incr)
	ks.setKey(ks.db(c), h, sl, key, v, true)
	w.Int(cur + incr)
	ks.journalSetValue(c.DB, key, v)
	ks.notify(NotifyString, "incrby", key, c.DB)
}

func cmdIncr(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.incrDecr(c, args[1], 1, w)
}

func cmdDecr(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.incrDecr(c, args[1], -1, w)
}

func cmdIncrBy(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	incr, ok := parseInt(args[2])
	if !ok {
		w.Error(errNotInteger)
		return
	}
	ks.incrDecr(c, args[1], incr, w)
}

func cmdDecrBy(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	incr, ok := parseInt(args[2])
	if !ok {
		w.Error(errNotInteger)
		return
	}
	if incr == math.MinInt64 {
		w.Error("ERR decrement would overflow")
		return
	}
	ks.incrDecr(c, args[1], -incr, w)
}

func cmdIncrByFloat(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key := args[1]
	sl, h := ks.lookupWrite(c, key)
	cur := new(big.Float).SetPrec(ldPrec)
	if sl != nil {
		if sl.v.kind() != KindString {
			w.Error(errWrongType)
			return
		}
		if sl.v.isInt() {
			cur.SetInt64(sl.v.intVal())
		} else if f, ok := parseLongDouble(sl.v.bytes()); ok {
			cur = f
		} else {
			w.Error(errNotFloat)
			return
		}
	}
	incr, ok := parseLongDouble(args[2])
	if !ok {
		w.Error(errNotFloat)
		return
	}
	const errNaN = "ERR increment would produce NaN or Infinity"
	if cur.IsInf() || incr.IsInf() {
		w.Error(errNaN)
		return
	}
	sum := new(big.Float).SetPrec(ldPrec).Add(cur, incr)
	if sum.Sign() != 0 && sum.MantExp(nil) > ldMaxExp {
		w.Error(errNaN)
		return
	}
	s := formatLongDouble(sum)
	v := bytesValue(s)
	ks.setKey(ks.db(c), h, sl, key, v, true)
	w.BulkString(s)
	ks.journalSetValue(c.DB, key, v)
	ks.notify(NotifyString, "incrbyfloat", key, c.DB)
}
