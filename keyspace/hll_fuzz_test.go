package keyspace

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzHLLDecode gives any string to the HyperLogLog commands as the value
// of a key: no command panics, every reply is a count, OK or one of the
// two HLL errors, and the single-key and the union forms of PFCOUNT agree
// when the cache does not answer. A value the commands accept stays one
// they accept. (A HyperLogLog is a string: its heap encoding is its bytes,
// so decoding it is reading it here.)
func FuzzHLLDecode(f *testing.F) {
	h := newHarness(f)
	h.run("PFADD sparse a b c d e f")
	h.run("PFADD dense a b c")
	h.run("PFDEBUG TODENSE dense")
	for _, k := range []string{"sparse", "dense"} {
		s, _ := unquoteReply(h.run("GET " + k))
		f.Add(s)
		f.Add(s + "hello")
		f.Add(s[:len(s)-1])
		b := []byte(s)
		b[15] |= 0x80
		f.Add(string(b))
	}
	f.Add("HYLL")
	f.Add("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f")
	f.Add("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x8a")
	h.ks.Limits.HLLSparseMaxBytes = 300
	f.Fuzz(func(t *testing.T, val string) {
		h.t = t // one keyspace for every input: a new one costs more than a run
		h.do("DEL", "k", "m")
		h.do("SET", "k", val)
		okReply := func(cmd []string, got string) {
			if strings.HasPrefix(got, "(integer)") || got == "OK" || got == "(error) "+errHLLCorrupt ||
				got == "(error) "+errNotHLL || strings.HasPrefix(got, `"`) || got == "sparse" || got == "dense" ||
				got == "(error) ERR HLL encoding is not sparse" {
				return
			}
			t.Fatalf("%q on %q: %s", cmd, val, got)
		}
		stale := len(val) >= hllHdrSize && val[15]&0x80 != 0
		one, union := h.do("PFCOUNT", "k"), h.do("PFCOUNT", "k", "nokey")
		okReply([]string{"PFCOUNT"}, one)
		if stale && one != union {
			t.Fatalf("PFCOUNT k %s, PFCOUNT k nokey %s, on %q", one, union, val)
		}
		if strings.HasPrefix(one, "(error)") || strings.HasPrefix(union, "(error)") {
			// Refused: PFADD, PFMERGE and PFDEBUG must refuse it too, or
			// read only the part before the damage, without a panic.
			for _, cmd := range [][]string{{"PFADD", "k", "a", "b", "c"}, {"PFMERGE", "m", "k"}, {"PFDEBUG", "DECODE", "k"}} {
				okReply(cmd, h.do(cmd...))
			}
			return
		}
		for _, cmd := range [][]string{
			{"PFDEBUG", "ENCODING", "k"}, {"PFDEBUG", "DECODE", "k"}, {"PFMERGE", "m", "k"},
			{"PFADD", "k", "a", "b", "c", "x", "y", "z"}, {"PFCOUNT", "k"},
			{"PFDEBUG", "TODENSE", "k"}, {"PFADD", "k", "d"},
		} {
			okReply(cmd, h.do(cmd...))
		}
		if got := h.do("PFADD", "m", "q"); strings.HasPrefix(got, "(error)") {
			t.Fatalf("PFADD on the merged value: %s", got)
		}
	})
}

// unquoteReply undoes the harness's quoting of a bulk reply.
func unquoteReply(s string) (string, bool) {
	out, err := strconv.Unquote(s)
	return out, err == nil
}
