package txnlog

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// The model of the protocol that TestDecideModel crashes at random: shards
// append to their logs; a txn's parts are BEGIN, records, END on each of
// its shards; the txn is acknowledged and lets its shards go once every
// END is durable; single-shard writes come between txns; a shard that no
// txn holds may take a checkpoint (redo point and mark). A crash keeps of
// each log at least its durable prefix and any longer prefix.

type entry struct {
	marker *Marker
	txid   uint64 // the txn a data record belongs to, 0 for none
}

type modelShard struct {
	log     []entry
	durable int             // entries durable
	redo    int             // entries below the redo point
	mark    uint64          // highest txid of a part below redo
	lastTx  uint64          // highest txid the log names
	applied map[uint64]bool // the txns whose part is in memory
	heap    map[uint64]bool // the txns whose part the last checkpoint holds
}

type modelTxn struct {
	id    uint64
	parts []int
	acked bool
	group uint64      // the group's first txid, 0 outside a group
	endAt map[int]int // group txns: the index of the END in each part's log
}

// model is a run of the protocol over n shards.
type model struct {
	rng       *rand.Rand
	shards    []*modelShard
	txns      []*modelTxn
	next      uint64
	lostPlain int // writes of no txn that a replay left out
	// noGroups leaves the group out of the ENDs (the protocol before
	// groups were logged), to show that the check catches what that loses.
	noGroups bool
}

// run appends up to steps operations; it stops early after a txn that is
// never acknowledged (the crash comes before its shards run anything else).
func (m *model) run(steps int) {
	n := len(m.shards)
	for range steps {
		switch m.rng.IntN(5) {
		case 0: // a single-shard write
			s := m.shards[m.rng.IntN(n)]
			s.log = append(s.log, entry{})
			if m.rng.IntN(2) == 0 {
				s.durable = len(s.log)
			}
		case 1: // a checkpoint on a shard no txn holds
			s := m.shards[m.rng.IntN(n)]
			s.durable = len(s.log)
			s.redo, s.mark = len(s.log), s.lastTx
			s.heap = maps.Clone(s.applied)
		case 4: // a group of txns
			if !m.group() {
				return
			}
		default:
			m.next++
			x := &modelTxn{id: m.next}
			for i := range n {
				if m.rng.IntN(2) == 0 || (i == n-1 && len(x.parts) == 0) {
					x.parts = append(x.parts, i)
				}
			}
			for _, p := range x.parts {
				m.appendPart(x, p, 0)
			}
			m.txns = append(m.txns, x)
			if m.rng.IntN(5) == 0 {
				return // not acknowledged: nothing runs on its shards before the crash
			}
			for _, p := range x.parts {
				m.shards[p].durable = len(m.shards[p].log)
			}
			x.acked = true
		}
	}
}

// appendPart appends x's part on shard p: BEGIN, none or more records,
// END (naming group, 0 for none); it returns the END's index in the log.
func (m *model) appendPart(x *modelTxn, p int, group uint64) int {
	s := m.shards[p]
	s.log = append(s.log, entry{marker: &Marker{Txid: x.id}})
	if s.applied == nil {
		s.applied = map[uint64]bool{}
	}
	s.applied[x.id] = true
	for range m.rng.IntN(3) {
		s.log = append(s.log, entry{txid: x.id})
	}
	s.log = append(s.log, entry{marker: &Marker{End: true, Txid: x.id, Parts: u32s(x.parts), Group: group}})
	s.lastTx = x.id
	return len(s.log) - 1
}

// group appends a group of txns, which take consecutive ids once their
// coordinator holds all their shards and whose parts follow one another on
// each shard at once, before any END is durable. The logs then reach the
// kernel in any order; a txn is acknowledged (and its shards let go) once
// its ENDs and every earlier txn of its group are. It reports whether
// every txn was acknowledged: if not, the crash comes next.
func (m *model) group() bool {
	n := len(m.shards)
	base := m.next + 1
	xs := make([]*modelTxn, 2+m.rng.IntN(3))
	for i := range xs {
		m.next++
		x := &modelTxn{id: m.next, group: base, endAt: map[int]int{}}
		for p := range n {
			if m.rng.IntN(2) == 0 || (p == n-1 && len(x.parts) == 0) {
				x.parts = append(x.parts, p)
			}
		}
		g := base
		if m.noGroups || g == x.id {
			g = 0
		}
		for _, p := range x.parts {
			x.endAt[p] = m.appendPart(x, p, g)
		}
		xs[i] = x
	}
	m.txns = append(m.txns, xs...)
	for _, s := range m.shards {
		s.durable += m.rng.IntN(len(s.log) - s.durable + 1)
	}
	whole := true
	for _, x := range xs {
		for _, p := range x.parts {
			whole = whole && x.endAt[p] < m.shards[p].durable
		}
		x.acked = whole
	}
	return whole
}

