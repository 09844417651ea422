package keyspace

import (
	"bytes"
	"testing"

	"github.com/moond-db/moond/resp"
)

// FuzzExec runs arbitrary argument vectors through Exec, each command name
// the fuzzer picks from the table, and checks that the keyspace never
// panics, always writes exactly one well-formed reply, and that every
// journal record it emits replays on a fresh keyspace without an error.
// Input: arguments separated by 0x00; the first byte picks the command.
func FuzzExec(f *testing.F) {
	for _, seed := range []string{
		"\x00k\x00v", "\x01k\x00v\x00EX\x0010", "\x02k\x000\x00-1", "\x03a\x00b",
		"\x04k\x00999999999999999999999\x00x", "\x05k\x001e400", "\x06k\x00*\x00COUNT\x000",
		"\x8fq\x000", "\x96" + "0\x001\x00q\x00MIN", // BLPOP q 0, BZMPOP 0 1 q MIN: no data
	} {
		f.Add([]byte(seed))
	}
	specs := Specs()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 4096 {
			return
		}
		spec := specs[int(data[0])%len(specs)]
		if spec.Name == "pfselftest" {
			return // a second of work that reads no argument and no key
		}
		args := [][]byte{[]byte(spec.Name)}
		if len(data) > 1 {
			args = append(args, bytes.Split(data[1:], []byte{0})...)
		}
		clock := int64(startClock)
		ks := NewKeyspace(16, func() int64 { return clock })
		var journal [][][]byte
		var jdbs []int
		setJournal(ks, func(db int, a [][]byte) {
			cp := make([][]byte, len(a))
			for i := range a {
				cp[i] = append([]byte(nil), a[i]...)
			}
			journal = append(journal, cp)
			jdbs = append(jdbs, db)
		})
		// Some state for the command to act on.
		var w resp.Writer
		// A blocking command without data replies as on a timeout (as
		// inside MULTI) rather than wait: the keyspace alone never waits.
		c := &Client{NoBlock: true}
		ks.Exec(c, [][]byte{[]byte("SET"), []byte("k"), []byte("12")}, &w)
		ks.Exec(c, [][]byte{[]byte("SET"), []byte("s"), []byte("hello world")}, &w)
		w.Reset()
		ks.Exec(c, args, &w)
		n, err := resp.NextReply(w.Buf)
		if err != nil || n != len(w.Buf) {
			t.Fatalf("%q: reply %q is not exactly one well-formed reply (n=%d err=%v)", args, w.Buf, n, err)
		}
		replay := NewKeyspace(16, func() int64 { return clock })
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
