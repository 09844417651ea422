package keyspace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	stdmaps "maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/moond-db/moond/persistence/heap"
)

func TestHashJournalForms(t *testing.T) {
	h := newHarness(t)
	h.recordJournal()
	for _, s := range []struct {
		line string
		want []string
	}{
		{"HSET h a 1 b 2", []string{"0: HSET h a 1 b 2"}},
		{"HSET h a 1", []string{"0: HSET h a 1"}}, // a write, even unchanged, as Redis propagates it
		{"HMSET h b 3", []string{"0: HSET h b 3"}},
		{"HSETNX h a x", nil},
		{"HSETNX h c 3", []string{"0: HSET h c 3"}},
		{"HINCRBY h n 5", []string{"0: HSET h n 5"}},
		{"HINCRBY h n -7", []string{"0: HSET h n -2"}},
		{"HINCRBYFLOAT h fl 1.5", []string{"0: HSET h fl 1.5"}},
		{"HINCRBYFLOAT h fl 1e2", []string{"0: HSET h fl 101.5"}},
		{"HINCRBY h a x", nil},
		{"HINCRBY h fl 1", nil},
		{"HDEL h x", nil},
		{"HDEL nokey x", nil},
		{"HDEL h a x b a", []string{"0: HDEL h a b"}},
		{"HGET h c", nil},
		{"HGETALL h", nil},
		{"HRANDFIELD h -5", nil},
		{"HSCAN h 0", nil},
		{"HDEL h c n fl zz", []string{"0: HDEL h c n fl"}},
		{"EXISTS h", nil},
		{"HSET h2 f v", []string{"0: HSET h2 f v"}},
		{"RENAME h2 h3", []string{"0: MOOND.APPLY DEL 0 h2 PUT 0 h3 4 \x01\x01f\x01v 0"}},
	} {
		got := h.journaled(s.line)
		if !slices.Equal(got, s.want) {
			t.Errorf("%s: journaled %q, want %q", s.line, got, s.want)
		}
	}
	h.expect("EXISTS h", n(0))
}

// hashModel is the test's picture of the hashes: key -> field -> value.
type hashModel map[string]map[string]string

// check compares every key of keys in h with the model.
func (m hashModel) check(t *testing.T, h *harness, keys []string, step int) {
	t.Helper()
	for _, k := range keys {
		want, ok := m[k]
		if !ok {
			if got := h.do("EXISTS", k); got != n(0) {
				t.Fatalf("step %d: %s exists, the model has no such key", step, k)
			}
			continue
		}
		all := h.list("HGETALL", k)
		got := map[string]string{}
		for i := 0; i+1 < len(all); i += 2 {
			got[all[i]] = all[i+1]
		}
		if len(all) != 2*len(want) || !stdmaps.Equal(got, want) {
			t.Fatalf("step %d: %s = %q, want %q", step, k, got, want)
		}
		if got := h.do("HLEN", k); got != n(int64(len(want))) {
			t.Fatalf("step %d: HLEN %s = %s, want %d", step, k, got, len(want))
		}
	}
}

// TestHashCommandsAgainstAModel runs random hash commands over a few keys,
// with small limits so that hashes convert often (and, in the second run,
// listpack pairs take both header forms), and checks every key against a
// Go map after each command, the memory figure now and then, and at the
// end that replaying the journal gives the same hashes.
func TestHashCommandsAgainstAModel(t *testing.T) {
	for _, lim := range []EncodingLimits{
		{HashMaxListpackEntries: 6, HashMaxListpackValue: 12},
		{HashMaxListpackEntries: 9, HashMaxListpackValue: 40},
	} {
		t.Run(fmt.Sprintf("entries=%d,value=%d", lim.HashMaxListpackEntries, lim.HashMaxListpackValue), func(t *testing.T) {
			testHashModel(t, lim)
		})
	}
}

