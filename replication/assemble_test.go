package replication

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// The assembler against a model: a random history of a master's shards
// (records of one shard, txns over several, parts that are empty or never
// come), fed in random interleavings of the shards' orders, with each
// txn's close after its parts. The output must have each txn as one unit
// holding exactly its parts, each shard's commands in that shard's order,
// nothing lost or twice, and nothing left parked at the end.

// modelHistory is a generated master history.
type modelHistory struct {
	shards  int
	seqs    [][]*Unit           // per shard, in its order
	txns    map[uint64][]string // each txn's commands, its parts in shard order
	parts   map[uint64]int      // how many parts of each txn are fed
	records map[string]bool     // the commands of records outside txns
}

// genHistory makes a history of n units over shards shards; a txn's part
// is left out (never fed: a refusing shard) with probability 1/10.
func genHistory(r *rand.Rand, shards, n int) *modelHistory {
	h := &modelHistory{shards: shards, seqs: make([][]*Unit, shards), txns: map[uint64][]string{},
		parts: map[uint64]int{}, records: map[string]bool{}}
	txid := uint64(0)
	for e := range n {
		if r.Intn(3) == 0 {
			s := r.Intn(shards)
			u := &Unit{Shard: s}
			for c := range 1 + r.Intn(2) {
				name := fmt.Sprintf("r%d.s%d.c%d", e, s, c)
				u.DBs, u.Cmds = append(u.DBs, r.Intn(2)), append(u.Cmds, [][]byte{[]byte("SET"), []byte(name)})
				h.records[name] = true
			}
			h.seqs[s] = append(h.seqs[s], u)
			continue
		}
		txid++
		var set []int
		for s := range shards {
			if r.Intn(2) == 0 {
				set = append(set, s)
			}
		}
		if len(set) == 0 {
			set = []int{r.Intn(shards)}
		}
		h.txns[txid] = nil
		for _, s := range set {
			u := &Unit{Shard: s, Txid: txid, Shards: set}
			for c := range r.Intn(3) {
				name := fmt.Sprintf("t%d.s%d.c%d", txid, s, c)
				u.DBs, u.Cmds = append(u.DBs, r.Intn(2)), append(u.Cmds, [][]byte{[]byte("SET"), []byte(name)})
			}
			if r.Intn(10) == 0 {
				continue // never fed
			}
			for _, cmd := range u.Cmds {
				h.txns[txid] = append(h.txns[txid], string(cmd[1]))
			}
			h.parts[txid]++
			h.seqs[s] = append(h.seqs[s], u)
		}
	}
	return h
}

// feedRandomly feeds h to a in a random interleaving: the next unit of a
// random shard, or the close of a txn whose parts are all fed. In strict
// mode a shard's part waits until every earlier txn on that shard closed
// (the holds' order), and each txn must be out once it closed.
func feedRandomly(t *testing.T, r *rand.Rand, h *modelHistory, a *assembler, strict bool, out *[][]string) {
	next := make([]int, h.shards)
	fed := map[uint64]int{}
	closed := map[uint64]bool{}
	var closable []uint64
	for txid, n := range h.parts {
		if n == 0 {
			closable = append(closable, txid)
		}
	}
	slices.Sort(closable)
	mayFeed := func(s int) bool {
		if next[s] >= len(h.seqs[s]) {
			return false
		}
		u := h.seqs[s][next[s]]
		if !strict || u.Txid == 0 {
			return true
		}
		for txid := range h.txns {
			if txid < u.Txid && !closed[txid] && onShard(h, txid, s) {
				return false
			}
		}
		return true
	}
	for {
		var shards []int
		for s := range h.shards {
			if mayFeed(s) {
				shards = append(shards, s)
			}
		}
		if len(shards) == 0 && len(closable) == 0 {
			break
		}
		if len(closable) > 0 && (len(shards) == 0 || r.Intn(3) == 0) {
			i := r.Intn(len(closable))
			txid := closable[i]
			closable = slices.Delete(closable, i, i+1)
			closed[txid] = true
			a.close(txid)
			if strict && a.txns[txid] != nil {
				t.Fatalf("txn %d still parked after its close", txid)
			}
			continue
		}
		s := shards[r.Intn(len(shards))]
		u := h.seqs[s][next[s]]
		next[s]++
		if err := a.add(u); err != nil {
			t.Fatal(err)
		}
		if u.Txid != 0 {
			if fed[u.Txid]++; fed[u.Txid] == h.parts[u.Txid] {
				closable = append(closable, u.Txid)
			}
		}
	}
	for s := range h.shards {
		if next[s] != len(h.seqs[s]) {
			t.Fatalf("shard %d: %d of %d units fed (strict mode stuck)", s, next[s], len(h.seqs[s]))
		}
	}
}

// onShard reports whether txn txid has a unit (fed or not) on shard s.
func onShard(h *modelHistory, txid uint64, s int) bool {
	for _, u := range h.seqs[s] {
		if u.Txid == txid {
			return true
		}
	}
	return false
}

