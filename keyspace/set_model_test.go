package keyspace

import (
	gomaps "maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// setModel is the simple model: each set as a Go map; "str" may hold a
// string instead.
type setModel struct {
	sets  map[string]map[string]bool
	isStr bool
}

func (m *setModel) get(k string) map[string]bool { return m.sets[k] }

func (m *setModel) put(k string, s map[string]bool) {
	if k == "str" {
		m.isStr = false
	}
	if len(s) == 0 {
		delete(m.sets, k)
	} else {
		m.sets[k] = s
	}
}

func (m *setModel) wrong(keys ...string) bool {
	return m.isStr && slices.Contains(keys, "str")
}

func setModelMembers(s map[string]bool) []string { return slices.Sorted(gomaps.Keys(s)) }

// TestSetCommandsAgainstAModel runs random set commands, with limits small
// enough that every conversion happens often, and checks each reply and
// then every key against the model, the encodings' limits, and the memory
// accounting.
func TestSetCommandsAgainstAModel(t *testing.T) {
	h := newSetHarness(t)
	h.ks.Limits.SetMaxIntsetEntries, h.ks.Limits.SetMaxListpackEntries, h.ks.Limits.SetMaxListpackValue = 12, 6, 32
	m := &setModel{sets: map[string]map[string]bool{}, isStr: true}
	h.do("SET", "str", "x")
	rng := rand.New(rand.NewPCG(5, 6))
	keys := []string{"s0", "s1", "s2", "str"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	for step := range 8000 {
		k, k2, k3, mem := key(), key(), key(), randomSetMember(rng)
		cur := gomaps.Clone(m.get(k))
		if cur == nil {
			cur = map[string]bool{}
		}
		check := func(got, want string) {
			t.Helper()
			if got != want {
				t.Fatalf("step %d: got %s, want %s", step, got, want)
			}
		}
		wrongReply := "(error) " + errWrongType
		switch rng.IntN(10) {
		case 0, 1: // SADD
			ms := []string{mem, randomSetMember(rng), randomSetMember(rng)}[:1+rng.IntN(3)]
			if m.wrong(k) {
				check(h.do(append([]string{"SADD", k}, ms...)...), wrongReply)
				continue
			}
			added := 0
			for _, x := range ms {
				if !cur[x] {
					cur[x] = true
					added++
				}
			}
			check(h.do(append([]string{"SADD", k}, ms...)...), n(int64(added)))
			m.put(k, cur)
		case 2: // SREM
			if m.wrong(k) {
				check(h.do("SREM", k, mem), wrongReply)
				continue
			}
			want := 0
			if cur[mem] {
				want = 1
			}
			delete(cur, mem)
			check(h.do("SREM", k, mem), n(int64(want)))
			m.put(k, cur)
		case 3: // SPOP count
			c := rng.IntN(4)
			if m.wrong(k) {
				check(h.do("SPOP", k, strconv.Itoa(c)), wrongReply)
				continue
			}
			got := h.sList("SPOP", k, strconv.Itoa(c))
			if len(got) != min(c, len(cur)) {
				t.Fatalf("step %d: SPOP %d of %d gave %d", step, c, len(cur), len(got))
			}
			for _, x := range got {
				if !cur[x] {
					t.Fatalf("step %d: SPOP gave %q, not a member", step, x)
				}
				delete(cur, x)
			}
			m.put(k, cur)
		case 4: // SMOVE
			if m.wrong(k, k2) && (k == "str" || len(cur) > 0) {
				check(h.do("SMOVE", k, k2, mem), wrongReply)
				continue
			}
			want := 0
			if cur[mem] {
				want = 1
			}
			check(h.do("SMOVE", k, k2, mem), n(int64(want)))
			if want == 1 && k != k2 {
				delete(cur, mem)
				m.put(k, cur)
				d := gomaps.Clone(m.get(k2))
				if d == nil {
					d = map[string]bool{}
				}
				d[mem] = true
				m.put(k2, d)
			}
		case 5, 6: // the stores
			op := []string{"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}[rng.IntN(3)]
			if m.wrong(k2, k3) {
				check(h.do(op, k, k2, k3), wrongReply)
				continue
			}
			res := setAlgebraModel(op, m.get(k2), m.get(k3))
			check(h.do(op, k, k2, k3), n(int64(len(res))))
			if k == "str" {
				m.isStr = false
			}
			m.put(k, res)
		case 7: // the reads
			op := []string{"SINTER", "SUNION", "SDIFF"}[rng.IntN(3)]
			if m.wrong(k2, k3) {
				check(h.do(op, k2, k3), wrongReply)
				continue
			}
			res := setAlgebraModel(op+"STORE", m.get(k2), m.get(k3))
			expectMembers(t, op, h.sList(op, k2, k3), setModelMembers(res)...)
			if !m.wrong(k2, k3) {
				limit := rng.IntN(3)
				want := len(setAlgebraModel("SINTERSTORE", m.get(k2), m.get(k3)))
				if limit > 0 {
					want = min(want, limit)
				}
				check(h.do("SINTERCARD", "2", k2, k3, "LIMIT", strconv.Itoa(limit)), n(int64(want)))
			}
		case 8: // SRANDMEMBER
			c := rng.IntN(9) - 4
			if m.wrong(k) {
				check(h.do("SRANDMEMBER", k, strconv.Itoa(c)), wrongReply)
				continue
			}
			got := h.sList("SRANDMEMBER", k, strconv.Itoa(c))
			want := max(c, -c)
			if c > 0 {
				want = min(c, len(cur))
			}
			if len(cur) == 0 {
				want = 0
			}
			if len(got) != want {
				t.Fatalf("step %d: SRANDMEMBER %d of %d gave %d", step, c, len(cur), len(got))
			}
			for _, x := range got {
				if !cur[x] {
					t.Fatalf("step %d: SRANDMEMBER gave %q, not a member", step, x)
				}
			}
		case 9:
			if m.wrong(k) {
				continue
			}
			want := "0"
			if cur[mem] {
				want = "1"
			}
			check(h.do("SISMEMBER", k, mem), "(integer) "+want)
		}
		checkSetModel(t, h, m, step)
	}
}

func setAlgebraModel(op string, a, b map[string]bool) map[string]bool {
	out := map[string]bool{}
	switch op {
	case "SINTERSTORE":
		for x := range a {
			if b[x] {
				out[x] = true
			}
		}
	case "SUNIONSTORE":
		gomaps.Copy(out, a)
		gomaps.Copy(out, b)
	default:
		for x := range a {
			if !b[x] {
				out[x] = true
			}
		}
	}
	return out
}

// checkSetModel compares every key with the model and checks the
// representations' limits and the memory figure.
func checkSetModel(t *testing.T, h *harness, m *setModel, step int) {
	t.Helper()
	lim := &h.ks.Limits
	for _, k := range []string{"s0", "s1", "s2", "str"} {
		want, ok := m.sets[k]
		if k == "str" && m.isStr {
			continue
		}
		if !ok {
			if got := h.do("EXISTS", k); got != n(0) {
				t.Fatalf("step %d: %s exists, the model has no such set", step, k)
			}
			continue
		}
		expectMembers(t, "members of "+k, h.smembers(k), setModelMembers(want)...)
		sl, _ := h.ks.lookup(0, []byte(k))
		p := sl.v.p
		ints := true
		longest := 0
		for x := range want {
			if _, ok := parseInt([]byte(x)); !ok {
				ints = false
			}
			longest = max(longest, len(x))
		}
		switch setEnc(p) {
		case setEncIntset:
			if !ints || int64(len(want)) > lim.SetMaxIntsetEntries {
				t.Fatalf("step %d: %s is an intset of %d members (all integers: %v)", step, k, len(want), ints)
			}
		case setEncListpack:
			if int64(len(want)) > lim.SetMaxListpackEntries || int64(longest) > lim.SetMaxListpackValue {
				t.Fatalf("step %d: %s is a listpack of %d members, the longest %d", step, k, len(want), longest)
			}
		}
	}
	d := h.ks.dbs[0]
	var total int64
	d.keys.each(func(sl *slot[entry]) { total += allocSize(int64(len(sl.key()))) + sl.v.heapBytes() })
	if total != d.dataBytes {
		t.Fatalf("step %d: dataBytes %d, the values hold %d", step, d.dataBytes, total)
	}
}
