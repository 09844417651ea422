package keyspace

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/checkpoint"
	"github.com/moond-db/moond/persistence/heap"
)

// The keyspace implements the checkpoint's Source.
var _ checkpoint.Source = (*Keyspace)(nil)

// newTracked returns a harness whose keyspace tracks dirty keys, with a
// WAL whose LSN is the number of journal records so far.
func newTracked(t testing.TB) *harness {
	h := newHarness(t)
	h.recordJournal()
	h.ks.TrackDirty = true
	setLastLSN(h.ks, func() uint64 { return uint64(len(h.records)) })
	return h
}

// hk is the heap key of key in database db, a physical id (the logical
// index too, until a SWAPDB).
func hk(db int, key string) []byte { return AppendHeapKey(nil, db, []byte(key)) }

// pairName shows a heap key as "db/key".
func pairName(t testing.TB, k []byte) string {
	t.Helper()
	db, key, err := DecodeHeapKey(k)
	if err != nil {
		t.Fatalf("TakeDirty returned a bad heap key %x: %v", k, err)
	}
	return fmt.Sprintf("%d/%s", db, key)
}

// takeDirty returns TakeDirty's pairs as sorted "db/key" names, and fails
// the test if one is there twice.
func takeDirty(t testing.TB, ks *Keyspace) []string {
	t.Helper()
	var out []string
	for _, k := range ks.TakeDirty() {
		out = append(out, pairName(t, k))
	}
	slices.Sort(out)
	if c := slices.Compact(slices.Clone(out)); len(c) != len(out) {
		t.Fatalf("TakeDirty returned a pair twice: %q", out)
	}
	return out
}

// modelHeap stands for the heap: records by RecordID.
type modelHeap struct {
	recs     map[heap.RecordID]heap.Record
	next     uint32
	file     uint32 // the file new records go to (1 if 0)
	deferred []heap.RecordID
}

func newModelHeap() *modelHeap { return &modelHeap{recs: map[heap.RecordID]heap.Record{}} }

func (m *modelHeap) insert(r heap.Record) heap.RecordID {
	m.next++
	file := max(m.file, 1)
	id := heap.RecordID{File: file, Page: m.next / 100, Slot: uint16(m.next % 100)}
	r.Key = slices.Clone(r.Key)
	r.Value = slices.Clone(r.Value)
	m.recs[id] = r
	return id
}

func (m *modelHeap) free(t testing.TB, id heap.RecordID) {
	t.Helper()
	if _, ok := m.recs[id]; !ok {
		t.Fatalf("free of %v, which holds no record", id)
	}
	delete(m.recs, id)
}

// write writes key k's current version as the checkpoint does.
func (m *modelHeap) write(t testing.TB, ks *Keyspace, k []byte) {
	t.Helper()
	v := ks.Version(k)
	if v.Live {
		if v.Record.KeyLSN == 0 {
			t.Fatalf("%s: version with key LSN 0", pairName(t, k))
		}
		if string(v.Record.Key) != string(k) {
			t.Fatalf("%s: version of another key %x", pairName(t, k), v.Record.Key)
		}
		id := m.insert(v.Record)
		if v.HasOld {
			m.deferred = append(m.deferred, v.Old)
		}
		ks.Placed(k, id, nil, true)
		return
	}
	if v.HasOld {
		m.free(t, v.Old)
	}
	ks.Placed(k, heap.RecordID{}, nil, false)
}

// checkpoint runs a whole checkpoint: every dirty key written, then the
// deferred frees released.
func (m *modelHeap) checkpoint(t testing.TB, ks *Keyspace) {
	t.Helper()
	for _, k := range ks.TakeDirty() {
		m.write(t, ks, k)
	}
	m.release(t)
}

func (m *modelHeap) release(t testing.TB) {
	t.Helper()
	for _, id := range m.deferred {
		m.free(t, id)
	}
	m.deferred = nil
}

// dump shows the heap's records not expired at now as "db/key" -> "value
// @expiry" (-1 for none), as dumpKeyspace shows keys: db is the logical
// index that dbMap (a DBMap) gives the record's physical database. (A key
// that expired keeps its record until it is deleted and that is
// checkpointed.)
func (m *modelHeap) dump(t testing.TB, dbMap []int, now int64) map[string]string {
	t.Helper()
	logical := make([]int, len(dbMap))
	for i, p := range dbMap {
		logical[p] = i
	}
	out := map[string]string{}
	for id, r := range m.recs {
		db, key, err := DecodeHeapKey(r.Key)
		if err != nil {
			t.Fatalf("record %v: %v", id, err)
		}
		name := fmt.Sprintf("%d/%q", logical[db], key)
		if _, ok := out[name]; ok {
			t.Fatalf("two records of %s", name)
		}
		when := r.Expiry
		if when == 0 {
			when = -1
		} else if now > when {
			continue
		}
		out[name] = fmt.Sprintf("%q @%d", r.Value, when)
	}
	return out
}

