package keyspace

import (
	"strconv"

	"github.com/moond-db/moond/rdb"
)

// MOOND.LOAD keys expires batch: a replica's full sync loads the keys of
// its master's snapshot in batches, each a run of one shard's keys of
// one database (the client's), in the load batch form (rdb.LoadEntry).
// It does for every key what RESTORE key ttl payload REPLACE ABSTTL
// [IDLETIME s | FREQ f] does, in one step of the shard instead of one
// command each: the value is decoded and checked (its bytes were covered
// by the snapshot's own checksum, so there is no footer), a key whose
// expiry is already past is not created, and the journal gets one
// MOOND.APPLY record of the batch's PUTs (and the DELs of keys a past
// expiry replaced), all or nothing at replay, in one WAL append.
//
// keys and expires are the snapshot's RESIZEDB figures for this shard's
// share of the database: an empty table is sized for them at once (see
// dict.reserve), so that the load does not grow it step by step. They are
// a hint, bounded by maxLoadReserve, and 0 leaves the tables alone.
//
// The spec is in no table: only the server runs it, for the replication
// link's own connection; to any other client it is an unknown command.
// A value that does not decode costs its own key only: the others load,
// and the reply is an error that counts the keys not loaded.
var LoadSpec = &CommandSpec{Name: "moond.load", Arity: 4, Flags: []string{"write", "denyoom"}, run: cmdLoad,
	write: true, denyoom: true}

// maxLoadReserve bounds the keys a MOOND.LOAD hint sizes a table for: the
// hint comes from the master, and a table is never sized for more than
// this before the keys are there (about 700 MB of slots).
const maxLoadReserve = 1 << 24

func cmdLoad(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	keys, ok := parseInt(args[1])
	expires, ok2 := parseInt(args[2])
	if !ok || !ok2 || keys < 0 || expires < 0 {
		w.Error(errNotInteger)
		return
	}
	d := ks.db(c)
	d.keys.reserve(int(min(keys, maxLoadReserve)))
	d.expires.reserve(int(min(expires, maxLoadReserve)))
	journal := ks.journaling()
	if journal {
		ks.jstart(applyName)
		ks.jint(int64(c.DB))
		ks.loadDB = ks.jargs[1]
		ks.jargs = ks.jargs[:1]
	}
	failed, first := 0, ""
	for b := args[3]; len(b) > 0; {
		// A chunk of entries is read first and the memory their inserts
		// touch brought into the cache together (prefetchInserts), so
		// that the misses overlap instead of coming one per key.
		ents := ks.loadEnts[:0]
		for len(b) > 0 && len(ents) < loadPrefetch {
			var le loadEnt
			rest, err := rdb.NextLoadEntry(b, &le.LoadEntry)
			if err != nil {
				failed, first, b = failed+1, "a malformed batch: "+err.Error(), nil
				break
			}
			b, le.h = rest, d.keys.hash(le.Key)
			ents = append(ents, le)
		}
		ks.prefetchInserts(&d.keys, ents)
		for i := range ents {
			if !ks.loadEntry(c, d, &ents[i], journal) {
				if failed++; first == "" {
					first = "key '" + cString(ents[i].Key, 128) + "'"
				}
			}
		}
		clear(ents) // keep no batch alive past the command
		ks.loadEnts = ents[:0]
	}
	if journal {
		ks.loadDB = nil
		if len(ks.jargs) > 1 {
			ks.jend(c.DB)
		} else {
			ks.jargs = ks.jargs[:0]
		}
	}
	if failed > 0 {
		w.Error(noNewlines(errBadDumpData + ": " + strconv.Itoa(failed) + " keys of the batch not loaded, the first " + first))
		return
	}
	replyOK(w)
}

// loadPrefetch is how many entries of a batch are read and prefetched
// before they are placed: their segment headers and slots stay within
// the first-level cache.
const loadPrefetch = 64

// loadEnt is an entry of a MOOND.LOAD batch and its key's hash.
type loadEnt struct {
	rdb.LoadEntry
	h uint64
}

// prefetchInserts reads, for each entry, its segment's header, then the
// slot an insert would fill and the first slot whose tag is the key's
// (which the lookup before the insert reads): loops with no dependence
// between entries, so that their cache misses overlap (see
// prefetchLoad, the boot's).
func (ks *Keyspace) prefetchInserts(d *dict[entry], ents []loadEnt) {
	var sink uint64
	for i := range ents {
		sink += uint64(d.segs[d.segIndex(ents[i].h)].used)
	}
	for i := range ents {
		tagged, ins := d.insertTargets(ents[i].h)
		if ins != nil {
			sink += ins.touch()
		}
		if tagged != nil {
			sink += tagged.touch()
		}
	}
	ks.pfSink += sink
}

// loadEntry loads one key of a MOOND.LOAD batch into d, replacing the key
// if it is there, and adds its journal ops when journal is set. It
// reports false for a value that does not decode (nothing changes).
func (ks *Keyspace) loadEntry(c *Client, d *db, le *loadEnt, journal bool) bool {
	e, h := &le.LoadEntry, le.h
	o, _, err := rdb.DecodeObject(e.Value)
	var v value
	if err == nil {
		v, err = ks.restoredValue(&o)
	}
	if err != nil {
		return false
	}
	deleted := false
	if d.keys.count > 0 {
		if sl, _ := ks.lookupWrite(c, e.Key); sl != nil {
			deleted = ks.deleteKey(d, h, e.Key)
		}
	}
	if e.ExpireMS > 0 && ks.alreadyExpired(e.ExpireMS) {
		if deleted {
			if journal {
				ks.jdel(c.DB, e.Key)
			}
			ks.notify(NotifyGeneric, "del", e.Key, c.DB)
		}
		return true
	}
	sl := ks.addKey(d, h, e.Key, "", v)
	when := int64(-1)
	if e.ExpireMS > 0 {
		when = e.ExpireMS
		ks.setExpiry(d, h, sl, when)
	}
	ks.restoreAccess(sl, e.Idle, int64(e.Freq))
	if journal {
		ks.jputLoaded(c.DB, e.Key, v, when)
	}
	ks.notify(NotifyGeneric, "restore", e.Key, c.DB)
	return true
}

// jputLoaded is jput for a key MOOND.LOAD created: a string's op takes
// one append of ready arguments (the batch's database digits, loadDB; the
// string kind's and no expiry's "0"), which a batch of hundreds of keys
// makes cheap; other values take jput's way.
func (ks *Keyspace) jputLoaded(dbi int, key []byte, v value, when int64) {
	if v.isInt() || v.kind() != KindString {
		ks.jput(dbi, key, v, when)
		return
	}
	expiry := kwZero
	if when > 0 {
		start := len(ks.jnum)
		ks.jnum = strconv.AppendInt(ks.jnum, when, 10)
		expiry = ks.jnum[start:len(ks.jnum):len(ks.jnum)]
	}
	ks.jargs = append(ks.jargs, kwOpPut, ks.loadDB, key, kwZero, v.bytes(), expiry)
}

// kwZero is "0": the string kind, and no expiry, in a PUT op.
var kwZero = []byte("0")