func testHashModel(t *testing.T, lim EncodingLimits) {
	h := newHarness(t)
	h.recordJournal()
	h.ks.Limits = lim
	rng := rand.New(rand.NewPCG(21, 22))
	keys := []string{"a", "b", "c"}
	fields := []string{"", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "a-much-longer-field"}
	value := func() string {
		sizes := []int{0, 1, 3, 8, 12, 13, 30}
		return randAlpha(rng, 0, sizes[rng.IntN(len(sizes))])
	}
	model := hashModel{}
	set := func(k, f, v string) {
		if model[k] == nil {
			model[k] = map[string]string{}
		}
		model[k][f] = v
	}
	for step := range 20000 {
		k, k2 := keys[rng.IntN(len(keys))], keys[rng.IntN(len(keys))]
		f, f2, v := fields[rng.IntN(len(fields))], fields[rng.IntN(len(fields))], value()
		old, had := model[k][f]
		switch rng.IntN(10) {
		case 0, 1:
			_, had2 := model[k][f2]
			want := 0
			if !had {
				want++
			}
			if !had2 && f2 != f {
				want++
			}
			if got := h.do("HSET", k, f, v, f2, v+"x"); got != n(int64(want)) {
				t.Fatalf("step %d: HSET = %s, want %d", step, got, want)
			}
			set(k, f, v)
			set(k, f2, v+"x")
		case 2:
			want := n(1)
			if had {
				want = n(0)
			} else {
				set(k, f, v)
			}
			if got := h.do("HSETNX", k, f, v); got != want {
				t.Fatalf("step %d: HSETNX = %s, want %s", step, got, want)
			}
		case 3:
			want := 0
			for _, x := range slices.Compact([]string{f, f2}) {
				if _, ok := model[k][x]; ok {
					want++
					delete(model[k], x)
				}
			}
			if len(model[k]) == 0 {
				delete(model, k)
			}
			if got := h.do("HDEL", k, f, f2); got != n(int64(want)) {
				t.Fatalf("step %d: HDEL = %s, want %d", step, got, want)
			}
		case 4:
			cur, err := strconv.ParseInt(old, 10, 64)
			if had && (err != nil || strconv.FormatInt(cur, 10) != old) {
				continue
			}
			got := h.do("HINCRBY", k, f, "3")
			if got != n(cur+3) {
				t.Fatalf("step %d: HINCRBY %s %q (%q) = %s", step, k, f, old, got)
			}
			set(k, f, strconv.FormatInt(cur+3, 10))
		case 5:
			if had {
				continue
			}
			if got := h.do("HINCRBYFLOAT", k, f, "1.25"); got != q("1.25") {
				t.Fatalf("step %d: HINCRBYFLOAT = %s", step, got)
			}
			set(k, f, "1.25")
		case 6:
			if k != k2 && model[k] != nil {
				h.do("COPY", k, k2, "REPLACE")
				model[k2] = stdmaps.Clone(model[k])
			}
		case 7:
			if k != k2 && model[k] != nil {
				h.do("RENAME", k, k2)
				model[k2] = model[k]
				delete(model, k)
			}
		case 8:
			if rng.IntN(8) == 0 {
				h.do("DEL", k)
				delete(model, k)
			}
		case 9:
			want := "(nil)"
			if had {
				want = q(old)
			}
			if got := h.do("HGET", k, f); got != want {
				t.Fatalf("step %d: HGET %s %q = %s, want %s", step, k, f, got, want)
			}
		}
		model.check(t, h, keys, step)
		if step%500 == 0 {
			checkDataBytes(t, h.ks)
		}
	}

	dst := newHarness(t)
	dst.ks.Loading = true
	for _, r := range h.records {
		dst.selectDB(r.db)
		if got := dst.do(r.args...); strings.HasPrefix(got, "(error)") {
			t.Fatalf("replaying %q: %s", r.args, got)
		}
	}
	dst.ks.Loading = false
	model.check(t, dst, keys, -1)
	checkDataBytes(t, dst.ks)
}