// checkOwnership checks that every record of m is held by exactly one
// key location, grave or deferred free, and that each of those names a
// record of its own pair (physical database, key). It checks the
// database map too: a permutation, each database at its physical id in
// pdbs.
func checkOwnership(t testing.TB, ks *Keyspace, m *modelHeap) {
	t.Helper()
	for p, d := range ks.pdbs {
		if d.phys != p {
			t.Fatalf("database %d of pdbs has physical id %d", p, d.phys)
		}
	}
	for i, p := range ks.DBMap() {
		if ks.dbs[i] != ks.pdbs[p] {
			t.Fatalf("logical database %d is not physical database %d, as DBMap says", i, p)
		}
	}
	if got := ks.DBMap(); slices.Equal(got, identityMap(len(got))) != ks.IdentityDBMap() {
		t.Fatalf("IdentityDBMap = %v with DBMap %v", ks.IdentityDBMap(), got)
	}
	owners := map[heap.RecordID]string{}
	own := func(id heap.RecordID, who string, db int, key string) {
		if prev, ok := owners[id]; ok {
			t.Fatalf("record %v held by %s and by %s", id, prev, who)
		}
		owners[id] = who
		r, ok := m.recs[id]
		if !ok {
			t.Fatalf("%s holds %v, which is not a record", who, id)
		}
		if db >= 0 && string(r.Key) != string(hk(db, key)) {
			rdb, rkey, _ := DecodeHeapKey(r.Key)
			t.Fatalf("%s (pair %d/%q) holds %v, the record of %d/%q", who, db, key, id, rdb, rkey)
		}
	}
	for _, d := range ks.pdbs {
		d.keys.each(func(sl *slot[entry]) {
			if id, ok := ks.slotLoc(d.phys, sl); ok {
				own(id, fmt.Sprintf("key %d/%q", d.phys, sl.key()), d.phys, sl.key())
			}
		})
	}
	for p, id := range ks.src.graves {
		own(id, fmt.Sprintf("grave %d/%q", p.db, p.key), p.db, p.key)
		d, key := ks.pdbs[p.db], unsafeBytes(p.key)
		if sl := d.keys.find(d.keys.hash(key), key); sl != nil {
			if _, ok := ks.slotLoc(p.db, sl); ok {
				t.Fatalf("pair %d/%q has a location and a grave", p.db, p.key)
			}
		}
	}
	for _, id := range m.deferred {
		own(id, "a deferred free", -1, "")
	}
	for id := range m.recs {
		if _, ok := owners[id]; !ok {
			t.Fatalf("record %v (%x) is held by nothing: it would never be freed", id, m.recs[id].Key)
		}
	}
}

// checkHeapMatches checks, after a whole checkpoint with nothing changed
// since, that the heap holds exactly the live keys.
func checkHeapMatches(t testing.TB, ks *Keyspace, m *modelHeap, now int64) {
	t.Helper()
	want, got := dumpKeyspace(ks, now), m.dump(t, ks.DBMap(), now)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("key %s: %s, heap has %q", k, v, got[k])
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("heap has %s (%s), the keyspace does not", k, v)
		}
	}
	checkOwnership(t, ks, m)
	if len(ks.src.graves) != 0 {
		t.Errorf("graves left after a whole checkpoint: %v", ks.src.graves)
	}
}

func TestDirtyTrackingIsOffUnlessAskedFor(t *testing.T) {
	h := newHarness(t)
	h.script("SET a 1", "OK", "INCR a", n(2), "APPEND s x", n(1), "EXPIRE s 10", n(1),
		"RENAME s t", "OK", "DEL a", n(1), "SWAPDB 0 1", "OK", "FLUSHALL", "OK", "SET b 1", "OK")
	if len(h.ks.src.dirty) != 0 || h.ks.DirtyKeys() != 0 || len(h.ks.src.graves) != 0 {
		t.Errorf("untracked keyspace listed %d pairs, %d graves", len(h.ks.src.dirty), len(h.ks.src.graves))
	}
	h.ks.dbs[0].keys.each(func(sl *slot[entry]) {
		if sl.v.loc != 0 {
			t.Errorf("key %q has location word %x", sl.key(), sl.v.loc)
		}
	})
}

