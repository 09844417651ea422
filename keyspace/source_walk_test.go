package keyspace

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"unsafe"

	"github.com/moond-db/moond/persistence/heap"
)

// withDirtyList runs fn with walk mode's bound (dirtyListRatio,
// dirtyListMin) set to ratio and min.
func withDirtyList(ratio, min int, fn func()) {
	oldRatio, oldMin := dirtyListRatio, dirtyListMin
	dirtyListRatio, dirtyListMin = ratio, min
	defer func() { dirtyListRatio, dirtyListMin = oldRatio, oldMin }()
	fn()
}

// listModes are bounds of the dirty list: never walk mode; walk mode at
// a database's first reference; and walk mode once a database lists a
// few references and a quarter of its keys, so that it starts with
// references of every kind.
var listModes = []struct {
	name       string
	ratio, min int
}{{"list", 1, math.MaxInt}, {"early", 1 << 30, 0}, {"often", 4, 8}}

// TestCheckpointSourceRandomizedWalkMode is
// TestCheckpointSourceRandomized with databases going to walk mode early
// or often, TakeDirty looking up or walking the databases in list mode.
func TestCheckpointSourceRandomizedWalkMode(t *testing.T) {
	for _, mode := range listModes[1:] {
		for _, path := range takePaths {
			t.Run(mode.name+"/"+path.name, func(t *testing.T) {
				withDirtyList(mode.ratio, mode.min, func() {
					withTakeWalkRatio(path.ratio, func() {
						for seed := uint64(1); seed <= 2; seed++ {
							t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
								checkpointSourceRandomized(t, seed)
							})
						}
					})
				})
			})
		}
	}
}

// TestTakeDirtyListAndWalkModeAgree runs the same random commands against
// a keyspace that never goes to walk mode and one that goes early or
// often, and checks that DirtyKeys and TakeDirty agree at every
// checkpoint (see takeDirtyAgrees). In "saturated", the filter of keys
// removed dirty holds every address, so that walk mode keeps every
// reference.
func TestTakeDirtyListAndWalkModeAgree(t *testing.T) {
	modes := append(slices.Clone(listModes[1:]), listModes[2])
	modes[len(modes)-1].name = "saturated"
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
					envs := [2]func(*Keyspace, func()){
						func(_ *Keyspace, fn func()) { withDirtyList(listModes[0].ratio, listModes[0].min, fn) },
						func(ks *Keyspace, fn func()) {
							if mode.name == "saturated" {
								saturateRemovedDirty(ks)
							}
							withDirtyList(mode.ratio, mode.min, fn)
						},
					}
					takeDirtyAgrees(t, seed, [2]string{listModes[0].name, mode.name}, envs)
				})
			}
		})
	}
}

// saturateRemovedDirty fills the filter of keys removed dirty: it holds
// every address.
func saturateRemovedDirty(ks *Keyspace) {
	ks.src.removedDirty.add(nil)
	for i := range ks.src.removedDirty {
		ks.src.removedDirty[i] = ^uint64(0)
	}
}

// TestRecoveryOverAFuzzyHeapRandomizedWalkMode is
// TestRecoveryOverAFuzzyHeapRandomized with databases going to walk mode
// early or often.
func TestRecoveryOverAFuzzyHeapRandomizedWalkMode(t *testing.T) {
	for _, mode := range listModes[1:] {
		t.Run(mode.name, func(t *testing.T) {
			withDirtyList(mode.ratio, mode.min, func() {
				for seed := uint64(1); seed <= 2; seed++ {
					t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
						testFuzzyRecovery(t, seed, 20000)
					})
				}
			})
		})
	}
}

