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
//
// The fuzzer's input is small: with dense set, it becomes a dense value's
// header and the start of its registers (the rest zero), so that the
// fuzzer explores dense values without 12 KiB inputs, which Go's fuzzer
// takes a minute each to minimize; inputs above 4 KiB are skipped for the
// same reason (the sparse limit is at most 3,000 bytes by default).
func FuzzHLLDecode(f *testing.F) {
	h := newHarness(f)
	h.run("PFADD sparse a b c d e f")
	s, _ := unquoteReply(h.run("GET sparse"))
	f.Add(s, false)
	f.Add(s+"hello", false)
	f.Add(s[:len(s)-1], false)
	b := []byte(s)
	b[15] |= 0x80
	f.Add(string(b), false)
	f.Add("HYLL", false)
	f.Add("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f", false)
	f.Add("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\x8a", false)
	f.Add("\x80\x00\xff\xff\xff\xff\x12\x34", true)
	f.Add("", true)
	h.ks.Limits.HLLSparseMaxBytes = 300
	f.Fuzz(func(t *testing.T, val string, dense bool) {
		if len(val) > 4096 {
			return // longer sparse values exercise nothing new; they only slow minimization
		}
		if dense {
			b := make([]byte, hllDenseSize)
			copy(b, "HYLL")
			copy(b[hllHdrSize-8:], val) // cache, then registers
			val = string(b)
		}
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
