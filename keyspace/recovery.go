package keyspace

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/moond-db/moond/persistence/heap"
)

// Recovery (docs/DESIGN.md §7): load the heap, then replay the WAL from the
// redo point, applying a record to a key only when the record's LSN is
// above the key's LSN.
//
//	ks.BeginLoad(redo, headLSN)
//	for each live heap record: ks.LoadRecord(r)   (superseded versions are returned)
//	ks.EndHeap()                                  (chunked values: chunk_load.go)
//	if the checkpoint logged a database map at redo: ks.SetDBMap(m)
//	for each WAL data record with LSN >= redo: ks.Replay(lsn, db, args, out)
//	ks.EndLoad()
//
// Heap keys name physical databases, WAL records logical ones (see
// cmd_db.go). LoadRecord puts a record in the database of its physical id,
// whatever the map; the map at the redo point (SetDBMap; the identity when
// none was logged) and the SWAPDB records replayed after it give each
// logical index the physical database it had before the crash.
//
// The heap is fuzzy: a checkpoint that did not finalize may have written
// some of its keys' new versions and not others, so a key may come from
// the heap newer than WAL records above the redo point. A record's key
// LSN is the LSN through which its version holds every change. Keys
// loaded with a key LSN below the redo point are older than every record
// replayed, so only the others are remembered, in the boot map (pair, of
// a physical database, → key LSN); a key leaves it as soon as a record applies to it, its state
// being then as of that record, older than every record still to come.
// With an empty boot map, Replay is Exec.
//
// The rule is sound because no journal record reads a key it does not
// write (see journal.go): a record applied to some of its keys and skipped
// for others leaves each key as the history says. SWAPDB writes no key
// (no key changes physical database), so it always applies.
//
// Loaded keys are clean: the heap holds their versions. Every key that
// replay changes is marked dirty as any write is (BeginLoad turns
// TrackDirty on), so the next checkpoint writes exactly the keys whose
// heap version is older than their state in memory.

// loadState is the keyspace's state during a recovery.
type loadState struct {
	redo    uint64
	headLSN func(heap.RecordID) (uint64, error)
	boot    map[pairKey]uint64
	buf     []byte
	client  Client
	args    [][]byte
	victims []string
	// QueueRecord's batch, and the superseded versions FlushLoad found.
	pending    []pendingRecord
	superseded []heap.RecordID
	slab       loadSlab    // the bytes of the keys and short strings loaded
	chunked    loadChunked // the chunked values' records, for EndHeap
	// coldAbove: tiered-storage loads records cold once the data is over
	// it (cold_load.go); 0 loads every value.
	coldAbove int64
	// prefetchLoad's scratch: the slots the batch will fill and those
	// whose tags are its keys'.
	ins, tagged [loadBatch]*slot[entry]
}

// BeginLoad starts a recovery whose redo point is redo: Loading and
// TrackDirty are set. headLSN returns the key LSN of a heap record that
// LoadRecord already loaded; it is called only for a key found twice.
func (ks *Keyspace) BeginLoad(redo uint64, headLSN func(heap.RecordID) (uint64, error)) {
	ks.Loading = true
	ks.TrackDirty = true
	ks.load = loadState{redo: redo, headLSN: headLSN, boot: make(map[pairKey]uint64), coldAbove: ks.load.coldAbove}
}

// Reserve sizes the tables of the physical databases for keys[i] keys
// each, before a load (see dict.reserve): the key counts the last
// checkpoint recorded. Loading then neither splits nor rebuilds the
// tables, which is most of what growing them costs. A table that holds
// keys already is left alone.
func (ks *Keyspace) Reserve(keys []uint64) {
	for i, n := range keys {
		if i < len(ks.pdbs) && n > 0 && n < 1<<40 {
			ks.pdbs[i].keys.reserve(int(n))
		}
	}
}

// KeyCounts returns the number of keys of each physical database, by
// physical id: what Reserve takes at the next boot.
func (ks *Keyspace) KeyCounts() []uint64 {
	out := make([]uint64, len(ks.pdbs))
	for i, d := range ks.pdbs {
		out[i] = uint64(d.keys.count)
	}
	return out
}

