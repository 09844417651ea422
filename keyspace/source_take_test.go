package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/moond-db/moond/persistence/heap"
)

// withTakeWalkRatio runs fn with takeWalkRatio set to ratio: 0 makes
// TakeDirty look every listed pair up, a large ratio walks every database
// that has one listed.
func withTakeWalkRatio(ratio int, fn func()) {
	old := takeWalkRatio
	takeWalkRatio = ratio
	defer func() { takeWalkRatio = old }()
	fn()
}

var takePaths = []struct {
	name  string
	ratio int
}{{"lookup", 0}, {"walk", 1 << 30}}

// checkDirtyRefs checks what TakeDirty's walk relies on: no two unmarked
// references of the dirty list name the same pair, and no two references
// at all when the keyspace says it has no duplicates (!maybeDup); every
// live key of a listed pair has its dirty bit set, and every key whose bit
// is set is listed unless its database is in walk mode. It checks each
// database's counts too (dbDirty): its references, and its live dirty keys
// and their length.
func checkDirtyRefs(t testing.TB, ks *Keyspace) {
	t.Helper()
	unmarked := map[pairKey]bool{}
	all := map[pairKey]bool{}
	listed := make([]int, len(ks.pdbs))
	for _, r := range ks.src.dirty {
		p := r.pair()
		listed[p.db]++
		if !r.mayDup() {
			if unmarked[p] {
				t.Fatalf("pair %d/%q listed twice without refDup", p.db, p.key)
			}
			unmarked[p] = true
		}
		if all[p] && !ks.src.maybeDup {
			t.Fatalf("pair %d/%q listed twice, and maybeDup is false", p.db, p.key)
		}
		all[p] = true
		if sl := ks.findRef(r); sl != nil && sl.v.loc&ks.src.cur() == 0 {
			t.Fatalf("key %d/%q is listed but its dirty bit is clear", p.db, p.key)
		}
	}
	for _, d := range ks.pdbs {
		dd := ks.src.dbs[d.phys]
		if dd.listed != listed[d.phys] {
			t.Fatalf("database %d has %d references listed, and counts %d", d.phys, listed[d.phys], dd.listed)
		}
		live, liveLen := 0, 0
		d.keys.each(func(sl *slot[entry]) {
			if sl.v.loc&ks.src.cur() == 0 {
				return
			}
			live++
			liveLen += len(sl.key())
			// Keys made without tracking have no bit until the first
			// TakeDirty.
			if ks.src.swept && !dd.walking && !all[pairKey{d.phys, sl.key()}] {
				t.Fatalf("key %d/%q has its dirty bit set but is not listed", d.phys, sl.key())
			}
		})
		if live != dd.live || liveLen != dd.liveLen {
			t.Fatalf("database %d has %d dirty keys (%d bytes), and counts %d (%d bytes)", d.phys, live, liveLen, dd.live, dd.liveLen)
		}
	}
}

// TestCheckpointSourceRandomizedTakePaths is TestCheckpointSourceRandomized
// with TakeDirty forced to look every pair up, then to walk every table,
// checking the dirty list's invariants (checkDirtyRefs) as it goes and
// that each TakeDirty returns a pair once.
func TestCheckpointSourceRandomizedTakePaths(t *testing.T) {
	for _, path := range takePaths {
		t.Run(path.name, func(t *testing.T) {
			withTakeWalkRatio(path.ratio, func() {
				for seed := uint64(1); seed <= 3; seed++ {
					t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
						checkpointSourceRandomized(t, seed)
					})
				}
			})
		})
	}
}

// TestTakeDirtyWalkAndLookupAgree runs the same random commands, over
// a few thousand keys (tables of many segments), against two keyspaces,
// and checks at every checkpoint that TakeDirty returns the same pairs
// whether it looks them up or walks the tables. Whole checkpoints run in
// between, and RedirtyFile now and then, so that keys have locations and
// graves.
func TestTakeDirtyWalkAndLookupAgree(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			var envs [2]func(*Keyspace, func())
			for j := range envs {
				envs[j] = func(_ *Keyspace, fn func()) { withTakeWalkRatio(takePaths[j].ratio, fn) }
			}
			takeDirtyAgrees(t, seed, [2]string{takePaths[0].name, takePaths[1].name}, envs)
		})
	}
}

