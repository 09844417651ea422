package keyspace

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"runtime"
	"testing"
)

// checkDict verifies the dict's invariants against a model map.
func checkDict(t *testing.T, d *dict[int64], model map[string]int64) {
	t.Helper()
	if d.count != len(model) {
		t.Fatalf("count %d, model %d", d.count, len(model))
	}
	base := 1 << d.level
	if len(d.segs) != base+d.split || d.split >= base {
		t.Fatalf("%d segments with level %d split %d", len(d.segs), d.level, d.split)
	}
	live, mem := 0, int64(0)
	for i := range d.segs {
		s := &d.segs[i]
		if len(s.slots) != int(s.used) {
			t.Fatalf("segment %d: %d slots, used %d", i, len(s.slots), s.used)
		}
		for j := range s.slots {
			sl := &s.slots[j]
			if sl.kp == nil {
				t.Fatalf("segment %d: slot %d of %d is free", i, j, s.used)
			}
			h := d.hashString(sl.key())
			if d.segIndex(h) != i {
				t.Fatalf("key %q in segment %d", sl.key(), i)
			}
			if kwTag(sl.kw) != kwTag(tagBits(h)) || j < segTags && s.tag(j) != kwTag(sl.kw) {
				t.Fatalf("key %q: kw tag %x, segment tag %x, hash tag %x", sl.key(), kwTag(sl.kw), s.tag(min(j, segTags-1)), kwTag(tagBits(h)))
			}
		}
		for _, sl := range s.slots[len(s.slots):cap(s.slots)] {
			if sl.kp != nil || sl.kw != 0 {
				t.Fatalf("segment %d: a slot past the live ones holds %x", i, sl.kw)
			}
		}
		live += int(s.used)
		mem += slotsMem(s.slots)
	}
	if live != len(model) || mem != d.slotMem {
		t.Fatalf("live %d, slot memory %d (accounted %d)", live, mem, d.slotMem)
	}
	for k, v := range model {
		sl := d.find(d.hashString(k), []byte(k))
		if sl == nil || sl.v != v || sl.key() != k {
			t.Fatalf("find(%q) = %v, want %d", k, sl, v)
		}
	}
}

// TestDictAgainstAMap runs random inserts, updates and deletes through
// growth to thousands of keys and back to none.
func TestDictAgainstAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	d := newDict[int64](maphash.MakeSeed())
	model := map[string]int64{}
	phase := func(steps, keyspace int, pDelete float64) {
		for range steps {
			k := "key:" + itoa(rng.IntN(keyspace))
			h := d.hashString(k)
			if rng.Float64() < pDelete {
				_, ok := model[k]
				if got := d.remove(h, []byte(k)); got != ok {
					t.Fatalf("remove(%q) = %v, model %v", k, got, ok)
				}
				delete(model, k)
				continue
			}
			v := rng.Int64()
			if sl := d.find(h, []byte(k)); sl != nil {
				sl.v = v
			} else {
				d.insert(h, k, v, 0)
			}
			model[k] = v
		}
		checkDict(t, &d, model)
	}
	phase(20000, 5000, 0.1) // grow
	phase(20000, 5000, 0.5) // churn
	phase(20000, 5000, 0.9) // shrink
	for k := range model {
		d.remove(d.hashString(k), []byte(k))
		delete(model, k)
	}
	checkDict(t, &d, model)
	if len(d.segs) != 1 {
		t.Errorf("%d segments left in an empty dict", len(d.segs))
	}
}

// A full scan of a dict that does not change returns every key once.
func TestDictScanReturnsEveryKeyOnce(t *testing.T) {
	for _, size := range []int{0, 1, 15, 16, 17, 100, 1000, 12345} {
		d := newDict[int64](maphash.MakeSeed())
		for i := range size {
			k := "k" + itoa(i)
			d.insert(d.hashString(k), k, 0, 0)
		}
		seen := map[string]int{}
		cursor := uint64(0)
		for {
			cursor = d.scan(cursor, func(sl *slot[int64]) { seen[sl.key()]++ })
			if cursor == 0 {
				break
			}
		}
		if len(seen) != size {
			t.Errorf("size %d: scan saw %d keys", size, len(seen))
		}
		for k, c := range seen {
			if c != 1 {
				t.Errorf("size %d: %s seen %d times", size, k, c)
			}
		}
	}
}

