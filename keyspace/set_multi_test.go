package keyspace

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// Ported from set.tcl: SINTER, SINTERCARD, SUNION, SDIFF and their *STORE
// forms, and SMOVE.

func TestSetAlgebra(t *testing.T) {
	for _, typ := range []string{"regular", "intset"} {
		t.Run(typ, func(t *testing.T) {
			h := newSetHarness(t)
			smallenc, bigenc := "listpack", "hashtable"
			if typ == "intset" {
				smallenc, bigenc = "intset", "intset"
			}
			for i := range 200 {
				h.do("SADD", "set1", strconv.Itoa(i))
				h.do("SADD", "set2", strconv.Itoa(i+195))
			}
			for _, i := range []string{"199", "195", "1000", "2000"} {
				h.do("SADD", "set3", i)
			}
			for i := 5; i < 200; i++ {
				h.do("SADD", "set4", strconv.Itoa(i))
			}
			h.do("SADD", "set5", "0")
			large := "200"
			if typ == "regular" {
				large = "foo"
			}
			for i := 1; i <= 5; i++ {
				h.do("SADD", "set"+strconv.Itoa(i), large)
			}
			for i, enc := range []string{bigenc, bigenc, smallenc, bigenc, smallenc} {
				h.expectSetEncoding("set"+strconv.Itoa(i+1), enc)
			}
			expectMembers(t, "SINTER 1 2", h.sList("SINTER", "set1", "set2"), "195", "196", "197", "198", "199", large)
			h.script(
				"SINTERCARD 2 set1 set2", n(6),
				"SINTERCARD 2 set1 set2 limit 0", n(6),
				"SINTERCARD 2 set1 set2 limit 3", n(3),
				"SINTERCARD 2 set1 set2 limit 10", n(6),
				"SINTERSTORE setres set1 set2", n(6),
			)
			h.expectSetEncoding("setres", smallenc)
			expectMembers(t, "SINTERSTORE", h.smembers("setres"), "195", "196", "197", "198", "199", large)

			union := append(h.smembers("set1"), h.smembers("set2")...)
			slices.Sort(union)
			union = slices.Compact(union)
			expectMembers(t, "SUNION", h.sList("SUNION", "set1", "set2"), union...)
			h.expect("SUNIONSTORE setres set1 set2", n(int64(len(union))))
			h.expectSetEncoding("setres", bigenc)
			expectMembers(t, "SUNIONSTORE", h.smembers("setres"), union...)
			expectMembers(t, "SUNION missing", h.sList("SUNION", "nokey1", "set1", "set2", "nokey2"), union...)

			expectMembers(t, "SINTER 3", h.sList("SINTER", "set1", "set2", "set3"), "195", "199", large)
			h.expect("SINTERCARD 3 set1 set2 set3 limit 2", n(2))
			h.expect("SINTERSTORE setres set1 set2 set3", n(3))
			expectMembers(t, "SINTERSTORE 3", h.smembers("setres"), "195", "199", large)

			expectMembers(t, "SDIFF 2", h.sList("SDIFF", "set1", "set4"), "0", "1", "2", "3", "4")
			expectMembers(t, "SDIFF 3", h.sList("SDIFF", "set1", "set4", "set5"), "1", "2", "3", "4")
			h.expect("SDIFFSTORE setres set1 set4 set5", n(4))
			if typ == "intset" {
				h.expectSetEncoding("setres", "intset")
			}
			expectMembers(t, "SDIFFSTORE", h.smembers("setres"), "1", "2", "3", "4")

			all := h.smembers("set1")
			expectMembers(t, "SINTER same", h.sList("SINTER", "set1", "set1", "set1"), all...)
			expectMembers(t, "SUNION same", h.sList("SUNION", "set1", "set1", "set1"), all...)
			expectMembers(t, "SDIFF same", h.sList("SDIFF", "set1", "set1", "set1"))
		})
	}
}

func TestSInterStoreResultIsAnIntset(t *testing.T) {
	h := newSetHarness(t)
	h.do("SADD", "set1", "a", "b", "c", "1", "3", "6", "x", "y", "z")
	h.do("SADD", "set2", "e", "f", "g", "1", "2", "3", "u", "v", "w")
	h.expectSetEncoding("set1", "listpack")
	h.expect("SINTERSTORE setres set1 set2", n(2))
	h.expectSetEncoding("setres", "intset")

	h.do("DEL", "set1", "set2")
	h.do("SADD", "set1", "a", "b", "c", "444", "555", "666")
	h.do("SADD", "set2", "e", "f", "g", "111", "222", "333")
	for i := 1; i < 130; i++ {
		h.do("SADD", "set1", strconv.Itoa(i))
		h.do("SADD", "set2", strconv.Itoa(i))
	}
	h.expectSetEncoding("set1", "hashtable")
	h.expect("SINTERSTORE setres set1 set2", n(129))
	h.expectSetEncoding("setres", "intset")
	expectMembers(t, "result", h.smembers("setres"), setSeq(1, 130)...)

	// SUNION of a hashtable and a listpack holding the same strings.
	union := []string{"abcdefghijklmnopqrstuvwxyz1234567890", "a", "b", "c", "1", "2", "3"}
	h.createSet("set1", union...)
	h.createSet("set2", "a", "b", "c")
	h.ks.Limits.SetMaxListpackValue = 32
	h.expectSetEncoding("set1", "hashtable")
	expectMembers(t, "SUNION", h.sList("SUNION", "set1", "set2"), union...)

	// Same integers, different encodings.
	h.do("DEL", "set1", "set2")
	h.do("SADD", "set1", "1", "2", "3")
	h.do("SADD", "set2", "1", "2", "3", "a")
	h.do("SREM", "set2", "a")
	h.expectSetEncoding("set2", "listpack")
	expectMembers(t, "SINTER", h.sList("SINTER", "set1", "set2"), "1", "2", "3")
}

