package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// BenchmarkHotPath measures one command through the server without the
// network: parse, dispatch, execute in the keyspace and encode the reply
// (conn.runInput), on the shard's loop, with allocations per command. Each
// connection's input holds hotPathBatch pipelined commands, as a client
// at -P 64 would send them; the loop gets control between batches (so the
// WAL, where on, writes what the commands appended). ns/cmd is the time on
// the loop per command; ns/op adds the hand-off to the loop per turn.
//
//	go test -run '^$' -bench HotPath -benchmem ./server/
func BenchmarkHotPath(b *testing.B) {
	value := strings.Repeat("x", 64)
	rows := []struct {
		name string
		args []string
	}{
		{"PING", []string{"PING"}},
		{"GET", []string{"GET", "key:000000000042"}},
		{"GET-miss", []string{"GET", "nokey"}},
		{"SET", []string{"SET", "key:000000000042", value}},
		{"INCR", []string{"INCR", "counter"}},
		{"MSET-10", msetArgs(10, value)},
	}
	for _, aof := range []string{"no", "yes"} {
		for _, row := range rows {
			b.Run(fmt.Sprintf("appendonly=%s/%s", aof, row.name), func(b *testing.B) {
				benchHotPath(b, aof, [][]string{row.args}, 0)
			})
		}
	}
	// GET, SET and MSET of random keys over a database of 1M keys, each
	// batch 64 commands of different keys: the keyspace's memory no longer fits the caches,
	// and reading ahead of the pipeline (prefetchWindow) matters.
	const keyspace = 1_000_000
	for _, cmd := range []string{"GET", "SET", "MSET"} {
		for _, ahead := range []bool{false, true} {
			b.Run(fmt.Sprintf("appendonly=no/%s-random-1M/readahead=%v", cmd, ahead), func(b *testing.B) {
				old := readAhead
				readAhead = ahead // before the server's loop starts
				// Registered before the server's Stop, so it runs after it.
				b.Cleanup(func() { readAhead = old })
				rng := rand.New(rand.NewPCG(1, 2))
				cmds := make([][]string, 1024*hotPathBatch)
				for i := range cmds {
					key := func() string { return fmt.Sprintf("key:%012d", rng.IntN(keyspace)) }
					switch cmd {
					case "GET":
						cmds[i] = []string{cmd, key()}
					case "SET":
						cmds[i] = []string{cmd, key(), value}
					case "MSET": // of 10 keys
						cmds[i] = []string{cmd}
						for range 10 {
							cmds[i] = append(cmds[i], key(), value)
						}
					}
				}
				benchHotPath(b, "no", cmds, keyspace)
			})
		}
	}
}

const hotPathBatch = 64

func msetArgs(n int, value string) []string {
	args := []string{"MSET"}
	for i := range n {
		args = append(args, fmt.Sprintf("key:%012d", i), value)
	}
	return args
}

// benchHotPath runs cmds, hotPathBatch at a time in turn (cycling), on
// a server with appendonly as given, after running the preload commands
// (untimed, their replies dropped) and loading keys keys (key:%012d,
// 64-byte values).
func benchHotPath(b *testing.B, appendonly string, cmds [][]string, keys int, preload ...[]string) {
	benchHotPathWith(b, appendonly, cmds, func(w *worker, call func(func())) {
		for i := 0; i < len(preload); {
			call(func() {
				var out resp.Writer
				for end := min(len(preload), i+10000); i < end; i++ {
					args := make([][]byte, len(preload[i]))
					for j, a := range preload[i] {
						args[j] = []byte(a)
					}
					w.ks.Exec(&keyspace.Client{}, args, &out)
					out.Reset()
				}
			})
		}
		value := []byte(strings.Repeat("x", 64))
		for i := 0; i < keys; {
			call(func() {
				var out resp.Writer
				for end := min(keys, i+10000); i < end; i++ {
					w.ks.Exec(&keyspace.Client{}, [][]byte{[]byte("SET"), fmt.Appendf(nil, "key:%012d", i), value}, &out)
					out.Reset()
				}
			})
		}
	})
}

// benchHotPathWith is benchHotPath on a server whose data load put there
// first (untimed), running its steps on the shard's loop with call.
func benchHotPathWith(b *testing.B, appendonly string, cmds [][]string, load func(w *worker, call func(func()))) {
	s := startTest(b, "auto", 1, "appendonly", appendonly)
	w := s.workers[0]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	if len(cmds) == 1 {
		for range hotPathBatch - 1 {
			cmds = append(cmds, cmds[0])
		}
	}
	// batches[i] holds commands i*hotPathBatch...; ends[i][j] is where its
	// command j ends.
	var batches [][]byte
	var ends [][]int
	for i := 0; i+hotPathBatch <= len(cmds); i += hotPathBatch {
		var enc resp.Writer
		var e []int
		for _, args := range cmds[i : i+hotPathBatch] {
			enc.ArrayHeader(len(args))
			for _, a := range args {
				enc.BulkString(a)
			}
			e = append(e, len(enc.Buf))
		}
		batches, ends = append(batches, enc.Buf), append(ends, e)
	}

	var c *conn
	next := 0
	run := func(n int) {
		batch, e := batches[next], ends[next]
		next = (next + 1) % len(batches)
		c.rbuf = append(c.rbuf[:0], batch[:e[n-1]]...)
		c.rpos, c.rend = 0, e[n-1]
		c.runInput()
		if c.state == connClosed || len(c.out.Buf) == 0 {
			b.Fatalf("%s: no reply (state %d)", cmds[0][0], c.state)
		}
		c.out.Buf = c.out.Buf[:0]
	}
	call := func(f func()) {
		if err := w.loop.Call(ctx, f); err != nil {
			b.Fatal(err)
		}
	}
	load(w, call)
	call(func() {
		c = newConn(w, -1, 0, "bench", "bench")
		run(hotPathBatch) // warm: the key exists, buffers have grown
	})
	b.ReportAllocs()
	b.ResetTimer()
	var onLoop time.Duration // time spent in runInput, without the hand-offs
	for done := 0; done < b.N; {
		call(func() {
			start := time.Now()
			defer func() { onLoop += time.Since(start) }()
			// 1024 commands per turn of the loop, about what 50 clients at
			// -P 16 bring.
			for range 1024 / hotPathBatch {
				if done == b.N {
					return
				}
				n := min(hotPathBatch, b.N-done)
				run(n)
				done += n
			}
		})
	}
	b.ReportMetric(float64(onLoop.Nanoseconds())/float64(b.N), "ns/cmd")
}
