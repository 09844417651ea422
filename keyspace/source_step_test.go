package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moond-db/moond/resp"
)

// TestStepwiseTakeInterleaved checks the take in steps (BeginTake,
// TakeSome) against a model while random writes, deletions, renames,
// moves, expiries, FLUSHDB and SWAPDB run between the steps and between
// the writes of the keys taken, over tables that split and merge under
// the walk. The model is a twin keyspace that gets the same commands and
// takes its dirty pairs (TakeDirty) after each, which tells which pairs
// the command changed: a pair whose last change came after the stepwise
// take last returned it is dirty when the next take begins, and must be
// returned by it (a pair changed before the take returned it is covered:
// its Version is read after). The take returns no pair twice, and leaves
// no key with the take's dirty bit. Each keyspace
// writes what it takes into a model heap as the checkpoint does (Version
// read when the key is written, after it was taken); after the rounds,
// two more checkpoints, and each heap must hold exactly its keyspace: no
// change was lost by a dirty bit cleared without a write that covers it.
// It runs in list mode with lookups and walks, and in walk mode.
func TestStepwiseTakeInterleaved(t *testing.T) {
	for _, mode := range listModes {
		for _, path := range takePaths {
			t.Run(mode.name+"/"+path.name, func(t *testing.T) {
				withDirtyList(mode.ratio, mode.min, func() {
					withTakeWalkRatio(path.ratio, func() {
						for seed := uint64(1); seed <= 2; seed++ {
							t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { stepwiseTake(t, seed) })
						}
					})
				})
			})
		}
	}
}

func stepwiseTake(t *testing.T, seed uint64) {
	step, twin := newTracked(t), newTracked(t)
	ms, mt := newModelHeap(), newModelHeap()
	rng := rand.New(rand.NewPCG(seed, seed*31))
	const nkeys = 2000
	seq := 0
	changed := map[string]int{} // pair -> seq of its last change
	takenAt := map[string]int{} // pair -> seq when the stepwise take last returned it
	do := func(args []string) {
		for _, h := range []*harness{step, twin} {
			if args[0] == "SELECT" {
				h.selectDB(int(args[1][0] - '0'))
			} else {
				h.do(args...)
			}
		}
		seq++
		for _, k := range twin.ks.TakeDirty() {
			changed[pairName(t, k)] = seq
			mt.write(t, twin.ks, k)
		}
		mt.release(t)
	}
	churn := func(n int) {
		for range n {
			switch r := rng.IntN(100); {
			case r == 0:
				do([]string{"FLUSHDB"})
			case r == 1:
				do([]string{"SWAPDB", fmt.Sprint(rng.IntN(3)), fmt.Sprint(rng.IntN(3))})
			case r < 4:
				// Many new keys: the tables split under the walk.
				for range 50 {
					do([]string{"SET", fmt.Sprint("new:", rng.IntN(4*nkeys)), "x"})
				}
			default:
				do(randomChurn(rng, nkeys))
			}
			if rng.IntN(50) == 0 {
				step.advance(1)
				twin.advance(1)
			}
		}
	}
	steps := 0
	for round := range 8 {
		churn(rng.IntN(nkeys))
		if rng.IntN(3) == 0 {
			// Most keys deleted: the tables merge under the walk.
			for i := range nkeys {
				do([]string{"DEL", fmt.Sprint("key:", i), fmt.Sprint("new:", i)})
			}
		}
		want := map[string]bool{}
		for name, at := range changed {
			if at > takenAt[name] {
				want[name] = true
			}
		}
		ms.file = uint32(round + 1)
		// A pair with neither a key nor a record when the take begins has
		// nothing for the checkpoint to write or free: a compaction of the
		// list may have forgotten it (dedupeDirty), and the take need not
		// return it. A change to it after BeginTake marks it for the next.
		empty := map[string]bool{}
		for name := range want {
			empty[name] = pairIsEmpty(step.ks, name)
		}

		step.ks.BeginTake()
		got := map[string]bool{}
		for done := false; !done; {
			var keys [][]byte
			keys, done = step.ks.TakeSome(1 + rng.IntN(40))
			steps++
			for _, k := range keys {
				name := pairName(t, k)
				if got[name] {
					t.Fatalf("round %d: the take returned %s twice", round, name)
				}
				got[name] = true
				takenAt[name] = seq
				if rng.IntN(8) == 0 {
					churn(1) // between the take of a key and its write
				}
				ms.write(t, step.ks, k)
			}
			churn(rng.IntN(30))
		}
		ms.release(t)
		for name := range want {
			if !got[name] && !empty[name] {
				t.Fatalf("round %d: %s was dirty when the take began and was not taken (took %d pairs, %d were dirty)", round, name, len(got), len(want))
			}
		}
		checkNoPrevBits(t, step.ks)
		checkOwnership(t, step.ks, ms)
	}
	for range 2 {
		ms.checkpoint(t, step.ks)
	}
	checkHeapMatches(t, step.ks, ms, step.clock)
	checkHeapMatches(t, twin.ks, mt, twin.clock)
	if steps < 100 {
		t.Fatalf("only %d take steps: the takes were not interleaved", steps)
	}
}