// takeDirtyAgrees is the body of TestTakeDirtyWalkAndLookupAgree for one
// seed: every call on keyspace j runs in envs[j], and names[j] names it.
// It also checks that DirtyKeys agrees before each TakeDirty.
func takeDirtyAgrees(t *testing.T, seed uint64, names [2]string, envs [2]func(*Keyspace, func())) {
	hs := [2]*harness{newTracked(t), newTracked(t)}
	ms := [2]*modelHeap{newModelHeap(), newModelHeap()}
	rng := rand.New(rand.NewPCG(seed, seed*977))
	const nkeys = 3000
	for i := range 30 {
		// A round of changes: sometimes all keys, sometimes few.
		n := rng.IntN(nkeys / 4)
		if i%3 == 0 {
			n = 3 * nkeys
		}
		for range n {
			args := randomChurn(rng, nkeys)
			for j, h := range hs {
				envs[j](h.ks, func() {
					if args[0] == "SELECT" {
						h.selectDB(int(args[1][0] - '0'))
					} else {
						h.do(args...)
					}
				})
			}
		}
		if rng.IntN(4) == 0 {
			file := uint32(1 + rng.IntN(i+1))
			var a, b int
			envs[0](hs[0].ks, func() { a = hs[0].ks.RedirtyFile(file) })
			envs[1](hs[1].ks, func() { b = hs[1].ks.RedirtyFile(file) })
			if a != b {
				t.Fatalf("RedirtyFile(%d) = %d and %d", file, a, b)
			}
			for _, m := range ms { // the file is gone
				for id := range m.recs {
					if id.File == file {
						delete(m.recs, id)
					}
				}
			}
		}
		var got [2][]string
		var dirty [2]int
		for j, h := range hs {
			checkDirtyRefs(t, h.ks)
			envs[j](h.ks, func() {
				dirty[j] = h.ks.DirtyKeys()
				checkDirtyRefs(t, h.ks)
				ms[j].file = uint32(i + 1)
				for _, k := range h.ks.TakeDirty() {
					got[j] = append(got[j], pairName(t, k))
					ms[j].write(t, h.ks, k)
				}
				ms[j].release(t)
			})
			slices.Sort(got[j])
			if c := slices.Compact(slices.Clone(got[j])); len(c) != len(got[j]) {
				t.Fatalf("round %d, %s: TakeDirty returned a pair twice", i, names[j])
			}
			if dirty[j] != len(got[j]) {
				t.Fatalf("round %d, %s: DirtyKeys = %d, then TakeDirty took %d pairs", i, names[j], dirty[j], len(got[j]))
			}
			checkOwnership(t, h.ks, ms[j])
		}
		if !slices.Equal(got[0], got[1]) {
			t.Fatalf("round %d: TakeDirty %s took %d pairs, %s %d pairs", i, names[0], len(got[0]), names[1], len(got[1]))
		}
	}
	for j, h := range hs {
		envs[j](h.ks, func() { ms[j].checkpoint(t, h.ks) })
		checkHeapMatches(t, h.ks, ms[j], h.clock)
	}
}

// randomChurn returns a random command over nkeys keys in databases 0-2:
// writes, deletions, re-creations, renames, moves, expiries, rarely a
// flush or a swap. SELECT is for the harness to do.
func randomChurn(rng *rand.Rand, nkeys int) []string {
	key := func() string { return fmt.Sprintf("key:%d", rng.IntN(nkeys)) }
	switch r := rng.IntN(1000); {
	case r < 500:
		return []string{"SET", key(), fmt.Sprint(rng.IntN(100))}
	case r < 650:
		return []string{"DEL", key()}
	case r < 750:
		return []string{"SET", key(), "v", "PX", fmt.Sprint(1 + rng.IntN(3))}
	case r < 800:
		return []string{"RENAME", key(), key()}
	case r < 850:
		return []string{"MOVE", key(), fmt.Sprint(rng.IntN(3))}
	case r < 900:
		return []string{"SELECT", fmt.Sprint(rng.IntN(3))}
	case r < 950:
		return []string{"GET", key()} // may expire the key
	case r < 997:
		return []string{"INCR", key()}
	case r < 998:
		return []string{"FLUSHDB"}
	}
	return []string{"SWAPDB", fmt.Sprint(rng.IntN(3)), fmt.Sprint(rng.IntN(3))}
}