// TestWalkModeTakesPairsWithNoKey goes to walk mode with references of
// every kind listed: a key removed while dirty (with and without a heap
// record: its reference names a pair with no key, and is not marked), a
// clean key removed (a grave), a key removed and created again; then, in
// walk mode, keys changed, created, removed clean and removed dirty.
// TakeDirty must take exactly what it takes without walk mode, and so
// when the filter of keys removed dirty holds every address (saturated).
func TestWalkModeTakesPairsWithNoKey(t *testing.T) {
	modes := []struct {
		name      string
		mode      int
		saturated bool
	}{{"list", 0, false}, {"often", 2, false}, {"saturated", 2, true}}
	var got [3][]string
	var dirty [3]int
	for j, c := range modes {
		mode := c.mode
		withDirtyList(listModes[mode].ratio, listModes[mode].min, func() {
			h := newTracked(t)
			m := newModelHeap()
			for i := range 100 {
				h.do("SET", fmt.Sprint("k", i), "v")
			}
			m.checkpoint(t, h.ks)
			h.script("SET a 1", "OK", "DEL a", n(1))   // dirty, removed: no record
			h.script("DEL k1", n(1))                   // clean, removed: a grave
			h.script("SET k2 x", "OK", "DEL k2", n(1)) // dirty, removed: a grave
			h.script("SET k3 x", "OK", "DEL k3", n(1), "SET k3 y", "OK")
			h.script("DEL k5", n(1), "SET k5 y", "OK")
			if h.ks.src.dbs[0].walking {
				t.Fatalf("%s: walk mode with %d references", c.name, h.ks.src.dbs[0].listed)
			}
			if c.saturated {
				saturateRemovedDirty(h.ks)
			}
			for i := 10; i < 40; i++ {
				h.do("SET", fmt.Sprint("k", i), "w")
			}
			if h.ks.src.dbs[0].walking != (mode != 0) {
				t.Fatalf("%s: walk mode %v", c.name, h.ks.src.dbs[0].walking)
			}
			// The references to keys still live are dropped, but those
			// the filter of keys removed dirty may hold: with every
			// address in it, all stay.
			if mode != 0 {
				liveRefs := 0
				for _, r := range h.ks.src.dirty {
					if sl := h.ks.findRef(r); sl != nil && sl.kp == unsafe.Pointer(r.p) {
						liveRefs++
						if !h.ks.src.removedDirty.has(sl.kp) {
							t.Fatalf("%s: walk mode kept the reference of live key %q", c.name, sl.key())
						}
					}
				}
				if c.saturated && liveRefs == 0 {
					t.Fatalf("%s: walk mode kept no reference to a live key", c.name)
				}
			}
			h.script("SET k50 z", "OK", "SET new 1", "OK", "DEL k51", n(1),
				"SET k52 z", "OK", "DEL k52", n(1), "SET a 2", "OK", "DEL a", n(1), "DEL k5", n(1))
			checkDirtyRefs(t, h.ks)
			checkOwnership(t, h.ks, m)
			dirty[j] = h.ks.DirtyKeys()
			got[j] = takeDirty(t, h.ks)
			for _, k := range got[j] {
				m.write(t, h.ks, hk(0, k[2:]))
			}
			m.release(t)
			checkHeapMatches(t, h.ks, m, h.clock)
			if h.ks.src.dbs[0].walking || len(h.ks.src.dirty) != 0 {
				t.Errorf("%s: after TakeDirty: walk mode %v, %d references", c.name, h.ks.src.dbs[0].walking, len(h.ks.src.dirty))
			}
		})
	}
	// "a" came and went with no record in the heap: a compaction of the
	// list may forget it (dedupeDirty), and the checkpoint would have
	// nothing to do for it either way (checkHeapMatches above holds both
	// ways). Every other pair must be taken.
	want := []string{"0/k1", "0/k2", "0/k3", "0/k5", "0/k50", "0/k51", "0/k52", "0/new"}
	for i := 10; i < 40; i++ {
		want = append(want, fmt.Sprint("0/k", i))
	}
	slices.Sort(want)
	for j := range got {
		rest := slices.DeleteFunc(slices.Clone(got[j]), func(k string) bool { return k == "0/a" })
		if !slices.Equal(rest, want) {
			t.Errorf("%s: TakeDirty = %q, want %q (and 0/a or not)", modes[j].name, got[j], want)
		}
		if n := len(want) + len(got[j]) - len(rest); dirty[j] != n {
			t.Errorf("%s: DirtyKeys = %d, want %d", modes[j].name, dirty[j], n)
		}
	}
}