func TestTakeDirtyReturnsEachChangedPairOnce(t *testing.T) {
	h := newTracked(t)
	h.script(
		"SET a 1", "OK", "SET a 2", "OK", "INCR a", n(3), "APPEND s x", n(1), "SETRANGE s 3 y", n(4),
		"SET e v", "OK", "EXPIRE e 100", n(1), "PERSIST e", n(1),
		"DEL a", n(1), "SET a 3", "OK", "DEL a", n(1), "SET a 4", "OK",
		"GET b", "(nil)", "DEL nokey", n(0), "SET n 1 NX", "OK", "SET n 2 NX", "(nil)",
	)
	h.selectDB(2)
	h.script("SET x 1", "OK", "INCRBYFLOAT f 1.5", q("1.5"))
	if got, want := takeDirty(t, h.ks), []string{"0/a", "0/e", "0/n", "0/s", "2/f", "2/x"}; !slices.Equal(got, want) {
		t.Errorf("TakeDirty = %q, want %q", got, want)
	}
	if got := takeDirty(t, h.ks); len(got) != 0 {
		t.Errorf("second TakeDirty = %q, want nothing", got)
	}
	h.script("GET x", q("1"), "EXISTS x", n(1), "TTL x", n(-1), "TOUCH x", n(1), "SET x 2 XX", "OK")
	if got, want := takeDirty(t, h.ks), []string{"2/x"}; !slices.Equal(got, want) {
		t.Errorf("after reads and SET XX: TakeDirty = %q, want %q", got, want)
	}
	// A key deleted and not re-created is listed once too.
	h.script("SET d 1", "OK", "DEL d", n(1), "SET d 2", "OK", "DEL d", n(1))
	if got, want := takeDirty(t, h.ks), []string{"2/d"}; !slices.Equal(got, want) {
		t.Errorf("after churn: TakeDirty = %q, want %q", got, want)
	}
}

func TestTakeDirtyListsExpiredKeys(t *testing.T) {
	h := newTracked(t)
	h.script("SET a v PX 10", "OK", "SET b v PX 10", "OK")
	takeDirty(t, h.ks)
	h.advance(20)
	h.expect("GET a", "(nil)") // lazy expiry
	h.ks.ActiveExpire(time.Second)
	if got, want := takeDirty(t, h.ks), []string{"0/a", "0/b"}; !slices.Equal(got, want) {
		t.Errorf("TakeDirty = %q, want %q", got, want)
	}
}

func TestDirtyListStaysSmallUnderChurn(t *testing.T) {
	h := newTracked(t)
	for i := range 50000 {
		h.do("SET", "lock", itoa(i))
		h.do("DEL", "lock")
		h.do("SET", fmt.Sprint("k", i%10), "v")
	}
	if len(h.ks.src.dirty) > 4096 {
		t.Errorf("100000 creations of 11 keys left %d entries in the dirty list", len(h.ks.src.dirty))
	}
	// "lock" came and went with no record in the heap: the compaction
	// forgets its pair (dedupeDirty), which leaves the 10 keys.
	if got := h.ks.DirtyKeys(); got != 10 {
		t.Errorf("DirtyKeys = %d, want 10", got)
	}
	if got := takeDirty(t, h.ks); len(got) != 10 {
		t.Errorf("TakeDirty = %q, want 10 pairs", got)
	}
}

func TestDirtyKeysCountsPairs(t *testing.T) {
	h := newTracked(t)
	h.script("SET a 1", "OK", "SET b 1", "OK", "DEL a", n(1), "SET a 2", "OK", "DEL c", n(0), "INCR b", n(2))
	if got := h.ks.DirtyKeys(); got != 2 {
		t.Errorf("DirtyKeys = %d, want 2", got)
	}
	takeDirty(t, h.ks)
	if got := h.ks.DirtyKeys(); got != 0 {
		t.Errorf("DirtyKeys after TakeDirty = %d, want 0", got)
	}
}

func TestFirstTakeDirtySweepsKeysMadeWithoutTracking(t *testing.T) {
	h := newTracked(t)
	h.ks.TrackDirty = false
	h.script("SET a 1", "OK", "SET b 1", "OK")
	h.ks.TrackDirty = true
	h.script("SET c 1", "OK", "SET b 2", "OK")
	if got, want := takeDirty(t, h.ks), []string{"0/a", "0/b", "0/c"}; !slices.Equal(got, want) {
		t.Errorf("TakeDirty = %q, want %q", got, want)
	}
	h.script("SET d 1", "OK")
	if got, want := takeDirty(t, h.ks), []string{"0/d"}; !slices.Equal(got, want) {
		t.Errorf("second TakeDirty = %q, want %q", got, want)
	}
}