// TestHashReplayUnderOtherLimits: records written under generous limits
// replay under tight ones (and back): replay never refuses what the live
// command accepted, whatever representation it then builds.
func TestHashReplayUnderOtherLimits(t *testing.T) {
	h := newHarness(t)
	h.recordJournal()
	h.do("HSET", "h", "f", strings.Repeat("v", 100), "g", "1")
	h.do("HINCRBY", "h", "g", "5")
	h.do("HSET", "small", "a", "1")
	h.do("HDEL", "h", "f")
	for _, lim := range []EncodingLimits{{HashMaxListpackEntries: 0, HashMaxListpackValue: 0}, {HashMaxListpackEntries: 1 << 20, HashMaxListpackValue: 1 << 20}} {
		dst := newHarness(t)
		dst.ks.Limits = lim
		dst.ks.Loading = true
		for _, r := range h.records {
			if got := dst.do(r.args...); strings.HasPrefix(got, "(error)") {
				t.Fatalf("replaying %q: %s", r.args, got)
			}
		}
		dst.ks.Loading = false
		dst.expect("HGETALL h", `["g" "6"]`)
		dst.expect("HGETALL small", `["a" "1"]`)
	}
}

// hashPairs decodes a heap encoding for comparison, as a map.
func hashPairs(t *testing.T, p []byte) map[string]string {
	m := map[string]string{}
	cnt, k := binary.Uvarint(p)
	off := k
	for range cnt {
		f, next, err := readHashString(p, off)
		if err != nil {
			t.Fatalf("bad encoding %q", p)
		}
		v, next, _ := readHashString(p, next)
		m[string(f)] = string(v)
		off = next
	}
	return m
}

func FuzzHashDecode(f *testing.F) {
	enc := func(pairs ...string) []byte {
		b := binary.AppendUvarint(nil, uint64(len(pairs)/2))
		for _, s := range pairs {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
		return b
	}
	f.Add(enc("a", "1"), uint8(128), uint8(64))
	f.Add(enc("a", "1", "b", "", "", "x"), uint8(1), uint8(64))
	f.Add(enc("a", "1", "a", "2"), uint8(128), uint8(64))
	f.Add(append(enc("a", "1"), 0), uint8(128), uint8(64))
	f.Add([]byte{2, 1, 'a', 1, '1'}, uint8(128), uint8(64))
	f.Add([]byte{1, 0x80, 0, 0}, uint8(128), uint8(64))
	f.Add([]byte{0}, uint8(128), uint8(64))
	f.Fuzz(func(t *testing.T, b []byte, entries, val uint8) {
		lim := EncodingLimits{HashMaxListpackEntries: int64(entries), HashMaxListpackValue: int64(val)}
		p, err := hashDecode(b, &lim)
		if err != nil {
			return
		}
		// It decoded: the encoding was canonical and the fields distinct,
		// so the object encodes back to the same pairs, and decoding that
		// (under other limits too) gives them again.
		out := hashEncode(p, nil)
		if !hashIsTable(p) && !bytes.Equal(out, b) {
			t.Fatalf("a listpack re-encodes as %q, was %q", out, b)
		}
		want := hashPairs(t, b)
		if got := hashPairs(t, out); !stdmaps.Equal(got, want) || len(want) != hashLen(p) {
			t.Fatalf("round trip: %q, want %q", got, want)
		}
		for _, l2 := range []EncodingLimits{{HashMaxListpackEntries: 0}, DefaultEncodingLimits()} {
			p2, err := hashDecode(out, &l2)
			if err != nil {
				t.Fatalf("re-decoding: %v", err)
			}
			for fld, v := range want {
				if got, ok := hashGet(p2, []byte(fld)); !ok || string(got) != v {
					t.Fatalf("field %q: %q %v, want %q", fld, got, ok, v)
				}
			}
			c := hashClone(p2)
			if hashLen(c) != len(want) || hashHeapBytes(c) <= 0 {
				t.Fatalf("clone: %d fields", hashLen(c))
			}
		}
	})
}

func TestHashDecodeRefusesBadInput(t *testing.T) {
	lim := DefaultEncodingLimits()
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"zero fields", []byte{0}},
		{"count too high", []byte{2, 1, 'a', 1, '1'}},
		{"count too low", []byte{1, 1, 'a', 1, '1', 1, 'b', 1, '2'}},
		{"trailing byte", []byte{1, 1, 'a', 1, '1', 0}},
		{"duplicate field", []byte{2, 1, 'a', 1, '1', 1, 'a', 1, '2'}},
		{"long uvarint", []byte{1, 0x81, 0, 'a', 1, '1'}},
		{"length past the end", []byte{1, 1, 'a', 9, '1'}},
		{"huge count", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	} {
		for _, l := range []EncodingLimits{lim, {}} {
			if _, err := hashDecode(c.b, &l); err == nil {
				t.Errorf("%s (limits %+v): decoded", c.name, l)
			}
		}
	}
	// a duplicate among many fields, found by the map path and the table
	var b []byte
	b = binary.AppendUvarint(b, 40)
	for i := range 40 {
		s := fmt.Sprint(i % 39)
		b = append(b, byte(len(s)))
		b = append(b, s...)
		b = append(b, 1, 'v')
	}
	for _, l := range []EncodingLimits{lim, {}} {
		if _, err := hashDecode(b, &l); err == nil {
			t.Errorf("a duplicate among 40 fields decoded under %+v", l)
		}
	}
}