// crash keeps of each log its durable prefix and maybe more, recovers
// (Decide, Replay), logs the ABORTs of what replay left out, and returns
// the decision.
func (m *model) crash() *Decision {
	sums := map[uint32]*Summary{}
	for i, s := range m.shards {
		s.log = s.log[:s.durable+m.rng.IntN(len(s.log)-s.durable+1)]
		sum := &Summary{}
		sum.SetMark(s.mark)
		for _, e := range s.log[s.redo:] {
			if e.marker != nil {
				sum.Add(*e.marker)
			}
		}
		sums[uint32(i)] = sum
	}
	d := Decide(sums)
	for i, s := range m.shards {
		s.applied = maps.Clone(s.heap)
		if s.applied == nil {
			s.applied = map[uint64]bool{}
		}
		r := NewReplay(d)
		for _, e := range s.log[s.redo:] {
			if e.marker != nil {
				r.Marker(*e.marker)
				if !e.marker.End && !e.marker.Abort && !r.skipping {
					s.applied[e.marker.Txid] = true // its records, none or more
				}
				continue
			}
			skip := r.Skip()
			if skip && e.txid == 0 {
				m.lostPlain++ // a write of no txn: never left out
			}
			if !skip && e.txid != 0 {
				s.applied[e.txid] = true
			}
		}
		for _, x := range r.Dropped {
			s.log = append(s.log, entry{marker: &Marker{Abort: true, Txid: x}})
		}
		s.durable = len(s.log)
		s.lastTx = max(s.lastTx, sums[uint32(i)].Max)
	}
	return d
}

// check says what is wrong when a txn is applied on some of its shards
// only, an acknowledged one is lost, or a txn of a group outlives one it
// followed on a shard; it returns each txn's outcome.
func (m *model) check(seed uint64, boot int) (map[uint64]bool, error) {
	out := map[uint64]bool{}
	for _, x := range m.txns {
		applied := 0
		for _, p := range x.parts {
			if m.shards[p].applied[x.id] {
				applied++
			}
		}
		if applied != 0 && applied != len(x.parts) {
			return nil, fmt.Errorf("seed %d boot %d: txn %d applied on %d of its %d shards", seed, boot, x.id, applied, len(x.parts))
		}
		if x.acked && applied == 0 {
			return nil, fmt.Errorf("seed %d boot %d: acknowledged txn %d lost", seed, boot, x.id)
		}
		out[x.id] = applied > 0
	}
	for _, x := range m.txns { // a txn of a group never outlives one it follows on a shard
		for _, u := range m.txns {
			if x.group != 0 && u.group == x.group && u.id < x.id && out[x.id] && !out[u.id] &&
				slices.ContainsFunc(x.parts, func(p int) bool { return slices.Contains(u.parts, p) }) {
				return nil, fmt.Errorf("seed %d boot %d: txn %d applied, txn %d of its group before it on a shard lost", seed, boot, x.id, u.id)
			}
		}
	}
	if m.lostPlain > 0 {
		return nil, fmt.Errorf("seed %d boot %d: replay left out %d writes that belong to no txn", seed, boot, m.lostPlain)
	}
	return out, nil
}

// TestDecideModel crashes the model twice: every txn is whole or absent
// after each boot, none acknowledged is lost, and a txn the first boot
// left out stays out after the second, whatever checkpoints ran between.
func TestDecideModel(t *testing.T) {
	if err := runDecideModel(false); err != nil {
		t.Fatal(err)
	}
}