func TestVersionReportsTheCurrentState(t *testing.T) {
	h := newTracked(t)
	h.script("SET a v PX 1000", "OK", "INCR n", n(1), "APPEND s ab", n(2))
	v := h.ks.Version(hk(0, "a"))
	if !v.Live || v.HasOld || v.Record.Kind != uint8(KindString) || string(v.Record.Value) != "v" ||
		v.Record.Expiry != h.clock+1000 || v.Record.KeyLSN != 3 || string(v.Record.Key) != string(hk(0, "a")) {
		t.Errorf("Version(a) = %+v", v)
	}
	if v := h.ks.Version(hk(0, "n")); !v.Live || string(v.Record.Value) != "1" || v.Record.Expiry != 0 {
		t.Errorf("Version(n) = %+v", v)
	}
	if v := h.ks.Version(hk(0, "s")); !v.Live || string(v.Record.Value) != "ab" {
		t.Errorf("Version(s) = %+v", v)
	}
	if v := h.ks.Version(hk(0, "missing")); v.Live || v.HasOld || v.DelLSN != 3 {
		t.Errorf("Version(missing) = %+v", v)
	}
	if v := h.ks.Version(hk(99, "a")); v.Live || v.HasOld {
		t.Errorf("Version of a database out of range = %+v", v)
	}
	if v := h.ks.Version([]byte{0x80}); v.Live || v.HasOld {
		t.Errorf("Version of a malformed heap key = %+v", v)
	}
	// A key whose time has come but that no command deleted yet is live,
	// with its past expiry, and left in place.
	h.advance(1001)
	if v := h.ks.Version(hk(0, "a")); !v.Live || v.Record.Expiry != h.clock-1 || string(v.Record.Value) != "v" {
		t.Errorf("Version(expired a) = %+v", v)
	}
	if h.ks.DBSize(0) != 3 {
		t.Errorf("Version deleted the expired key")
	}
}

func TestPlacedKeepsTheLocationAndDeletionMakesAGrave(t *testing.T) {
	h := newTracked(t)
	m := newModelHeap()
	h.script("SET a 1", "OK")
	m.checkpoint(t, h.ks)
	v := h.ks.Version(hk(0, "a"))
	if !v.HasOld || m.recs[v.Old].Value == nil || string(m.recs[v.Old].Value) != "1" {
		t.Fatalf("after a checkpoint Version(a).Old = %v (%v)", v.Old, v.HasOld)
	}
	first := v.Old
	h.script("SET a 2", "OK")
	m.checkpoint(t, h.ks)
	v = h.ks.Version(hk(0, "a"))
	if v.Old == first || string(m.recs[v.Old].Value) != "2" {
		t.Fatalf("after the second checkpoint a is at %v, %q", v.Old, m.recs[v.Old].Value)
	}
	second := v.Old
	h.script("DEL a", n(1))
	if v := h.ks.Version(hk(0, "a")); v.Live || !v.HasOld || v.Old != second {
		t.Errorf("Version(deleted a) = %+v, want the grave %v", v, second)
	}
	// A key made again on the pair reports the grave as its old version.
	h.script("SET a 3", "OK")
	if v := h.ks.Version(hk(0, "a")); !v.Live || !v.HasOld || v.Old != second {
		t.Errorf("Version(re-created a) = %+v, want Old %v", v, second)
	}
	if got, want := takeDirty(t, h.ks), []string{"0/a"}; !slices.Equal(got, want) {
		t.Errorf("TakeDirty = %q, want %q", got, want)
	}
	m.write(t, h.ks, hk(0, "a"))
	m.release(t)
	if v := h.ks.Version(hk(0, "a")); !v.HasOld || v.Old == second || string(m.recs[v.Old].Value) != "3" {
		t.Errorf("after Placed: Version(a) = %+v", v)
	}
	checkHeapMatches(t, h.ks, m, h.clock)
	// Deleted and placed as such: nothing is left.
	h.script("DEL a", n(1))
	m.checkpoint(t, h.ks)
	if v := h.ks.Version(hk(0, "a")); v.HasOld {
		t.Errorf("Version(a) after its deletion was placed = %+v", v)
	}
	checkHeapMatches(t, h.ks, m, h.clock)
}

// TestExpiredKeyIsWrittenUntilItIsDeleted: a key whose time came is
// written as it is, past expiry included, until a command deletes it (a
// DEL in the WAL); then its record is freed.
func TestExpiredKeyIsWrittenUntilItIsDeleted(t *testing.T) {
	h := newTracked(t)
	m := newModelHeap()
	h.script("SET a 1 PX 10", "OK")
	m.checkpoint(t, h.ks)
	h.script("PEXPIRE a 5", n(1)) // dirty again
	h.advance(20)
	m.checkpoint(t, h.ks)
	if len(m.recs) != 1 {
		t.Fatalf("heap %v, want the expired key's version", m.recs)
	}
	for _, r := range m.recs {
		if r.Expiry != h.clock-15 {
			t.Errorf("expired key written with expiry %d, want %d", r.Expiry, h.clock-15)
		}
	}
	checkHeapMatches(t, h.ks, m, h.clock)
	h.expect("GET a", "(nil)") // deleted: its record goes to the grave
	m.checkpoint(t, h.ks)
	if len(m.recs) != 0 {
		t.Errorf("the deleted key's record was not freed: %v", m.recs)
	}
	checkHeapMatches(t, h.ks, m, h.clock)
}

