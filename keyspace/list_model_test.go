package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// listModel is the Go model of the lists: key -> elements, head first.
type listModel map[string][]string

func quoteAll(elems []string) string {
	parts := make([]string, len(elems))
	for i, e := range elems {
		parts[i] = q(e)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// TestListCommandsAgainstAModel runs random list commands over a few keys,
// checks every reply and every key against a model after each one, checks
// the lists' invariants (node counts, the memory figure; the node limits
// too in the runs whose limit never changes), and
// at the end replays the journal into an empty keyspace and round-trips
// every list through its heap encoding. The node limit changes during the
// run, as CONFIG SET would change it, so that lists meet both
// representations and the conversions between them.
func TestListCommandsAgainstAModel(t *testing.T) {
	changing := []int64{-2, -1, 1, 2, 3, 5, 0, -5}
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			runListModel(t, seed, 6000, changing)
		})
	}
	// Under one limit all along, every node must be within it.
	for _, fill := range []int64{-1, 3} {
		t.Run(fmt.Sprint("fill", fill), func(t *testing.T) {
			runListModel(t, 7, 4000, []int64{fill})
		})
	}
}

func runListModel(t *testing.T, seed uint64, steps int, fills []int64) {
	h := newHarness(t)
	h.recordJournal()
	rng := rand.New(rand.NewPCG(seed, seed*31))
	model := listModel{}
	keys := []string{"a", "b", "c"}
	elem := func() string {
		switch rng.IntN(10) {
		case 0:
			return strings.Repeat("L", 1000+rng.IntN(3000))
		case 1:
			return ""
		}
		return string(rune('a' + rng.IntN(4)))
	}
	for step := range steps {
		if step%500 == 0 {
			h.ks.Limits.ListMaxListpackSize = fills[rng.IntN(len(fills))]
		}
		k, k2 := keys[rng.IntN(len(keys))], keys[rng.IntN(len(keys))]
		line, want := listModelStep(rng, model, k, k2, elem)
		if got := h.do(line...); got != want {
			t.Fatalf("step %d: %q = %s, want %s", step, line, got, want)
		}
		for _, key := range keys {
			h.checkList(key)
			if l := h.listOfKey(key); l != nil && len(fills) == 1 {
				checkNodeLimits(t, l, limitOf(fills[0]))
			}
			want := quoteAll(model[key])
			if got := h.do("LRANGE", key, "0", "-1"); got != want {
				t.Fatalf("step %d (%q): %s = %s, want %s", step, line, key, got, want)
			}
			if got, want := h.ks.dbs[0].dataBytes, dataBytesOf(h.ks.dbs[0]); got != want {
				t.Fatalf("step %d (%q): dataBytes %d, the keys hold %d", step, line, got, want)
			}
			if (h.listOfKey(key) == nil) != (len(model[key]) == 0) {
				t.Fatalf("step %d: key %s exists with an empty list, or is missing", step, key)
			}
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
	for _, key := range keys {
		want := quoteAll(model[key])
		if got := dst.do("LRANGE", key, "0", "-1"); got != want {
			t.Fatalf("replayed: %s = %s, want %s", key, got, want)
		}
		if l := h.listOfKey(key); l != nil {
			l2, err := decodeList(l.encode(nil), limitOf(-2))
			if err != nil {
				t.Fatalf("decoding %s: %v", key, err)
			}
			if string(l2.encode(nil)) != string(l.encode(nil)) || l2.len() != l.len() {
				t.Fatalf("%s does not round-trip its heap encoding", key)
			}
		}
	}
}

// listModelStep picks a random command on k (and k2), applies it to the
// model and returns the command and the reply it must get.
func listModelStep(rng *rand.Rand, m listModel, k, k2 string, elem func() string) ([]string, string) {
	l := m[k]
	set := func(key string, v []string) {
		if len(v) == 0 {
			delete(m, key)
		} else {
			m[key] = v
		}
	}
	idx := func() int { return rng.IntN(len(l)+4) - (len(l)+4)/2 }
	norm := func(i int) int {
		if i < 0 {
			i += len(l)
		}
		return i
	}
	switch rng.IntN(14) {
	case 0, 1:
		e1, e2 := elem(), elem()
		if rng.IntN(2) == 0 {
			set(k, append([]string{e2, e1}, l...))
			return []string{"LPUSH", k, e1, e2}, n(int64(len(m[k])))
		}
		set(k, append(slices.Clone(l), e1, e2))
		return []string{"RPUSH", k, e1, e2}, n(int64(len(m[k])))
	case 2:
		e := elem()
		if len(l) == 0 {
			return []string{"LPUSHX", k, e}, n(0)
		}
		set(k, append(slices.Clone(l), e))
		return []string{"RPUSHX", k, e}, n(int64(len(l) + 1))
	case 3:
		if len(l) == 0 {
			return []string{"LPOP", k}, "(nil)"
		}
		set(k, l[1:])
		return []string{"LPOP", k}, q(l[0])
	case 4:
		c := rng.IntN(4)
		if len(l) == 0 {
			return []string{"RPOP", k, itoa(c)}, "(nil)"
		}
		c2 := min(c, len(l))
		popped := slices.Clone(l[len(l)-c2:])
		slices.Reverse(popped)
		set(k, l[:len(l)-c2])
		return []string{"RPOP", k, itoa(c)}, quoteAll(popped)
	case 5:
		i, e := idx(), elem()
		if len(l) == 0 {
			return []string{"LSET", k, itoa(i), e}, "(error) " + errNoSuchKey
		}
		if j := norm(i); j >= 0 && j < len(l) {
			nl := slices.Clone(l)
			nl[j] = e
			set(k, nl)
			return []string{"LSET", k, itoa(i), e}, "OK"
		}
		return []string{"LSET", k, itoa(i), e}, "(error) " + errIndexRange
	case 6:
		pivot, e := elem(), elem()
		after := rng.IntN(2) == 0
		where := map[bool]string{true: "AFTER", false: "BEFORE"}[after]
		if len(l) == 0 {
			return []string{"LINSERT", k, where, pivot, e}, n(0)
		}
		j := slices.Index(l, pivot)
		if j < 0 {
			return []string{"LINSERT", k, where, pivot, e}, n(-1)
		}
		if after {
			j++
		}
		set(k, slices.Insert(slices.Clone(l), j, e))
		return []string{"LINSERT", k, where, pivot, e}, n(int64(len(l) + 1))
	case 7:
		e, c := elem(), rng.IntN(5)-2
		nl, removed := modelRem(l, e, c)
		set(k, nl)
		return []string{"LREM", k, itoa(c), e}, n(int64(removed))
	case 8:
		s, e := idx(), idx()
		st, en, empty := listRange(int64(s), int64(e), len(l))
		if empty {
			set(k, nil)
		} else {
			set(k, slices.Clone(l[st:en+1]))
		}
		return []string{"LTRIM", k, itoa(s), itoa(e)}, "OK"
	case 9, 10:
		sides := []string{"LEFT", "RIGHT"}
		from, to := sides[rng.IntN(2)], sides[rng.IntN(2)]
		if len(l) == 0 {
			return []string{"LMOVE", k, k2, from, to}, "(nil)"
		}
		var e string
		if from == "LEFT" {
			e = l[0]
			set(k, l[1:])
		} else {
			e = l[len(l)-1]
			set(k, l[:len(l)-1])
		}
		if to == "LEFT" {
			set(k2, append([]string{e}, m[k2]...))
		} else {
			set(k2, append(slices.Clone(m[k2]), e))
		}
		return []string{"LMOVE", k, k2, from, to}, q(e)
	case 11:
		c := 1 + rng.IntN(3)
		for _, key := range []string{k, k2} {
			if kl := m[key]; len(kl) > 0 {
				c2 := min(c, len(kl))
				set(key, kl[c2:])
				return []string{"LMPOP", "2", k, k2, "LEFT", "COUNT", itoa(c)}, "[" + q(key) + " " + quoteAll(kl[:c2]) + "]"
			}
		}
		return []string{"LMPOP", "2", k, k2, "LEFT", "COUNT", itoa(c)}, "(nil)"
	case 12:
		i := idx()
		if j := norm(i); j >= 0 && j < len(l) {
			return []string{"LINDEX", k, itoa(i)}, q(l[j])
		}
		return []string{"LINDEX", k, itoa(i)}, "(nil)"
	}
	e := elem()
	var found []string
	for i := len(l) - 1; i >= 0; i-- {
		if l[i] == e {
			found = append(found, "(integer) "+itoa(i))
		}
	}
	return []string{"LPOS", k, e, "RANK", "-1", "COUNT", "0"}, "[" + strings.Join(found, " ") + "]"
}

// modelRem is LREM on the model.
func modelRem(l []string, e string, c int) ([]string, int) {
	out := slices.Clone(l)
	removed := 0
	if c >= 0 {
		for i := 0; i < len(out); {
			if out[i] == e && (c == 0 || removed < c) {
				out = slices.Delete(out, i, i+1)
				removed++
				continue
			}
			i++
		}
		return out, removed
	}
	for i := len(out) - 1; i >= 0; i-- {
		if out[i] == e && removed < -c {
			out = slices.Delete(out, i, i+1)
			removed++
		}
	}
	return out, removed
}

// dataBytes is what a database's dataBytes must be: its keys' and values'
// memory.
func dataBytesOf(d *db) int64 {
	var n int64
	d.keys.each(func(sl *slot[entry]) {
		n += allocSize(int64(len(sl.key()))) + sl.v.heapBytes()
	})
	return n
}
