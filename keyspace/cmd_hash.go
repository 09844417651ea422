package keyspace

import (
	"math"
	"math/big"
	"strconv"
	"unsafe"
)

// Hash commands (Redis's t_hash.c). The representations are in hash.go.
//
// Journal forms (journal.go's rules):
//
//	HSET, HMSET                 HSET k f v ... (the pairs given)
//	HSETNX that set             HSET k f v
//	HINCRBY, HINCRBYFLOAT       HSET k f <resulting value>
//	HDEL                        HDEL k <the fields that existed>
//
// An HDEL that empties the hash deletes the key; its record is the HDEL,
// which deletes the key the same way when replayed.

var (
	cHashReadFast  = []string{"@read", "@hash", "@fast"}
	cHashReadSlow  = []string{"@read", "@hash", "@slow"}
	cHashWriteFast = []string{"@write", "@hash", "@fast"}
)

// hashSpecs are the hash commands.
var hashSpecs = []*CommandSpec{
	{Name: "hset", Arity: -4, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashWriteFast, elem: true, run: cmdHSet},
	{Name: "hsetnx", Arity: 4, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashWriteFast, elem: true, run: cmdHSetNX},
	{Name: "hget", Arity: 3, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashReadFast, elem: true, run: cmdHGet},
	{Name: "hmset", Arity: -4, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashWriteFast, elem: true, run: cmdHMSet},
	{Name: "hmget", Arity: -3, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashReadFast, elem: true, run: cmdHMGet},
	{Name: "hdel", Arity: -3, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashWriteFast, elem: true, run: cmdHDel},
	{Name: "hlen", Arity: 2, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashReadFast, run: cmdHLen},
	{Name: "hstrlen", Arity: 3, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashReadFast, elem: true, run: cmdHStrlen},
	{Name: "hexists", Arity: 3, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashReadFast, elem: true, run: cmdHExists},
	{Name: "hkeys", Arity: 2, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashReadSlow, run: cmdHKeys},
	{Name: "hvals", Arity: 2, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashReadSlow, run: cmdHVals},
	{Name: "hgetall", Arity: 2, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashReadSlow, run: cmdHGetAll},
	{Name: "hincrby", Arity: 4, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashWriteFast, elem: true, run: cmdHIncrBy},
	{Name: "hincrbyfloat", Arity: 4, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashWriteFast, elem: true, run: cmdHIncrByFloat},
	{Name: "hrandfield", Arity: -2, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashReadSlow, run: cmdHRandField},
	{Name: "hscan", Arity: -3, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cHashReadSlow, run: cmdHScan},
}

// hashForRead looks key up for reading: its hash (nil when the key is
// missing), or false after replying WRONGTYPE.
func (ks *Keyspace) hashForRead(c *Client, key []byte, w ReplyWriter) (unsafe.Pointer, bool) {
	sl, _ := ks.lookupRead(c, key)
	if sl == nil {
		return nil, true
	}
	if sl.v.kind() != KindHash {
		w.Error(errWrongType)
		return nil, false
	}
	return sl.v.p, true
}

// hsetPairs sets the field/value pairs on key, creating the hash if
// missing, and returns the number of new fields, or false after replying
// WRONGTYPE.
func (ks *Keyspace) hsetPairs(c *Client, key []byte, pairs [][]byte, w ReplyWriter) (int, bool) {
	d := ks.db(c)
	sl, h := ks.lookupWrite(c, key)
	if sl == nil {
		p := newHash(pairs, &ks.Limits)
		ks.addKey(d, h, key, "", objectValue(KindHash, p))
		return hashLen(p), true
	}
	if sl.v.kind() != KindHash {
		w.Error(errWrongType)
		return 0, false
	}
	before := ks.changedObject(d, sl)
	added := 0
	for i := 0; i+1 < len(pairs); i += 2 {
		if hashSet(&sl.v.p, pairs[i], pairs[i+1], &ks.Limits) {
			added++
		}
	}
	ks.objectResized(d, sl, before)
	return added, true
}

