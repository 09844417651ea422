package txnlog

import (
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
}

// model is a run of the protocol over n shards.
type model struct {
	rng       *rand.Rand
	shards    []*modelShard
	txns      []*modelTxn
	next      uint64
	lostPlain int // writes of no txn that a replay left out
}

// run appends up to steps operations; it stops early after a txn that is
// never acknowledged (the crash comes before its shards run anything else).
func (m *model) run(steps int) {
	n := len(m.shards)
	for range steps {
		switch m.rng.IntN(4) {
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
		default:
			m.next++
			x := &modelTxn{id: m.next}
			for i := range n {
				if m.rng.IntN(2) == 0 || (i == n-1 && len(x.parts) == 0) {
					x.parts = append(x.parts, i)
				}
			}
			for _, p := range x.parts {
				s := m.shards[p]
				s.log = append(s.log, entry{marker: &Marker{Txid: x.id}})
				if s.applied == nil {
					s.applied = map[uint64]bool{}
				}
				s.applied[x.id] = true
				for range m.rng.IntN(3) {
					s.log = append(s.log, entry{txid: x.id})
				}
				s.log = append(s.log, entry{marker: &Marker{End: true, Txid: x.id, Parts: u32s(x.parts)}})
				s.lastTx = x.id
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

// check fails t when a txn is applied on some of its shards only, or an
// acknowledged one is lost; it returns each txn's outcome.
func (m *model) check(t *testing.T, seed uint64, boot int) map[uint64]bool {
	out := map[uint64]bool{}
	for _, x := range m.txns {
		applied := 0
		for _, p := range x.parts {
			if m.shards[p].applied[x.id] {
				applied++
			}
		}
		if applied != 0 && applied != len(x.parts) {
			t.Fatalf("seed %d boot %d: txn %d applied on %d of its %d shards", seed, boot, x.id, applied, len(x.parts))
		}
		if x.acked && applied == 0 {
			t.Fatalf("seed %d boot %d: acknowledged txn %d lost", seed, boot, x.id)
		}
		out[x.id] = applied > 0
	}
	if m.lostPlain > 0 {
		t.Fatalf("seed %d boot %d: replay left out %d writes that belong to no txn", seed, boot, m.lostPlain)
	}
	return out
}

// TestDecideModel crashes the model twice: every txn is whole or absent
// after each boot, none acknowledged is lost, and a txn the first boot
// left out stays out after the second, whatever checkpoints ran between.
func TestDecideModel(t *testing.T) {
	for seed := range uint64(5000) {
		m := &model{rng: rand.New(rand.NewPCG(seed, 7))}
		m.shards = make([]*modelShard, 1+m.rng.IntN(4))
		for i := range m.shards {
			m.shards[i] = &modelShard{}
		}
		m.run(1 + m.rng.IntN(12))
		d := m.crash()
		first := m.check(t, seed, 1)
		if d.Max() < m.next && anyKept(m.shards, m.next) {
			t.Fatalf("seed %d: Max %d below txid %d that a log keeps", seed, d.Max(), m.next)
		}
		m.next = max(m.next, d.Max())
		before := len(m.txns)
		m.run(1 + m.rng.IntN(12))
		m.crash()
		second := m.check(t, seed, 2)
		for _, x := range m.txns[:before] {
			if first[x.id] != second[x.id] && !first[x.id] {
				t.Fatalf("seed %d: txn %d left out by the first boot, applied by the second", seed, x.id)
			}
		}
	}
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
	m, err := Parse(EndArgs(42, []int{0, 3}))
	if err != nil || !m.End || m.Txid != 42 || !slices.Equal(m.Parts, []uint32{0, 3}) {
		t.Fatalf("END: %+v %v", m, err)
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