// TestKeysNeverCarryTheirRecordToAnotherPair runs each command that moves a
// key or replaces one over keys that have heap records, then a whole
// checkpoint, and checks that the heap holds exactly the keyspace and that
// every record is held by its own pair.
func TestKeysNeverCarryTheirRecordToAnotherPair(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []string
		check func(t *testing.T, h *harness, before map[string]heap.RecordID)
	}{
		{"RENAME", []string{"RENAME a b"}, func(t *testing.T, h *harness, before map[string]heap.RecordID) {
			expectVersion(t, h.ks, 0, "a", false, before["0/a"])
			expectVersion(t, h.ks, 0, "b", true, before["0/b"])
		}},
		{"RENAME onto nothing", []string{"RENAME a z"}, func(t *testing.T, h *harness, before map[string]heap.RecordID) {
			expectVersion(t, h.ks, 0, "a", false, before["0/a"])
			expectVersion(t, h.ks, 0, "z", true, heap.RecordID{})
		}},
		{"RENAMENX", []string{"RENAMENX a z"}, nil},
		{"COPY REPLACE", []string{"COPY a b REPLACE"}, func(t *testing.T, h *harness, before map[string]heap.RecordID) {
			expectVersion(t, h.ks, 0, "a", true, before["0/a"])
			expectVersion(t, h.ks, 0, "b", true, before["0/b"])
		}},
		{"COPY to another db", []string{"COPY a a DB 1 REPLACE"}, func(t *testing.T, h *harness, before map[string]heap.RecordID) {
			expectVersion(t, h.ks, 1, "a", true, before["1/a"])
		}},
		{"MOVE", []string{"MOVE b 2"}, func(t *testing.T, h *harness, before map[string]heap.RecordID) {
			expectVersion(t, h.ks, 0, "b", false, before["0/b"])
			expectVersion(t, h.ks, 2, "b", true, heap.RecordID{})
		}},
		{"MOVE back", []string{"MOVE b 2", "SELECT 2", "MOVE b 0"}, func(t *testing.T, h *harness, before map[string]heap.RecordID) {
			expectVersion(t, h.ks, 0, "b", true, before["0/b"])
			expectVersion(t, h.ks, 2, "b", false, heap.RecordID{})
		}},
		{"DEL", []string{"DEL a b c"}, nil},
		{"expiry", []string{"PEXPIRE a 1", "ADVANCE", "GET a"}, func(t *testing.T, h *harness, before map[string]heap.RecordID) {
			expectVersion(t, h.ks, 0, "a", false, before["0/a"])
		}},
		{"FLUSHDB", []string{"FLUSHDB"}, func(t *testing.T, h *harness, before map[string]heap.RecordID) {
			expectVersion(t, h.ks, 0, "b", false, before["0/b"])
			expectVersion(t, h.ks, 1, "b", true, before["1/b"])
		}},
		{"FLUSHALL", []string{"FLUSHALL"}, func(t *testing.T, h *harness, before map[string]heap.RecordID) {
			expectVersion(t, h.ks, 1, "a", false, before["1/a"])
		}},
		{"SWAPDB", []string{"SWAPDB 0 1"}, func(t *testing.T, h *harness, before map[string]heap.RecordID) {
			// No key changes pair: the pairs name physical databases.
			expectUnchanged(t, h.ks, before)
			if got := h.ks.DirtyKeys(); got != 0 || len(h.ks.src.graves) != 0 {
				t.Errorf("DirtyKeys = %d, graves %v, want none", got, h.ks.src.graves)
			}
			if got, want := h.ks.DBMap(), []int{1, 0, 2}; !slices.Equal(got[:3], want) {
				t.Errorf("DBMap = %v, want %v...", got, want)
			}
			h.script("GET a", q("a1"), "GET d", q("d1"), "EXISTS c", n(0))
		}},
		{"SWAPDB twice", []string{"SWAPDB 0 1", "SWAPDB 1 0"}, func(t *testing.T, h *harness, before map[string]heap.RecordID) {
			expectUnchanged(t, h.ks, before)
			if !h.ks.IdentityDBMap() {
				t.Errorf("DBMap = %v after swapping back", h.ks.DBMap())
			}
		}},
		{"SWAPDB then re-create", []string{"SWAPDB 0 1", "SET c again"}, func(t *testing.T, h *harness, before map[string]heap.RecordID) {
			expectVersion(t, h.ks, 0, "c", true, before["0/c"]) // untouched, at logical 1
			expectVersion(t, h.ks, 1, "c", true, heap.RecordID{})
			if got := h.ks.DirtyKeys(); got != 1 {
				t.Errorf("DirtyKeys = %d, want 1 (1/c)", got)
			}
		}},
		{"SWAPDB then FLUSHDB", []string{"SWAPDB 0 2", "SELECT 2", "FLUSHDB"}, func(t *testing.T, h *harness, before map[string]heap.RecordID) {
			// Logical 2 is physical 0: its keys leave their records to graves.
			expectVersion(t, h.ks, 0, "a", false, before["0/a"])
			expectVersion(t, h.ks, 0, "c", false, before["0/c"])
			expectVersion(t, h.ks, 1, "a", true, before["1/a"])
		}},
		{"SWAPDB then MOVE", []string{"SWAPDB 0 1", "MOVE d 1"}, func(t *testing.T, h *harness, before map[string]heap.RecordID) {
			// From logical 0 (physical 1) to logical 1 (physical 0).
			expectVersion(t, h.ks, 1, "d", false, before["1/d"])
			expectVersion(t, h.ks, 0, "d", true, heap.RecordID{})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newTracked(t)
			m := newModelHeap()
			h.script("SET a a0", "OK", "SET b b0 PX 100000", "OK", "SET c c0", "OK")
			h.selectDB(1)
			h.script("SET a a1", "OK", "SET b b1", "OK", "SET d d1", "OK")
			h.selectDB(0)
			m.checkpoint(t, h.ks)
			before := map[string]heap.RecordID{}
			for _, p := range []string{"0/a", "0/b", "0/c", "1/a", "1/b", "1/d"} {
				var db int
				var key string
				fmt.Sscanf(p, "%d/%s", &db, &key)
				before[p] = h.ks.Version(hk(db, key)).Old
			}
			for _, line := range c.lines {
				switch {
				case line == "ADVANCE":
					h.advance(10)
				case strings.HasPrefix(line, "SELECT "):
					h.selectDB(int(line[len(line)-1] - '0'))
				default:
					if got := h.run(line); strings.HasPrefix(got, "(error)") {
						t.Fatalf("%s: %s", line, got)
					}
				}
			}
			checkOwnership(t, h.ks, m)
			if c.check != nil {
				c.check(t, h, before)
			}
			m.checkpoint(t, h.ks)
			checkHeapMatches(t, h.ks, m, h.clock)
		})
	}
}