// hsetGeneric is HSET and (mset) HMSET.
func (ks *Keyspace) hsetGeneric(c *Client, args [][]byte, w ReplyWriter, name string, mset bool) {
	if len(args)%2 != 0 {
		w.Error(errArity(name))
		return
	}
	added, ok := ks.hsetPairs(c, args[1], args[2:], w)
	if !ok {
		return
	}
	ks.journal(c.DB, "HSET", args[1:]...)
	ks.notify(NotifyHash, "hset", args[1], c.DB)
	if mset {
		replyOK(w)
	} else {
		w.Int(int64(added))
	}
}

func cmdHSet(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.hsetGeneric(c, args, w, "hset", false)
}

func cmdHMSet(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.hsetGeneric(c, args, w, "hmset", true)
}

func cmdHSetNX(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sl, _ := ks.lookupWrite(c, args[1])
	if sl != nil {
		if sl.v.kind() != KindHash {
			w.Error(errWrongType)
			return
		}
		if _, ok := hashGet(sl.v.p, args[2]); ok {
			w.Int(0)
			return
		}
	}
	if _, ok := ks.hsetPairs(c, args[1], args[2:], w); ok {
		ks.journal(c.DB, "HSET", args[1:]...)
		ks.notify(NotifyHash, "hset", args[1], c.DB)
		w.Int(1)
	}
}

func cmdHGet(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	p, ok := ks.hashForRead(c, args[1], w)
	if !ok {
		return
	}
	if p != nil {
		if v, found := hashGet(p, args[2]); found {
			w.Bulk(v)
			return
		}
	}
	w.Null()
}

func cmdHMGet(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	p, ok := ks.hashForRead(c, args[1], w)
	if !ok {
		return
	}
	w.ArrayHeader(len(args) - 2)
	for _, f := range args[2:] {
		if p != nil {
			if v, found := hashGet(p, f); found {
				w.Bulk(v)
				continue
			}
		}
		w.Null()
	}
}

func cmdHDel(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key := args[1]
	sl, h := ks.lookupWrite(c, key)
	if sl == nil {
		w.Int(0)
		return
	}
	if sl.v.kind() != KindHash {
		w.Error(errWrongType)
		return
	}
	d := ks.db(c)
	journaling := ks.journaling()
	if journaling {
		ks.jstart("HDEL")
		ks.jadd(key)
	}
	deleted := 0
	var before int64
	for _, f := range args[2:] {
		if _, found := hashGet(sl.v.p, f); !found {
			continue
		}
		if deleted == 0 {
			before = ks.changedObject(d, sl)
		}
		hashDel(&sl.v.p, f)
		deleted++
		if journaling {
			ks.jadd(f)
		}
		if hashLen(sl.v.p) == 0 {
			break
		}
	}
	if deleted > 0 {
		ks.objectResized(d, sl, before)
		emptied := hashLen(sl.v.p) == 0
		if emptied {
			ks.deleteKey(d, h, key)
		}
		if journaling {
			ks.jend(c.DB)
		}
		ks.notify(NotifyHash, "hdel", key, c.DB)
		if emptied {
			ks.notify(NotifyGeneric, "del", key, c.DB)
		}
	}
	if journaling && deleted == 0 {
		clear(ks.jargs)
		ks.jargs = ks.jargs[:0]
	}
	w.Int(int64(deleted))
}

func cmdHLen(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	p, ok := ks.hashForRead(c, args[1], w)
	switch {
	case !ok:
	case p == nil:
		w.Int(0)
	default:
		w.Int(int64(hashLen(p)))
	}
}

func cmdHStrlen(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	p, ok := ks.hashForRead(c, args[1], w)
	if !ok {
		return
	}
	var v []byte
	if p != nil {
		v, _ = hashGet(p, args[2])
	}
	w.Int(int64(len(v)))
}

func cmdHExists(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	p, ok := ks.hashForRead(c, args[1], w)
	if !ok {
		return
	}
	found := false
	if p != nil {
		_, found = hashGet(p, args[2])
	}
	if found {
		w.Int(1)
	} else {
		w.Int(0)
	}
}

// Parts of a hash that hgetallGeneric replies with.
const (
	withFields = 1 << iota
	withValues
)