// TestWalkModeReleasesTheDirtyList: a database whose references pass the
// bound goes to walk mode, and the list's memory goes back to the
// allocator (UsedMemory, which counts the list, drops); loading a dataset
// lists almost nothing.
func TestWalkModeReleasesTheDirtyList(t *testing.T) {
	h := newTracked(t)
	const nkeys = 100000
	for i := range nkeys {
		h.do("SET", fmt.Sprint("key:", i), "v")
	}
	// Every key is dirty; the list held dirtyListMin references when the
	// database went to walk mode, and holds none now.
	if !h.ks.src.dbs[0].walking || len(h.ks.src.dirty) != 0 || cap(h.ks.src.dirty) > dirtyListMin {
		t.Errorf("after loading: walk mode %v, list of %d references (capacity %d)", h.ks.src.dbs[0].walking, len(h.ks.src.dirty), cap(h.ks.src.dirty))
	}
	if got := h.ks.DirtyKeys(); got != nkeys {
		t.Errorf("DirtyKeys = %d, want %d", got, nkeys)
	}
	if got := len(takeDirty(t, h.ks)); got != nkeys {
		t.Errorf("TakeDirty took %d pairs, want %d", got, nkeys)
	}
	// key:7 has a record in the heap now (the others need none here):
	// its removal below must be listed, for the checkpoint to free it.
	h.ks.Placed(AppendHeapKey(nil, 0, []byte("key:7")), heap.RecordID{File: 1, Page: 7}, nil, true)

	// After a checkpoint: few changes are listed, and UsedMemory counts
	// the list.
	base := h.ks.UsedMemory() - h.ks.dirtyListMemory()
	bound := nkeys / dirtyListRatio
	for i := range bound {
		h.do("SET", fmt.Sprint("key:", i), "w")
	}
	if h.ks.src.dbs[0].walking || len(h.ks.src.dirty) != bound {
		t.Fatalf("%d changes: walk mode %v, %d references", bound, h.ks.src.dbs[0].walking, len(h.ks.src.dirty))
	}
	listMem := h.ks.dirtyListMemory()
	if listMem < int64(bound)*16 || h.ks.UsedMemory() != base+listMem {
		t.Errorf("list of %d references: %d bytes; UsedMemory %d, without the list %d", bound, listMem, h.ks.UsedMemory(), base)
	}
	// One more: the bound is passed, and the list released.
	h.do("SET", fmt.Sprint("key:", bound), "w")
	if !h.ks.src.dbs[0].walking || len(h.ks.src.dirty) != 0 || cap(h.ks.src.dirty) > 256 {
		t.Errorf("past the bound: walk mode %v, %d references (capacity %d)", h.ks.src.dbs[0].walking, len(h.ks.src.dirty), cap(h.ks.src.dirty))
	}
	if got := h.ks.UsedMemory(); got > base+h.ks.dirtyListMemory() || got > base+4096 {
		t.Errorf("UsedMemory %d after the list was released, %d without it", got, base)
	}
	// Removals are still listed, and another database is not in walk
	// mode.
	h.do("DEL", "key:7")
	h.selectDB(1)
	h.do("SET", "other", "1")
	if len(h.ks.src.dirty) != 2 || h.ks.src.dbs[1].walking {
		t.Errorf("list of %d references, database 1 walk mode %v", len(h.ks.src.dirty), h.ks.src.dbs[1].walking)
	}
	checkDirtyRefs(t, h.ks)
	if got, want := h.ks.DirtyKeys(), bound+2; got != want {
		t.Errorf("DirtyKeys = %d, want %d", got, want)
	}
	if got, want := len(takeDirty(t, h.ks)), bound+2; got != want {
		t.Errorf("TakeDirty took %d pairs, want %d", got, want)
	}
}