// TestDecideModelCatchesUnloggedGroups runs the model with ENDs that do
// not name their group, as moond logged them before: a txn of a group
// that read an earlier one's part outlives it after some crash, which the
// model's check must catch.
func TestDecideModelCatchesUnloggedGroups(t *testing.T) {
	err := runDecideModel(true)
	if err == nil {
		t.Fatal("the model kept every group whole without the group in the ENDs")
	}
	t.Log(err)
}

// runDecideModel runs 5000 seeds of the model and returns the first
// failure.
func runDecideModel(noGroups bool) error {
	for seed := range uint64(5000) {
		m := &model{rng: rand.New(rand.NewPCG(seed, 7)), noGroups: noGroups}
		m.shards = make([]*modelShard, 1+m.rng.IntN(4))
		for i := range m.shards {
			m.shards[i] = &modelShard{}
		}
		m.run(1 + m.rng.IntN(12))
		d := m.crash()
		first, err := m.check(seed, 1)
		if err != nil {
			return err
		}
		if d.Max() < m.next && anyKept(m.shards, m.next) {
			return fmt.Errorf("seed %d: Max %d below txid %d that a log keeps", seed, d.Max(), m.next)
		}
		m.next = max(m.next, d.Max())
		before := len(m.txns)
		m.run(1 + m.rng.IntN(12))
		m.crash()
		second, err := m.check(seed, 2)
		if err != nil {
			return err
		}
		for _, x := range m.txns[:before] {
			if first[x.id] != second[x.id] && !first[x.id] {
				return fmt.Errorf("seed %d: txn %d left out by the first boot, applied by the second", seed, x.id)
			}
		}
	}
	return nil
}

func anyKept(shards []*modelShard, txid uint64) bool {
	for _, s := range shards {
		for _, e := range s.log {
			if e.marker != nil && e.marker.Txid == txid {
				return true
			}
		}
	}
	return false
}

func u32s(p []int) []uint32 {
	out := make([]uint32, len(p))
	for i, v := range p {
		out[i] = uint32(v)
	}
	return out
}

func TestMarkersRoundTrip(t *testing.T) {
	m, err := Parse(EndArgs(42, 0, []int{0, 3}))
	if err != nil || !m.End || m.Txid != 42 || !slices.Equal(m.Parts, []uint32{0, 3}) || m.Group != 0 {
		t.Fatalf("END: %+v %v", m, err)
	}
	m, err = Parse(EndArgs(42, 40, []int{1}))
	if err != nil || !m.End || m.Txid != 42 || !slices.Equal(m.Parts, []uint32{1}) || m.Group != 40 {
		t.Fatalf("END in a group: %+v %v", m, err)
	}
	m, err = Parse(BeginArgs(7))
	if err != nil || m.End || m.Txid != 7 {
		t.Fatalf("BEGIN: %+v %v", m, err)
	}
	for _, bad := range [][][]byte{
		{[]byte(Command)},
		{[]byte(Command), []byte("BEGIN"), []byte("0")},
		{[]byte(Command), []byte("BEGIN"), []byte("1"), []byte("2")},
		{[]byte(Command), []byte("END"), []byte("1")},
		{[]byte(Command), []byte("END"), []byte("1"), []byte("2"), []byte("2")},
		{[]byte(Command), []byte("COMMIT"), []byte("1")},
		{[]byte(Command), []byte("END"), []byte("x"), []byte("0")},
		{[]byte(Command), []byte("END"), []byte("5"), []byte("GROUP"), []byte("5"), []byte("0")},
		{[]byte(Command), []byte("END"), []byte("5"), []byte("GROUP"), []byte("0"), []byte("0")},
		{[]byte(Command), []byte("END"), []byte("5"), []byte("GROUP"), []byte("3")},
	} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("END"), []byte("5"), []byte("01"))
	f.Fuzz(func(t *testing.T, kind, id, parts []byte) {
		args := [][]byte{[]byte(Command), kind, id}
		for _, b := range parts { // one shard number per byte
			args = append(args, []byte{b})
		}
		m, err := Parse(args)
		if err == nil && (m.Txid == 0 || (m.End && len(m.Parts) == 0)) {
			t.Fatalf("accepted %q as %+v", args, m)
		}
	})
}
