package keyspace

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The bitmap commands against a model, and their journal: the records
// each write logs, and replaying them (through Exec and through Replay)
// into an empty keyspace gives the same strings back.

// bitModel is the model: each key's bytes.
type bitModel map[string][]byte

// grow pads key's string with zero bytes to n bytes.
func (m bitModel) grow(key string, n int) {
	if len(m[key]) < n {
		m[key] = append(m[key], make([]byte, n-len(m[key]))...)
	}
}

// field reads a field one bit at a time, as a big integer.
func (m bitModel) field(key string, off, bits int, signed bool) *big.Int {
	v := new(big.Int)
	for i := range bits {
		v.Lsh(v, 1)
		if b := m[key]; (off+i)/8 < len(b) && b[(off+i)/8]&(0x80>>((off+i)%8)) != 0 {
			v.SetBit(v, 0, 1)
		}
	}
	if signed && v.Bit(bits-1) == 1 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(bits)))
	}
	return v
}

// setField writes v's low bits (two's complement) one bit at a time.
func (m bitModel) setField(key string, off, bits int, v *big.Int) {
	u := new(big.Int).Mod(v, new(big.Int).Lsh(big.NewInt(1), uint(bits)))
	b := m[key]
	for i := range bits {
		pos := off + i
		b[pos/8] &^= 0x80 >> (pos % 8)
		if u.Bit(bits-1-i) == 1 {
			b[pos/8] |= 0x80 >> (pos % 8)
		}
	}
}

// bfModelOp is one BITFIELD write of the model.
type bfModelOp struct {
	incr   bool
	signed bool
	bits   int
	off    int
	val    int64
	ow     string
}

// bitfield runs BITFIELD writes on the model and returns the replies.
func (m bitModel) bitfield(key string, ops []bfModelOp) []string {
	highest := 0
	for _, op := range ops {
		highest = max(highest, op.off+op.bits)
	}
	m.grow(key, (highest+7)/8)
	var out []string
	for _, op := range ops {
		lo, hi := bfRange(op.signed, op.bits)
		old := m.field(key, op.off, op.bits, op.signed)
		v := big.NewInt(op.val)
		if op.incr {
			v.Add(v, old)
		} else if !op.signed && op.val < 0 {
			v.Add(v, new(big.Int).Lsh(big.NewInt(1), 64)) // Redis reads it as unsigned
		}
		if v.Cmp(lo) < 0 || v.Cmp(hi) > 0 {
			switch op.ow {
			case "FAIL":
				out = append(out, "(nil)")
				continue
			case "SAT":
				if op.incr || !op.signed {
					v = new(big.Int).Set(v)
					if v.Cmp(lo) < 0 {
						v = lo
					} else {
						v = hi
					}
				} else {
					v = redisSatSet(v, lo, hi)
				}
			default:
				span := new(big.Int).Lsh(big.NewInt(1), uint(op.bits))
				v.Sub(v, lo).Mod(v, span).Add(v, lo)
			}
		}
		m.setField(key, op.off, op.bits, v)
		if op.incr {
			out = append(out, "(integer) "+v.String())
		} else {
			out = append(out, "(integer) "+old.String())
		}
	}
	return out
}