// LoadRecord loads one heap record: its key, value and expiry (stored even
// when past), and its location. The record goes to the database whose
// physical id its heap key names, wherever the database map (SetDBMap)
// puts that database. When the key is already loaded (an old
// version whose deferred free had not reached the disk), the version with
// the higher key LSN stays, and the other one's RecordID is returned as
// superseded, with dup set: the caller frees it once a checkpoint
// finalizes. A key LSN at or above the redo point is remembered for
// Replay.
func (ks *Keyspace) LoadRecord(r *heap.ScanRecord) (superseded heap.RecordID, dup bool, err error) {
	if r.Head.Kind >= kindChunkedHead {
		return heap.RecordID{}, false, ks.stashChunked(r) // EndHeap loads it
	}
	var p pendingRecord
	if err := ks.readRecord(r, &p); err != nil {
		return heap.RecordID{}, false, err
	}
	return ks.placeRecord(&p)
}

// readRecord reads and decodes one heap record into *p (prepareRecord). A
// string value short enough is read straight into the load's slab, where
// it stays: one copy from the page, none after.
func (ks *Keyspace) readRecord(r *heap.ScanRecord, p *pendingRecord) error {
	fail := func(err error) error {
		return fmt.Errorf("keyspace: heap record %v: %w", r.ID, err)
	}
	hk, err := r.Key()
	if err != nil {
		return fail(err)
	}
	if n := r.Head.ValueLen; Kind(r.Head.Kind) == KindString && n <= slabMax {
		dst := ks.load.slab.alloc(int(n))
		val, err := r.AppendValue(dst[:0])
		if err != nil || len(val) != len(dst) {
			ks.load.slab.unalloc(len(dst))
			if err == nil {
				err = fmt.Errorf("value of %d bytes, its head says %d", len(val), n)
			}
			return fail(err)
		}
		return ks.prepareRecord(p, hk, r.ID, &r.Head, val, true)
	}
	val, err := r.AppendValue(ks.load.buf[:0])
	if err != nil {
		return fail(err)
	}
	if cap(val) <= 1<<20 {
		ks.load.buf = val
	}
	return ks.prepareRecord(p, hk, r.ID, &r.Head, val, false)
}

// QueueRecord is LoadRecord for a whole heap: records are decoded at once
// and put in their tables loadBatch at a time (FlushLoad), so that the
// cache misses of finding their places overlap instead of coming one after
// the other (see FlushLoad). The versions newer records superseded are
// collected for Superseded. Replay, SetDBMap and EndLoad require that
// FlushLoad ran after the last QueueRecord.
func (ks *Keyspace) QueueRecord(r *heap.ScanRecord) error {
	if r.Head.Kind >= kindChunkedHead {
		return ks.stashChunked(r) // EndHeap loads it
	}
	// The record is decoded in place, in a slot grown for it: built
	// apart and appended, it would be copied whole, its fields just
	// written, a stall of the load's loop.
	pend := slices.Grow(ks.load.pending, 1)
	pend = pend[:len(pend)+1]
	if err := ks.readRecord(r, &pend[len(pend)-1]); err != nil {
		clear(pend[len(pend)-1:])
		return err
	}
	ks.load.pending = pend
	if len(ks.load.pending) == loadBatch {
		return ks.FlushLoad()
	}
	return nil
}

// loadBatch is how many records FlushLoad places together: enough for the
// processor to have many misses in flight, few enough that the slots read
// ahead are still cached when their records are placed.
const loadBatch = 32

// FlushLoad places the records QueueRecord holds. It first reads the
// memory placing them touches (prefetchLoad), then places them one by one
// into what is now cached.
func (ks *Keyspace) FlushLoad() error {
	pend := ks.load.pending
	ks.prefetchLoad(pend)
	var err error
	for i := range pend {
		sup, dup, perr := ks.placeRecord(&pend[i])
		if perr != nil && err == nil {
			err = perr
		}
		if dup {
			ks.load.superseded = append(ks.load.superseded, sup)
		}
	}
	clear(pend)
	ks.load.pending = pend[:0]
	return err
}

// Superseded returns the heap records that FlushLoad found superseded by
// newer versions of their keys (see LoadRecord), and forgets them.
func (ks *Keyspace) Superseded() []heap.RecordID {
	out := ks.load.superseded
	ks.load.superseded = nil
	return out
}