func TestDictRandomReturnsLiveKeys(t *testing.T) {
	d := newDict[int64](maphash.MakeSeed())
	if d.random() != nil {
		t.Fatal("random on an empty dict")
	}
	for i := range 1000 {
		k := "k" + itoa(i)
		d.insert(d.hashString(k), k, int64(i), 0)
	}
	for i := range 990 {
		k := "k" + itoa(i)
		d.remove(d.hashString(k), []byte(k))
	}
	seen := map[string]bool{}
	for range 1000 {
		sl := d.random()
		if sl == nil || sl.v < 990 {
			t.Fatalf("random returned %v", sl)
		}
		seen[sl.key()] = true
	}
	if len(seen) < 5 {
		t.Errorf("random picked only %d distinct keys of 10", len(seen))
	}
}

// TestDictMutsCountsEveryChange: muts, which says whether a slot pointer
// is still valid, moves on every insert and remove (splits, merges and
// rebuilds included), and not on a lookup or a failed remove.
func TestDictMutsCountsEveryChange(t *testing.T) {
	d := newDict[int64](maphash.MakeSeed())
	keys := make([]string, 500)
	for i := range keys {
		keys[i] = string(rune('a'+i%26)) + string(rune('0'+i/26))
		before := d.muts
		sl := d.insert(d.hashString(keys[i]), keys[i], int64(i), 0)
		if d.muts == before {
			t.Fatalf("insert of %q left muts at %d", keys[i], before)
		}
		before = d.muts
		if d.find(d.hashString(keys[i]), []byte(keys[i])) != sl {
			t.Fatalf("find of %q missed the slot insert returned", keys[i])
		}
		if d.remove(d.hashString("absent"), []byte("absent")) || d.muts != before {
			t.Fatalf("a lookup or a failed remove changed muts from %d to %d", before, d.muts)
		}
	}
	for _, k := range keys {
		before := d.muts
		if !d.remove(d.hashString(k), []byte(k)) || d.muts == before {
			t.Fatalf("remove of %q: muts stayed %d", k, before)
		}
	}
}

// TestDictReusesOutgrownSlotArrays checks that a growing table builds its
// segments from the arrays it outgrew: without the spares, loading a
// million keys allocated 4.7 times the table's final size in slot arrays.
// Spare arrays must be cleared (they would keep keys and values alive) and
// stay within their bound.
func TestDictReusesOutgrownSlotArrays(t *testing.T) {
	const n = 300_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key:%012d", i)
	}
	d := newDict[int64](maphash.MakeSeed())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i, k := range keys {
		d.insert(d.hashString(k), k, int64(i), 0)
	}
	runtime.ReadMemStats(&after)
	allocated := float64(after.TotalAlloc - before.TotalAlloc)
	if ratio := allocated / float64(d.memory()); ratio > 2.5 {
		t.Errorf("loading %d keys allocated %.0f bytes, %.2f times the table's %d", n, allocated, ratio, d.memory())
	}
	if d.spareMem > d.spareLimit() {
		t.Errorf("spares hold %d bytes, above the limit %d", d.spareMem, d.spareLimit())
	}
	var spareMem int64
	for length, list := range d.spare {
		if len(list) > maxSparePerLen {
			t.Errorf("%d spares of length %d, above %d", len(list), length, maxSparePerLen)
		}
		for _, a := range list {
			spareMem += slotsMem(a)
			if len(a) != 0 || cap(a) != length {
				t.Fatalf("a spare listed for %d slots has length %d, capacity %d", length, len(a), cap(a))
			}
			a = a[:cap(a)]
			for i := range a {
				if a[i] != (slot[int64]{}) {
					t.Fatalf("a spare array of length %d holds %+v at %d", length, a[i], i)
				}
			}
		}
	}
	if spareMem != d.spareMem {
		t.Errorf("spares hold %d bytes, spareMem says %d", spareMem, d.spareMem)
	}
	for i, k := range keys {
		if sl := d.find(d.hashString(k), []byte(k)); sl == nil || sl.v != int64(i) {
			t.Fatalf("key %q lost", k)
		}
	}
}
