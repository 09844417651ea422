package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/moond-db/moond/persistence/checkpoint"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/resp"
)

// smallChunks makes values go in chunks from a few kilobytes, in chunks of
// a few hundred bytes, and small collections tables, for the test's time.
func smallChunks(t testing.TB, h *harness) {
	minB, target := chunkMinBytes, chunkTarget
	chunkMinBytes, chunkTarget = 4<<10, 512
	t.Cleanup(func() { chunkMinBytes, chunkTarget = minB, target })
	h.ks.Limits.HashMaxListpackEntries = 4
	h.ks.Limits.SetMaxIntsetEntries = 4
	h.ks.Limits.SetMaxListpackEntries = 4
	h.ks.Limits.ZSetMaxListpackEntries = 4
	h.ks.Limits.ListMaxListpackSize = 8
}

// canonical shows every key's kind, expiry and value, whatever the
// representation: hash fields and set members sorted.
func canonical(ks *Keyspace, now int64) []string {
	var out []string
	for i, d := range ks.dbs {
		d.keys.each(func(sl *slot[entry]) {
			when := ks.expiryOf(d, d.keys.hash(sl.keyBytes()), sl)
			if when != -1 && now > when {
				return
			}
			var parts []string
			p := sl.v.p
			switch sl.v.kind() {
			case KindString:
				parts = []string{string(sl.v.appendTo(nil))}
			case KindHash:
				hashEach(p, func(f, v []byte) bool { parts = append(parts, string(f)+"="+string(v)); return true })
			case KindSet:
				setEach(p, func(m []byte) { parts = append(parts, string(m)) })
			default:
				parts = []string{string(sl.v.appendEncoded(nil))}
			}
			slices.Sort(parts)
			out = append(out, fmt.Sprintf("%d/%q %s @%d %q", i, sl.key(), sl.v.kind(), when, parts))
		})
	}
	slices.Sort(out)
	return out
}

// chunkModel is a heap in memory written as the checkpoint writes it,
// parts included.
type chunkModel struct {
	*modelHeap
	pending  []pageOp
	deferred []heap.RecordID
}

func (m *chunkModel) write(t testing.TB, ks *Keyspace, k []byte) heap.Record {
	t.Helper()
	v := ks.Version(k)
	if !v.Live {
		if v.HasOld {
			m.free(t, v.Old)
			m.pending = append(m.pending, pageOp{id: v.Old})
		}
		m.deferred = append(m.deferred, v.OldParts...)
		ks.Placed(k, heap.RecordID{}, nil, false)
		return v.Record
	}
	var parts []heap.RecordID
	for _, r := range append(slices.Clone(v.Parts), v.Record) {
		id := m.insert(r)
		m.pending = append(m.pending, pageOp{id: id, insert: true, rec: m.recs[id]})
		parts = append(parts, id)
	}
	if v.HasOld {
		m.deferred = append(m.deferred, v.Old)
	}
	m.deferred = append(m.deferred, v.OldParts...)
	ks.Placed(k, parts[len(parts)-1], parts[:len(parts)-1], true)
	return v.Record
}

// finalize makes the checkpoint's writes durable, then frees what it
// superseded (those frees reach the disk with the next one).
func (m *chunkModel) finalize(t testing.TB, disk map[heap.RecordID]heap.Record) {
	for _, op := range m.pending {
		if op.insert {
			disk[op.id] = op.rec
		} else {
			delete(disk, op.id)
		}
	}
	m.pending = nil
	for _, id := range m.deferred {
		m.free(t, id)
		m.pending = append(m.pending, pageOp{id: id})
	}
	m.deferred = nil
}

