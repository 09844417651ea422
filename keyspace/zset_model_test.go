package keyspace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/moond-db/moond/resp"
)

// zmodel is the simple model of the model-based test: key -> member ->
// score, with the replies a command should give computed the obvious way.
type zmodel map[string]map[string]float64

var (
	zmKeys    = []string{"z1", "z2", "z3"}
	zmMembers = []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "longer-member-name"}
	zmScores  = []string{"0", "1", "-1", "2.5", "3", "10", "-0.5", "inf", "-inf", "1e3"}
)

func zmScore(s string) float64 { f, _ := parseScore([]byte(s)); return f }

func fmtScore(f float64) string { return string(resp.AppendDouble(nil, f)) }

// sorted returns a key's pairs in order.
func (m zmodel) sorted(key string) []zpair {
	var out []zpair
	for _, mem := range sortedMembers(m[key]) {
		out = append(out, zpair{mem, m[key][mem]})
	}
	return out
}

func pairsReply(ps []zpair, withScores bool) string {
	var items []string
	for _, p := range ps {
		items = append(items, q(p.m))
		if withScores {
			items = append(items, q(fmtScore(p.s)))
		}
	}
	return "[" + strings.Join(items, " ") + "]"
}

// randomZCommand picks a command and returns it with the reply the model
// expects, applying it to the model.
func randomZCommand(m zmodel, r *rand.Rand) ([]string, string) {
	key := zmKeys[r.IntN(len(zmKeys))]
	mem := zmMembers[r.IntN(len(zmMembers))]
	sc := zmScores[r.IntN(len(zmScores))]
	set := m[key]
	switch r.IntN(16) {
	case 0, 1, 2:
		return zmAdd(m, key, r)
	case 3:
		old, ok := set[mem]
		nv := zmScore(sc)
		if ok {
			nv += old
		}
		if math.IsNaN(nv) {
			return []string{"ZINCRBY", key, sc, mem}, "(error) " + errZNaN
		}
		if set == nil {
			m[key] = map[string]float64{}
		}
		m[key][mem] = nv
		return []string{"ZINCRBY", key, sc, mem}, q(fmtScore(nv))
	case 4:
		n := 0
		args := []string{"ZREM", key}
		for range 1 + r.IntN(3) {
			x := zmMembers[r.IntN(len(zmMembers))]
			args = append(args, x)
			if _, ok := set[x]; ok {
				delete(set, x)
				n++
			}
		}
		if len(set) == 0 {
			delete(m, key)
		}
		return args, "(integer) " + itoa(n)
	case 5:
		if s, ok := set[mem]; ok {
			return []string{"ZSCORE", key, mem}, q(fmtScore(s))
		}
		return []string{"ZSCORE", key, mem}, "(nil)"
	case 6:
		ps := m.sorted(key)
		rev := r.IntN(2) == 0
		for i, p := range ps {
			if p.m == mem {
				if rev {
					i = len(ps) - 1 - i
					return []string{"ZREVRANK", key, mem}, "(integer) " + itoa(i)
				}
				return []string{"ZRANK", key, mem}, "(integer) " + itoa(i)
			}
		}
		if rev {
			return []string{"ZREVRANK", key, mem}, "(nil)"
		}
		return []string{"ZRANK", key, mem}, "(nil)"
	case 7:
		start, end := r.IntN(10)-5, r.IntN(10)-5
		ps := m.sorted(key)
		lo, hi, ok := rankRange(int64(start), int64(end), len(ps), false)
		var sel []zpair
		if ok {
			sel = ps[lo : hi+1]
		}
		return []string{"ZRANGE", key, itoa(start), itoa(end), "WITHSCORES"}, pairsReply(sel, true)
	case 8:
		return zmRangeByScore(m, key, r)
	case 9:
		min, max := zmScore(sc), zmScore(zmScores[r.IntN(len(zmScores))])
		n := 0
		for _, s := range set {
			if s >= min && s <= max {
				n++
			}
		}
		return []string{"ZCOUNT", key, sc, fmtScore(max)}, "(integer) " + itoa(n)
	case 10:
		ps := m.sorted(key)
		cnt := r.IntN(4)
		max := r.IntN(2) == 0
		name := "ZPOPMIN"
		if max {
			name = "ZPOPMAX"
			slices.Reverse(ps)
		}
		cnt = min(cnt, len(ps))
		for _, p := range ps[:cnt] {
			delete(set, p.m)
		}
		if len(set) == 0 {
			delete(m, key)
		}
		return []string{name, key, itoa(cnt)}, pairsReply(ps[:cnt], true)
	case 11:
		ps := m.sorted(key)
		start, end := r.IntN(8)-4, r.IntN(8)-4
		lo, hi, ok := rankRange(int64(start), int64(end), len(ps), false)
		n := 0
		if ok {
			for _, p := range ps[lo : hi+1] {
				delete(set, p.m)
			}
			n = hi - lo + 1
			if len(set) == 0 {
				delete(m, key)
			}
		}
		return []string{"ZREMRANGEBYRANK", key, itoa(start), itoa(end)}, "(integer) " + itoa(n)
	case 12, 13:
		return zmStore(m, key, r)
	case 14:
		return []string{"ZCARD", key}, "(integer) " + itoa(len(set))
	default:
		min, max := zmScore(sc), zmScore(zmScores[r.IntN(len(zmScores))])
		n := 0
		for x, s := range set {
			if s > min && s <= max {
				delete(set, x)
				n++
			}
		}
		if len(set) == 0 {
			delete(m, key)
		}
		return []string{"ZREMRANGEBYSCORE", key, "(" + sc, fmtScore(max)}, "(integer) " + itoa(n)
	}
}

