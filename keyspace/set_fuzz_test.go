package keyspace

import (
	"bytes"
	"testing"

	"github.com/moond-db/moond/resp"
)

// FuzzSetExec runs arbitrary arguments through the set commands over sets
// of every encoding and a string, and checks that each writes exactly one
// well-formed reply and that its journal replays without an error on a
// keyspace built the same way. Input: arguments separated by 0x00; the
// first byte picks the command. SRANDMEMBER with a count beyond ten thousand
// either way is skipped: like Redis, it replies with that many members.
func FuzzSetExec(f *testing.F) {
	for _, seed := range []string{"\x00i\x00a", "\x07l\x002", "\x08h\x00i\x00a", "\x0a1\x00i\x00l\x00LIMIT\x001",
		"\x0bd\x00h\x00l", "\x10h\x000\x00MATCH\x00*1\x00COUNT\x005", "\x06i\x00-5"} {
		f.Add([]byte(seed))
	}
	build := func(ks *Keyspace, journal func(db int, a [][]byte)) {
		setJournal(ks, journal)
		var w resp.Writer
		c := &Client{}
		do := func(args ...string) { ks.Exec(c, setArgs(args...), &w) }
		do("SADD", "i", "1", "2", "-70000")
		do("SADD", "l", "a", "b", "3")
		do(append([]string{"SADD", "h"}, setSeq(0, 300)...)...)
		do("SET", "s", "str")
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 4096 {
			return
		}
		spec := setSpecs[int(data[0])%len(setSpecs)]
		args := [][]byte{[]byte(spec.Name)}
		if len(data) > 1 {
			args = append(args, bytes.Split(data[1:], []byte{0})...)
		}
		if spec.Name == "srandmember" && len(args) == 3 {
			if n, ok := parseInt(args[2]); ok && (n > 1e4 || n < -1e4) {
				return
			}
		}
		var journal [][][]byte
		var jdbs []int
		record := func(db int, a [][]byte) {
			cp := make([][]byte, len(a))
			for i := range a {
				cp[i] = append([]byte(nil), a[i]...)
			}
			journal = append(journal, cp)
			jdbs = append(jdbs, db)
		}
		ks := NewKeyspace(16, nil)
		build(ks, func(int, [][]byte) {})
		setJournal(ks, record)
		var w resp.Writer
		if !spec.arityOK(len(args)) {
			return
		}
		ks.Exec(&Client{}, args, &w)
		if n, err := resp.NextReply(w.Buf); err != nil || n != len(w.Buf) {
			t.Fatalf("%q: reply %q is not one well-formed reply (%v)", args, w.Buf, err)
		}
		replay := NewKeyspace(16, nil)
		build(replay, func(int, [][]byte) {})
		replay.Loading = true
		for i, rec := range journal {
			var out resp.Writer
			replay.Exec(&Client{DB: jdbs[i]}, rec, &out)
			if len(out.Buf) > 0 && out.Buf[0] == '-' {
				t.Fatalf("%q: journal record %q fails to replay: %q", args, rec, out.Buf)
			}
		}
	})
}