// recoverChunks recovers src's keyspace from the records on disk, loaded in
// the order of ids, and src's journal from redo.
func recoverChunks(t *testing.T, src *harness, onDisk map[heap.RecordID]heap.Record, ids []heap.RecordID, redo uint64) (*Keyspace, []heap.RecordID, error) {
	t.Helper()
	ks := NewKeyspace(16, func() int64 { return src.clock })
	ks.Limits = src.ks.Limits
	ks.BeginLoad(redo, func(id heap.RecordID) (uint64, error) { return onDisk[id].KeyLSN, nil })
	var sup []heap.RecordID
	for _, id := range ids {
		r := onDisk[id]
		head := heap.RecordHead{Kind: r.Kind, Expiry: r.Expiry, KeyLSN: r.KeyLSN}
		if r.Kind >= kindChunkedHead {
			if err := ks.stashRecord(r.Key, id, head, slices.Clone(r.Value)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		s, dup, err := ks.loadRecord(r.Key, id, head, r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if dup {
			sup = append(sup, s)
		}
	}
	if err := ks.EndHeap(); err != nil {
		ks.EndLoad()
		return nil, nil, err
	}
	sup = append(sup, ks.Superseded()...)
	for i, r := range src.records {
		if lsn := uint64(i + 1); lsn >= redo {
			replay(t, ks, walRecord{lsn, r.db, r.args})
		}
	}
	ks.EndLoad()
	return ks, sup, nil
}

// chunkOwners checks that every record of m is the location of a key, a
// chunk of a pair, a grave or one of the frees given, exactly once.
func chunkOwners(t testing.TB, ks *Keyspace, m *modelHeap, frees []heap.RecordID) {
	t.Helper()
	seen := map[heap.RecordID]string{}
	own := func(id heap.RecordID, who string) {
		if prev, ok := seen[id]; ok {
			t.Fatalf("record %v held by %s and %s", id, prev, who)
		}
		if _, ok := m.recs[id]; !ok {
			t.Fatalf("%s holds %v, which is not a record", who, id)
		}
		seen[id] = who
	}
	for _, d := range ks.pdbs {
		d.keys.each(func(sl *slot[entry]) {
			if id, ok := ks.slotLoc(d.phys, sl); ok {
				own(id, "key "+sl.key())
			}
		})
	}
	for p, id := range ks.src.graves {
		own(id, "grave "+p.key)
	}
	for p, cs := range ks.src.chunks {
		for i, at := range cs.at {
			if at.id.File != 0 {
				own(at.id, fmt.Sprintf("chunk %d of %q", i, p.key))
			}
		}
	}
	for _, id := range frees {
		own(id, "a free")
	}
	for id, r := range m.recs {
		if _, ok := seen[id]; !ok {
			t.Fatalf("record %v (kind %d) is held by nothing: a leak", id, r.Kind)
		}
	}
}

// runChunkCommand runs a random command on a few large collections.
func runChunkCommand(h *harness, rng *rand.Rand) {
	keys := []string{"h", "s", "z", "l", "x"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	mem := func() string { return fmt.Sprintf("m%d", rng.IntN(600)) }
	var args []string
	switch rng.IntN(29) {
	case 20, 21, 26, 27, 28:
		args = []string{[]string{"LPUSH", "RPUSH"}[rng.IntN(2)], "l"}
		for range 1 + rng.IntN(60) {
			args = append(args, mem())
		}
	case 22:
		args = []string{[]string{"LPOP", "RPOP"}[rng.IntN(2)], "l", fmt.Sprint(1 + rng.IntN(5))}
	case 23:
		args = []string{"LSET", "l", fmt.Sprint(rng.IntN(200) - 100), mem()}
	case 24:
		if rng.IntN(2) == 0 {
			args = []string{"LINSERT", "l", "BEFORE", mem(), mem()}
		} else {
			args = []string{"LREM", "l", fmt.Sprint(rng.IntN(5) - 2), mem()}
		}
	case 25:
		args = []string{"LTRIM", "l", fmt.Sprint(rng.IntN(10)), fmt.Sprint(-1 - rng.IntN(10))}
	case 0, 1, 2:
		args = []string{"HSET", "h"}
		for range 1 + rng.IntN(30) {
			args = append(args, mem(), fmt.Sprint(rng.IntN(1000)))
		}
	case 3:
		args = []string{"HDEL", "h", mem(), mem()}
	case 4, 5, 6:
		args = []string{"SADD", "s"}
		for range 1 + rng.IntN(30) {
			args = append(args, mem())
		}
	case 7:
		args = []string{"SREM", "s", mem(), mem()}
	case 8:
		args = []string{"SPOP", "s", fmt.Sprint(rng.IntN(3))}
	case 9, 10, 11:
		args = []string{"ZADD", "z"}
		for range 1 + rng.IntN(30) {
			args = append(args, fmt.Sprint(rng.IntN(50)), mem())
		}
	case 12:
		args = []string{"ZREM", "z", mem(), mem()}
	case 13:
		args = []string{"ZINCRBY", "z", fmt.Sprint(rng.IntN(9)), mem()}
	case 14:
		args = []string{"HINCRBY", "h", mem(), "3"}
	case 15:
		if rng.IntN(8) == 0 {
			args = []string{"DEL", key()}
		} else {
			args = []string{"EXPIRE", key(), "1000"}
		}
	case 16:
		if rng.IntN(3) == 0 {
			args = []string{"RENAME", key(), key()}
		} else {
			args = []string{"SCARD", "s"}
		}
	case 17:
		if rng.IntN(3) == 0 {
			args = []string{"COPY", key(), key(), "REPLACE"}
		} else {
			args = []string{"HLEN", "h"}
		}
	case 18:
		if rng.IntN(4) == 0 {
			args = []string{"SET", key(), "plain"}
		} else {
			args = []string{"PERSIST", key()}
		}
	default:
		args = []string{"ZPOPMIN", "z", fmt.Sprint(rng.IntN(4))}
	}
	h.do(args...)
}

// Large values in chunks survive every crash of a fuzzy checkpoint: any
// subset of the running checkpoint's page writes on disk, records loaded
// in any order, the WAL replayed from the published redo point. After a
// recovery, the next checkpoint leaves every record held exactly once.
func TestChunkedValuesRecoverFromEveryCrash(t *testing.T) {
	chunked := map[Kind]int{}
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { testChunkedRecovery(t, seed, 3000, chunked) })
	}
	for _, k := range []Kind{KindHash, KindSet, KindZSet, KindList} {
		if chunked[k] == 0 {
			t.Errorf("no %s was ever stored in chunks (%v): the test does not test it", k, chunked)
		}
	}
}

// testChunkedRecovery counts the chunked versions written in chunked, by
// kind.
func testChunkedRecovery(t *testing.T, seed uint64, steps int, chunked map[Kind]int) {
	src := newTracked(t)
	smallChunks(t, src)
	rng := rand.New(rand.NewPCG(seed, seed^0x5bd1e995))
	m := &chunkModel{modelHeap: newModelHeap()}
	disk := map[heap.RecordID]heap.Record{}
	published := uint64(1)
	var keys [][]byte
	var redo uint64
	running := false
	crash := func() {
		onDisk := maps(disk)
		for _, op := range m.pending {
			if rng.IntN(2) == 0 {
				if op.insert {
					onDisk[op.id] = op.rec
				} else {
					delete(onDisk, op.id)
				}
			}
		}
		ids := make([]heap.RecordID, 0, len(onDisk))
		for id := range onDisk {
			ids = append(ids, id)
		}
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		ks, sup, err := recoverChunks(t, src, onDisk, ids, published)
		if err != nil {
			t.Fatalf("recovery (redo %d): %v", published, err)
		}
		if got, want := canonical(ks, src.clock), canonical(src.ks, src.clock); !slices.Equal(got, want) {
			t.Fatalf("recovered (redo %d, LSN %d)\n%q\nwant\n%q", published, len(src.records), got, want)
		}
		// The recovered keyspace owns every record on disk; its next
		// checkpoint leaves the heap holding exactly the keyspace.
		m2 := &chunkModel{modelHeap: &modelHeap{recs: onDisk, next: m.next + 1<<20}}
		chunkOwners(t, ks, m2.modelHeap, sup)
		setLastLSN(ks, logOf(src.ks).LastLSN)
		m2.deferred = sup
		for _, k := range ks.TakeDirty() {
			m2.write(t, ks, k)
		}
		chunkOwners(t, ks, m2.modelHeap, m2.deferred)
		m2.finalize(t, map[heap.RecordID]heap.Record{})
		chunkOwners(t, ks, m2.modelHeap, nil)
		all := slices.Collect(func(yield func(heap.RecordID) bool) {
			for id := range m2.recs {
				if !yield(id) {
					return
				}
			}
		})
		again, _, err := recoverChunks(t, &harness{ks: ks, clock: src.clock}, m2.recs, all, uint64(len(src.records))+1)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := canonical(again, src.clock), canonical(src.ks, src.clock); !slices.Equal(got, want) {
			t.Fatalf("heap after the checkpoint that followed recovery\n%q\nwant\n%q", got, want)
		}
	}
	for i := range steps {
		runChunkCommand(src, rng)
		switch {
		case running && len(keys) > 0:
			k := keys[0]
			keys = keys[1:]
			if r := m.write(t, src.ks, k); r.Kind&kindChunkedHead != 0 {
				chunked[Kind(r.Kind&^kindChunkedHead)]++
			}
		case running:
			m.finalize(t, disk)
			published = redo
			running = false
		case rng.IntN(6) == 0:
			running = true
			redo = uint64(len(src.records)) + 1
			keys = src.ks.TakeDirty()
		}
		if i%50 == 25 {
			crash()
		}
	}
	crash()
}

// A small change to a large hash writes one chunk and the head, and the
// chunk it replaces is freed; a restart's first version writes every
// chunk again; a value that shrinks goes back to one record.
func TestChunkedHashWritesOnlyWhatChanged(t *testing.T) {
	h := newTracked(t)
	smallChunks(t, h)
	args := []string{"HSET", "h"}
	for i := range 400 {
		args = append(args, fmt.Sprintf("field%d", i), fmt.Sprintf("value%d", i))
	}
	h.do(args...)
	m := newModelHeap()
	k := hk(0, "h")
	v := h.ks.Version(k)
	n := len(v.Parts)
	if n < 4 || n&(n-1) != 0 || v.Record.Kind != uint8(KindHash)|kindChunkedHead || len(v.OldParts) != 0 {
		t.Fatalf("first version: %d parts, kind %#x, %d old parts", n, v.Record.Kind, len(v.OldParts))
	}
	place := func(v checkpoint.Version) []heap.RecordID {
		var ids []heap.RecordID
		for _, r := range v.Parts {
			ids = append(ids, m.insert(r))
		}
		h.ks.Placed(k, m.insert(v.Record), ids, true)
		return ids
	}
	first := place(v)
	h.ks.TakeDirty()
	h.do("HSET", "h", "field7", "changed")
	v = h.ks.Version(k)
	if len(v.Parts) != 1 || len(v.OldParts) != 1 || !slices.Contains(first, v.OldParts[0]) {
		t.Fatalf("after one HSET: %d parts, old parts %v", len(v.Parts), v.OldParts)
	}
	place(v)
	if v = h.ks.Version(k); len(v.Parts) != 0 {
		t.Errorf("nothing changed, and the version writes %d parts", len(v.Parts))
	}
	h.ks.Placed(k, heap.RecordID{File: 1, Page: 999}, nil, true)
	// Shrunk below half the minimum: one record, every chunk an old part.
	h.do("DEL", "h")
	h.do("HSET", "h", "a", "1")
	v = h.ks.Version(k)
	if len(v.Parts) != 0 || len(v.OldParts) != n || v.Record.Kind != uint8(KindHash) {
		t.Errorf("small again: %d parts, %d old parts, kind %#x", len(v.Parts), len(v.OldParts), v.Record.Kind)
	}
}

// decodeChunkHead takes bytes from the disk: it refuses what it cannot
// read, never panics, and what it accepts names its chunks once each.
func FuzzChunkHead(f *testing.F) {
	h := newTracked(f)
	smallChunks(f, h)
	args := []string{"RPUSH", "l"}
	for i := range 400 {
		args = append(args, fmt.Sprintf("element%d", i))
	}
	h.do(args...)
	h.do("SADD", "s", "a", "b", "c", "d", "e", "f", "g")
	for _, k := range []string{"l", "s"} {
		if v := h.ks.Version(hk(0, k)); v.Record.Kind&kindChunkedHead != 0 {
			f.Add(slices.Clone(v.Record.Value))
		}
	}
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		hd, err := decodeChunkHead(b)
		if err != nil {
			return
		}
		if len(hd.ids) != len(hd.stamps) || len(hd.ids) == 0 {
			t.Fatalf("head of %d ids and %d stamps", len(hd.ids), len(hd.stamps))
		}
		seen := map[uint32]bool{}
		for _, id := range hd.ids {
			if seen[id] {
				t.Fatalf("chunk %d named twice", id)
			}
			seen[id] = true
		}
	})
}