// zmAdd is a ZADD with random options.
func zmAdd(m zmodel, key string, r *rand.Rand) ([]string, string) {
	args := []string{"ZADD", key}
	var nx, xx, gt, lt, ch bool
	switch r.IntN(6) {
	case 0:
		nx = true
		args = append(args, "NX")
	case 1:
		xx = true
		args = append(args, "XX")
	case 2:
		gt = true
		args = append(args, "GT")
	case 3:
		lt = true
		args = append(args, "LT")
	}
	if r.IntN(2) == 0 {
		ch = true
		args = append(args, "CH")
	}
	set := m[key]
	if set == nil {
		set = map[string]float64{}
	}
	added, changed := 0, 0
	for range 1 + r.IntN(4) {
		mem := zmMembers[r.IntN(len(zmMembers))]
		sc := zmScores[r.IntN(len(zmScores))]
		args = append(args, sc, mem)
		s := zmScore(sc)
		old, ok := set[mem]
		switch {
		case ok && (nx || gt && s <= old || lt && s >= old):
		case ok:
			if s != old {
				changed++
				set[mem] = s
			}
		case !xx:
			added++
			set[mem] = s
		}
	}
	if len(set) > 0 {
		m[key] = set
	}
	if ch {
		return args, "(integer) " + itoa(added+changed)
	}
	return args, "(integer) " + itoa(added)
}

