package keyspace

import "unsafe"

// The set commands, with Redis 7.0's replies and errors (the set kind
// itself is in set.go). Writes are journaled as:
//
//	SADD k m ...            SADD k <the members added>
//	SREM k m ...            SREM k <the members removed>
//	SPOP k [count]          SREM k <the members popped>, or DEL k when
//	                        the whole set was popped
//	SMOVE src dst m         MOOND.APPLY CMD <db> 3 SREM src m CMD <db> 3 SADD dst m
//	S*STORE dst ...         MOOND.APPLY PUT <db> dst 2 <the set's encoding> 0,
//	                        or DEL dst when the result is empty and dst existed
//
// A journaled SADD may give the set another representation on replay than
// the live command did (SADD converts by its argument count, and the record
// holds only the members added): the members are the same.

var (
	cSetRead   = []string{"@read", "@set", "@fast"}
	cSetReadS  = []string{"@read", "@set", "@slow"}
	cSetWrite  = []string{"@write", "@set", "@fast"}
	cSetWriteS = []string{"@write", "@set", "@slow"}
)

// setSpecs are the set commands.
var setSpecs = []*CommandSpec{
	{Name: "sadd", Arity: -3, Flags: fWDenyFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cSetWrite, elem: true, run: cmdSAdd},
	{Name: "srem", Arity: -3, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cSetWrite, elem: true, run: cmdSRem},
	{Name: "scard", Arity: 2, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cSetRead, run: cmdSCard},
	{Name: "sismember", Arity: 3, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cSetRead, elem: true, run: cmdSIsMember},
	{Name: "smismember", Arity: -3, Flags: fROFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cSetRead, elem: true, run: cmdSMIsMember},
	{Name: "smembers", Arity: 2, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cSetReadS, run: cmdSMembers},
	{Name: "srandmember", Arity: -2, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cSetReadS, run: cmdSRandMember},
	{Name: "spop", Arity: -2, Flags: fWFast, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cSetWrite, run: cmdSPop},
	{Name: "smove", Arity: 4, Flags: fWFast, FirstKey: 1, LastKey: 2, Step: 1, ACLCategories: cSetWrite, run: cmdSMove},
	{Name: "sinter", Arity: -2, Flags: fRO, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: cSetReadS, run: cmdSInter},
	{Name: "sintercard", Arity: -3, Flags: []string{"readonly", "movablekeys"}, ACLCategories: cSetReadS, MovableKeys: sinterCardKeys, run: cmdSInterCard},
	{Name: "sinterstore", Arity: -3, Flags: fWDeny, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: cSetWriteS, run: cmdSInterStore},
	{Name: "sunion", Arity: -2, Flags: fRO, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: cSetReadS, run: cmdSUnion},
	{Name: "sunionstore", Arity: -3, Flags: fWDeny, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: cSetWriteS, run: cmdSUnionStore},
	{Name: "sdiff", Arity: -2, Flags: fRO, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: cSetReadS, run: cmdSDiff},
	{Name: "sdiffstore", Arity: -3, Flags: fWDeny, FirstKey: 1, LastKey: -1, Step: 1, ACLCategories: cSetWriteS, run: cmdSDiffStore},
	{Name: "sscan", Arity: -3, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cSetReadS, run: cmdSScan},
}

// setLookup looks key up for a set command (a write's lookup when write)
// and returns its slot, nil when absent. A key of another kind gets
// WRONGTYPE, and ok false.
func (ks *Keyspace) setLookup(c *Client, key []byte, write bool, w ReplyWriter) (sl *slot[entry], h uint64, ok bool) {
	if write {
		sl, h = ks.lookupWrite(c, key)
	} else {
		sl, h = ks.lookupRead(c, key)
	}
	if sl != nil && sl.v.kind() != KindSet {
		w.Error(errWrongType)
		return nil, h, false
	}
	return sl, h, true
}

// setStore replaces the set in sl with p (a change of representation or a
// reallocation) and accounts for the change from before bytes.
func (ks *Keyspace) setStore(d *db, sl *slot[entry], p unsafe.Pointer, before int64) {
	setTrim(p)
	sl.v.value = objectValue(KindSet, p)
	ks.changed(d, sl)
	ks.objectResized(d, sl, before)
}