// expectUnchanged checks that every pair of before ("db/key" → Old, all
// live) is live and still has its record.
func expectUnchanged(t *testing.T, ks *Keyspace, before map[string]heap.RecordID) {
	t.Helper()
	for p, id := range before {
		db, key, _ := strings.Cut(p, "/")
		expectVersion(t, ks, int(db[0]-'0'), key, true, id)
	}
}

// expectVersion checks a pair's Version: live or not, and its Old (none
// when old is the zero RecordID). db is a physical id.
func expectVersion(t *testing.T, ks *Keyspace, db int, key string, live bool, old heap.RecordID) {
	t.Helper()
	v := ks.Version(hk(db, key))
	if v.Live != live || v.HasOld != (old != heap.RecordID{}) || v.HasOld && v.Old != old {
		t.Errorf("Version(%d/%s) = live %v old %v (%v), want live %v old %v", db, key, v.Live, v.Old, v.HasOld, live, old)
	}
}

// TestSwapDBLeavesLocationsGravesAndDirtyStateAlone: SWAPDB changes which
// logical index names each physical database and nothing else: every
// key's location word (location and dirty bit), the graves, the far
// locations and the dirty list stay as they were, and the next checkpoint
// takes exactly what it would have taken without the swaps.
func TestSwapDBLeavesLocationsGravesAndDirtyStateAlone(t *testing.T) {
	h := newTracked(t)
	m := newModelHeap()
	h.script("SET a a0", "OK", "SET b b0", "OK", "SET c c0 PX 5000", "OK")
	h.selectDB(1)
	h.script("SET a a1", "OK", "SET far f1", "OK")
	h.selectDB(2)
	h.script("SET z z2", "OK")
	m.checkpoint(t, h.ks)
	far := heap.RecordID{File: 7, Page: 1<<24 + 1, Slot: 2}
	m.recs[far] = m.recs[h.ks.Version(hk(1, "far")).Old]
	delete(m.recs, h.ks.Version(hk(1, "far")).Old)
	h.ks.Placed(hk(1, "far"), far, nil, true)
	h.selectDB(0)
	h.script("DEL b", n(1), "SET c c0x KEEPTTL", "OK", "SET new n0", "OK") // a grave, a dirty key, a new key
	h.selectDB(1)
	h.script("DEL a", n(1))

	type state struct {
		locs   map[string]uint64
		graves map[pairKey]heap.RecordID
		far    map[pairKey]heap.RecordID
		dirty  int
	}
	snapshot := func() state {
		s := state{locs: map[string]uint64{}, graves: maps0(h.ks.src.graves), far: maps0(h.ks.src.far), dirty: len(h.ks.src.dirty)}
		for _, d := range h.ks.pdbs {
			d.keys.each(func(sl *slot[entry]) { s.locs[fmt.Sprintf("%d/%s", d.phys, sl.key())] = sl.v.loc })
		}
		return s
	}
	before := snapshot()
	if len(before.graves) != 2 || len(before.far) != 1 {
		t.Fatalf("setup: graves %v, far %v", before.graves, before.far)
	}
	for _, swap := range []string{"SWAPDB 0 1", "SWAPDB 1 2", "SWAPDB 2 2", "SWAPDB 0 2"} {
		h.expect(swap, "OK")
		checkOwnership(t, h.ks, m)
		if after := snapshot(); !reflect.DeepEqual(after, before) {
			t.Fatalf("after %s: %+v, was %+v", swap, after, before)
		}
	}
	if got, want := h.ks.DBMap()[:3], []int{0, 2, 1}; !slices.Equal(got, want) {
		t.Errorf("DBMap = %v, want %v...", got, want)
	}
	h.selectDB(2)
	h.script("GET far", q("f1"), "EXISTS a", n(0))
	h.selectDB(1)
	h.script("GET z", q("z2"))
	if got, want := takeDirty(t, h.ks), []string{"0/b", "0/c", "0/new", "1/a"}; !slices.Equal(got, want) {
		t.Errorf("TakeDirty = %q, want %q", got, want)
	}
}

