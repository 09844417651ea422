package keyspace

import (
	"strings"
	"testing"
)

// FuzzBitfieldArgs runs BITFIELD (and BITFIELD_RO) with arbitrary
// arguments over an arbitrary string: the command must never panic, must
// answer an error or one reply per operation, must leave the string alone
// when it answers an error, and its journal replayed into an empty
// keyspace must give the same string back.
func FuzzBitfieldArgs(f *testing.F) {
	f.Add([]byte("abc"), "GET u8 0 SET i5 #3 -7 INCRBY u63 1 9223372036854775807", false)
	f.Add([]byte{}, "OVERFLOW FAIL INCRBY i64 100 -9223372036854775808 OVERFLOW SAT SET u1 #7 -1", false)
	f.Add([]byte("12345"), "OVERFLOW WRAP INCRBY i3 #2 11 GET i64 3", true)
	f.Add([]byte("\xff"), "SET u8 8191 1 GET u8 #1023", false)
	f.Fuzz(func(t *testing.T, init []byte, line string, readOnly bool) {
		h := newHarness(t)
		h.ks.MaxBulkLen = 1024 // bounds what a write may allocate
		h.recordJournal()
		h.do("SET", "k", string(init))
		name := "BITFIELD"
		if readOnly {
			name = "BITFIELD_RO"
		}
		fields := strings.Fields(line)
		before := h.do("GET", "k")
		got := h.do(append([]string{name, "k"}, fields...)...)
		if strings.HasPrefix(got, "(error)") {
			if after := h.do("GET", "k"); after != before {
				t.Fatalf("%s %q answered %s and changed the string", name, fields, got)
			}
			return
		}
		if !strings.HasPrefix(got, "[") {
			t.Fatalf("%s %q: reply %s", name, fields, got)
		}

		dst := newHarness(t)
		dst.ks.Loading = true
		for _, r := range h.records {
			if reply := dst.do(r.args...); strings.HasPrefix(reply, "(error)") {
				t.Fatalf("replaying %q: %s", r.args, reply)
			}
		}
		if a, b := h.do("GET", "k"), dst.do("GET", "k"); a != b {
			t.Fatalf("%s %q: %s, replayed %s", name, fields, a, b)
		}
	})
}
