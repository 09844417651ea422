package bench

// The hot path without the network: the bytes a client sends are parsed
// (resp.Parser), the command is looked up and dispatched (keyspace.Lookup, then
// Keyspace.Exec, which runs it) and its reply is encoded (resp.Writer), as a
// connection does for each command it reads, minus the socket and the
// routing between shards.
//
//	go test -run '^$' -bench . -benchmem ./bench/
//
// Each benchmark cycles through a ring of pre-encoded requests on random
// keys among the 1,000,000 that the shared keyspace holds (64-byte values),
// the keys redis-benchmark -r 1000000 -d 64 uses. In the -P16 cases one op
// is a batch of 16 commands parsed and executed back to back into one reply
// buffer, as one read of a pipelining client; ns/cmd is the time per
// command. Elsewhere one op is one command. README.md says where the path
// still allocates.

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

const (
	benchKeys = 1_000_000 // keys in the shared keyspace, as -r 1000000
	valueSize = 64        // bytes per value, as -d 64
	ringSize  = 1 << 14   // distinct requests a benchmark cycles through
	batchSize = 16        // commands per pipelined batch, as -P 16
)

var value = bytes.Repeat([]byte{'x'}, valueSize)

// key is redis-benchmark's key for n: key:%012d.
func key(prefix string, n int) []byte {
	return fmt.Appendf(nil, "%s:%012d", prefix, n)
}

// loadKeyspace returns a keyspace with n keys key:%012d holding 64 bytes.
func loadKeyspace(tb testing.TB, n int) *keyspace.Keyspace {
	ks := keyspace.NewKeyspace(16, nil)
	w := resp.Writer{Proto: 2}
	c := &keyspace.Client{}
	args := [][]byte{[]byte("SET"), nil, value}
	for i := range n {
		args[1] = key("key", i)
		ks.Exec(c, args, &w)
		if string(w.Buf) != "+OK\r\n" {
			tb.Fatalf("loading: SET %s: %q", args[1], w.Buf)
		}
		w.Reset()
	}
	return ks
}

// journaled counts the arguments the journal hook saw, so that the hook
// does some work the compiler cannot drop.
var journaled int

var (
	sharedOnce sync.Once
	shared     *keyspace.Keyspace
)

// sharedKeyspace is loaded once per test binary: loading a million keys
// takes about a second. The SET and MSET benchmarks overwrite its values
// with values of the same size, INCR adds its counter keys.
func sharedKeyspace(b *testing.B) *keyspace.Keyspace {
	sharedOnce.Do(func() { shared = loadKeyspace(b, benchKeys) })
	return shared
}

// A command builds one request on random keys.
type command func(r *rand.Rand, keys int) [][]byte

func getCmd(r *rand.Rand, keys int) [][]byte {
	return [][]byte{[]byte("GET"), key("key", r.IntN(keys))}
}

func setCmd(r *rand.Rand, keys int) [][]byte {
	return [][]byte{[]byte("SET"), key("key", r.IntN(keys)), value}
}

func incrCmd(r *rand.Rand, keys int) [][]byte {
	return [][]byte{[]byte("INCR"), key("counter", r.IntN(keys))}
}

func mgetCmd(r *rand.Rand, keys int) [][]byte {
	args := [][]byte{[]byte("MGET")}
	for range 10 {
		args = append(args, key("key", r.IntN(keys)))
	}
	return args
}

func msetCmd(r *rand.Rand, keys int) [][]byte {
	args := [][]byte{[]byte("MSET")}
	for range 10 {
		args = append(args, key("key", r.IntN(keys)), value)
	}
	return args
}

// ring is n requests made by cmd, back to back in one buffer, with a fixed
// seed so that every run sends the same ones.
func ring(cmd command, n, keys int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	var buf []byte
	for range n {
		buf = resp.AppendCommand(buf, cmd(r, keys)...)
	}
	return buf
}

// conn is the per-connection state the hot path uses: a parser and a reply
// buffer that lives as long as the connection.
type conn struct {
	p  resp.Parser
	w  resp.Writer
	c  keyspace.Client
	ks *keyspace.Keyspace
}

func newConn(ks *keyspace.Keyspace) *conn {
	return &conn{w: resp.Writer{Proto: 2, Buf: make([]byte, 0, 64<<10)}, ks: ks}
}

// step parses the command at the start of buf, dispatches and runs it,
// leaving its reply in cn.w, and returns the bytes it took.
func (cn *conn) step(buf []byte) (int, error) {
	args, n, err := cn.p.Parse(buf)
	if err != nil {
		return 0, err
	}
	if n == 0 || len(args) == 0 {
		return 0, fmt.Errorf("incomplete request at %q", buf[:min(len(buf), 40)])
	}
	if keyspace.Lookup(args[0]) == nil {
		return 0, fmt.Errorf("unknown command %q", args[0])
	}
	cn.ks.Exec(&cn.c, args, &cn.w)
	return n, nil
}

