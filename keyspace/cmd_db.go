package keyspace

import "fmt"

// Database commands: FLUSHDB, FLUSHALL, SWAPDB. SELECT is the server's (a
// connection's state), with SelectIndex's validation.
//
// A database has two numbers: its logical index, the one SELECT, the
// commands and the journal's records use, and its physical id, the one
// its heap keys name (heapcodec.go), which is its index at creation and
// never changes. Keyspace.dbs maps logical to physical; SWAPDB permutes
// it and nothing else, in O(1), as Redis's does: no key changes its heap
// pair, so no record moves, none is freed and nothing becomes dirty.
//
// The map is part of the persistent state (DBMap): a checkpoint logs it
// at its redo point whenever it is not the identity (IdentityDBMap), and
// recovery sets it (SetDBMap) before replaying the WAL from there; the
// SWAPDB records replayed then permute it as they did before the crash.

// flushOK parses FLUSHDB's and FLUSHALL's optional ASYNC|SYNC. Both flush
// at once here: dropping the tables is O(1), the GC frees the memory. (With
// dirty tracking on, every key leaves its heap record to a grave first:
// O(keys), as Redis's flush.)
func flushOK(args [][]byte, w ReplyWriter) bool {
	if len(args) == 1 || len(args) == 2 && (equalFold(args[1], "sync") || equalFold(args[1], "async")) {
		return true
	}
	w.Error(errSyntax)
	return false
}

func cmdFlushDB(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if !flushOK(args, w) {
		return
	}
	if ks.dbs[c.DB].keys.count > 0 {
		ks.dropDB(c.DB)
		ks.journal(c.DB, "FLUSHDB")
	}
	ks.trackFlush() // even of an empty database, as Redis signals it
	replyOK(w)
}

func cmdFlushAll(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	if !flushOK(args, w) {
		return
	}
	if ks.FlushAll() > 0 {
		ks.journal(c.DB, "FLUSHALL")
	}
	ks.trackFlush()
	replyOK(w)
}

// FlushAll empties every database and returns how many keys it dropped.
func (ks *Keyspace) FlushAll() int {
	n := 0
	for i, d := range ks.dbs {
		n += d.keys.count
		ks.dropDB(i)
	}
	return n
}

// parseSwapDB parses SWAPDB's arguments; msg is the error reply, "" if
// none.
func (ks *Keyspace) parseSwapDB(args [][]byte) (a, b int, msg string) {
	x, ok := parseInt(args[1])
	if !ok {
		return 0, 0, "ERR invalid first DB index"
	}
	y, ok := parseInt(args[2])
	if !ok {
		return 0, 0, "ERR invalid second DB index"
	}
	n := int64(len(ks.dbs))
	if x < 0 || x >= n || y < 0 || y >= n {
		return 0, 0, errDBRange
	}
	return int(x), int(y), ""
}

// swapDB swaps the databases at logical indexes a and b: their physical
// ids, and so their keys' heap pairs, stay. Watches stay with the logical
// indexes; those of keys present on either side are touched first.
func (ks *Keyspace) swapDB(a, b int) {
	if ks.watched != 0 {
		ks.touchAllWatched(a, b)
		ks.touchAllWatched(b, a)
	}
	ks.trackFlush()
	ks.dbs[a], ks.dbs[b] = ks.dbs[b], ks.dbs[a]
	ks.watch.logicalOf[ks.dbs[a].phys] = a
	ks.watch.logicalOf[ks.dbs[b].phys] = b
}

// DBMap returns the logical-to-physical database map: for each logical
// index i (SELECT's), the physical id of the database there (the one its
// heap keys name). It is the identity until a SWAPDB. The slice is the
// caller's.
func (ks *Keyspace) DBMap() []int {
	m := make([]int, len(ks.dbs))
	for i, d := range ks.dbs {
		m[i] = d.phys
	}
	return m
}

// IdentityDBMap reports whether DBMap is the identity (every database at
// its physical id), without allocating.
func (ks *Keyspace) IdentityDBMap() bool {
	for i, d := range ks.dbs {
		if d.phys != i {
			return false
		}
	}
	return true
}

// SetDBMap arranges the databases so that logical index i holds physical
// database m[i], whatever the map was: it is for recovery, which sets the
// map that the checkpoint logged at the redo point before it replays the
// WAL from there. The keys stay with their physical databases. m must be a
// permutation of 0 .. NumDBs()-1; otherwise nothing changes and the error
// says what is wrong.
func (ks *Keyspace) SetDBMap(m []int) error {
	ks.mustBeFlushed("SetDBMap")
	n := len(ks.dbs)
	if len(m) != n {
		return fmt.Errorf("keyspace: database map of %d databases, but the server has %d (--databases)", len(m), n)
	}
	at := make([]int, n) // at[p] is 1 + the logical index that holds p
	for i, p := range m {
		if p < 0 || p >= n {
			return fmt.Errorf("keyspace: database map gives logical database %d the physical id %d, outside 0-%d", i, p, n-1)
		}
		if at[p] != 0 {
			return fmt.Errorf("keyspace: database map is not a permutation: physical database %d is at logical %d and %d", p, at[p]-1, i)
		}
		at[p] = i + 1
	}
	for i, p := range m {
		ks.dbs[i] = ks.pdbs[p]
		ks.watch.logicalOf[p] = i
	}
	return nil
}

func cmdSwapDB(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	a, b, msg := ks.parseSwapDB(args)
	if msg != "" {
		w.Error(msg)
		return
	}
	if a != b {
		ks.swapDB(a, b)
		ks.journal(c.DB, "SWAPDB", args[1], args[2])
	}
	replyOK(w)
}