// mustBeFlushed asserts that no queued record waits for FlushLoad.
func (ks *Keyspace) mustBeFlushed(what string) {
	if len(ks.load.pending) > 0 {
		panic(fmt.Sprintf("keyspace: %s with %d heap records queued and not flushed", what, len(ks.load.pending)))
	}
	if (what == "Replay" || what == "SetDBMap") && (len(ks.load.chunked.heads) > 0 || len(ks.load.chunked.chunks) > 0) {
		panic(fmt.Sprintf("keyspace: %s with chunked values not loaded (EndHeap)", what))
	}
}

// loadRecord is LoadRecord of a record already read.
func (ks *Keyspace) loadRecord(hk []byte, id heap.RecordID, head heap.RecordHead, val []byte) (heap.RecordID, bool, error) {
	var p pendingRecord
	if err := ks.prepareRecord(&p, hk, id, &head, val, false); err != nil {
		return heap.RecordID{}, false, err
	}
	return ks.placeRecord(&p)
}

// pendingRecord is a heap record decoded and not yet in its table: its
// database, the key's hash, the key as the table keeps it, and the value.
type pendingRecord struct {
	d    *db
	phys int
	h    uint64
	key  string
	v    value
	head heap.RecordHead
	id   heap.RecordID
}

// prepareRecord decodes a record into *p: everything LoadRecord does
// before it touches a table. inSlab says that val, a string's bytes, is
// the last piece of the load's slab and may be kept as it is; otherwise
// val is copied.
func (ks *Keyspace) prepareRecord(p *pendingRecord, hk []byte, id heap.RecordID, head *heap.RecordHead, val []byte, inSlab bool) error {
	fail := func(err error) error {
		return fmt.Errorf("keyspace: heap record %v: %w", id, err)
	}
	if id.File == 0 {
		return fail(errors.New("record id names file 0"))
	}
	phys, key, err := DecodeHeapKey(hk)
	if err != nil {
		return fail(err)
	}
	if phys >= len(ks.pdbs) {
		return fail(fmt.Errorf("key of database %d, but the server has %d (--databases)", phys, len(ks.pdbs)))
	}
	switch {
	case ks.loadCold(Kind(head.Kind)):
		if inSlab {
			ks.load.slab.unalloc(len(val)) // the last piece: given back
		}
		p.v = coldValue(Kind(head.Kind), allocSize(int64(len(val))))
	case inSlab:
		p.v = ks.load.slab.stringValue(val) // before the key: it may give the bytes back
	default:
		p.v, err = ks.decodeValue(Kind(head.Kind), val)
	}
	if err != nil {
		return fail(err)
	}
	d := ks.pdbs[phys]
	p.d, p.phys, p.h, p.key, p.head, p.id = d, phys, d.keys.hash(key), ks.load.slab.str(key), *head, id
	return nil
}

// placeRecord puts a prepared record in its table (see LoadRecord).
func (ks *Keyspace) placeRecord(pr *pendingRecord) (heap.RecordID, bool, error) {
	fail := func(err error) (heap.RecordID, bool, error) {
		return heap.RecordID{}, false, fmt.Errorf("keyspace: heap record %v: %w", pr.id, err)
	}
	d, phys, h, v, head, id := pr.d, pr.phys, pr.h, pr.v, pr.head, pr.id
	key := unsafeBytes(pr.key)
	sl := d.keys.find(h, key)
	if sl == nil {
		sl = ks.insertKey(d, h, key, pr.key, v)
		if v.isCold() {
			ks.countLoadedCold(d, v)
		}
		if head.Expiry != 0 {
			setExpiryRaw(d, h, sl, head.Expiry)
		}
		ks.setLoc(phys, sl, id)
		if head.KeyLSN >= ks.load.redo {
			ks.load.boot[pairKey{phys, sl.key()}] = head.KeyLSN
		}
		return heap.RecordID{}, false, nil
	}
	// The key again: keep the version with the higher key LSN.
	oldID, ok := ks.slotLoc(phys, sl)
	if !ok {
		return fail(fmt.Errorf("key %q of database %d is loaded already without a heap location (LoadRecord after Replay?)", key, phys))
	}
	p := pairKey{phys, sl.key()}
	oldLSN, ok := ks.load.boot[p]
	if !ok {
		if ks.load.headLSN == nil {
			return fail(fmt.Errorf("key %q of database %d found twice and no way to read the key LSN of %v", key, phys, oldID))
		}
		var err error
		if oldLSN, err = ks.load.headLSN(oldID); err != nil {
			return fail(fmt.Errorf("key LSN of the other version %v: %w", oldID, err))
		}
	}
	if head.KeyLSN <= oldLSN {
		return id, true, nil
	}
	if sl.v.isCold() {
		ks.coldGone(d, sl)
	}
	d.dataBytes += v.heapBytes() - sl.v.heapBytes()
	sl.v.value = v
	if v.isCold() {
		ks.countLoadedCold(d, v)
	}
	if head.Expiry != 0 {
		setExpiryRaw(d, h, sl, head.Expiry)
	} else {
		removeExpiryRaw(d, h, sl)
	}
	ks.setLoc(phys, sl, id)
	if head.KeyLSN >= ks.load.redo {
		ks.load.boot[p] = head.KeyLSN
	} else {
		delete(ks.load.boot, p)
	}
	return oldID, true, nil
}