// checkNoPrevBits checks that no key has the dirty bit of a take, once it
// is done: the next take would take it for a change it never had.
func checkNoPrevBits(t *testing.T, ks *Keyspace) {
	t.Helper()
	if ks.Taking() {
		t.Fatal("a take is still in progress")
	}
	for _, d := range ks.pdbs {
		d.keys.each(func(sl *slot[entry]) {
			if sl.v.loc&ks.src.prev() != 0 {
				t.Fatalf("key %d/%q has the done take's dirty bit", d.phys, sl.key())
			}
		})
	}
}

// TestTakeStepStaysShortOn1MKeys: with 1M dirty keys, in list mode
// (looked up) and in walk mode, no TakeSome call of a whole take runs
// longer than a bound generous enough for a loaded machine, while taking
// them in one call takes far longer. Writes run between the steps.
func TestTakeStepStaysShortOn1MKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("1M keys")
	}
	const n = 1000000
	const bound = 5 * time.Millisecond // for the note below only
	for _, c := range []struct {
		name  string
		every int
	}{{"walk", 1}, {"lookup", 64}} {
		t.Run(c.name, func(t *testing.T) {
			ks, keys := benchKeyspace(n)
			ks.TrackDirty = true
			setLastLSN(ks, func() uint64 { return 7 })
			ks.TakeDirty() // the keys made untracked
			var dirty [][]byte
			for i, k := range keys {
				if i%c.every == 0 {
					dirty = append(dirty, k)
				}
			}
			dirtyAll(ks, dirty)
			t0 := time.Now()
			if got := len(ks.TakeDirty()); got != len(dirty) {
				t.Fatalf("TakeDirty took %d keys, want %d", got, len(dirty))
			}
			whole := time.Since(t0)

			dirtyAll(ks, dirty)
			rng := rand.New(rand.NewPCG(1, 2))
			ks.BeginTake()
			var steps []time.Duration
			taken, most := 0, 0
			for done := false; !done; {
				t0 := time.Now()
				var got [][]byte
				got, done = ks.TakeSome(1024)
				steps = append(steps, time.Since(t0))
				most = max(most, ks.take.stepWork)
				taken += len(got)
				dirtyAll(ks, [][]byte{keys[rng.IntN(n)]}) // a client's write between two steps
			}
			slices.Sort(steps)
			t.Logf("%d keys: one call %v; %d steps, the longest %v, the most work %d (budget %d)",
				len(dirty), whole, len(steps), steps[len(steps)-1], most, 1024*takeStepCost)
			if taken < len(dirty) {
				t.Fatalf("the take returned %d keys, want at least %d", taken, len(dirty))
			}
			// The bound is on the work a step does, in the units takeSome
			// counts (about a nanosecond each on a large keyspace), so that
			// the test does not depend on how busy the machine is: a step
			// may overrun its budget by one unit of work, a segment pair
			// at most. How long the units take is measured by
			// BenchmarkTakeDirty1M, not here.
			if limit := 1024*takeStepCost + maxStepOverrun; most > limit {
				t.Errorf("a step did %d units of work, want at most %d", most, limit)
			}
			if c.every == 1 && whole < 4*bound {
				t.Logf("note: one call took only %v here", whole)
			}
		})
	}
}