// SADD key member [member ...]
func cmdSAdd(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key, members := args[1], args[2:]
	sl, h, ok := ks.setLookup(c, key, true, w)
	if !ok {
		return
	}
	d := ks.db(c)
	var p unsafe.Pointer
	var before int64
	if sl == nil {
		p = newSet(members[0], len(members), &ks.Limits)
	} else {
		before = sl.v.heapBytes()
		p = setConvertForHint(sl.v.p, len(members), &ks.Limits)
	}
	j := ks.journaling()
	if j {
		ks.jstart("SADD")
		ks.jadd(key)
	}
	added := 0
	for _, m := range members {
		var ok bool
		if p, ok = setAdd(p, m, &ks.Limits); ok {
			added++
			if j {
				ks.jadd(m)
			}
		}
	}
	switch {
	case sl == nil:
		setTrim(p)
		ks.addKey(d, h, key, "", objectValue(KindSet, p))
	case added > 0:
		ks.setStore(d, sl, p, before)
	case p != sl.v.p: // a new representation, no new member: no touch
		setTrim(p)
		sl.v.value = objectValue(KindSet, p)
		ks.changedQuietly(d, sl)
		ks.objectResized(d, sl, before)
	}
	if j && added > 0 {
		ks.jend(c.DB)
	}
	if added > 0 {
		ks.notify(NotifySet, "sadd", key, c.DB)
	}
	w.Int(int64(added))
}

// SREM key member [member ...]
func cmdSRem(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key := args[1]
	sl, h, ok := ks.setLookup(c, key, true, w)
	if !ok {
		return
	}
	if sl == nil {
		w.Int(0)
		return
	}
	j := ks.journaling()
	if j {
		ks.jstart("SREM")
		ks.jadd(key)
	}
	p, removed, before := sl.v.p, 0, sl.v.heapBytes()
	for _, m := range args[2:] {
		var ok bool
		if p, ok = setRemove(p, m); ok {
			removed++
			if j {
				ks.jadd(m)
			}
			if setCard(p) == 0 {
				break
			}
		}
	}
	if removed > 0 {
		deleted := ks.setChanged(ks.db(c), h, key, sl, p, before)
		if j {
			ks.jend(c.DB)
		}
		ks.notify(NotifySet, "srem", key, c.DB)
		if deleted {
			ks.notify(NotifyGeneric, "del", key, c.DB)
		}
	}
	w.Int(int64(removed))
}

// setChanged stores p, the set in sl after members were removed (the set
// held before bytes before), or deletes the key when p is empty (deleted).
func (ks *Keyspace) setChanged(d *db, h uint64, key []byte, sl *slot[entry], p unsafe.Pointer, before int64) (deleted bool) {
	if setCard(p) == 0 {
		sl.v.value = objectValue(KindSet, p)
		ks.objectResized(d, sl, before)
		ks.deleteKey(d, h, key)
		return true
	}
	ks.setStore(d, sl, p, before)
	return false
}

// SCARD key
func cmdSCard(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sl, _, ok := ks.setLookup(c, args[1], false, w)
	switch {
	case !ok:
	case sl == nil:
		w.Int(0)
	default:
		w.Int(int64(setCard(sl.v.p)))
	}
}

// SISMEMBER key member
func cmdSIsMember(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sl, _, ok := ks.setLookup(c, args[1], false, w)
	switch {
	case !ok:
	case sl != nil && setIsMember(sl.v.p, args[2]):
		w.Int(1)
	default:
		w.Int(0)
	}
}

// SMISMEMBER key member [member ...]
func cmdSMIsMember(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sl, _, ok := ks.setLookup(c, args[1], false, w)
	if !ok {
		return
	}
	w.ArrayHeader(len(args) - 2)
	for _, m := range args[2:] {
		if sl != nil && setIsMember(sl.v.p, m) {
			w.Int(1)
		} else {
			w.Int(0)
		}
	}
}

// SMEMBERS key
func cmdSMembers(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sl, _, ok := ks.setLookup(c, args[1], false, w)
	if !ok {
		return
	}
	if sl == nil {
		w.SetHeader(0)
		return
	}
	replySet(w, sl.v.p)
}

// replySet writes every member of the set p as a set reply.
func replySet(w ReplyWriter, p unsafe.Pointer) {
	w.SetHeader(setCard(p))
	setEach(p, w.Bulk)
}