// TestBitmapCommandsAgainstAModel runs random bitmap and string commands
// over a few keys and checks every key against the model after each one.
// Every write's journal records must be small (the change, not the value,
// except BITOP's), and the journal replayed into an empty keyspace, through
// Exec and through Replay, must give the model back.
func TestBitmapCommandsAgainstAModel(t *testing.T) {
	h := newHarness(t)
	h.recordJournal()
	var lsn uint64
	setLastLSN(h.ks, func() uint64 { return lsn })
	model := bitModel{}
	var wal []walRecord // the records with their LSNs, for Replay
	rng := rand.New(rand.NewPCG(31, 32))
	keys := []string{"a", "b", "c", "{t}d"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	for step := range 20000 {
		lsn++
		before := len(h.records)
		k := key()
		bitfieldWrite := false
		switch rng.IntN(8) {
		case 0, 1:
			off, v := rng.IntN(600), rng.IntN(2)
			_, had := model[k]
			grows := !had || off/8 >= len(model[k])
			model.grow(k, off/8+1)
			old := model[k][off/8] >> (7 - off%8) & 1
			if v == 1 {
				model[k][off/8] |= 0x80 >> (off % 8)
			} else {
				model[k][off/8] &^= 0x80 >> (off % 8)
			}
			if got := h.do("SETBIT", k, itoa(off), itoa(v)); got != n(int64(old)) {
				t.Fatalf("step %d: SETBIT %s %d %d = %s, want %d", step, k, off, v, got, old)
			}
			want := 0
			if grows || old != byte(v) {
				want = 1
			}
			if logged := len(h.records) - before; logged != want {
				t.Fatalf("step %d: SETBIT logged %d records (grows %v, old %d, new %d)", step, logged, grows, old, v)
			}
		case 2, 3:
			var ops []bfModelOp
			args := []string{"BITFIELD", k}
			for range 1 + rng.IntN(3) {
				op := bfModelOp{incr: rng.IntN(2) == 0, bits: 1 + rng.IntN(64), off: rng.IntN(300),
					ow: []string{"WRAP", "SAT", "FAIL"}[rng.IntN(3)], val: int64(rng.Uint64())}
				op.signed = op.bits == 64 || rng.IntN(2) == 0
				if rng.IntN(2) == 0 {
					op.val = rng.Int64N(2000) - 1000
				}
				typ, sub := "u", "SET"
				if op.signed {
					typ = "i"
				}
				if op.incr {
					sub = "INCRBY"
				}
				ops = append(ops, op)
				args = append(args, "OVERFLOW", op.ow, sub, typ+itoa(op.bits), itoa(op.off), itoa64(op.val))
			}
			want := "[" + strings.Join(model.bitfield(k, ops), " ") + "]"
			if got := h.do(args...); got != want {
				t.Fatalf("step %d: %q = %s, want %s", step, args, got, want)
			}
			bitfieldWrite = true
		case 4:
			dst, srcs := key(), []string{key(), key()}
			op := []string{"AND", "OR", "XOR", "NOT"}[rng.IntN(4)]
			if op == "NOT" {
				srcs = srcs[:1]
			}
			var vecs []string
			for _, s := range srcs {
				vecs = append(vecs, string(model[s]))
			}
			res := modelBitOp(strings.ToLower(op), vecs)
			h.do(append([]string{"BITOP", op, dst}, srcs...)...)
			if res == "" {
				delete(model, dst)
			} else {
				model[dst] = []byte(res)
			}
		case 5:
			v := string(randBytes(rng, rng.IntN(40)))
			h.do("SET", k, v)
			model[k] = []byte(v)
		case 6:
			h.do("DEL", k)
			delete(model, k)
		case 7:
			s := string(model[k])
			if _, ok := model[k]; !ok {
				h.expect("BITCOUNT "+k, n(0))
				continue
			}
			start, end := rng.Int64N(100)-50, rng.Int64N(100)-50
			h.expectArgs(n(modelBitCount(s, start, end, true)), "BITCOUNT", k, itoa64(start), itoa64(end), "BIT")
			h.expectArgs(n(modelBitPos(s, 1, start, end, true, true)), "BITPOS", k, "1", itoa64(start), itoa64(end), "BIT")
			h.expectArgs(n(modelBitPos(s, 0, start/8, -1, false, false)), "BITPOS", k, "0", itoa64(start/8))
		}
		for _, r := range h.records[before:] {
			wal = append(wal, walRecord{lsn: lsn, db: r.db, args: r.args})
			size := 0
			for _, a := range r.args {
				size += len(a)
			}
			if r.args[0] != applyName && size > 200 {
				t.Fatalf("step %d: a %d-byte record %q", step, size, r.args[:2])
			}
			if bitfieldWrite && r.args[0] != "BITFIELD" {
				t.Fatalf("step %d: BITFIELD logged %q", step, r.args)
			}
		}
		for _, key := range keys {
			want := "(nil)"
			if s, ok := model[key]; ok {
				want = q(string(s))
			}
			if got := h.do("GET", key); got != want {
				t.Fatalf("step %d: GET %s = %s, want %s", step, key, got, want)
			}
		}
	}

	// Replay through Exec with Loading set, as the harness replays.
	dst := newHarness(t)
	dst.ks.Loading = true
	for _, r := range h.records {
		dst.selectDB(r.db)
		if got := dst.do(r.args...); strings.HasPrefix(got, "(error)") {
			t.Fatalf("replaying %q: %s", r.args, got)
		}
	}
	dst.ks.Loading = false
	compareKeyspaces(t, h.ks, dst.ks, h.clock)

	// Replay through Replay, the recovery's path.
	rep := NewKeyspace(16, func() int64 { return h.clock })
	replay(t, rep, wal...)
	compareKeyspaces(t, h.ks, rep, h.clock)
}

func TestBitmapJournalForms(t *testing.T) {
	h := newHarness(t)
	h.recordJournal()
	steps := []struct {
		line string
		want []string
	}{
		{"SETBIT b 7 1", []string{"0: SETBIT b 7 1"}},
		{"SETBIT b 7 1", nil},
		{"SETBIT b 7 0", []string{"0: SETBIT b 7 0"}},
		{"SETBIT b 7 0", nil},
		{"SETBIT b 100 0", []string{"0: SETBIT b 100 0"}}, // grew
		{"SETBIT b 100 0", nil},
		{"SETBIT b x 0", nil},
		{"GETBIT b 3", nil},
		{"BITCOUNT b", nil},
		{"BITPOS b 1", nil},
		{"BITFIELD b GET u8 0", nil},
		{"BITFIELD_RO b GET u8 0", nil},
		{"BITFIELD b SET u8 #0 255 GET u8 0 INCRBY u8 #0 10", []string{"0: BITFIELD b OVERFLOW WRAP SET u8 0 255 SET u8 0 9"}},
		{"BITFIELD b OVERFLOW FAIL INCRBY u8 #0 1000", nil},
		{"BITFIELD b SET u8 #0 9", nil},
		{"BITFIELD b OVERFLOW FAIL INCRBY u8 #40 1000", []string{"0: BITFIELD b OVERFLOW WRAP SET u8 320 0"}}, // grew
		{"BITFIELD b OVERFLOW SAT SET i8 #1 200 INCRBY i4 #2 -9", []string{"0: BITFIELD b OVERFLOW WRAP SET i8 8 127 SET i4 8 -2"}},
		{"BITFIELD b OVERFLOW WRAP INCRBY u2 0 5", []string{"0: BITFIELD b OVERFLOW WRAP SET u2 0 1"}},
		{"BITFIELD n SET u4 4 0", []string{"0: BITFIELD n OVERFLOW WRAP SET u4 4 0"}}, // created
		{"BITFIELD n SET u4 4 0", nil},
		{"SET s ab", []string{"0: SET s ab"}},
		{"BITOP OR d s", []string{"0: MOOND.APPLY PUT 0 d 0 ab 0"}},
		{"BITOP AND d nokey", []string{"0: DEL d"}},
		{"BITOP AND d nokey", nil},
		{"BITOP XOR d s s", []string{"0: MOOND.APPLY PUT 0 d 0 \x00\x00 0"}},
	}
	for _, s := range steps {
		if got := h.journaled(s.line); !slices.Equal(got, s.want) {
			t.Errorf("%s: journal %q, want %q", s.line, got, s.want)
		}
	}
}

// TestBitmapRecordsReplayThroughReplay replays bitmap records through
// Replay (the per-key LSN rule) into an empty keyspace and into one that
// already holds the effect of the first records (a fuzzy heap's newer
// version of a key), and gets the same strings both times.
func TestBitmapRecordsReplayThroughReplay(t *testing.T) {
	src := newHarness(t)
	src.recordJournal()
	var lsn uint64
	setLastLSN(src.ks, func() uint64 { return lsn })
	var recs []walRecord
	run := func(args ...string) {
		lsn++
		before := len(src.records)
		src.do(args...)
		for _, r := range src.records[before:] {
			recs = append(recs, walRecord{lsn: lsn, db: r.db, args: r.args})
		}
	}
	run("SETBIT", "k", "3", "1")
	run("SETBIT", "k", "90", "1")
	run("BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "u8", "#1", "250", "INCRBY", "i16", "20", "-5")
	run("SET", "s", "\x0f\xf0")
	run("BITOP", "XOR", "x", "k", "s")
	run("BITFIELD", "x", "OVERFLOW", "FAIL", "INCRBY", "u4", "200", "20")
	run("SETBIT", "x", "0", "1")
	run("BITOP", "AND", "k", "none")
	run("BITOP", "NOT", "y", "x")
	run("SETBIT", "y", "1", "0")
	if len(recs) != 10 {
		t.Fatalf("%d records: %v", len(recs), recs)
	}

	fresh := NewKeyspace(16, func() int64 { return startClock })
	fresh.Loading = true
	replay(t, fresh, recs...)
	fresh.Loading = false
	compareKeyspaces(t, src.ks, fresh, startClock)

	// A heap that holds k and x as they were at LSN 7 (a fuzzy
	// checkpoint's newer versions): the records up to 7 must be skipped
	// for them, the later ones applied. (SETBIT's and BITFIELD's records
	// set bits to values, so applying one twice would do no harm either.)
	mid := NewKeyspace(16, func() int64 { return startClock })
	mid.Loading = true
	for _, r := range recs {
		if r.lsn <= 7 {
			replay(t, mid, r)
		}
	}
	at7 := func(key string) string {
		sl, _ := mid.lookup(0, []byte(key))
		return string(sl.v.appendTo(nil))
	}
	dir := t.TempDir()
	_, files := writeHeap(t, dir, nil, rec(0, "k", at7("k"), 7, 0), rec(0, "x", at7("x"), 7, 0))
	newer := NewKeyspace(16, func() int64 { return startClock })
	bootHeap(t, newer, dir, files, 1)
	replay(t, newer, recs...)
	newer.EndLoad()
	compareKeyspaces(t, src.ks, newer, startClock)
}

func TestReplayOfBitWritesIsNotLimitedByProtoMaxBulkLen(t *testing.T) {
	h := newHarness(t)
	h.ks.MaxBulkLen = 4
	h.ks.Loading = true
	h.script("SETBIT s 100 1", n(0), "BITFIELD s OVERFLOW WRAP SET u8 200 7", "[(integer) 0]", "STRLEN s", n(26))
	h.ks.Loading = false
	h.script("SETBIT s 100 0", "(error) "+errBitOffset, "BITFIELD s GET u8 200", "(error) "+errBitOffset,
		"SETBIT s 1 1", n(0), "GETBIT s 1", n(1), "STRLEN s", n(26))
}