// zmRangeByScore is a ZRANGEBYSCORE or ZREVRANGEBYSCORE with a LIMIT.
func zmRangeByScore(m zmodel, key string, r *rand.Rand) ([]string, string) {
	a, b := zmScore(zmScores[r.IntN(len(zmScores))]), zmScore(zmScores[r.IntN(len(zmScores))])
	minEx := r.IntN(2) == 0
	var sel []zpair
	for _, p := range m.sorted(key) {
		if (p.s > a || !minEx && p.s == a) && p.s <= b {
			sel = append(sel, p)
		}
	}
	off, cnt := r.IntN(4), r.IntN(5)-1
	if off >= len(sel) {
		sel = nil
	} else {
		sel = sel[off:]
	}
	rev := r.IntN(2) == 0
	if rev {
		// The offset counts from the top in reverse.
		var all []zpair
		for _, p := range m.sorted(key) {
			if (p.s > a || !minEx && p.s == a) && p.s <= b {
				all = append(all, p)
			}
		}
		slices.Reverse(all)
		sel = nil
		if off < len(all) {
			sel = all[off:]
		}
	}
	if cnt >= 0 && cnt < len(sel) {
		sel = sel[:cnt]
	}
	minArg := fmtScore(a)
	if minEx {
		minArg = "(" + minArg
	}
	if rev {
		return []string{"ZREVRANGEBYSCORE", key, fmtScore(b), minArg, "WITHSCORES", "LIMIT", itoa(off), itoa(cnt)}, pairsReply(sel, true)
	}
	return []string{"ZRANGEBYSCORE", key, minArg, fmtScore(b), "WITHSCORES", "LIMIT", itoa(off), itoa(cnt)}, pairsReply(sel, true)
}

// zmStore is a ZUNIONSTORE, ZINTERSTORE or ZDIFFSTORE of two keys.
func zmStore(m zmodel, dst string, r *rand.Rand) ([]string, string) {
	k1, k2 := zmKeys[r.IntN(len(zmKeys))], zmKeys[r.IntN(len(zmKeys))]
	s1, s2 := m[k1], m[k2]
	res := map[string]float64{}
	var name string
	switch r.IntN(3) {
	case 0:
		name = "ZUNIONSTORE"
		for x, s := range s1 {
			res[x] = s
		}
		for x, s := range s2 {
			if t, ok := res[x]; ok {
				res[x] = zaggSum.aggregate(t, s)
			} else {
				res[x] = s
			}
		}
	case 1:
		name = "ZINTERSTORE"
		for x, s := range s1 {
			if t, ok := s2[x]; ok {
				res[x] = zaggSum.aggregate(s, t)
			}
		}
	default:
		name = "ZDIFFSTORE"
		for x, s := range s1 {
			if _, ok := s2[x]; !ok {
				res[x] = s
			}
		}
	}
	if len(res) == 0 {
		delete(m, dst)
	} else {
		m[dst] = res
	}
	return []string{name, dst, "2", k1, k2}, "(integer) " + itoa(len(res))
}

// checkZModel compares every key with the model.
func checkZModel(t *testing.T, h *harness, m zmodel, after []string) {
	t.Helper()
	for _, k := range zmKeys {
		want := pairsReply(m.sorted(k), true)
		if got := h.do("ZRANGE", k, "0", "-1", "WITHSCORES"); got != want {
			t.Fatalf("after %q: %s holds %s, model %s", after, k, got, want)
		}
		if got, want := h.do("ZCARD", k), "(integer) "+itoa(len(m[k])); got != want {
			t.Fatalf("after %q: ZCARD %s %s, model %s", after, k, got, want)
		}
	}
}

// TestZSetCommandsAgainstAModel runs random sorted-set commands, each
// checked against a Go model: its reply, then every key's content. Small
// listpack limits make the sets cross the conversion thresholds.
func TestZSetCommandsAgainstAModel(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			h := newHarness(t)
			h.ks.Limits.ZSetMaxListpackEntries = int64(seed * 2)
			h.ks.Limits.ZSetMaxListpackValue = 10
			r := rand.New(rand.NewPCG(seed, 99))
			m := zmodel{}
			encs := map[string]bool{}
			for range 4000 {
				args, want := randomZCommand(m, r)
				if got := h.do(args...); got != want {
					t.Fatalf("%q: got %s, model %s", args, got, want)
				}
				checkZModel(t, h, m, args)
				for _, k := range zmKeys {
					encs[h.do("OBJECT", "ENCODING", k)] = true
				}
			}
			if !encs[q("listpack")] || !encs[q("skiplist")] {
				t.Fatalf("the run did not use both encodings: %v", encs)
			}
		})
	}
}