// hgetallGeneric is HKEYS, HVALS and HGETALL: a map of fields to values
// for HGETALL (an array in RESP2), an array for the others.
func (ks *Keyspace) hgetallGeneric(c *Client, key []byte, parts int, w ReplyWriter) {
	p, ok := ks.hashForRead(c, key, w)
	if !ok {
		return
	}
	n := 0
	if p != nil {
		n = hashLen(p)
		if hashIsTable(p) {
			// One allocation for a long reply, not a series of growths;
			// 23 bytes for the header: type byte, up to 20 digits, CRLF.
			w.Grow(23 + (*hashTable)(p).replyLen(parts))
		}
	}
	if parts == withFields|withValues {
		w.MapHeader(n)
	} else {
		w.ArrayHeader(n)
	}
	if p == nil {
		return
	}
	hashEach(p, func(f, v []byte) bool {
		if parts&withFields != 0 {
			w.Bulk(f)
		}
		if parts&withValues != 0 {
			w.Bulk(v)
		}
		return true
	})
}

func cmdHKeys(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.hgetallGeneric(c, args[1], withFields, w)
}

func cmdHVals(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.hgetallGeneric(c, args[1], withValues, w)
}

func cmdHGetAll(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.hgetallGeneric(c, args[1], withFields|withValues, w)
}

// hashFieldForWrite looks key up for a read-modify-write of field f:
// its slot (nil when the key is missing) and the field's current value
// (nil, false when missing), or false after replying WRONGTYPE.
func (ks *Keyspace) hashFieldForWrite(c *Client, key, f []byte, w ReplyWriter) (sl *slot[entry], h uint64, cur []byte, found, ok bool) {
	sl, h = ks.lookupWrite(c, key)
	if sl == nil {
		return nil, h, nil, false, true
	}
	if sl.v.kind() != KindHash {
		w.Error(errWrongType)
		return nil, h, nil, false, false
	}
	cur, found = hashGet(sl.v.p, f)
	return sl, h, cur, found, true
}

// hashStore sets field f of key (whose slot is sl, nil if missing, and
// hash h) to v, journals it as HSET key f v and notifies event.
func (ks *Keyspace) hashStore(c *Client, sl *slot[entry], h uint64, key, f, v []byte, event string) {
	d := ks.db(c)
	if sl == nil {
		pair := [2][]byte{f, v}
		ks.addKey(d, h, key, "", objectValue(KindHash, newHash(pair[:], &ks.Limits)))
	} else {
		before := ks.changedObject(d, sl)
		hashSet(&sl.v.p, f, v, &ks.Limits)
		ks.objectResized(d, sl, before)
	}
	ks.journal(c.DB, "HSET", key, f, v)
	ks.notify(NotifyHash, event, key, c.DB)
}

func cmdHIncrBy(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key, f := args[1], args[2]
	incr, ok := parseInt(args[3])
	if !ok {
		w.Error(errNotInteger)
		return
	}
	sl, h, cur, found, ok := ks.hashFieldForWrite(c, key, f, w)
	if !ok {
		return
	}
	var old int64
	if found {
		if old, ok = parseInt(cur); !ok {
			w.Error("ERR hash value is not an integer")
			return
		}
	}
	if incr < 0 && old < 0 && incr < math.MinInt64-old ||
		incr > 0 && old > 0 && incr > math.MaxInt64-old {
		w.Error(errOverflow)
		return
	}
	var buf [20]byte
	ks.hashStore(c, sl, h, key, f, strconv.AppendInt(buf[:0], old+incr, 10), "hincrby")
	w.Int(old + incr)
}

func cmdHIncrByFloat(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key, f := args[1], args[2]
	incr, ok := parseLongDouble(args[3])
	if !ok {
		w.Error(errNotFloat)
		return
	}
	if incr.IsInf() {
		w.Error("ERR value is NaN or Infinity")
		return
	}
	sl, h, cur, found, ok := ks.hashFieldForWrite(c, key, f, w)
	if !ok {
		return
	}
	old := new(big.Float).SetPrec(ldPrec)
	if found {
		if old, ok = parseLongDouble(cur); !ok {
			w.Error("ERR hash value is not a float")
			return
		}
	}
	const errNaN = "ERR increment would produce NaN or Infinity"
	if old.IsInf() {
		w.Error(errNaN)
		return
	}
	sum := new(big.Float).SetPrec(ldPrec).Add(old, incr)
	if sum.Sign() != 0 && sum.MantExp(nil) > ldMaxExp {
		w.Error(errNaN)
		return
	}
	s := formatLongDouble(sum)
	ks.hashStore(c, sl, h, key, f, unsafeBytes(s), "hincrbyfloat")
	w.BulkString(s)
}