func maps0[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func TestRedirtyFileForgetsLocationsInTheFileAndMarksTheirKeysDirty(t *testing.T) {
	h := newTracked(t)
	m := newModelHeap()
	m.file = 3
	h.script("SET a 1", "OK", "SET b 1", "OK", "SET gone 1", "OK")
	m.checkpoint(t, h.ks)
	m.file = 4
	h.script("SET c 1", "OK", "SET b 2", "OK") // b moves to file 4; its file-3 version waits as a deferred free
	for _, k := range h.ks.TakeDirty() {
		m.write(t, h.ks, k)
	}
	h.script("DEL gone", n(1)) // a grave in file 3
	if got := takeDirty(t, h.ks); !slices.Equal(got, []string{"0/gone"}) {
		t.Fatalf("TakeDirty = %q", got)
	}
	// The TakeDirty above took the grave's pair: RedirtyFile lists it again.
	if n := h.ks.RedirtyFile(3); n != 2 {
		t.Errorf("RedirtyFile(3) = %d, want 2 (a, and the grave of gone)", n)
	}
	// gone's pair has neither a key nor a record now: the compaction
	// RedirtyFile ends with forgets it (dedupeDirty), as a checkpoint
	// would have nothing to do for it.
	if got, want := takeDirty(t, h.ks), []string{"0/a"}; !slices.Equal(got, want) {
		t.Errorf("TakeDirty = %q, want %q", got, want)
	}
	expectVersion(t, h.ks, 0, "a", true, heap.RecordID{})
	expectVersion(t, h.ks, 0, "gone", false, heap.RecordID{})
	if v := h.ks.Version(hk(0, "b")); !v.HasOld || v.Old.File != 4 {
		t.Errorf("Version(b) = %+v, want its file-4 location", v)
	}
	if n := h.ks.RedirtyFile(3); n != 0 {
		t.Errorf("RedirtyFile(3) again = %d", n)
	}
}

func TestLocationsThatDoNotFitTheSlotWord(t *testing.T) {
	for _, c := range []struct {
		id   heap.RecordID
		fits bool
	}{
		{heap.RecordID{File: 1}, true},
		{heap.RecordID{File: locFileLimit - 1, Page: locPageMask - 1, Slot: locSlotMask}, true},
		{heap.RecordID{File: locFileLimit}, false}, // a dirty bit took the file field's top bit
		{heap.RecordID{File: 1<<32 - 1}, false},
		{heap.RecordID{File: 2, Page: locPageMask}, false},
		{heap.RecordID{File: 2, Page: 1 << 30}, false},
		{heap.RecordID{File: 2, Slot: locSlotMask + 1}, false},
	} {
		bits, ok := packLoc(c.id)
		if ok != c.fits || ok && (unpackLoc(bits) != c.id || bits&locDirtyAny != 0 || bits == locFar) {
			t.Errorf("packLoc(%v) = %x, %v", c.id, bits, ok)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("packLoc of file 0 did not panic")
			}
		}()
		packLoc(heap.RecordID{Page: 1})
	}()

	h := newTracked(t)
	h.script("SET a 1", "OK", "SET b 1", "OK")
	takeDirty(t, h.ks)
	far := heap.RecordID{File: 9, Page: 1<<24 + 5, Slot: 3}
	h.ks.Placed(hk(0, "a"), far, nil, true)
	h.ks.Placed(hk(0, "b"), heap.RecordID{File: 9, Page: 1}, nil, true)
	expectVersion(t, h.ks, 0, "a", true, far)
	h.script("RENAME a c", "OK")
	expectVersion(t, h.ks, 0, "a", false, far)
	expectVersion(t, h.ks, 0, "c", true, heap.RecordID{})
	if len(h.ks.src.far) != 0 {
		t.Errorf("far locations left: %v", h.ks.src.far)
	}
	h.ks.Placed(hk(0, "c"), far, nil, true)
	if n := h.ks.RedirtyFile(9); n != 3 {
		t.Errorf("RedirtyFile(9) = %d, want 3 (b, c and a's grave)", n)
	}
	if len(h.ks.src.far) != 0 || len(h.ks.src.graves) != 0 {
		t.Errorf("far %v, graves %v left", h.ks.src.far, h.ks.src.graves)
	}
}

