package keyspace

import "bytes"

// Type-agnostic key commands (Redis's db.c).

// DEL and UNLINK key [key ...]: the same here, memory is freed by the GC.
func cmdDel(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	d := ks.db(c)
	journaling := ks.journaling()
	n := 0
	var deleted [][]byte
	for _, key := range args[1:] {
		sl, h := ks.lookup(c.DB, key) // expires the key first if due
		if sl == nil || !ks.deleteKey(d, h, key) {
			continue
		}
		n++
		ks.notify(NotifyGeneric, "del", key, c.DB)
		if journaling {
			deleted = append(deleted, key)
		}
	}
	if len(deleted) > 0 {
		ks.journal(c.DB, "DEL", deleted...)
	}
	w.Int(int64(n))
}

func cmdExists(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	n := 0
	for _, key := range args[1:] {
		if sl, _ := ks.lookupReadNoTouch(c, key); sl != nil {
			n++
		}
	}
	w.Int(int64(n))
}

// TOUCH refreshes the LRU clock even for a NO-TOUCH client.
func cmdTouch(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	n := 0
	for _, key := range args[1:] {
		if sl, _ := ks.lookupReadNoTouch(c, key); sl != nil {
			ks.touch(sl)
			n++
		}
	}
	w.Int(int64(n))
}

func cmdType(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sl, _ := ks.lookupReadNoTouch(c, args[1])
	if sl == nil {
		w.SimpleString("none")
		return
	}
	w.SimpleString(sl.v.kind().String())
}

func cmdRename(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.renameGeneric(c, args[1], args[2], false, w)
}

func cmdRenameNX(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	ks.renameGeneric(c, args[1], args[2], true, w)
}

// renameGeneric is RENAME and (nx) RENAMENX. The value and its TTL move to
// dst; dst's own TTL, if any, goes with its old value.
func (ks *Keyspace) renameGeneric(c *Client, src, dst []byte, nx bool, w ReplyWriter) {
	d := ks.db(c)
	sl, hs := ks.lookupWrite(c, src)
	if sl == nil {
		w.Error(errNoSuchKey)
		return
	}
	if bytes.Equal(src, dst) {
		if nx {
			w.Int(0)
		} else {
			replyOK(w)
		}
		return
	}
	v := sl.v.value
	when := ks.expiryOf(d, hs, sl)
	dsl, hd := ks.lookupWrite(c, dst)
	if dsl != nil {
		if nx {
			w.Int(0)
			return
		}
		ks.deleteKey(d, hd, dst)
	}
	ks.deleteKey(d, hs, src)
	nsl := ks.addKey(d, hd, dst, "", v)
	if when != -1 {
		ks.setExpiry(d, hd, nsl, when)
	}
	if ks.journaling() {
		ks.jstart(applyName)
		ks.jdel(c.DB, src)
		ks.jput(c.DB, dst, v, when)
		ks.jend(c.DB)
	}
	ks.notify(NotifyGeneric, "rename_from", src, c.DB)
	ks.notify(NotifyGeneric, "rename_to", dst, c.DB)
	if nx {
		w.Int(1)
	} else {
		replyOK(w)
	}
}

// COPY source destination [DB destination-db] [REPLACE]
func cmdCopy(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	src, dst := args[1], args[2]
	dstDB := c.DB
	replace := false
	for j := 3; j < len(args); j++ {
		switch {
		case equalFold(args[j], "replace"):
			replace = true
		case equalFold(args[j], "db") && j+1 < len(args):
			n, msg := ks.SelectIndex(args[j+1])
			if msg != "" {
				w.Error(msg)
				return
			}
			dstDB = n
			j++
		default:
			w.Error(errSyntax)
			return
		}
	}
	if dstDB == c.DB && bytes.Equal(src, dst) {
		w.Error(errSameObject)
		return
	}
	sl, hs := ks.lookupWrite(c, src)
	if sl == nil {
		// Redis reads the source with lookupKeyRead: a miss is an event.
		ks.notify(NotifyKeyMiss, "keymiss", src, c.DB)
		w.Int(0)
		return
	}
	v := copyValue(sl.v.value)
	when := ks.expiryOf(ks.db(c), hs, sl)
	dc := &Client{DB: dstDB}
	dsl, hd := ks.lookupWrite(dc, dst)
	if dsl != nil && !replace {
		w.Int(0)
		return
	}
	dd := ks.dbs[dstDB]
	if dsl != nil {
		ks.deleteKey(dd, hd, dst)
	}
	nsl := ks.addKey(dd, hd, dst, "", v)
	if when != -1 {
		ks.setExpiry(dd, hd, nsl, when)
	}
	if ks.journaling() {
		ks.jstart(applyName)
		ks.jput(dstDB, dst, v, when)
		ks.jend(c.DB)
	}
	ks.notify(NotifyGeneric, "copy_to", dst, dstDB)
	w.Int(1)
}

