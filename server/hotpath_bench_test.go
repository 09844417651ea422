package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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
				benchHotPath(b, aof, row.args)
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

func benchHotPath(b *testing.B, appendonly string, args []string) {
	s := startTest(b, "auto", 1, "appendonly", appendonly)
	w := s.workers[0]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var enc resp.Writer
	var ends []int // ends[i]: where command i+1 ends in the batch
	for range hotPathBatch {
		enc.ArrayHeader(len(args))
		for _, a := range args {
			enc.BulkString(a)
		}
		ends = append(ends, len(enc.Buf))
	}
	batch := enc.Buf

	var c *conn
	run := func(n int) {
		c.rbuf = append(c.rbuf[:0], batch[:ends[n-1]]...)
		c.rpos, c.rend = 0, ends[n-1]
		c.runInput()
		if c.state == connClosed || len(c.out.Buf) == 0 {
			b.Fatalf("%s: no reply (state %d)", args[0], c.state)
		}
		c.out.Buf = c.out.Buf[:0]
	}
	call := func(f func()) {
		if err := w.loop.Call(ctx, f); err != nil {
			b.Fatal(err)
		}
	}
	call(func() {
		c = newConn(w, -1, 0, "bench", "bench")
		c.rbuf = make([]byte, 0, len(batch))
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
