package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/resp"
)

// rec is a heap record of key in database db.
func rec(db int, key, val string, keyLSN uint64, expiry int64) heap.Record {
	return heap.Record{Key: hk(db, key), Kind: uint8(KindString), Expiry: expiry, KeyLSN: keyLSN, Value: []byte(val)}
}

// writeHeap opens the heap in dir made of files, inserts recs, writes them
// to disk (heap.WriteDirtySync) and returns their ids and the files.
func writeHeap(t *testing.T, dir string, files []uint32, recs ...heap.Record) ([]heap.RecordID, []uint32) {
	t.Helper()
	h, err := heap.Open(heap.Options{Dir: dir, Files: files, Cache: heap.NewCache(1 << 20), ReadMisses: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var ids []heap.RecordID
	for _, r := range recs {
		id, err := h.Insert(r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := h.WriteDirtySync(); err != nil {
		t.Fatal(err)
	}
	files = nil
	for _, f := range h.Files() {
		files = append(files, f.ID)
	}
	return ids, files
}

// bootHeap starts a recovery of ks with redo point redo and loads the heap
// in dir into it, as the server does: heap.Open reports every record to
// LoadRecord. It returns the superseded versions and how many times
// LoadRecord needed headLSN.
func bootHeap(t *testing.T, ks *Keyspace, dir string, files []uint32, redo uint64) ([]heap.RecordID, int) {
	t.Helper()
	return bootHeapWith(t, ks, dir, files, redo, false)
}

// bootHeapWith is bootHeap through LoadRecord, or (queued) through
// QueueRecord and FlushLoad, as the shard's boot loads.
func bootHeapWith(t *testing.T, ks *Keyspace, dir string, files []uint32, redo uint64, queued bool) ([]heap.RecordID, int) {
	t.Helper()
	var readers []*heap.File
	defer func() {
		for _, f := range readers {
			f.Close()
		}
	}()
	heads := 0
	headLSN := func(id heap.RecordID) (uint64, error) {
		heads++
		f, err := heap.OpenFile(vfs.Default, dir, id.File)
		if err != nil {
			return 0, err
		}
		readers = append(readers, f)
		h, err := f.RecordHead(id)
		return h.KeyLSN, err
	}
	ks.BeginLoad(redo, headLSN)
	var superseded []heap.RecordID
	h, err := heap.Open(heap.Options{Dir: dir, Files: files, Cache: heap.NewCache(1 << 20), ReadMisses: true,
		OnRecord: func(r *heap.ScanRecord) error {
			if queued {
				return ks.QueueRecord(r)
			}
			sup, dup, err := ks.LoadRecord(r)
			if dup {
				superseded = append(superseded, sup)
			}
			return err
		}})
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	if queued {
		if err := ks.FlushLoad(); err != nil {
			t.Fatal(err)
		}
		superseded = ks.Superseded()
	}
	return superseded, heads
}

// walRecord is a journal record with its LSN.
type walRecord struct {
	lsn  uint64
	db   int
	args []string
}

// replay replays records through Replay and fails on an error reply.
func replay(t *testing.T, ks *Keyspace, recs ...walRecord) {
	t.Helper()
	for _, r := range recs {
		var w resp.Writer
		args := make([][]byte, len(r.args))
		for i, a := range r.args {
			args[i] = []byte(a)
		}
		ks.Replay(r.lsn, r.db, args, &w)
		if s, _, err := decodeReply(w.Buf); err != nil || strings.HasPrefix(s, "(error)") {
			t.Fatalf("replaying %d %q: %q (%v)", r.lsn, r.args, w.Buf, err)
		}
	}
}

// dumpAll lists the keys of ks at now, expired ones excluded, as
// dumpKeyspace does.
func dumpAll(ks *Keyspace, now int64) []string {
	var out []string
	for k, v := range dumpKeyspace(ks, now) {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

func TestLoadRecordLoadsKeysValuesExpiriesAndLocations(t *testing.T) {
	dir := t.TempDir()
	ids, files := writeHeap(t, dir, nil,
		rec(0, "a", "123", 4, 0),
		rec(3, "b", "hello", 5, startClock+1000),
		rec(0, "gone", "x", 2, startClock-1000), // past its time: loaded all the same
		rec(0, "big", strings.Repeat("v", 10000), 3, 0),
	)
	ks := NewKeyspace(16, func() int64 { return startClock })
	sup, heads := bootHeap(t, ks, dir, files, 10)
	if len(sup) != 0 || heads != 0 {
		t.Errorf("superseded %v, headLSN calls %d", sup, heads)
	}
	if !ks.Loading || !ks.TrackDirty {
		t.Errorf("BeginLoad: Loading %v TrackDirty %v", ks.Loading, ks.TrackDirty)
	}
	ks.EndLoad()
	if ks.Loading {
		t.Error("EndLoad left Loading set")
	}
	if ks.DBSize(0) != 3 || ks.DBSize(3) != 1 {
		t.Errorf("db sizes %d %d", ks.DBSize(0), ks.DBSize(3))
	}
	for i, c := range []struct {
		db       int
		key, val string
		when     int64
		encoding string
	}{{0, "a", "123", -1, "int"}, {3, "b", "hello", startClock + 1000, "embstr"}, {0, "gone", "x", startClock - 1000, "embstr"}, {0, "big", strings.Repeat("v", 10000), -1, "raw"}} {
		d := ks.dbs[c.db]
		key := []byte(c.key)
		sl := d.keys.find(d.keys.hash(key), key)
		if sl == nil {
			t.Errorf("%d/%s not loaded", c.db, c.key)
			continue
		}
		if got := string(sl.v.appendTo(nil)); got != c.val || sl.v.encoding() != c.encoding {
			t.Errorf("%d/%s = %.20q (%s), want %.20q (%s)", c.db, c.key, got, sl.v.encoding(), c.val, c.encoding)
		}
		if got := ks.expiryOf(d, d.keys.hash(key), sl); got != c.when {
			t.Errorf("%d/%s expires at %d, want %d", c.db, c.key, got, c.when)
		}
		if id, ok := ks.slotLoc(c.db, sl); !ok || id != ids[i] {
			t.Errorf("%d/%s located at %v, want %v", c.db, c.key, id, ids[i])
		}
	}
	if got := takeDirty(t, ks); len(got) != 0 {
		t.Errorf("loaded keys are dirty: %q", got)
	}
	if got := ks.UsedMemory(); got <= 10000 {
		t.Errorf("UsedMemory = %d after loading a 10000-byte value", got)
	}
	// Once served, the past key expires and its record is the grave's.
	c := &Client{}
	var w resp.Writer
	ks.Exec(c, [][]byte{[]byte("GET"), []byte("gone")}, &w)
	if v := ks.Version(hk(0, "gone")); v.Live || !v.HasOld || v.Old != ids[2] {
		t.Errorf("Version(gone) = %+v", v)
	}
}

func TestLoadRecordRefusesWhatItCannotLoad(t *testing.T) {
	ks := NewKeyspace(4, nil)
	ks.BeginLoad(5, nil)
	id := heap.RecordID{File: 1, Page: 2, Slot: 3}
	head := heap.RecordHead{KeyLSN: 1}
	for _, c := range []struct {
		name string
		hk   []byte
		kind uint8
		id   heap.RecordID
	}{
		{"bad heap key", []byte{0x80}, 0, id},
		{"database out of range", hk(4, "k"), 0, id},
		{"unknown kind", hk(0, "k"), 77, id},
		{"file 0", hk(0, "k"), 0, heap.RecordID{Page: 1}},
	} {
		head.Kind = c.kind
		if _, _, err := ks.loadRecord(c.hk, c.id, head, []byte("v")); err == nil {
			t.Errorf("%s: loaded", c.name)
		}
	}
	// A key found twice without a way to read the first one's key LSN.
	if _, _, err := ks.loadRecord(hk(0, "k"), id, heap.RecordHead{KeyLSN: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ks.loadRecord(hk(0, "k"), heap.RecordID{File: 1, Page: 3}, heap.RecordHead{KeyLSN: 2}, nil); err == nil {
		t.Error("a duplicate loaded without headLSN")
	}
}

func TestLoadRecordKeepsTheVersionWithTheHigherKeyLSN(t *testing.T) {
	dir := t.TempDir()
	ids, files := writeHeap(t, dir, nil,
		rec(0, "k", "old", 3, startClock+5),
		rec(0, "k", "new", 7, 0),
		rec(0, "j", "j-new", 9, 0),
		rec(0, "j", "j-old", 2, startClock+5),
		rec(1, "k", "other-db", 1, 0),
	)
	ks := NewKeyspace(16, func() int64 { return startClock })
	sup, heads := bootHeap(t, ks, dir, files, 5)
	slices.SortFunc(sup, func(a, b heap.RecordID) int { return strings.Compare(a.String(), b.String()) })
	want := []heap.RecordID{ids[0], ids[3]}
	slices.SortFunc(want, func(a, b heap.RecordID) int { return strings.Compare(a.String(), b.String()) })
	if !slices.Equal(sup, want) {
		t.Errorf("superseded %v, want %v (k's and j's old versions)", sup, want)
	}
	if heads != 1 {
		t.Errorf("headLSN called %d times, want once (k's first version is below redo; j's is in the boot map)", heads)
	}
	ks.EndLoad()
	if got, want := dumpAll(ks, startClock), []string{
		`0/"j"="j-new" @-1`, `0/"k"="new" @-1`, `1/"k"="other-db" @-1`,
	}; !slices.Equal(got, want) {
		t.Errorf("loaded %q, want %q", got, want)
	}
	for key, id := range map[string]heap.RecordID{"k": ids[1], "j": ids[2]} {
		if v := ks.Version(hk(0, key)); v.Old != id {
			t.Errorf("%s located at %v, want %v", key, v.Old, id)
		}
	}
}

// TestReplayOfARenameOverAFuzzyHeap is the case that made RENAME a
// MOOND.APPLY. History: a=V, b=W; checkpoint C1 (redo 11) wrote b at key
// LSN 10 and finalized. Then RENAME a b (LSN 12), SET a X (LSN 20), other
// writes up to 25; checkpoint C2 wrote a (X, key LSN 25) and crashed
// before it finalized, so recovery replays from 11 over a heap with a at
// 25 and b at 10. The old record "RENAME a b" would read a's heap state
// (X, newer than the record) and give b = X; the journal's record carries
// V.
func TestReplayOfARenameOverAFuzzyHeap(t *testing.T) {
	src := newTracked(t)
	for i := 1; i <= 9; i++ {
		src.do("SET", fmt.Sprint("f", i), "x")
	}
	src.script("SET b W", "OK", "SET a V", "OK") // LSN 10, 11
	src.script("RENAME a b", "OK")               // LSN 12
	for i := 13; i <= 19; i++ {
		src.do("SET", fmt.Sprint("f", i), "y")
	}
	src.script("SET a X", "OK") // LSN 20
	for i := 21; i <= 25; i++ {
		src.do("SET", fmt.Sprint("f", i), "z")
	}
	if len(src.records) != 25 || src.records[11].args[0] != applyName {
		t.Fatalf("unexpected journal: %d records, the 12th %q", len(src.records), src.records[11].args)
	}
	var wal []walRecord
	for i, r := range src.records {
		wal = append(wal, walRecord{uint64(i + 1), r.db, r.args})
	}
	boot := func() *Keyspace {
		dir := t.TempDir()
		heapRecs := []heap.Record{rec(0, "b", "W", 10, 0), rec(0, "a", "X", 25, 0)}
		for i := 1; i <= 9; i++ {
			heapRecs = append(heapRecs, rec(0, fmt.Sprint("f", i), "x", 10, 0))
		}
		_, files := writeHeap(t, dir, nil, heapRecs...)
		ks := NewKeyspace(16, func() int64 { return src.clock })
		bootHeap(t, ks, dir, files, 11)
		return ks
	}

	ks := boot()
	replay(t, ks, wal[10:]...) // from the redo point, LSN 11
	ks.EndLoad()
	if got, want := dumpAll(ks, src.clock), dumpAll(src.ks, src.clock); !slices.Equal(got, want) {
		t.Errorf("recovered\n%q\nwant\n%q", got, want)
	}
	if got, want := takeDirty(t, ks), []string{"0/b", "0/f13", "0/f14", "0/f15", "0/f16", "0/f17", "0/f18", "0/f19", "0/f21", "0/f22", "0/f23", "0/f24", "0/f25"}; !slices.Equal(got, want) {
		t.Errorf("dirty after recovery %q, want %q (a is as the heap holds it)", got, want)
	}

	// The old journal form cannot be replayed over this heap: Replay says
	// so rather than copy a's newer value into b.
	ks = boot()
	replay(t, ks, wal[10])
	var w resp.Writer
	ks.Replay(12, 0, [][]byte{[]byte("RENAME"), []byte("a"), []byte("b")}, &w)
	if s := string(w.Buf); !strings.HasPrefix(s, "-ERR RENAME at LSN 12 reads a key the heap holds at a later LSN") {
		t.Errorf("legacy RENAME replayed as %q", s)
	}
	if d := ks.dbs[0]; string(d.keys.find(d.keys.hash([]byte("b")), []byte("b")).v.appendTo(nil)) != "W" {
		t.Error("the refused record changed b")
	}
}

func TestReplayFlushAllKeepsKeysTheHeapHoldsAfterIt(t *testing.T) {
	dir := t.TempDir()
	ids, files := writeHeap(t, dir, nil,
		rec(0, "x", "new", 30, 0), // written after the FLUSHALL (LSN 15)
		rec(1, "y", "old", 5, 0),  // before the redo point
		rec(2, "w", "mid", 12, 0), // after the redo point, before the flush
	)
	ks := NewKeyspace(16, func() int64 { return startClock })
	bootHeap(t, ks, dir, files, 10)
	replay(t, ks,
		walRecord{11, 0, []string{"SET", "z", "1"}},
		walRecord{12, 2, []string{"SET", "w", "mid"}},
		walRecord{15, 0, []string{"FLUSHALL"}},
		walRecord{20, 0, []string{"SET", "x", "new"}},
		walRecord{21, 1, []string{"SET", "v", "after"}},
	)
	ks.EndLoad()
	if got, want := dumpAll(ks, startClock), []string{`0/"x"="new" @-1`, `1/"v"="after" @-1`}; !slices.Equal(got, want) {
		t.Errorf("recovered %q, want %q", got, want)
	}
	if got, want := takeDirty(t, ks), []string{"0/z", "1/v", "1/y", "2/w"}; !slices.Equal(got, want) {
		t.Errorf("dirty %q, want %q", got, want)
	}
	expectVersion(t, ks, 1, "y", false, ids[1])
	expectVersion(t, ks, 2, "w", false, ids[2])
	expectVersion(t, ks, 0, "x", true, ids[0])

	// FLUSHDB too, and with nothing newer it is the plain flush.
	ks = NewKeyspace(16, func() int64 { return startClock })
	dir = t.TempDir()
	_, files = writeHeap(t, dir, nil, rec(0, "x", "new", 30, 0), rec(0, "y", "old", 12, 0), rec(3, "q", "q", 11, 0))
	bootHeap(t, ks, dir, files, 10)
	replay(t, ks,
		walRecord{14, 3, []string{"FLUSHDB"}},
		walRecord{15, 0, []string{"FLUSHDB"}},
	)
	ks.EndLoad()
	if got, want := dumpAll(ks, startClock), []string{`0/"x"="new" @-1`}; !slices.Equal(got, want) {
		t.Errorf("recovered %q, want %q", got, want)
	}
}

func TestSetDBMapChecksThePermutation(t *testing.T) {
	ks := NewKeyspace(4, nil)
	if !ks.IdentityDBMap() || !slices.Equal(ks.DBMap(), []int{0, 1, 2, 3}) {
		t.Fatalf("a new keyspace's map is %v (identity %v)", ks.DBMap(), ks.IdentityDBMap())
	}
	if err := ks.SetDBMap([]int{2, 0, 3, 1}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		m    []int
		want string
	}{
		{nil, "database map of 0 databases, but the server has 4 (--databases)"},
		{[]int{1, 0, 2}, "database map of 3 databases, but the server has 4 (--databases)"},
		{[]int{1, 0, 2, 3, 4}, "database map of 5 databases, but the server has 4 (--databases)"},
		{[]int{0, 1, 4, 2}, "database map gives logical database 2 the physical id 4, outside 0-3"},
		{[]int{0, -1, 2, 3}, "database map gives logical database 1 the physical id -1, outside 0-3"},
		{[]int{3, 1, 2, 3}, "database map is not a permutation: physical database 3 is at logical 0 and 3"},
		{[]int{0, 0, 0, 0}, "database map is not a permutation: physical database 0 is at logical 0 and 1"},
	} {
		err := ks.SetDBMap(c.m)
		if err == nil || err.Error() != "keyspace: "+c.want {
			t.Errorf("SetDBMap(%v) = %v, want %q", c.m, err, c.want)
		}
		if got := ks.DBMap(); !slices.Equal(got, []int{2, 0, 3, 1}) {
			t.Fatalf("a refused SetDBMap(%v) changed the map to %v", c.m, got)
		}
	}
	if ks.IdentityDBMap() {
		t.Error("IdentityDBMap with the map [2 0 3 1]")
	}
	// The map is a permutation of the databases themselves: keys go with
	// their physical database.
	var w resp.Writer
	ks.Exec(&Client{DB: 1}, [][]byte{[]byte("SET"), []byte("k"), []byte("v")}, &w) // physical 0
	if err := ks.SetDBMap([]int{0, 1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if !ks.IdentityDBMap() || ks.DBSize(0) != 1 || ks.DBSize(1) != 0 {
		t.Errorf("after the identity map: map %v, sizes %d %d", ks.DBMap(), ks.DBSize(0), ks.DBSize(1))
	}
	m := ks.DBMap()
	m[0] = 3 // the caller's slice
	if !ks.IdentityDBMap() {
		t.Error("DBMap returned the keyspace's own state")
	}
}

// TestLoadRecordHonoursPhysicalIDs: a heap record goes to the database of
// the physical id its key names, whether the map is set before or after
// the heap is loaded, and the WAL records replayed after it (logical
// indexes) find their keys through the map, under the per-key rule.
func TestLoadRecordHonoursPhysicalIDs(t *testing.T) {
	dir := t.TempDir()
	heapRecs := []heap.Record{
		rec(0, "a", "phys0", 4, 0),
		rec(1, "a", "phys1", 12, 0), // newer than the redo point, 10
		rec(2, "b", "phys2", 3, 0),
		rec(3, "k", "k", 20, 0),
	}
	ids, files := writeHeap(t, dir, nil, heapRecs...)
	dbMap := []int{2, 0, 1, 3} // logical 0 is physical 2, 1 is 0, 2 is 1
	for _, mapFirst := range []bool{false, true} {
		t.Run(fmt.Sprint("mapFirst=", mapFirst), func(t *testing.T) {
			ks := NewKeyspace(4, func() int64 { return startClock })
			if mapFirst {
				ks.BeginLoad(10, nil)
				if err := ks.SetDBMap(dbMap); err != nil {
					t.Fatal(err)
				}
				for i, r := range heapRecs {
					if _, _, err := ks.loadRecord(r.Key, ids[i], heap.RecordHead{Kind: r.Kind, KeyLSN: r.KeyLSN}, r.Value); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				bootHeap(t, ks, dir, files, 10)
				if err := ks.SetDBMap(dbMap); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := dumpAll(ks, startClock), []string{
				`0/"b"="phys2" @-1`, `1/"a"="phys0" @-1`, `2/"a"="phys1" @-1`, `3/"k"="k" @-1`,
			}; !slices.Equal(got, want) {
				t.Errorf("loaded %q, want %q", got, want)
			}
			for i, r := range heapRecs {
				if v := ks.Version(r.Key); !v.Live || !v.HasOld || v.Old != ids[i] {
					t.Errorf("Version(%x) = %+v, want live at %v", r.Key, v, ids[i])
				}
			}
			replay(t, ks,
				walRecord{11, 2, []string{"SET", "a", "x"}},     // physical 1's a, the heap's at 12: skipped
				walRecord{11, 1, []string{"SET", "a", "y"}},     // physical 0's a: applies
				walRecord{13, 2, []string{"SET", "a", "z"}},     // physical 1's a: applies
				walRecord{14, 0, []string{"SWAPDB", "0", "3"}},  // logical 0 is physical 3, 3 is 2
				walRecord{15, 0, []string{"SET", "k", "old"}},   // physical 3's k, the heap's at 20: skipped
				walRecord{16, 3, []string{"FLUSHDB"}},           // physical 2
				walRecord{17, 0, []string{"FLUSHDB"}},           // physical 3: k, the heap's at 20, stays
				walRecord{21, 0, []string{"SET", "k", "new"}},   // applies
				walRecord{22, 0, []string{"SWAPDB", "1", "2"}},  // logical 1 is physical 1, 2 is 0
				walRecord{23, 1, []string{"APPEND", "a", "!"}},  // physical 1's a
				walRecord{24, 0, []string{"MOVE", "k", "2"}},    // physical 3's k to physical 0
				walRecord{25, 2, []string{"SWAPDB", "2", "2"}},  // nothing
				walRecord{26, 2, []string{"RENAME", "k", "kk"}}, // physical 0 (a legacy record: no key newer)
			)
			ks.EndLoad()
			if got, want := ks.DBMap(), []int{3, 1, 0, 2}; !slices.Equal(got, want) {
				t.Errorf("DBMap = %v, want %v", got, want)
			}
			if got, want := dumpAll(ks, startClock), []string{
				`1/"a"="z!" @-1`, `2/"a"="y" @-1`, `2/"kk"="new" @-1`,
			}; !slices.Equal(got, want) {
				t.Errorf("recovered %q, want %q", got, want)
			}
			if got, want := takeDirty(t, ks), []string{"0/a", "0/k", "0/kk", "1/a", "2/b", "3/k"}; !slices.Equal(got, want) {
				t.Errorf("dirty %q, want %q", got, want)
			}
		})
	}
}

// TestSwapDBSurvivesACrashMidCheckpoint is the crash that lost keys while
// heap keys named logical databases: a checkpoint C1 finalized with a, b
// in database 0 and c in 1; then SWAPDB 0 1. SWAPDB turned every key into
// a deleted pair (its record freed by the next checkpoint at once) and a
// new one (written by it), so a crash before C2 finalized, with the frees
// on disk and the new records not, lost a, b and c: the WAL from C1's redo
// point holds the SWAPDB, not the values. Now SWAPDB leaves every pair
// alone: C2 has only the keys written since to write, and every crash,
// whatever subset of C2's page writes reached the disk, recovers the
// keyspace.
func TestSwapDBSurvivesACrashMidCheckpoint(t *testing.T) {
	src := newTracked(t)
	src.script("SET a A", "OK", "SET b B PX 100000", "OK")
	src.selectDB(1)
	src.script("SET c C", "OK")
	m := newModelHeap()
	published := uint64(len(src.records)) + 1 // C1's redo point, the map the identity
	m.checkpoint(t, src.ks)
	disk := maps(m.recs)

	// Logical 1 becomes physical 0, and 0 becomes 1.
	src.script("SWAPDB 0 1", "OK", "SET d D", "OK", "DEL b", n(1))
	src.selectDB(0)
	src.script("SET e E", "OK")
	redo := uint64(len(src.records)) + 1 // C2 begins
	dbMap := src.ks.DBMap()
	if src.ks.IdentityDBMap() || !slices.Equal(dbMap[:2], []int{1, 0}) {
		t.Errorf("DBMap after SWAPDB 0 1 = %v", dbMap)
	}
	var pending []pageOp
	var names []string
	for _, k := range src.ks.TakeDirty() {
		names = append(names, pairName(t, k))
		v := src.ks.Version(k)
		switch {
		case v.Live:
			id := m.insert(v.Record)
			pending = append(pending, pageOp{id: id, insert: true, rec: m.recs[id]})
			src.ks.Placed(k, id, nil, true)
		case v.HasOld:
			m.free(t, v.Old) // a dead pair's record is freed at once
			pending = append(pending, pageOp{id: v.Old})
			src.ks.Placed(k, heap.RecordID{}, nil, false)
		}
	}
	slices.Sort(names)
	if want := []string{"0/b", "0/d", "1/e"}; !slices.Equal(names, want) {
		t.Errorf("C2 takes %q, want %q: SWAPDB dirties nothing", names, want)
	}
	// Crashes before C2 finalizes: any subset of its writes on disk, the
	// redo point C1's.
	for mask := range 1 << len(pending) {
		onDisk := maps(disk)
		for i, op := range pending {
			if mask&(1<<i) == 0 {
				continue
			}
			if op.insert {
				onDisk[op.id] = op.rec
			} else {
				delete(onDisk, op.id)
			}
		}
		var ids []heap.RecordID
		for id := range onDisk {
			ids = append(ids, id)
		}
		ks, _ := recoverModel(t, src, onDisk, ids, published, nil, false)
		if got, want := dumpAll(ks, src.clock), dumpAll(src.ks, src.clock); !slices.Equal(got, want) {
			t.Errorf("crash with writes %b of %d on disk: recovered\n%q\nwant\n%q", mask, len(pending), got, want)
		}
	}
	// A crash after C2 finalized: the map logged at its redo point is set.
	for _, op := range pending {
		if op.insert {
			disk[op.id] = op.rec
		} else {
			delete(disk, op.id)
		}
	}
	src.script("SET f F", "OK")
	var ids []heap.RecordID
	for id := range disk {
		ids = append(ids, id)
	}
	for _, mapFirst := range []bool{false, true} {
		ks, _ := recoverModel(t, src, disk, ids, redo, dbMap, mapFirst)
		if got, want := dumpAll(ks, src.clock), dumpAll(src.ks, src.clock); !slices.Equal(got, want) {
			t.Errorf("crash after C2 (map set first: %v): recovered\n%q\nwant\n%q", mapFirst, got, want)
		}
	}
}

func TestReplaySkipsRecordsAtOrBelowTheKeyLSN(t *testing.T) {
	dir := t.TempDir()
	ids, files := writeHeap(t, dir, nil,
		rec(0, "a", "A", 20, 0),
		rec(0, "b", "B", 10, 0),
		rec(0, "c", "C", 3, 0),
	)
	ks := NewKeyspace(16, func() int64 { return startClock })
	bootHeap(t, ks, dir, files, 5)
	steps := []struct {
		rec   walRecord
		reply string
	}{
		{walRecord{6, 0, []string{"SET", "a", "x"}}, "OK"},
		{walRecord{7, 0, []string{"DEL", "a", "c"}}, n(1)},
		{walRecord{8, 0, []string{"MSET", "a", "1", "b", "2", "d", "3"}}, "OK"},
		{walRecord{9, 0, []string{"PEXPIREAT", "b", "1"}}, "OK"},
		{walRecord{10, 0, []string{"SET", "b", "y"}}, "OK"},
		{walRecord{11, 0, []string{"SET", "b", "z"}}, "OK"},
		{walRecord{12, 0, []string{applyName, "DEL", "0", "a", "PUT", "0", "e", "0", "E", "0"}}, "OK"},
		{walRecord{13, 0, []string{applyName, "PUT", "0", "a", "0", "no", "0"}}, "OK"},
		{walRecord{14, 0, []string{"DEL", "a"}}, "OK"},
		{walRecord{15, 0, []string{"PERSIST", "a"}}, "OK"},
		{walRecord{16, 0, []string{"SET", "b", "w", "KEEPTTL"}}, "OK"},
		{walRecord{17, 0, []string{"PEXPIREAT", "b", itoa64(startClock + 50)}}, n(1)},
	}
	for _, s := range steps {
		var w resp.Writer
		args := make([][]byte, len(s.rec.args))
		for i, a := range s.rec.args {
			args[i] = []byte(a)
		}
		ks.Replay(s.rec.lsn, s.rec.db, args, &w)
		if got, _, _ := decodeReply(w.Buf); got != s.reply {
			t.Errorf("%d %q: reply %s, want %s", s.rec.lsn, s.rec.args, got, s.reply)
		}
	}
	ks.EndLoad()
	if got, want := dumpAll(ks, startClock), []string{
		`0/"a"="A" @-1`, `0/"b"="w" @1700000000050`, `0/"d"="3" @-1`, `0/"e"="E" @-1`,
	}; !slices.Equal(got, want) {
		t.Errorf("recovered %q, want %q", got, want)
	}
	if got, want := takeDirty(t, ks), []string{"0/b", "0/c", "0/d", "0/e"}; !slices.Equal(got, want) {
		t.Errorf("dirty %q, want %q", got, want)
	}
	expectVersion(t, ks, 0, "a", true, ids[0])
	expectVersion(t, ks, 0, "b", true, ids[1])
	expectVersion(t, ks, 0, "c", false, ids[2])
}

func TestReplayReportsBadRecords(t *testing.T) {
	ks := NewKeyspace(16, func() int64 { return startClock })
	dir := t.TempDir()
	_, files := writeHeap(t, dir, nil, rec(0, "a", "A", 20, 0))
	bootHeap(t, ks, dir, files, 5)
	for _, c := range []struct {
		db   int
		args []string
		want string
	}{
		{0, []string{"NOSUCH", "x"}, "(error) ERR unknown command 'NOSUCH', with args beginning with: 'x' "},
		{0, []string{"SET", "a"}, "(error) ERR wrong number of arguments for 'set' command"},
		{16, []string{"SET", "a", "b"}, "(error) " + errDBRange},
		{0, []string{"SWAPDB", "0", "16"}, "(error) " + errDBRange},
		{0, []string{"FLUSHALL", "NOW"}, "(error) " + errSyntax},
		{0, []string{applyName, "PUT", "0", "a"}, "(error) " + errSyntax},
		{0, []string{applyName, "PUT", "0", "k", "0", "v", "0", "DEL", "99", "x"}, "(error) " + errDBRange},
		{0, []string{applyName, "PUT", "0", "k", "9", "v", "0"}, "(error) ERR keyspace: cannot decode a value of kind 9 (unknown)"},
		{0, []string{applyName, "PUT", "0", "k", "0", "v", "-1"}, "(error) ERR invalid expire time in 'moond.apply' command"},
		{0, []string{applyName}, "(error) ERR wrong number of arguments for 'moond.apply' command"},
		{0, []string{applyName, "PUT", "0", "k", "0", "v", "0", "CMD", "0", "3", "GET", "k"}, "(error) " + errSyntax},
		{0, []string{applyName, "PUT", "0", "k", "0", "v", "0", "CMD", "0", "2", "GET", "k"}, "(error) ERR MOOND.APPLY CMD runs only single-key writes, not 'GET'"},
		{0, []string{applyName, "PUT", "0", "k", "0", "v", "0", "CMD", "0", "3", "MSET", "k", "v"}, "(error) ERR MOOND.APPLY CMD runs only single-key writes, not 'MSET'"},
		{0, []string{applyName, "CMD", "0", "2", "APPEND", "k"}, "(error) ERR MOOND.APPLY CMD runs only single-key writes, not 'APPEND'"},
	} {
		args := make([][]byte, len(c.args))
		for i, a := range c.args {
			args[i] = []byte(a)
		}
		var w resp.Writer
		ks.Replay(30, c.db, args, &w)
		if got, _, _ := decodeReply(w.Buf); got != c.want {
			t.Errorf("%d %q: %s, want %s", c.db, c.args, got, c.want)
		}
	}
	if ks.DBSize(0) != 1 {
		t.Error("a refused MOOND.APPLY applied some of its ops")
	}
}

func TestMoondApplyIsOnlyForReplay(t *testing.T) {
	if Lookup([]byte("MOOND.APPLY")) != nil || Lookup([]byte("moond.apply")) != nil {
		t.Error("MOOND.APPLY is in the command table")
	}
	for _, s := range Specs() {
		if strings.Contains(s.Name, "apply") {
			t.Errorf("Specs lists %s", s.Name)
		}
	}
	h := newHarness(t)
	h.expectArgs("(error) ERR unknown command 'MOOND.APPLY', with args beginning with: 'PUT' '0' 'k' '0' 'v' '0' ",
		"MOOND.APPLY", "PUT", "0", "k", "0", "v", "0")
	h.expectArgs("(error) ERR unknown command 'moond.apply', with args beginning with: ", "moond.apply")
	h.expect("DBSIZE", n(0))
	h.ks.Loading = true
	h.expectArgs("OK", "moond.apply", "PUT", "0", "k", "0", "12", itoa64(startClock-5), "put", "2", "k", "0", "v", "0")
	h.expectArgs("OK", "MOOND.APPLY", "DEL", "2", "k", "DEL", "2", "nokey")
	h.expectArgs("OK", "MOOND.APPLY", "CMD", "0", "3", "APPEND", "s", "ab", "CMD", "1", "4", "SETRANGE", "s", "1", "z")
	h.expect("GET s", q("ab"))
	h.selectDB(1)
	h.expect("GET s", q("\x00z"))
	h.selectDB(0)
	h.expect("OBJECT ENCODING k", q("int"))
	h.expect("PEXPIRETIME k", n(startClock-5)) // stored although past, as loading does
	h.ks.Loading = false
	h.expect("EXISTS k", n(0)) // its time has come once loading ended
	h.selectDB(2)
	h.expect("EXISTS k", n(0))
}

// TestRecoveryOverAFuzzyHeapRandomized runs random commands on a source
// keyspace whose checkpoints (taken a few keys at a time between commands,
// with the deferred frees of the real checkpoint) write into a model heap,
// and at random points crashes: the disk holds the last finalized state
// plus any subset of the page writes made since. Recovery (the disk
// loaded in any order, the database map that the checkpoint of the
// published redo point logged set, then Replay from that redo point) must
// rebuild the source's keyspace exactly, and the checkpoint after it must
// bring the heap to the keyspace again.
//
// SWAPDB is in: it moves no key between heap pairs (they name physical
// databases), so its record needs no values; the map at the redo point
// and the SWAPDB records above it rebuild which logical index each
// physical database has.
func TestRecoveryOverAFuzzyHeapRandomized(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			testFuzzyRecovery(t, seed, 20000)
		})
	}
}

// pageOp is a change to the heap not yet on disk: an insert, or a free.
type pageOp struct {
	id     heap.RecordID
	insert bool
	rec    heap.Record
}

func testFuzzyRecovery(t *testing.T, seed uint64, steps int) {
	src := newTracked(t)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b9))
	m := newModelHeap()                     // the heap in memory
	disk := map[heap.RecordID]heap.Record{} // what finalized checkpoints made durable
	var pending []pageOp                    // changes since
	published := uint64(1)                  // the redo point the control file holds
	var keys [][]byte                       // the running checkpoint's keys
	var redo uint64
	var deferred []heap.RecordID // the running checkpoint's deferred frees
	// The database map each checkpoint logged at its redo point, when it
	// was not the identity: the WAL record at LSN redo, which the real
	// checkpoint appends at Begin. (Here it takes no LSN of its own: the
	// map is the state before the data record at redo, as it is before
	// the ones after the map's record.)
	dbMaps := map[uint64][]int{}
	running := false
	crashes := 0

	write := func(k []byte) {
		v := src.ks.Version(k)
		if v.Live {
			id := m.insert(v.Record)
			pending = append(pending, pageOp{id: id, insert: true, rec: m.recs[id]})
			if v.HasOld {
				deferred = append(deferred, v.Old)
			}
			src.ks.Placed(k, id, nil, true)
			return
		}
		if v.HasOld {
			m.free(t, v.Old)
			pending = append(pending, pageOp{id: v.Old})
		}
		src.ks.Placed(k, heap.RecordID{}, nil, false)
	}
	apply := func(d map[heap.RecordID]heap.Record, op pageOp) {
		if op.insert {
			d[op.id] = op.rec
		} else {
			delete(d, op.id)
		}
	}
	crash := func() {
		crashes++
		onDisk := maps(disk)
		for _, op := range pending {
			if rng.IntN(2) == 0 {
				apply(onDisk, op)
			}
		}
		ids := make([]heap.RecordID, 0, len(onDisk))
		for id := range onDisk {
			ids = append(ids, id)
		}
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		ks, m2 := recoverModel(t, src, onDisk, ids, published, dbMaps[published], rng.IntN(2) == 0)
		m2.next = m.next
		if got, want := dumpAll(ks, src.clock), dumpAll(src.ks, src.clock); !slices.Equal(got, want) {
			t.Fatalf("crash %d (redo %d, LSN %d): recovered\n%q\nwant\n%q", crashes, published, len(src.records), got, want)
		}
		// The next checkpoint writes what the heap lacks: after it the
		// heap holds exactly the keyspace.
		setLastLSN(ks, logOf(src.ks).LastLSN)
		checkOwnership(t, ks, m2)
		m2.checkpoint(t, ks)
		checkHeapMatches(t, ks, m2, src.clock)
	}

	for i := range steps {
		runRandomCommand(src, rng)
		switch {
		case running && len(keys) > 0:
			for range 1 + rng.IntN(3) {
				if len(keys) > 0 {
					write(keys[0])
					keys = keys[1:]
				}
			}
		case running:
			// Finalize: every page written and fsynced, the redo point
			// published; then the deferred frees are released (their
			// pages go out with the next checkpoint).
			for _, op := range pending {
				apply(disk, op)
			}
			pending = nil
			published = redo
			for _, id := range deferred {
				m.free(t, id)
				pending = append(pending, pageOp{id: id})
			}
			deferred = nil
			running = false
		case rng.IntN(40) == 0:
			running = true
			redo = uint64(len(src.records)) + 1
			if !src.ks.IdentityDBMap() {
				dbMaps[redo] = src.ks.DBMap()
			}
			keys = src.ks.TakeDirty()
		}
		if i%(steps/100) == steps/200 {
			crash()
		}
	}
	crash()
}

// recoverModel recovers src's keyspace from a model disk, as the server
// does: BeginLoad at the redo point, the records of onDisk loaded in the
// order of ids, the database map that the checkpoint logged at the redo
// point set (none if nil; before the records if mapFirst, else after:
// LoadRecord does not depend on it), src's journal replayed from the redo
// point, EndLoad. It returns the keyspace and the model heap of onDisk,
// whose deferred frees are the superseded records.
func recoverModel(t *testing.T, src *harness, onDisk map[heap.RecordID]heap.Record, ids []heap.RecordID,
	redo uint64, dbMap []int, mapFirst bool) (*Keyspace, *modelHeap) {
	t.Helper()
	ks := NewKeyspace(16, func() int64 { return src.clock })
	ks.BeginLoad(redo, func(id heap.RecordID) (uint64, error) { return onDisk[id].KeyLSN, nil })
	setMap := func() {
		if dbMap != nil {
			if err := ks.SetDBMap(dbMap); err != nil {
				t.Fatal(err)
			}
		}
	}
	if mapFirst {
		setMap()
	}
	m := newModelHeap()
	for _, id := range ids {
		r := onDisk[id]
		m.recs[id] = r
		sup, dup, err := ks.loadRecord(r.Key, id, heap.RecordHead{Kind: r.Kind, Expiry: r.Expiry, KeyLSN: r.KeyLSN}, r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if dup {
			m.deferred = append(m.deferred, sup)
		}
	}
	if !mapFirst {
		setMap()
	}
	for i, r := range src.records {
		if lsn := uint64(i + 1); lsn >= redo {
			replay(t, ks, walRecord{lsn, r.db, r.args})
		}
	}
	ks.EndLoad()
	return ks, m
}

func maps(m map[heap.RecordID]heap.Record) map[heap.RecordID]heap.Record {
	c := make(map[heap.RecordID]heap.Record, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// The shard loads through QueueRecord and FlushLoad, in batches: the same
// keys, values, locations and superseded versions as LoadRecord, with the
// two versions of a key in one batch or in two.
func TestQueuedLoadIsLoadRecordInBatches(t *testing.T) {
	dir := t.TempDir()
	var recs []heap.Record
	for i := range 3*loadBatch + 5 {
		j := i % (2 * loadBatch) // past 2*loadBatch: second versions
		recs = append(recs, rec(j%3, fmt.Sprint("k", j), fmt.Sprint("v", i), uint64(i+1), 0))
	}
	_, files := writeHeap(t, dir, nil, recs...)
	load := func(queued bool) ([]string, []string) {
		ks := NewKeyspace(16, func() int64 { return startClock })
		sup, _ := bootHeapWith(t, ks, dir, files, 1, queued)
		ks.EndLoad()
		var s []string
		for _, id := range sup {
			s = append(s, id.String())
		}
		slices.Sort(s)
		return dumpAll(ks, startClock), s
	}
	keys, sup := load(false)
	qkeys, qsup := load(true)
	if !slices.Equal(keys, qkeys) || !slices.Equal(sup, qsup) {
		t.Fatalf("queued load: keys %q superseded %q\nLoadRecord: keys %q superseded %q", qkeys, qsup, keys, sup)
	}
	if len(sup) == 0 {
		t.Fatal("no version superseded: the test tests nothing")
	}
}