func TestSetAlgebraWrongTypesAndMissingKeys(t *testing.T) {
	h := newSetHarness(t)
	h.do("SET", "key1", "x")
	h.do("SADD", "set1", "a", "b", "c")
	for _, cmd := range []string{"SINTER", "SUNION", "SDIFF"} {
		for _, keys := range [][]string{{"key1", "noset"}, {"noset", "key1"}, {"key1", "set1"}, {"set1", "key1"}} {
			h.expectArgs("(error) "+errWrongType, append([]string{cmd}, keys...)...)
		}
	}
	for _, cmd := range []string{"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"} {
		h.do("DEL", "set3")
		h.expectArgs("(error) "+errWrongType, cmd, "set3", "key1", "noset")
		h.expectArgs("(error) "+errWrongType, cmd, "set3", "noset", "key1")
		h.expect("EXISTS set3", n(0))
		h.do("SADD", "set3", "e")
		h.expectArgs("(error) "+errWrongType, cmd, "set3", "noset", "key1", "set1")
		h.expectArgs("(error) "+errWrongType, cmd, "set3", "set1", "key1")
		h.expect("SMEMBERS set3", `["e"]`)
	}

	h.do("DEL", "set1")
	h.script(
		"SADD set1 a b c", n(3),
		"SADD set2 b c d", n(3),
		"SDIFF set1 set2 set3x", `["a"]`,
		"SDIFF set3x set2 set1", "[]",
		"SINTER set1 set2 set3x", "[]",
		"SDIFF set1 set1", "[]",
		// *STORE of an empty result deletes the destination, whatever it was.
		"SET setres xxx", "OK",
		"SINTERSTORE setres foo111 bar222", n(0),
		"EXISTS setres", n(0),
		"SET setres xxx", "OK",
		"SUNIONSTORE setres foo111 bar222", n(0),
		"EXISTS setres", n(0),
		"SET setres xxx", "OK",
		"SDIFFSTORE setres foo111 bar222", n(0),
		"EXISTS setres", n(0),
		"SDIFFSTORE setres set1 set1", n(0),
		// A non-empty one replaces it, TTL included.
		"SET setres xxx EX 100", "OK",
		"SUNIONSTORE setres set1 set2", n(4),
		"TTL setres", n(-1),
		"TYPE setres", "set",
	)
	expectMembers(t, "SUNION", h.sList("SUNION", "set1", "set2", "set3x"), "a", "b", "c", "d")
}

func setupMove(h *harness) {
	h.do("DEL", "myset3", "myset4")
	h.createSet("myset1", "1", "a", "b")
	h.createSet("myset2", "2", "3", "4")
	h.expectSetEncoding("myset1", "listpack")
	h.expectSetEncoding("myset2", "intset")
}

func TestSMove(t *testing.T) {
	h := newSetHarness(t)
	setupMove(h)
	h.expect("SMOVE myset1 myset2 a", n(1))
	expectMembers(t, "src", h.smembers("myset1"), "1", "b")
	expectMembers(t, "dst", h.smembers("myset2"), "2", "3", "4", "a")
	h.expectSetEncoding("myset2", "listpack")

	setupMove(h)
	h.expect("SMOVE myset1 myset2 1", n(1))
	expectMembers(t, "dst", h.smembers("myset2"), "1", "2", "3", "4")
	h.expectSetEncoding("myset2", "intset")

	setupMove(h)
	h.expect("SMOVE myset2 myset1 2", n(1))
	expectMembers(t, "dst", h.smembers("myset1"), "1", "2", "a", "b")
	expectMembers(t, "src", h.smembers("myset2"), "3", "4")

	setupMove(h)
	h.script(
		"SMOVE myset1 myset2 foo", n(0),
		"SMOVE myset1 myset1 foo", n(0),
		"SMOVE noset myset2 foo", n(0),
		"SMOVE myset1 myset3 a", n(1),
	)
	h.expectSetEncoding("myset3", "listpack")
	expectMembers(t, "new dst", h.smembers("myset3"), "a")
	h.expect("SMOVE myset2 myset4 2", n(1))
	h.expectSetEncoding("myset4", "intset")

	h.script(
		"SET x 10", "OK",
		"SMOVE x myset2 foo", "(error) "+errWrongType,
		"SMOVE myset2 x foo", "(error) "+errWrongType,
		"SMOVE noset x foo", n(0), // the source is checked first
		"SADD set a b c", n(3),
		"SMOVE set set b", n(1),
		"SMEMBERS set", "[\"a\" \"b\" \"c\"]",
		// Moving the last member deletes the source.
		"SADD one m", n(1),
		"SMOVE one other m", n(1),
		"EXISTS one", n(0),
		"SMEMBERS other", `["m"]`,
	)
}

// TestSDiffFuzzing is set.tcl's "SDIFF fuzzing": random sets, SDIFF of
// all of them against the difference computed here.
func TestSDiffFuzzing(t *testing.T) {
	h := newSetHarness(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		want := map[string]bool{}
		var keys []string
		for i := range 1 + rng.IntN(10) {
			k := "set_" + strconv.Itoa(i)
			h.do("DEL", k)
			keys = append(keys, k)
			for range rng.IntN(100) {
				m := randomSetMember(rng)
				h.do("SADD", k, m)
				if i == 0 {
					want[m] = true
				} else {
					delete(want, m)
				}
			}
		}
		expectMembers(t, "SDIFF", h.sList(append([]string{"SDIFF"}, keys...)...), setModelMembers(want)...)
	}
}
