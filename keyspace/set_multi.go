package keyspace

import (
	"bytes"
	"slices"
	"unsafe"
)

// The set commands on several keys: SINTER, SINTERCARD, SUNION, SDIFF,
// their *STORE forms, and SMOVE. They work on whatever keys this keyspace
// holds; the server refuses keys on different shards (CROSSSLOT) until
// cross-shard commands exist.

// setSources looks up the sets named by keys: nil for a missing key. Every
// key is checked, as Redis 7.0 does: a key of another kind anywhere gets
// WRONGTYPE (ok false), even after a missing one. The pointers stay valid
// for the command: objects outlive the slots that hold them.
func (ks *Keyspace) setSources(c *Client, keys [][]byte, w ReplyWriter) ([]unsafe.Pointer, bool) {
	sets := make([]unsafe.Pointer, len(keys))
	for i, k := range keys {
		sl, _, ok := ks.setLookup(c, k, false, w)
		if !ok {
			return nil, false
		}
		if sl != nil {
			sets[i] = sl.v.p
		}
	}
	return sets, true
}

// setInter calls fn with each member of the intersection of sets (all
// present) until fn returns false. The smallest set is walked; sets is
// reordered by size.
func setInter(sets []unsafe.Pointer, fn func(m []byte) bool) {
	slices.SortStableFunc(sets, func(a, b unsafe.Pointer) int { return setCard(a) - setCard(b) })
	more := true
	setEach(sets[0], func(m []byte) {
		if !more {
			return
		}
		for _, s := range sets[1:] {
			if s != sets[0] && !setIsMember(s, m) {
				return
			}
		}
		more = fn(m)
	})
}

// memberArena collects members' copies in one buffer, for a reply whose
// length is known only at the end.
type memberArena struct {
	buf  []byte
	ends []int
}

func (a *memberArena) add(m []byte) bool {
	a.buf = append(a.buf, m...)
	a.ends = append(a.ends, len(a.buf))
	return true
}

func (a *memberArena) reply(w ReplyWriter) {
	w.SetHeader(len(a.ends))
	start := 0
	for _, end := range a.ends {
		w.Bulk(a.buf[start:end])
		start = end
	}
}

func anyNil(sets []unsafe.Pointer) bool { return slices.Contains(sets, nil) }

// SINTER key [key ...]
func cmdSInter(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sets, ok := ks.setSources(c, args[1:], w)
	if !ok {
		return
	}
	if anyNil(sets) {
		w.SetHeader(0)
		return
	}
	var a memberArena
	setInter(sets, a.add)
	a.reply(w)
}

// sinterCardKeys gives SINTERCARD's key positions: numkeys keys from
// argument 2.
func sinterCardKeys(args [][]byte, dst []int) []int {
	if len(args) < 3 {
		return dst
	}
	n, ok := parseInt(args[1])
	if !ok || n < 1 {
		return dst
	}
	for i := 2; i < len(args) && int64(i) < 2+n; i++ {
		dst = append(dst, i)
	}
	return dst
}