// EndLoad ends the recovery: the boot map is dropped and Loading cleared.
// The keys that replay changed stay dirty; the others are clean.
func (ks *Keyspace) EndLoad() {
	ks.mustBeFlushed("EndLoad")
	ks.Loading = false
	ks.load = loadState{}
}

// replayPasses applies the per-key rule: whether the record at lsn applies
// to key in the database at logical index dbi. A key that it applies to
// leaves the boot map.
func (ks *Keyspace) replayPasses(lsn uint64, dbi int, key []byte) bool {
	if len(ks.load.boot) == 0 {
		return true
	}
	p := pairKey{ks.dbs[dbi].phys, unsafeString(key)}
	klsn, ok := ks.load.boot[p]
	if !ok {
		return true
	}
	if klsn >= lsn {
		return false
	}
	delete(ks.load.boot, p)
	return true
}

// newerThan reports whether the heap holds key of the database at logical
// index dbi as of lsn or later.
func (ks *Keyspace) newerThan(lsn uint64, dbi int, k string) bool {
	klsn, ok := ks.load.boot[pairKey{ks.dbs[dbi].phys, k}]
	return ok && klsn >= lsn
}

// Replay applies the WAL data record args (database db, LSN lsn) under
// the per-key rule: the record applies to a key only when lsn is above
// the key's LSN. db, and the databases the record names, are logical
// indexes, as the journal wrote them.
//
//   - A single-key record is skipped when its key is not older.
//   - DEL k ..., MSET k v ... and MOOND.APPLY apply to the keys that pass.
//   - FLUSHDB and FLUSHALL delete every key of their databases but those
//     that are not older.
//   - SWAPDB a b swaps the two databases' logical indexes, always: it
//     changes no key's physical database, so no key is older or newer
//     than it.
//
// Replay runs as loading does (Loading is set for the call if it is not):
// nothing is journaled, nothing expires, MOOND.APPLY is known. It writes
// one reply to w: the command's, or +OK when the record was skipped
// whole. An error reply is a record that failed (a malformed one, or a
// legacy RENAME, COPY or MOVE that reads a key the heap holds at a later
// LSN than the record and writes one it holds earlier).
func (ks *Keyspace) Replay(lsn uint64, db int, args [][]byte, w ReplyWriter) {
	ks.mustBeFlushed("Replay")
	if len(args) == 0 {
		w.Error("ERR empty WAL record")
		return
	}
	if db < 0 || db >= len(ks.dbs) {
		w.Error(errDBRange)
		return
	}
	if !ks.Loading { // replay always runs as loading does, BeginLoad or not
		ks.Loading = true
		defer func() { ks.Loading = false }()
	}
	c := &ks.load.client
	*c = Client{DB: db}
	if len(ks.load.boot) == 0 {
		ks.Exec(c, args, w)
		return
	}
	ks.now = ks.Now()
	name := args[0]
	switch {
	case equalFold(name, applyLower):
		ks.execApply(args, w, lsn)
	case equalFold(name, "del"), equalFold(name, "unlink"):
		ks.replayKeys(lsn, c, args, 1, w)
	case equalFold(name, "mset") && len(args) >= 3 && len(args)%2 == 1:
		ks.replayKeys(lsn, c, args, 2, w)
	case equalFold(name, "flushdb"), equalFold(name, "flushall"):
		if !flushOK(args, w) {
			return
		}
		if equalFold(name, "flushdb") {
			ks.replayFlush(lsn, db)
		} else {
			for i := range ks.dbs {
				ks.replayFlush(lsn, i)
			}
		}
		replyOK(w)
	case equalFold(name, "swapdb"):
		ks.Exec(c, args, w) // no key changes pair: see cmd_db.go
	default:
		ks.replayOther(lsn, c, args, w)
	}
}