// TestCheckpointSourceRandomized runs random commands (every journaled
// form, SWAPDB and the flushes included) while checkpoints take the dirty
// keys and write them a few at a time between commands, and checks after
// every step that each heap record is held by exactly one key, grave or
// deferred free of its own pair, and after a quiet whole checkpoint that
// the heap holds exactly the keyspace.
func TestCheckpointSourceRandomized(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			checkpointSourceRandomized(t, seed)
		})
	}
}

// checkpointSourceRandomized is the body of TestCheckpointSourceRandomized
// for one seed. It also checks, before each TakeDirty and now and then, the
// dirty list's invariants (checkDirtyRefs), and that TakeDirty returns
// each pair once.
func checkpointSourceRandomized(t *testing.T, seed uint64) {
	h := newTracked(t)
	m := newModelHeap()
	rng := rand.New(rand.NewPCG(seed, seed*31))
	var pending [][]byte
	for i := range 20000 {
		runRandomCommand(h, rng)
		switch {
		case len(pending) > 0:
			for range 1 + rng.IntN(3) {
				if len(pending) == 0 {
					break
				}
				m.write(t, h.ks, pending[0])
				pending = pending[1:]
			}
			if len(pending) == 0 {
				m.release(t)
			}
		case rng.IntN(50) == 0:
			m.file = uint32(1 + i/2000)
			checkDirtyRefs(t, h.ks)
			pending = h.ks.TakeDirty()
			names := make([]string, len(pending))
			for j, k := range pending {
				names[j] = pairName(t, k)
			}
			slices.Sort(names)
			if c := slices.Compact(slices.Clone(names)); len(c) != len(names) {
				t.Fatalf("TakeDirty returned a pair twice: %q", names)
			}
		}
		if i%97 == 0 {
			checkOwnership(t, h.ks, m)
			checkDirtyRefs(t, h.ks)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	for _, k := range pending {
		m.write(t, h.ks, k)
	}
	m.release(t)
	m.checkpoint(t, h.ks)
	checkHeapMatches(t, h.ks, m, h.clock)
}

// identityMap is the identity database map of n databases.
func identityMap(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}

// DeadOld is Version's Old for a deleted pair, and nothing for a live one,
// whose version it does not build.
func TestDeadOldIsTheRecordOfADeletedPair(t *testing.T) {
	h := newTracked(t)
	h.script("SET a 1", "OK", "SET b 2", "OK")
	m := newModelHeap()
	m.checkpoint(t, h.ks)
	h.script("DEL a", n(1))
	old, ok := h.ks.DeadOld(hk(0, "a"))
	if v := h.ks.Version(hk(0, "a")); !ok || v.Live || !v.HasOld || old != v.Old {
		t.Errorf("DeadOld(a) = %v %v, Version's Old %v %v", old, ok, v.Old, v.HasOld)
	}
	if _, ok := h.ks.DeadOld(hk(0, "b")); ok {
		t.Error("DeadOld of a live key reports a record")
	}
	if _, ok := h.ks.DeadOld(hk(0, "never")); ok {
		t.Error("DeadOld of a pair that never had a record reports one")
	}
}

// Keys that come and go between takes, never written to the heap, leave
// nothing in the dirty list: with appendonly no the next take may be far
// off, and their references would hold their bytes until then.
func TestDirtyListForgetsKeysThatCameAndWent(t *testing.T) {
	h := newTracked(t)
	for i := range 100000 {
		k := fmt.Sprint("session:", i)
		h.do("SET", k, "v")
		h.do("DEL", k)
	}
	h.do("SET", "kept", "v")
	if len(h.ks.src.dirty) > 4096 {
		t.Errorf("100000 keys created and deleted left %d entries in the dirty list", len(h.ks.src.dirty))
	}
	if got := takeDirty(t, h.ks); !slices.Contains(got, "0/kept") {
		t.Errorf("TakeDirty = %q, want it to hold 0/kept", got)
	}
}
