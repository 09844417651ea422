package keyspace

import (
	"fmt"
	"testing"
)

// elemHarness loads a hash table and a set table of prefetchMinKeys
// elements (an empty field, an empty value and long ones among them), a
// small hash and set (listpack, intset) and a string.
func elemHarness(t *testing.T) *harness {
	h := newHarness(t)
	args := []string{"HSET", "bighash", "", "empty field", "nil", "", "long", string(make([]byte, 300))}
	sargs := []string{"SADD", "bigset", "", "long " + string(make([]byte, 300))}
	for i := range prefetchMinKeys {
		args = append(args, fmt.Sprintf("f%d", i), fmt.Sprint(i))
		sargs = append(sargs, fmt.Sprintf("m%d", i))
	}
	h.do(args...)
	h.do(sargs...)
	h.do("HSET", "smallhash", "f1", "1")
	h.do("SADD", "smallset", "1", "2")
	h.do("SET", "str", "a string")
	return h
}

// TestWantsPrefetchElement checks that only a hash or set table of at
// least prefetchMinKeys elements wants its elements read ahead.
func TestWantsPrefetchElement(t *testing.T) {
	h := elemHarness(t)
	for key, want := range map[string]bool{"bighash": true, "bigset": true, "smallhash": false, "smallset": false, "str": false, "absent": false} {
		if got := h.ks.WantsPrefetchElement(0, []byte(key)); got != want {
			t.Errorf("WantsPrefetchElement(0, %q) = %v, want %v", key, got, want)
		}
	}
	for _, db := range []int{1, -1, 16} {
		if h.ks.WantsPrefetchElement(db, []byte("bighash")) {
			t.Errorf("WantsPrefetchElement(%d, bighash) = true", db)
		}
	}
	h.do("HDEL", "bighash", "f0", "f1", "f2", "f3")
	if h.ks.WantsPrefetchElement(0, []byte("bighash")) {
		t.Error("WantsPrefetchElement(0, bighash) = true below prefetchMinKeys")
	}
}

// TestPrefetchElementsChangesNothing runs PrefetchElements over elements
// present and absent of large and small hashes and sets, a string, an
// absent key, runs of one key and alternating keys, more than PrefetchMax
// pairs, mismatched lists and databases that do not exist, and checks that
// no statistic, LRU clock, mutation count or value moved.
func TestPrefetchElementsChangesNothing(t *testing.T) {
	h := elemHarness(t)
	var keys, elems [][]byte
	add := func(k, e string) { keys, elems = append(keys, []byte(k)), append(elems, []byte(e)) }
	for _, k := range []string{"bighash", "bigset", "smallhash", "smallset", "str", "absent"} {
		for _, e := range []string{"", "nil", "long", "f7", "m7", "absent", "1"} {
			add(k, e)
		}
	}
	for i := range 2 * PrefetchMax {
		add("bighash", fmt.Sprintf("f%d", i*7))
		add("bigset", fmt.Sprintf("m%d", i*7))
	}
	clock := func(key string) string { return h.do("OBJECT", "IDLETIME", key) }
	h.advance(5000)
	idle := clock("bighash")
	hd, _ := h.ks.elemDicts(h.ks.dbs[0], []byte("bighash"))
	_, sd := h.ks.elemDicts(h.ks.dbs[0], []byte("bigset"))
	before, muts, hmuts, smuts := h.ks.Stats(), h.ks.dbs[0].keys.muts, hd.muts, sd.muts
	for _, db := range []int{0, 1, -1, 16} {
		h.ks.PrefetchElements(db, keys, elems)
		h.ks.PrefetchElements(db, keys[:1], elems[:1])
		h.ks.PrefetchElements(db, keys[:3], elems[:2])
		h.ks.PrefetchElements(db, nil, nil)
	}
	if got := h.ks.Stats(); got != before {
		t.Errorf("stats moved: %+v, then %+v", before, got)
	}
	if m := h.ks.dbs[0].keys.muts; m != muts || hd.muts != hmuts || sd.muts != smuts {
		t.Errorf("muts %d %d %d, then %d %d %d", muts, hmuts, smuts, m, hd.muts, sd.muts)
	}
	if got := clock("bighash"); got != idle {
		t.Errorf("OBJECT IDLETIME bighash: %s, then %s", idle, got)
	}
	for _, c := range [][]string{
		{`"empty field"`, "HGET", "bighash", ""}, {`""`, "HGET", "bighash", "nil"}, {`"7"`, "HGET", "bighash", "f7"},
		{"(integer) 1", "SISMEMBER", "bigset", ""}, {"(integer) 1", "SISMEMBER", "bigset", "m7"},
		{"(integer) 2", "SCARD", "smallset"}, {`"a string"`, "GET", "str"},
	} {
		if got := h.do(c[1:]...); got != c[0] {
			t.Errorf("%v = %s, want %s", c[1:], got, c[0])
		}
	}
	if len(h.ks.pfHashElems) != 0 || len(h.ks.pfSetElems) != 0 {
		t.Error("PrefetchElements left its scratch in use")
	}
	for _, e := range h.ks.pfHashElems[:cap(h.ks.pfHashElems)] {
		if e.d != nil || e.sl != nil {
			t.Fatal("PrefetchElements' scratch keeps a table alive")
		}
	}
}

// TestPrefetchElementsReadsLargeTablesOnly checks that PrefetchElements
// reads (its sink moves) for the elements of a large hash and a large
// set, and reads nothing for small ones, strings and absent keys.
func TestPrefetchElementsReadsLargeTablesOnly(t *testing.T) {
	h := elemHarness(t)
	for _, c := range []struct {
		key   string
		reads bool
	}{{"bighash", true}, {"bigset", true}, {"smallhash", false}, {"smallset", false}, {"str", false}, {"absent", false}} {
		var keys, elems [][]byte
		for i := range PrefetchMax {
			keys, elems = append(keys, []byte(c.key)), append(elems, fmt.Appendf(nil, "f%d", i))
			if c.key == "bigset" {
				elems[i] = fmt.Appendf(nil, "m%d", i)
			}
		}
		sink := h.ks.pfSink
		h.ks.PrefetchElements(0, keys, elems)
		if read := h.ks.pfSink != sink; read != c.reads {
			t.Errorf("%s: read %v, want %v", c.key, read, c.reads)
		}
	}
}