// TestPlacedUsesVersionsSlotOnlyWhileValid: Placed reuses the slot
// Version found only while the table has not changed since and the slot
// holds the key. Each case changes the table between Version and Placed in
// a way that moves or replaces the key's slot; Placed must still record
// the location in the key's current slot (a write through the stale
// pointer would leave the key without it).
func TestPlacedUsesVersionsSlotOnlyWhileValid(t *testing.T) {
	id := heap.RecordID{File: 3, Page: 4, Slot: 5}
	slotOf := func(h *harness, key string) *slot[entry] {
		d, k := h.ks.pdbs[0], []byte(key)
		return d.keys.find(d.keys.hash(k), k)
	}
	for _, c := range []struct {
		name   string
		change func(t *testing.T, h *harness)
	}{
		{"nothing", func(t *testing.T, h *harness) {}},
		{"splits and rebuilds", func(t *testing.T, h *harness) {
			before := slotOf(h, "a")
			for i := range 2000 {
				h.do("SET", fmt.Sprint("other:", i), "x")
			}
			if slotOf(h, "a") == before {
				t.Fatal("the key's slot did not move: the case tests nothing")
			}
		}},
		{"deleted and created again", func(t *testing.T, h *harness) {
			h.script("DEL a", "(integer) 1", "SET a again", "OK")
		}},
		{"flushed and created again", func(t *testing.T, h *harness) {
			muts := h.ks.pdbs[0].keys.muts
			h.script("FLUSHDB", "OK")
			if h.ks.pdbs[0].keys.muts <= muts {
				t.Errorf("FLUSHDB took the table's change count from %d to %d: a slot of the old table could pass for valid", muts, h.ks.pdbs[0].keys.muts)
			}
			h.script("SET a again", "OK")
		}},
		{"an expired key", func(t *testing.T, h *harness) {
			h.script("SET b 1 PX 10", "OK")
			h.advance(20)
			h.script("GET b", "(nil)") // deletes b
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newTracked(t)
			h.script("SET a 1", "OK")
			h.selectDB(1)
			h.script("SET c 1", "OK")
			h.selectDB(0)
			takeDirty(t, h.ks)
			if v := h.ks.Version(hk(0, "a")); !v.Live {
				t.Fatal("a is not live")
			}
			if h.ks.src.hint.sl == nil {
				t.Fatal("Version left no slot for Placed")
			}
			c.change(t, h)
			h.ks.Placed(hk(0, "a"), id, nil, true)
			expectVersion(t, h.ks, 0, "a", true, id)
			expectVersion(t, h.ks, 1, "c", true, heap.RecordID{})
		})
	}

	// A Placed for another key than Version's does not take its slot.
	h := newTracked(t)
	h.script("SET a 1", "OK", "SET b 1", "OK")
	takeDirty(t, h.ks)
	h.ks.Version(hk(0, "a"))
	h.ks.Placed(hk(0, "b"), id, nil, true)
	expectVersion(t, h.ks, 0, "a", true, heap.RecordID{})
	expectVersion(t, h.ks, 0, "b", true, id)
	// Nor one of the same key in another database.
	h.ks.Version(hk(0, "a"))
	h.selectDB(1)
	h.script("SET a 1", "OK")
	h.ks.Placed(hk(1, "a"), id, nil, true)
	expectVersion(t, h.ks, 0, "a", true, heap.RecordID{})
	expectVersion(t, h.ks, 1, "a", true, id)
}

// TestVersionAndPlacedDoNotAllocate: the checkpoint's per-key calls
// allocate nothing, for plain and integer strings, with and without a TTL.
func TestVersionAndPlacedDoNotAllocate(t *testing.T) {
	h := newTracked(t)
	const n = 1000
	for i := range n {
		switch i % 3 {
		case 0:
			h.do("SET", fmt.Sprint("key:", i), "value")
		case 1:
			h.do("SET", fmt.Sprint("key:", i), fmt.Sprint(i))
		default:
			h.do("SET", fmt.Sprint("key:", i), "value", "EX", "100")
		}
	}
	keys := h.ks.TakeDirty()
	h.ks.Version(keys[1]) // Version's buffer for integers grows once
	i := 0
	allocs := testing.AllocsPerRun(5*n, func() {
		k := keys[i%len(keys)]
		v := h.ks.Version(k)
		h.ks.Placed(k, heap.RecordID{File: 1, Page: uint32(i), Slot: 1}, nil, v.Live)
		i++
	})
	if allocs != 0 {
		t.Errorf("Version and Placed: %v allocations per key, want 0", allocs)
	}
}