// replayKeys replays a command whose arguments after the name are groups
// of step, each starting with a key (DEL: 1, MSET: 2), on the groups whose
// key passes.
func (ks *Keyspace) replayKeys(lsn uint64, c *Client, args [][]byte, step int, w ReplyWriter) {
	out := append(ks.load.args[:0], args[0])
	for i := 1; i+step <= len(args); i += step {
		if ks.replayPasses(lsn, c.DB, args[i]) {
			out = append(out, args[i:i+step]...)
		}
	}
	if len(out) == 1 {
		replyOK(w)
	} else {
		ks.Exec(c, out, w)
	}
	clear(out)
	ks.load.args = out[:0]
}

// replayOther replays any other command by its keys (the command table's
// key positions; COPY's and MOVE's destinations in their database): run
// when no key is newer than the record, skipped when every key is (each
// already holds the record's effect). A record with some keys newer and
// some older cannot be split for a command that reads one key to write
// another; the journal writes no such record, an old WAL may.
func (ks *Keyspace) replayOther(lsn uint64, c *Client, args [][]byte, w ReplyWriter) {
	spec := Lookup(args[0])
	if spec == nil || spec.Subcommands != nil || !spec.arityOK(len(args)) {
		ks.Exec(c, args, w) // its error
		return
	}
	type pair struct {
		db  int
		key []byte
	}
	var pairs []pair
	if spec.FirstKey == 1 && spec.LastKey == 1 {
		pairs = []pair{{c.DB, args[1]}}
	} else {
		for _, i := range spec.KeyPositions(len(args)) {
			pairs = append(pairs, pair{c.DB, args[i]})
		}
		switch spec.Name {
		case "copy":
			for j := 3; j+1 < len(args); j++ {
				if equalFold(args[j], "db") {
					if n, msg := ks.SelectIndex(args[j+1]); msg == "" {
						pairs = append(pairs, pair{n, args[2]})
					}
				}
			}
		case "move":
			if n, msg := ks.SelectIndex(args[2]); msg == "" {
				pairs = append(pairs, pair{n, args[1]})
			}
		}
	}
	newer := 0
	for _, p := range pairs {
		if ks.newerThan(lsn, p.db, unsafeString(p.key)) {
			newer++
		}
	}
	switch {
	case newer == 0:
		for _, p := range pairs {
			ks.replayPasses(lsn, p.db, p.key)
		}
		ks.Exec(c, args, w)
	case newer == len(pairs):
		replyOK(w)
	default:
		w.Error(fmt.Sprintf("ERR %s at LSN %d reads a key the heap holds at a later LSN: it cannot be replayed key by key",
			strings.ToUpper(spec.Name), lsn))
	}
}

// replayFlush replays the flush of the database at logical index dbi:
// every key goes but those the heap holds as of lsn or later.
func (ks *Keyspace) replayFlush(lsn uint64, dbi int) {
	d := ks.dbs[dbi]
	keep := false
	for p, klsn := range ks.load.boot {
		if p.db == d.phys && klsn >= lsn {
			keep = true
			break
		}
	}
	if !keep {
		for p := range ks.load.boot {
			if p.db == d.phys {
				delete(ks.load.boot, p)
			}
		}
		ks.dropDB(dbi)
		return
	}
	victims := ks.load.victims[:0]
	d.keys.each(func(sl *slot[entry]) {
		if !ks.newerThan(lsn, dbi, sl.key()) {
			victims = append(victims, sl.key())
		}
	})
	for _, k := range victims {
		delete(ks.load.boot, pairKey{d.phys, k})
		key := unsafeBytes(k)
		ks.deleteKey(d, d.keys.hash(key), key)
	}
	clear(victims)
	ks.load.victims = victims[:0]
}
