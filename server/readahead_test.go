package server

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"testing"
	"time"
)

// TestReadAheadChangesNoReply sends the same pipelines, in reads split at
// random, to a server with read-ahead (prefetchWindow) and to one without,
// over a keyspace large enough for the keyspace to prefetch, and checks that
// the replies are byte for byte the same. The pipelines mix reads, writes,
// SELECT, inline commands, commands without keys and an unknown command.
func TestReadAheadChangesNoReply(t *testing.T) {
	var pipeline bytes.Buffer
	rng := rand.New(rand.NewPCG(7, 7))
	const keys = 40_000 // above the keyspace's prefetchMinKeys
	for i := 0; i < keys; i += 1000 {
		pipeline.WriteString("*21\r\n$4\r\nMSET\r\n")
		for j := i; j < i+10; j++ {
			fmt.Fprintf(&pipeline, "$16\r\nkey:%012d\r\n$2\r\nv%d\r\n", j, j%10)
		}
	}
	var load bytes.Buffer
	for i := range keys {
		fmt.Fprintf(&load, "*3\r\n$3\r\nSET\r\n$16\r\nkey:%012d\r\n$3\r\nval\r\n", i)
	}
	cmds := []func(k string) string{
		func(k string) string { return fmt.Sprintf("*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(k), k) },
		func(k string) string { return fmt.Sprintf("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nx\r\n", len(k), k) },
		func(k string) string { return fmt.Sprintf("*2\r\n$4\r\nINCR\r\n$%d\r\n%s\r\n", len(k), k) },
		func(k string) string { return fmt.Sprintf("*2\r\n$3\r\nDEL\r\n$%d\r\n%s\r\n", len(k), k) },
		func(string) string { return "*2\r\n$6\r\nSELECT\r\n$1\r\n1\r\n" },
		func(string) string { return "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n" },
		func(k string) string { return "EXISTS " + k + "\r\n" },
		func(string) string { return "*1\r\n$4\r\nPING\r\n" },
		func(string) string { return "*1\r\n$5\r\nNOSUCH\r\n" },
	}
	for range 20_000 {
		k := fmt.Sprintf("key:%012d", rng.IntN(keys+keys/10))
		pipeline.WriteString(cmds[rng.IntN(len(cmds))](k))
	}
	cuts := make([]int, 200)
	for i := range cuts {
		cuts[i] = rng.IntN(pipeline.Len())
	}
	slices.Sort(cuts)

	replies := func(ahead bool) []byte {
		readAhead = ahead // before the server's goroutines start
		defer func() { readAhead = true }()
		s := startTest(t, "auto", 1, "appendonly", "no")
		defer s.Stop()
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(time.Minute))
		want := bytes.Count(load.Bytes(), []byte("*3\r\n$3\r\nSET"))
		go func() {
			c.Write(load.Bytes())
			p := pipeline.Bytes()
			prev := 0
			for _, cut := range cuts {
				c.Write(p[prev:cut])
				prev = cut
			}
			c.Write(p[prev:])
			c.Write([]byte("*1\r\n$4\r\nQUIT\r\n"))
		}()
		out, err := io.ReadAll(c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(out, bytes.Repeat([]byte("+OK\r\n"), want)) {
			t.Fatalf("the load got %q...", out[:min(len(out), 100)])
		}
		var wants bool
		var prefetched int64
		w := s.workers[0]
		if err := w.loop.Call(testCtx(t), func() { wants, prefetched = w.ks.WantsPrefetch(0), w.prefetched }); err != nil {
			t.Fatal(err)
		}
		if !wants || ahead != (prefetched > 0) {
			t.Fatalf("read-ahead %v: keyspace large enough %v, keys prefetched %d", ahead, wants, prefetched)
		}
		return out
	}
	with, without := replies(true), replies(false)
	if !bytes.Equal(with, without) {
		i := 0
		for i < min(len(with), len(without)) && with[i] == without[i] {
			i++
		}
		t.Fatalf("replies differ at byte %d of %d/%d: with read-ahead %q, without %q", i, len(with), len(without),
			with[i:min(i+80, len(with))], without[i:min(i+80, len(without))])
	}
}