// A list keeps its chunks across a load: one push after the restart
// writes the node it went to and the head, not the list again.
func TestChunkedListKeepsItsChunksAcrossALoad(t *testing.T) {
	h := newTracked(t)
	smallChunks(t, h)
	args := []string{"RPUSH", "l"}
	for i := range 2000 {
		args = append(args, fmt.Sprintf("element%d", i))
	}
	h.do(args...)
	m := &chunkModel{modelHeap: newModelHeap()}
	for _, k := range h.ks.TakeDirty() {
		if r := m.write(t, h.ks, k); r.Kind != uint8(KindList)|kindChunkedHead {
			t.Fatalf("the list's record is of kind %#x, not a chunked list's", r.Kind)
		}
	}
	var ids []heap.RecordID
	for id := range m.recs {
		ids = append(ids, id)
	}
	ks, sup, err := recoverChunks(t, h, m.recs, ids, uint64(len(h.records))+1)
	if err != nil || len(sup) != 0 {
		t.Fatalf("recovery: %v, superseded %v", err, sup)
	}
	if got, want := canonical(ks, h.clock), canonical(h.ks, h.clock); !slices.Equal(got, want) {
		t.Fatalf("recovered %q, want %q", got, want)
	}
	c := Client{}
	var out resp.Writer
	ks.Exec(&c, [][]byte{[]byte("LPUSH"), []byte("l"), []byte("new")}, &out)
	setLastLSN(ks, func() uint64 { return uint64(len(h.records)) + 1 })
	v := ks.Version(hk(0, "l"))
	if len(v.Parts) != 1 || len(v.OldParts) > 1 {
		t.Errorf("a push after the load writes %d chunks and frees %d", len(v.Parts), len(v.OldParts))
	}
}
