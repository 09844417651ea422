package keyspace

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/moond-db/moond/resp"
)

// TestSetOverwritesInPlace checks that SET, MSET and GETSET of a value of
// the same allocation size reuse the key's memory (no allocation), and that
// everything that read the old value got it whole: SET ... GET's reply,
// GETSET's reply, and a COPY made before.
func TestSetOverwritesInPlace(t *testing.T) {
	h := newHarness(t)
	v1, v2, v3 := strings.Repeat("a", 64), strings.Repeat("b", 60), strings.Repeat("c", 64)
	h.do("SET", "k", v1)
	h.do("COPY", "k", "copy")
	if got := h.do("SET", "k", v2, "GET"); got != fmt.Sprintf("%q", v1) {
		t.Fatalf("SET k v2 GET = %s, want the old value", got)
	}
	if got := h.do("GETSET", "k", v3); got != fmt.Sprintf("%q", v2) {
		t.Fatalf("GETSET k v3 = %s, want v2", got)
	}
	for key, want := range map[string]string{"k": v3, "copy": v1} {
		if got := h.do("GET", key); got != fmt.Sprintf("%q", want) {
			t.Errorf("GET %s = %s, want %q", key, got, want)
		}
	}

	args := [][]byte{[]byte("SET"), []byte("k"), nil}
	vals := [][]byte{[]byte(v1), []byte(v2), []byte(v3)}
	var w resp.Writer
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		args[2] = vals[i%3]
		i++
		w.Reset()
		h.ks.Exec(&h.c, args, &w)
	})
	if allocs != 0 {
		t.Errorf("SET of a same-size value allocates %.1f times", allocs)
	}
	margs := [][]byte{[]byte("MSET"), []byte("k"), nil, []byte("copy"), nil}
	allocs = testing.AllocsPerRun(100, func() {
		margs[2], margs[4] = vals[i%3], vals[(i+1)%3]
		i++
		w.Reset()
		h.ks.Exec(&h.c, margs, &w)
	})
	if allocs != 0 {
		t.Errorf("MSET of same-size values allocates %.1f times", allocs)
	}
}

// TestSetOverwriteKeepsForms checks the cases that must not reuse memory:
// a different size, an integer, the empty string, a value the keyspace
// does not own (INCRBYFLOAT's result may be a constant string) and the
// mutable form APPEND makes; each ends with the right value and encoding.
func TestSetOverwriteKeepsForms(t *testing.T) {
	h := newHarness(t)
	long := strings.Repeat("x", 100)
	h.script(
		"SET k abcdefghijklmnopqrstuvwxyz", "OK",
		"SET k "+long, "OK",
		"GET k", fmt.Sprintf("%q", long),
		"SET k 12345", "OK",
		"OBJECT ENCODING k", `"int"`,
		"SET k abcdefghijklmnopqrstuvwxyz", "OK",
		"SET k 42", "OK",
		"OBJECT ENCODING k", `"int"`,
		"GET k", `"42"`,
		"INCRBYFLOAT f 0", `"0"`,
		"SET f zz", "OK",
		"GET f", `"zz"`,
		"INCRBYFLOAT f2 1.5", `"1.5"`,
		"SET f2 2.5x", "OK",
		"GET f2", `"2.5x"`,
		"APPEND a 0123456789abcdef", "(integer) 16",
		"SET a fedcba9876543210", "OK",
		"GET a", `"fedcba9876543210"`,
		"SET k abcdefghijklmnopqrstuvwxyz", "OK",
		"SET k abcdefghijklmnopqrstuvwxy", "OK",
		"GET k", `"abcdefghijklmnopqrstuvwxy"`,
		"STRLEN k", "(integer) 25",
	)
	h.do("SET", "e", "")
	if got := h.do("GET", "e"); got != `""` {
		t.Errorf("GET e = %s", got)
	}
	h.do("SET", "e", "")
	if got := h.do("STRLEN", "e"); got != "(integer) 0" {
		t.Errorf("STRLEN e = %s", got)
	}
}

// TestStringCommandsAgainstAModel runs random string commands over a few
// keys, with values of a few sizes so that SET often overwrites a value of
// the same size class in place, and checks every key against a map after
// each command. Values that two keys could share (COPY, RENAME, GETSET's
// reply, SET ... GET) are where an in-place overwrite would show through.
//
// The journal is checked too: APPEND and SETRANGE on an existing value
// log the change, never the value (a record no larger than what the
// client sent), and replaying the journal into an empty keyspace gives
// the model back.
func TestStringCommandsAgainstAModel(t *testing.T) {
	h := newHarness(t)
	h.recordJournal()
	model := map[string]string{}
	// journaledBytes is the size of the records the last command wrote.
	journaledBytes := func(before int) int {
		n := 0
		for _, r := range h.records[before:] {
			for _, a := range r.args {
				n += len(a)
			}
		}
		return n
	}
	rng := rand.New(rand.NewPCG(11, 12))
	keys := []string{"a", "b", "c", "d"}
	value := func() string {
		sizes := []int{1, 5, 17, 20, 21, 40, 48, 60, 64}
		n := sizes[rng.IntN(len(sizes))]
		b := make([]byte, n)
		for i := range b {
			b[i] = "xyz0123456789"[rng.IntN(13)]
		}
		return string(b)
	}
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	for step := range 20000 {
		k, k2, v := keys[rng.IntN(len(keys))], keys[rng.IntN(len(keys))], value()
		old, had := model[k]
		switch rng.IntN(9) {
		case 0:
			h.do("SET", k, v)
			model[k] = v
		case 1:
			want := "(nil)"
			if had {
				want = q(old)
			}
			if got := h.do("SET", k, v, "GET"); got != want {
				t.Fatalf("step %d: SET %s GET = %s, want %s", step, k, got, want)
			}
			model[k] = v
		case 2:
			h.do("MSET", k, v, k2, v+"!")
			model[k], model[k2] = v, v+"!"
		case 3:
			h.do("GETSET", k, v)
			model[k] = v
		case 4:
			before := len(h.records)
			h.do("APPEND", k, v)
			model[k] = old + v
			if n := journaledBytes(before); n > len("APPEND")+len(k)+len(v)+len("KEEPTTL")+len("SET") {
				t.Fatalf("step %d: APPEND of %d bytes to %d journaled %d bytes", step, len(v), len(old), n)
			}
		case 5:
			if k != k2 && had {
				h.do("COPY", k, k2, "REPLACE")
				model[k2] = old
			}
		case 6:
			if k != k2 && had {
				h.do("RENAME", k, k2)
				model[k2] = old
				delete(model, k)
			}
		case 7:
			h.do("DEL", k)
			delete(model, k)
		case 8:
			if had && len(old) > 2 {
				before := len(h.records)
				h.do("SETRANGE", k, "1", "QQ")
				model[k] = old[:1] + "QQ" + old[3:]
				if n := journaledBytes(before); n > len("SETRANGE")+len(k)+len("1QQ") {
					t.Fatalf("step %d: SETRANGE of 2 bytes in %d journaled %d bytes", step, len(old), n)
				}
			}
		}
		for _, key := range keys {
			want := "(nil)"
			if s, ok := model[key]; ok {
				want = q(s)
			}
			if got := h.do("GET", key); got != want {
				t.Fatalf("step %d: GET %s = %s, want %s", step, key, got, want)
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
		want := "(nil)"
		if s, ok := model[key]; ok {
			want = q(s)
		}
		if got := dst.do("GET", key); got != want {
			t.Fatalf("replayed: GET %s = %s, want %s", key, got, want)
		}
	}
}