// TestHashHeapRecordsLoadAndReplay: hashes checkpointed into heap records
// (the checkpoint source's encoding) load back in the representation the
// limits call for, the WAL records above the redo point replay on top of
// them (and not on the records at or below a key's LSN), and a damaged
// encoding is refused, not loaded.
func TestHashHeapRecordsLoadAndReplay(t *testing.T) {
	src := newHarness(t)
	src.do("HSET", "small", "a", "1", "b", "2")
	args := []string{"HSET", "big"}
	for i := range 300 {
		args = append(args, "f"+strconv.Itoa(i), strings.Repeat("v", i%90))
	}
	src.do(args...)
	encoded := func(key string) []byte {
		sl, _ := src.ks.lookup(0, []byte(key))
		return sl.v.appendEncoded(nil)
	}
	hashRec := func(key string, keyLSN uint64) heap.Record {
		return heap.Record{Key: hk(0, key), Kind: uint8(KindHash), KeyLSN: keyLSN, Value: encoded(key)}
	}
	dir := t.TempDir()
	_, files := writeHeap(t, dir, nil, hashRec("small", 4), hashRec("big", 12))
	ks := NewKeyspace(16, func() int64 { return startClock })
	bootHeap(t, ks, dir, files, 10)
	replay(t, ks,
		walRecord{11, 0, []string{"HSET", "small", "c", "3"}},
		walRecord{12, 0, []string{"HDEL", "big", "f1"}}, // in big's heap version already
		walRecord{13, 0, []string{"HDEL", "big", "f2", "f3"}},
		walRecord{14, 0, []string{"HSET", "big", "f4", "new"}},
	)
	ks.EndLoad()
	h := newHarness(t)
	h.ks = ks
	h.script(
		"HGETALL small", `["a" "1" "b" "2" "c" "3"]`,
		"OBJECT ENCODING small", q("listpack"),
		"OBJECT ENCODING big", q("hashtable"),
		"HLEN big", n(298),
		"HGET big f1", q("v"),
		"HGET big f2", "(nil)",
		"HGET big f4", q("new"),
	)
	checkDataBytes(t, ks)

	bad := hashRec("small", 4)
	bad.Value = append(bad.Value, 0)
	ks2 := NewKeyspace(16, nil)
	ks2.BeginLoad(10, nil)
	if _, _, err := ks2.loadRecord(bad.Key, heap.RecordID{File: 1, Page: 1}, heap.RecordHead{Kind: bad.Kind, KeyLSN: 4}, bad.Value); err == nil {
		t.Error("a hash record with a trailing byte loaded")
	}
}
