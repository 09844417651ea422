package keyspace

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestHLLCommandsAgainstAModel runs random HLL commands and checks after
// each one every key against a model of plain register arrays: the
// registers a value holds (either encoding), PFADD's answer (1 exactly when
// a register rose or the key was created), and PFCOUNT's, which must be
// the estimate of the model's registers, cached or not.
func TestHLLCommandsAgainstAModel(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(21, 22))
	model := map[string]*[hllRegisters]uint8{}
	estimate := func(r *[hllRegisters]uint8) int64 {
		var hi hllHisto
		hi.raw(r[:])
		return int64(hi.estimate())
	}
	keys := []string{"a", "b", "c"}
	for step := range 3000 {
		key := keys[rng.IntN(len(keys))]
		switch r := rng.IntN(10); {
		case r < 5:
			args := []string{"PFADD", key}
			m, existed := model[key]
			if !existed {
				m = new([hllRegisters]uint8)
				model[key] = m
			}
			changed := !existed
			for range rng.IntN(1 + rng.IntN(200)) {
				e := strconv.Itoa(rng.IntN(50000))
				args = append(args, e)
				if i, v := hllPatLen([]byte(e)); v > m[i] {
					m[i], changed = v, true
				}
			}
			want := n(0)
			if changed {
				want = n(1)
			}
			h.expectArgs(want, args...)
		case r < 7:
			want := int64(0)
			if m := model[key]; m != nil {
				want = estimate(m)
			}
			h.expectArgs(n(want), "PFCOUNT", key)
		case r < 8:
			dst, src := keys[rng.IntN(len(keys))], keys[rng.IntN(len(keys))]
			d := model[dst]
			if d == nil {
				d = new([hllRegisters]uint8)
				model[dst] = d
			}
			if s := model[src]; s != nil {
				for i := range d {
					d[i] = max(d[i], s[i])
				}
			}
			h.expectArgs("OK", "PFMERGE", dst, src)
		case r < 9:
			if model[key] != nil {
				h.do("PFDEBUG", "TODENSE", key)
			}
		default:
			h.ks.Limits.HLLSparseMaxBytes = []int64{50, 500, 3000}[rng.IntN(3)]
		}
		for _, k := range keys {
			sl, _ := h.ks.lookup(0, []byte(k))
			m := model[k]
			if (sl == nil) != (m == nil) {
				t.Fatalf("step %d: key %s exists %v, model %v", step, k, sl != nil, m != nil)
			}
			if m == nil {
				continue
			}
			dense, err := hllToDense(sl.v.bytes())
			if err != nil {
				t.Fatalf("step %d: key %s: %v", step, k, err)
			}
			for i := range m {
				if got := denseGet(dense[hllHdrSize:], i); got != m[i] {
					t.Fatalf("step %d: key %s register %d is %d, model %d", step, k, i, got, m[i])
				}
			}
		}
	}
}