func BenchmarkHotPath(b *testing.B) {
	cases := []struct {
		name    string
		cmd     command
		batch   int
		journal bool
	}{
		{"GET", getCmd, 1, false},
		{"SET", setCmd, 1, false},
		{"INCR", incrCmd, 1, false},
		{"MGET10", mgetCmd, 1, false},
		{"MSET10", msetCmd, 1, false},
		{"GET-P16", getCmd, batchSize, false},
		{"SET-P16", setCmd, batchSize, false},
		// With a journal hook that keeps nothing: what building the
		// WAL's record costs the write path, before any WAL code.
		{"SET-journal", setCmd, 1, true},
		{"INCR-journal", incrCmd, 1, true},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			ks := sharedKeyspace(b)
			if tc.journal {
				ks.Log = countingLog{&journaled}
				defer func() { ks.Log = nil }()
			}
			buf := ring(tc.cmd, ringSize, benchKeys)
			cn := newConn(ks)
			off, cmds := 0, 0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				for range tc.batch {
					if off == len(buf) {
						off = 0
					}
					n, err := cn.step(buf[off:])
					if err != nil {
						b.Fatal(err)
					}
					off += n
				}
				cmds += tc.batch
				// The batch's replies are sent: the buffer is reused.
				cn.w.Reset()
			}
			if tc.batch > 1 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(cmds), "ns/cmd")
			}
		})
	}
}

// BenchmarkStage times the hot path's parts on their own, GET and SET on
// the shared keyspace, so that a change shows which part it moved.
func BenchmarkStage(b *testing.B) {
	getReq := resp.AppendCommand(nil, []byte("GET"), key("key", 123456))
	setReq := resp.AppendCommand(nil, []byte("SET"), key("key", 123456), value)
	b.Run("Parse-GET", func(b *testing.B) {
		var p resp.Parser
		b.ReportAllocs()
		for b.Loop() {
			if _, n, err := p.Parse(getReq); err != nil || n != len(getReq) {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("Parse-SET", func(b *testing.B) {
		var p resp.Parser
		b.ReportAllocs()
		for b.Loop() {
			if _, n, err := p.Parse(setReq); err != nil || n != len(setReq) {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("Lookup", func(b *testing.B) {
		name := []byte("GET")
		b.ReportAllocs()
		for b.Loop() {
			if keyspace.Lookup(name) == nil {
				b.Fatal("no GET")
			}
		}
	})
	exec := func(name string, cmd command) {
		b.Run(name, func(b *testing.B) {
			ks := sharedKeyspace(b)
			r := rand.New(rand.NewPCG(3, 4))
			reqs := make([][][]byte, ringSize)
			for i := range reqs {
				reqs[i] = cmd(r, benchKeys)
			}
			w := resp.Writer{Proto: 2, Buf: make([]byte, 0, 4096)}
			c := &keyspace.Client{}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				ks.Exec(c, reqs[i%len(reqs)], &w)
				w.Reset()
			}
		})
	}
	exec("Exec-GET", getCmd)
	exec("Exec-SET", setCmd)
	b.Run("Write-Bulk64", func(b *testing.B) {
		w := resp.Writer{Proto: 2, Buf: make([]byte, 0, 4096)}
		b.ReportAllocs()
		for b.Loop() {
			w.Bulk(value)
			w.Reset()
		}
	})
}

// TestHotPathReplies checks that the benchmarks measure what they claim:
// each request of each kind gets the reply Redis would give.
func TestHotPathReplies(t *testing.T) {
	const keys = 1000
	ks := loadKeyspace(t, keys)
	bulk := "$64\r\n" + string(value) + "\r\n"
	checks := []struct {
		name string
		cmd  command
		want func(reply string) bool
	}{
		{"GET", getCmd, func(r string) bool { return r == bulk }},
		{"SET", setCmd, func(r string) bool { return r == "+OK\r\n" }},
		{"INCR", incrCmd, func(r string) bool { return len(r) > 3 && r[0] == ':' }},
		{"MGET10", mgetCmd, func(r string) bool {
			return r == "*10\r\n"+string(bytes.Repeat([]byte(bulk), 10))
		}},
		{"MSET10", msetCmd, func(r string) bool { return r == "+OK\r\n" }},
	}
	for _, tc := range checks {
		buf := ring(tc.cmd, 64, keys)
		cn := newConn(ks)
		for off := 0; off < len(buf); {
			n, err := cn.step(buf[off:])
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if got := string(cn.w.Buf); !tc.want(got) {
				t.Fatalf("%s: reply %q", tc.name, got)
			}
			cn.w.Reset()
			off += n
		}
	}
	// INCR counts: the same counter twice more gives +2.
	cn := newConn(ks)
	req := resp.AppendCommand(nil, []byte("INCR"), []byte("counter:x"))
	for want := 1; want <= 3; want++ {
		if _, err := cn.step(req); err != nil {
			t.Fatal(err)
		}
		if got := string(cn.w.Buf); got != ":"+strconv.Itoa(want)+"\r\n" {
			t.Fatalf("INCR #%d: %q", want, got)
		}
		cn.w.Reset()
	}
}

// countingLog is a keyspace.Log that keeps nothing: it counts the
// arguments of the records it is given.
type countingLog struct{ args *int }

func (l countingLog) Append(_ int, args [][]byte) uint64 { *l.args += len(args); return 0 }
func (l countingLog) LastLSN() uint64                    { return 0 }