// maxStepOverrun is how far past its budget one take step may go: the unit
// of work it starts last (a segment pair walked whole, a lookup).
const maxStepOverrun = 4096

// TestFirstTakeSweepsUntrackedKeysInSteps: the keys made while tracking was
// off (a boot's WAL replay) are marked dirty by the first take in its
// steps, not by BeginTake in one call: BeginTake marks none, no TakeSome
// call does more than a step's work, and the take returns every pair once,
// the untracked keys and those written, made or deleted between the steps.
func TestFirstTakeSweepsUntrackedKeysInSteps(t *testing.T) {
	const n = 100000
	ks, keys := benchKeyspace(n)
	ks.TrackDirty = true
	setLastLSN(ks, func() uint64 { return 7 })
	marked := func() int {
		c := 0
		for _, d := range ks.pdbs {
			d.keys.each(func(sl *slot[entry]) {
				if sl.v.loc != 0 {
					c++
				}
			})
		}
		return c
	}
	ks.BeginTake()
	if m := marked(); m != 0 {
		t.Fatalf("BeginTake marked %d keys in one call", m)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var w resp.Writer
	c := &Client{}
	want := map[string]bool{}
	for _, k := range keys {
		want[string(AppendHeapKey(nil, 0, k))] = true
	}
	taken := map[string]int{}
	var late []string // keys made once the take proper began: the next take's
	steps, most := 0, 0
	for done := false; !done; steps++ {
		var got [][]byte
		got, done = ks.TakeSome(1024)
		most = max(most, ks.take.stepWork)
		for _, k := range got {
			taken[string(k)]++
		}
		// A client's writes between two steps: an untracked key changed,
		// another deleted, a new key made.
		dirtyAll(ks, [][]byte{keys[rng.IntN(n)]})
		ks.Exec(c, [][]byte{[]byte("DEL"), keys[rng.IntN(n)]}, &w)
		nk := []byte(fmt.Sprint("new:", steps))
		ks.Exec(c, [][]byte{[]byte("SET"), nk, []byte("z")}, &w)
		if ks.take.phase == takeSweep {
			want[string(AppendHeapKey(nil, 0, nk))] = true // before the take proper: it takes the key
		} else {
			late = append(late, string(AppendHeapKey(nil, 0, nk)))
		}
		w.Reset()
	}
	t.Logf("%d keys swept and taken in %d steps, the most work %d (budget %d)", n, steps, most, 1024*takeStepCost)
	if limit := 1024*takeStepCost + maxStepOverrun; most > limit {
		t.Errorf("a step did %d units of work, want at most %d", most, limit)
	}
	for k, c := range taken {
		if c != 1 {
			t.Fatalf("pair %q taken %d times", k, c)
		}
	}
	for k := range want {
		if taken[k] == 0 {
			t.Fatalf("pair %q not taken", k)
		}
	}
	if len(late) == 0 || steps < 10 {
		t.Fatalf("%d steps, %d keys made after the sweep: the test missed its case", steps, len(late))
	}
	// The next take begins at once (BeginTake marks nothing) and returns
	// what changed since the take proper began.
	dirtyAll(ks, keys[:1])
	next := map[string]int{}
	for _, k := range ks.TakeDirty() {
		next[string(k)]++
	}
	for _, k := range append(late, string(AppendHeapKey(nil, 0, keys[0]))) {
		if next[k] != 1 {
			t.Fatalf("the second take returned %q %d times, want once", k, next[k])
		}
	}
}

// pairIsEmpty reports whether the pair named "db/key" (physical database)
// has neither a key nor a record.
func pairIsEmpty(ks *Keyspace, name string) bool {
	db, key, _ := strings.Cut(name, "/")
	phys, _ := strconv.Atoi(db)
	d := ks.pdbs[phys]
	return d.keys.find(d.keys.hash([]byte(key)), []byte(key)) == nil && !ks.pairHasRecord(pairKey{phys, key})
}
