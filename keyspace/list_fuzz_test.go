package keyspace

import (
	"bytes"
	"strings"
	"testing"

	"github.com/moond-db/moond/resp"
)

// FuzzListExec runs arbitrary arguments through the list commands over
// lists that exist ("l" small, "m" spanning nodes, "s" a string), and
// checks that nothing panics, that every command writes exactly one
// well-formed reply, that the lists keep their invariants, and that the
// journal replays into the same lists. Input: arguments separated by 0x00;
// the first byte picks the command.
func FuzzListExec(f *testing.F) {
	for _, seed := range []string{
		"\x00l\x00a", "\x05l\x002", "\x07\x002\x00l\x00m\x00LEFT\x00COUNT\x003",
		"\x08l\x00m", "\x09l\x00m\x00RIGHT\x00LEFT", "\x0bl\x00-1\x00x", "\x0fm\x00b\x00RANK\x00-2",
		"\x0el\x001\x00-2", "\x10m\x00-2\x00b", "\x04l\x00BEFORE\x00b\x00zz",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 2048 {
			return
		}
		spec := listSpecs[int(data[0])%len(listSpecs)]
		args := [][]byte{[]byte(spec.Name)}
		if len(data) > 1 {
			args = append(args, bytes.Split(data[1:], []byte{0})...)
		}
		h := newHarness(t)
		h.ks.Limits.ListMaxListpackSize = 3
		h.recordJournal()
		h.run("RPUSH l a b c")
		h.run("RPUSH m a b c d e f g b h")
		h.run("SET s x")
		var w resp.Writer
		h.ks.Exec(&h.c, args, &w)
		n, err := resp.NextReply(w.Buf)
		if err != nil || n != len(w.Buf) {
			t.Fatalf("%q: reply %q is not one well-formed reply", args, w.Buf)
		}
		keys := []string{"l", "m"}
		for _, a := range args[1:] {
			keys = append(keys, string(a))
		}
		dst := newHarness(t)
		dst.ks.Limits.ListMaxListpackSize = 3
		dst.ks.Loading = true
		for _, r := range h.records {
			if got := dst.do(r.args...); strings.HasPrefix(got, "(error)") {
				t.Fatalf("%q: record %q fails to replay: %s", args, r.args, got)
			}
		}
		dst.ks.Loading = false
		for _, k := range keys {
			h.checkList(k)
			if h.listOfKey(k) == nil {
				continue
			}
			want := h.do("LRANGE", k, "0", "-1")
			if got := dst.do("LRANGE", k, "0", "-1"); got != want {
				t.Fatalf("%q: replayed %q = %s, want %s", args, k, got, want)
			}
		}
	})
}