// copyValue duplicates a value for COPY, so that the copy owns its memory
// as in Redis.
func copyValue(v value) value {
	switch {
	case v.isInt():
		return v
	case v.tag() == tagBytes:
		return bytesValue(string(v.bytes()))
	case v.tag() == tagBuf:
		return bufValue(append([]byte(nil), v.bytes()...))
	}
	return objectValue(v.kind(), v.objType().clone(v.p))
}

// MOVE key db
func cmdMove(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key := args[1]
	dstDB, msg := ks.SelectIndex(args[2])
	if msg != "" {
		w.Error(msg)
		return
	}
	if dstDB == c.DB {
		w.Error(errSameObject)
		return
	}
	sl, hs := ks.lookupWrite(c, key)
	if sl == nil {
		w.Int(0)
		return
	}
	d, dd := ks.db(c), ks.dbs[dstDB]
	v, k := sl.v.value, sl.key()
	when := ks.expiryOf(d, hs, sl)
	if dsl, _ := ks.lookupWrite(&Client{DB: dstDB}, key); dsl != nil {
		w.Int(0)
		return
	}
	ks.deleteKey(d, hs, key)
	nsl := ks.addKey(dd, hs, key, k, v)
	if when != -1 {
		ks.setExpiry(dd, hs, nsl, when)
	}
	if ks.journaling() {
		ks.jstart(applyName)
		ks.jdel(c.DB, key)
		ks.jput(dstDB, key, v, when)
		ks.jend(c.DB)
	}
	ks.notify(NotifyGeneric, "move_from", key, c.DB)
	ks.notify(NotifyGeneric, "move_to", key, dstDB)
	w.Int(1)
}

// KEYS pattern. Expired keys are skipped, not deleted: the walk must not
// change the table under it.
func cmdKeys(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	pattern := args[1]
	all := len(pattern) == 1 && pattern[0] == '*'
	d := ks.db(c)
	keys := ks.keysTmp[:0]
	d.keys.each(func(sl *slot[entry]) {
		if !all && !Match(pattern, sl.keyBytes(), false) {
			return
		}
		if sl.kw&kwTTL != 0 && !ks.Loading && ks.now > ks.expiryOf(d, d.keys.hash(sl.keyBytes()), sl) {
			return
		}
		keys = append(keys, sl.key())
	})
	w.ArrayHeader(len(keys))
	for _, k := range keys {
		w.BulkString(k)
	}
	ks.releaseKeysTmp(keys)
}

// releaseKeysTmp keeps a small collection buffer for the next command and
// lets a large one go.
func (ks *Keyspace) releaseKeysTmp(keys []string) {
	clear(keys)
	if cap(keys) > 4096 {
		keys = nil
	}
	ks.keysTmp = keys[:0]
}

// randomKeyTries bounds RANDOMKEY's draws of expired keys it may not
// delete (Redis's maxtries).
const randomKeyTries = 100

func cmdRandomKey(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	d := ks.db(c)
	for tries := 1; ; tries++ {
		sl := d.keys.random()
		if sl == nil {
			w.Null()
			return
		}
		if sl.kw&kwTTL != 0 {
			key := sl.keyBytes()
			h := d.keys.hash(key)
			// While CLIENT PAUSE keeps expired keys, every key may be one:
			// after randomKeyTries, one is answered, as Redis does.
			if ks.expired(d, h, key) && (!ks.keepExpired || tries < randomKeyTries) {
				if !ks.keepExpired {
					ks.expireKey(c.DB, h, key)
				}
				continue
			}
		}
		w.BulkString(sl.key())
		return
	}
}

func cmdDBSize(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	w.Int(int64(ks.db(c).keys.count))
}