// SINTERCARD numkeys key [key ...] [LIMIT limit]
func cmdSInterCard(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	numkeys, ok := parseInt(args[1])
	if !ok || numkeys < 1 {
		w.Error("ERR numkeys should be greater than 0")
		return
	}
	if numkeys > int64(len(args)-2) {
		w.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	limit := int64(0)
	for j := 2 + int(numkeys); j < len(args); j++ {
		if !equalFold(args[j], "limit") || j+1 >= len(args) {
			w.Error(errSyntax)
			return
		}
		j++
		if limit, ok = parseInt(args[j]); !ok || limit < 0 {
			w.Error("ERR LIMIT can't be negative")
			return
		}
	}
	sets, ok := ks.setSources(c, args[2:2+numkeys], w)
	if !ok {
		return
	}
	card := int64(0)
	if !anyNil(sets) {
		setInter(sets, func([]byte) bool {
			card++
			return limit == 0 || card < limit
		})
	}
	w.Int(card)
}

// SINTERSTORE destination key [key ...]
//
// The result is built as Redis 7.2 builds it: an intset when the smallest
// source is one, else a listpack converted as members are added, and in
// the end an intset whenever every member is an integer and there are few
// enough.
func cmdSInterStore(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sets, ok := ks.setSources(c, args[2:], w)
	if !ok {
		return
	}
	var p unsafe.Pointer
	if !anyNil(sets) {
		setInter(sets, func(m []byte) bool {
			if p == nil {
				p = ptrOf(newListpack(0, lpHdr))
				if setEnc(sets[0]) == setEncIntset {
					p = ptrOf(newIntset(2, 0))
				}
			}
			p, _ = setAdd(p, m, &ks.Limits)
			return true
		})
	}
	if p != nil && setEnc(p) != setEncIntset && int64(setCard(p)) <= intsetMax(&ks.Limits) {
		p = maybeIntset(p)
	}
	ks.storeSet(c, args[1], p, "sinterstore", w)
}

// maybeIntset returns p as an intset when every member is an integer,
// else p.
func maybeIntset(p unsafe.Pointer) unsafe.Pointer {
	is := newIntset(2, 0)
	ints := true
	setEach(p, func(m []byte) {
		if v, ok := parseInt(m); ok && ints {
			is, _ = isAdd(is, v)
		} else {
			ints = false
		}
	})
	if !ints {
		return p
	}
	return ptrOf(is)
}

// SUNION key [key ...]
func cmdSUnion(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if p, ok := ks.unionDiff(c, args[1:], false, w); ok {
		if p == nil {
			w.SetHeader(0)
		} else {
			replySet(w, p)
		}
	}
}

// SDIFF key [key ...]
func cmdSDiff(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if p, ok := ks.unionDiff(c, args[1:], true, w); ok {
		if p == nil {
			w.SetHeader(0)
		} else {
			replySet(w, p)
		}
	}
}

// SUNIONSTORE destination key [key ...]
func cmdSUnionStore(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if p, ok := ks.unionDiff(c, args[2:], false, w); ok {
		ks.storeSet(c, args[1], p, "sunionstore", w)
	}
}

// SDIFFSTORE destination key [key ...]
func cmdSDiffStore(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if p, ok := ks.unionDiff(c, args[2:], true, w); ok {
		ks.storeSet(c, args[1], p, "sdiffstore", w)
	}
}

// unionDiff computes the union (or, when diff, the difference of the
// first set and the others) of the sets named by keys, as a new set built
// the way Redis builds it (members added one by one to an intset, which
// converts as they come), or nil when it is empty.
func (ks *Keyspace) unionDiff(c *Client, keys [][]byte, diff bool, w ReplyWriter) (unsafe.Pointer, bool) {
	sets, ok := ks.setSources(c, keys, w)
	if !ok {
		return nil, false
	}
	p := ptrOf(newIntset(2, 0))
	add := func(m []byte) { p, _ = setAdd(p, m, &ks.Limits) }
	switch {
	case !diff:
		for _, s := range sets {
			if s != nil {
				setEach(s, add)
			}
		}
	case sets[0] != nil:
		setEach(sets[0], func(m []byte) {
			for _, s := range sets[1:] {
				if s != nil && setIsMember(s, m) {
					return
				}
			}
			add(m)
		})
	}
	if setCard(p) == 0 {
		return nil, true
	}
	return p, true
}

// storeSet stores p, a new set (nil when the result is empty), in dst,
// replacing whatever dst held and its TTL, and replies with its size. An
// empty result deletes dst. It notifies event, or del for a deletion.
func (ks *Keyspace) storeSet(c *Client, dst []byte, p unsafe.Pointer, event string, w ReplyWriter) {
	d := ks.db(c)
	sl, h := ks.lookupWrite(c, dst)
	if p == nil {
		if sl != nil {
			ks.deleteKey(d, h, dst)
			ks.journal(c.DB, "DEL", dst)
			ks.notify(NotifyGeneric, "del", dst, c.DB)
		}
		w.Int(0)
		return
	}
	setTrim(p)
	v := objectValue(KindSet, p)
	ks.setKey(d, h, sl, dst, v, false)
	if ks.journaling() {
		ks.jstart(applyName)
		ks.jput(c.DB, dst, v, -1)
		ks.jend(c.DB)
	}
	ks.notify(NotifySet, event, dst, c.DB)
	w.Int(int64(setCard(p)))
}

// SMOVE source destination member
func cmdSMove(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	src, dst, m := args[1], args[2], args[3]
	ssl, hs := ks.lookupWrite(c, src)
	srcKind := KindSet
	if ssl != nil {
		srcKind = ssl.v.kind()
	}
	dsl, hd := ks.lookupWrite(c, dst) // may expire dst: ssl is stale now
	d := ks.db(c)
	ssl = d.keys.find(hs, src)
	switch {
	case ssl == nil:
		w.Int(0)
		return
	case srcKind != KindSet || dsl != nil && dsl.v.kind() != KindSet:
		w.Error(errWrongType)
		return
	case bytes.Equal(src, dst):
		if setIsMember(ssl.v.p, m) {
			w.Int(1)
		} else {
			w.Int(0)
		}
		return
	}
	before := ssl.v.heapBytes()
	p, removed := setRemove(ssl.v.p, m)
	if !removed {
		w.Int(0)
		return
	}
	ks.notify(NotifySet, "srem", src, c.DB)
	if ks.setChanged(d, hs, src, ssl, p, before) {
		ks.notify(NotifyGeneric, "del", src, c.DB)
	}
	if dsl = d.keys.find(hd, dst); dsl == nil {
		ks.addKey(d, hd, dst, "", objectValue(KindSet, newSetWith(m, &ks.Limits)))
		ks.notify(NotifySet, "sadd", dst, c.DB)
	} else {
		before := dsl.v.heapBytes()
		if np, added := setAdd(dsl.v.p, m, &ks.Limits); added {
			ks.setStore(d, dsl, np, before)
			ks.notify(NotifySet, "sadd", dst, c.DB)
		} else {
			ks.signalKey(d, dst) // Redis signals dst even so
		}
	}
	if ks.journaling() {
		ks.jstart(applyName)
		ks.jcmd(c.DB, "SREM", src, m)
		ks.jcmd(c.DB, "SADD", dst, m)
		ks.jend(c.DB)
	}
	w.Int(1)
}

// newSetWith returns a new set of the one member m.
func newSetWith(m []byte, lim *EncodingLimits) unsafe.Pointer {
	p, _ := setAdd(newSet(m, 1, lim), m, lim)
	return p
}

// jcmd adds MOOND.APPLY's CMD op running name key m in database dbi.
func (ks *Keyspace) jcmd(dbi int, name string, key, m []byte) {
	ks.jadd(kwOpCmd)
	ks.jint(int64(dbi))
	ks.jint(3)
	ks.jadd(unsafeBytes(name), key, m)
}