// checkOutput checks out against h.
func checkOutput(t *testing.T, h *modelHistory, out [][]string) {
	t.Helper()
	seen := map[string]bool{}
	for _, unit := range out {
		for _, c := range unit {
			if seen[c] {
				t.Fatalf("%s emitted twice", c)
			}
			seen[c] = true
		}
		if strings.HasPrefix(unit[0], "r") {
			continue // a record's commands: checked by the shard order
		}
		var txid uint64
		fmt.Sscanf(unit[0], "t%d.", &txid)
		if want := h.txns[txid]; !slices.Equal(unit, want) {
			t.Fatalf("txn %d emitted as %q, want one unit %q", txid, unit, want)
		}
	}
	for s := range h.shards {
		var want, got []string
		for _, u := range h.seqs[s] {
			for _, cmd := range u.Cmds {
				want = append(want, string(cmd[1]))
			}
		}
		for _, unit := range out {
			for _, c := range unit {
				if strings.Contains(c, fmt.Sprintf(".s%d.", s)) {
					got = append(got, c)
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("shard %d's commands out of order or lost:\n got %q\nwant %q", s, got, want)
		}
	}
}

// TestAssemblerModel runs many random histories through the assembler, in
// strict (the holds' order) and loose (any order) interleavings.
func TestAssemblerModel(t *testing.T) {
	for _, strict := range []bool{true, false} {
		for seed := range int64(400) {
			r := rand.New(rand.NewSource(seed))
			h := genHistory(r, 2+r.Intn(4), 5+r.Intn(40))
			var out [][]string
			a := newAssembler(func(dbs []int, cmds [][][]byte) {
				if len(dbs) != len(cmds) {
					t.Fatalf("%d databases for %d commands", len(dbs), len(cmds))
				}
				var unit []string
				for _, c := range cmds {
					unit = append(unit, string(c[1]))
				}
				out = append(out, unit)
			})
			feedRandomly(t, r, h, a, strict, &out)
			if n := a.parkedLen(); n != 0 || len(a.txns) != 0 {
				t.Fatalf("seed %d: %d units and %d txns parked at the end", seed, n, len(a.txns))
			}
			checkOutput(t, h, out)
		}
	}
}

// TestAssemblerParksAndQueues: a part waits for the other shard's; the
// first shard's later record queues behind it while another shard's
// record goes on; both parts then come out as one unit, then the record.
func TestAssemblerParksAndQueues(t *testing.T) {
	var out []string
	a := newAssembler(func(_ []int, cmds [][][]byte) {
		var unit []string
		for _, c := range cmds {
			unit = append(unit, string(c[1]))
		}
		out = append(out, strings.Join(unit, " "))
	})
	cmd := func(s string) [][]byte { return [][]byte{[]byte("SET"), []byte(s)} }
	both := []int{0, 1}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.add(&Unit{Shard: 0, Txid: 7, Shards: both, DBs: []int{0}, Cmds: [][][]byte{cmd("a")}}))
	must(a.add(&Unit{Shard: 0, DBs: []int{0}, Cmds: [][][]byte{cmd("a-later")}}))
	must(a.add(&Unit{Shard: 2, DBs: []int{0}, Cmds: [][][]byte{cmd("c")}}))
	if want := []string{"c"}; !slices.Equal(out, want) {
		t.Fatalf("before the second part: %q, want %q", out, want)
	}
	must(a.add(&Unit{Shard: 1, Txid: 7, Shards: both, DBs: []int{0}, Cmds: [][][]byte{cmd("b")}}))
	if want := []string{"c", "a b", "a-later"}; !slices.Equal(out, want) {
		t.Fatalf("stream %q, want %q", out, want)
	}
	if err := a.add(&Unit{Shard: 3, Txid: 8, Shards: both}); err == nil {
		t.Fatal("a part from a shard its END does not name was taken")
	}
}

// TestAssemblerCloseTakesMissingPartAsEmpty: a txn whose part on a shard
// never comes is emitted at its close, and frees what queued behind it.
func TestAssemblerCloseTakesMissingPartAsEmpty(t *testing.T) {
	var out []string
	a := newAssembler(func(_ []int, cmds [][][]byte) { out = append(out, string(cmds[0][1])) })
	a.add(&Unit{Shard: 0, Txid: 3, Shards: []int{0, 1}, DBs: []int{0}, Cmds: [][][]byte{{[]byte("SET"), []byte("x")}}})
	a.add(&Unit{Shard: 0, DBs: []int{0}, Cmds: [][][]byte{{[]byte("SET"), []byte("y")}}})
	if len(out) != 0 {
		t.Fatalf("emitted before the close: %q", out)
	}
	a.close(3)
	if want := []string{"x", "y"}; !slices.Equal(out, want) || a.parkedLen() != 0 {
		t.Fatalf("after the close: %q (%d parked), want %q", out, a.parkedLen(), want)
	}
}
