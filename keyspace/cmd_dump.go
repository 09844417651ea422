package keyspace

import (
	"errors"

	"github.com/moond-db/moond/rdb"
)

// DUMP and RESTORE (Redis's cluster.c): a value serialized in Redis's RDB
// encoding with its version and CRC-64 (dump.go, package rdb), and a key
// created from such a payload.

// dumpSpecs are DUMP and RESTORE, with Redis 7.0's flags and categories.
var dumpSpecs = []*CommandSpec{
	{Name: "dump", Arity: 2, Flags: fRO, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: cKeyReadSlow, run: cmdDump},
	{Name: "restore", Arity: -4, Flags: fWDeny, FirstKey: 1, LastKey: 1, Step: 1, ACLCategories: []string{"@keyspace", "@write", "@slow", "@dangerous"}, run: cmdRestore},
}

// The errors of RESTORE, in Redis's words.
const (
	errBusyKey     = "BUSYKEY Target key name already exists."
	errBadTTL      = "ERR Invalid TTL value, must be >= 0"
	errBadIdle     = "ERR Invalid IDLETIME value, must be >= 0"
	errBadFreq     = "ERR Invalid FREQ value, must be >= 0 and <= 255"
	errBadPayload  = "ERR DUMP payload version or checksum are wrong"
	errBadDumpData = "ERR Bad data format"
)

// DUMP key
func cmdDump(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	sl, _ := ks.lookupRead(c, args[1])
	if sl == nil {
		w.Null()
		return
	}
	ks.scratch = appendDump(ks.scratch[:0], sl.v.value)
	w.Bulk(ks.scratch)
	if cap(ks.scratch) > maxKeptScratch {
		ks.scratch = nil // a large value's payload is not kept for good
	}
}

// maxKeptScratch is the largest scratch buffer DUMP leaves to the next
// command.
const maxKeptScratch = 64 << 10

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds]
// [FREQ frequency]
//
// As Redis: the options are checked first, then that the key is free
// (unless REPLACE), then the TTL, the payload's footer and its contents;
// IDLETIME and FREQ exclude each other (the second is a syntax error). A
// TTL already past creates nothing (and, with REPLACE, deletes the key).
// The journal gets the value written (MOOND.APPLY PUT with its absolute
// expiry), or DEL for a replaced key whose TTL was past; the LRU and LFU
// fields are not journaled, as no access time is. The events are Redis's:
// "new" (addKey) and "restore", or "del" for that replaced key.
func cmdRestore(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	key := args[1]
	replace, absTTL := false, false
	idle, freq := int64(-1), int64(-1)
	for j := 4; j < len(args); j++ {
		more := j+1 < len(args)
		switch {
		case equalFold(args[j], "replace"):
			replace = true
		case equalFold(args[j], "absttl"):
			absTTL = true
		case equalFold(args[j], "idletime") && more && freq == -1:
			n, ok := parseInt(args[j+1])
			if !ok {
				w.Error(errNotInteger)
				return
			}
			if n < 0 {
				w.Error(errBadIdle)
				return
			}
			idle = n
			j++
		case equalFold(args[j], "freq") && more && idle == -1:
			n, ok := parseInt(args[j+1])
			if !ok {
				w.Error(errNotInteger)
				return
			}
			if n < 0 || n > 255 {
				w.Error(errBadFreq)
				return
			}
			freq = n
			j++
		default:
			w.Error(errSyntax)
			return
		}
	}
	if !replace {
		if sl, _ := ks.lookupWrite(c, key); sl != nil {
			w.Error(errBusyKey)
			return
		}
	}
	ttl, ok := parseInt(args[2])
	if !ok {
		w.Error(errNotInteger)
		return
	}
	if ttl < 0 {
		w.Error(errBadTTL)
		return
	}
	o, err := rdb.Restore(args[3])
	if errors.Is(err, rdb.ErrPayload) {
		w.Error(errBadPayload)
		return
	}
	var v value
	if err == nil {
		v, err = ks.restoredValue(&o)
	}
	if err != nil {
		w.Error(errBadDumpData)
		return
	}

	d := ks.db(c)
	deleted := false
	if replace {
		if sl, h := ks.lookupWrite(c, key); sl != nil {
			deleted = ks.deleteKey(d, h, key)
		}
	}
	if ttl != 0 && !absTTL {
		ttl += ks.now
	}
	if ttl != 0 && ks.alreadyExpired(ttl) {
		if deleted {
			ks.journal(c.DB, "DEL", key)
			ks.notify(NotifyGeneric, "del", key, c.DB)
		}
		w.SimpleString("OK")
		return
	}
	h := d.keys.hash(key)
	sl := ks.addKey(d, h, key, "", v)
	when := int64(-1)
	if ttl != 0 {
		when = ttl
		ks.setExpiry(d, h, sl, when)
	}
	ks.restoreAccess(sl, idle, freq)
	if ks.journaling() {
		ks.jstart(applyName)
		ks.jput(c.DB, key, v, when)
		ks.jend(c.DB)
	}
	ks.notify(NotifyGeneric, "restore", key, c.DB)
	w.SimpleString("OK")
}

// restoreAccess sets the LRU or LFU field of a restored key, as Redis's
// objectSetLRUOrLFU: under an LFU policy FREQ becomes the counter, stamped
// with this minute; under the others IDLETIME moves the access time back
// (to half the clock's range ahead when the 24-bit clock would go below
// zero, as Redis does).
func (ks *Keyspace) restoreAccess(sl *slot[entry], idle, freq int64) {
	if ks.lfu {
		if freq >= 0 {
			sl.kw = sl.kw&^kwLRUMask | (lfuMinutes(ks.now)<<8|uint64(freq))<<kwLRUShift
		}
		return
	}
	if idle >= 0 {
		clock := int64(ks.lru() >> kwLRUShift)
		abs := clock - idle
		if abs < 0 {
			abs = (clock + lruClockMax/2) % lruClockMax
		}
		sl.kw = sl.kw&^kwLRUMask | uint64(abs)<<kwLRUShift
	}
}
