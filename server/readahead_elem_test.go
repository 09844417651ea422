package server

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// respCmd encodes args as a RESP array of bulk strings.
func respCmd(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// TestReadAheadElementsChangesNoReply is TestReadAheadChangesNoReply for
// the commands that name an element of a hash or a set: the same
// pipelines, in reads split at random, to a server with read-ahead and to
// one without, over one hash and one set large enough for their elements
// to be read ahead (in a database too small for its keys to be), and the
// replies byte for byte the same. The pipelines mix hash and set reads
// and writes on the large keys and on small ones, WRONGTYPE, commands of
// other kinds, SELECT, inline commands and an unknown command.
func TestReadAheadElementsChangesNoReply(t *testing.T) {
	const elems = 40_000 // above the keyspace's prefetchMinKeys
	var load bytes.Buffer
	for i := range elems {
		load.WriteString(respCmd("HSET", "bighash", fmt.Sprintf("element:%012d", i), "xxx"))
		load.WriteString(respCmd("SADD", "bigset", fmt.Sprintf("element:%012d", i)))
	}
	load.WriteString(respCmd("HSET", "small", "f", "v"))
	load.WriteString(respCmd("SET", "str", "v"))
	loadReplies := 2*elems + 2
	rng := rand.New(rand.NewPCG(8, 8))
	keys := []string{"bighash", "bighash", "bigset", "bigset", "small", "str", "absent"}
	cmds := []func(k, e string) string{
		func(k, e string) string { return respCmd("HGET", k, e) },
		func(k, e string) string { return respCmd("HSET", k, e, "yy") },
		func(k, e string) string { return respCmd("HDEL", k, e) },
		func(k, e string) string { return respCmd("HMGET", k, e, "element:000000000001") },
		func(k, e string) string { return respCmd("HINCRBY", k, e, "1") },
		func(k, e string) string { return respCmd("HEXISTS", k, e) },
		func(k, e string) string { return respCmd("SADD", k, e) },
		func(k, e string) string { return respCmd("SREM", k, e) },
		func(k, e string) string { return respCmd("SISMEMBER", k, e) },
		func(k, e string) string { return respCmd("SMISMEMBER", k, e, "x") },
		func(k, _ string) string { return respCmd("GET", k) },
		func(k, _ string) string { return respCmd("HLEN", k) },
		func(string, string) string { return respCmd("SELECT", "1") },
		func(string, string) string { return respCmd("SELECT", "0") },
		func(k, e string) string { return "HGET " + k + " " + e + "\r\n" },
		func(string, string) string { return respCmd("PING") },
		func(string, string) string { return respCmd("NOSUCH", "x", "y") },
	}
	var pipeline bytes.Buffer
	for range 20_000 {
		e := fmt.Sprintf("element:%012d", rng.IntN(elems+elems/10))
		pipeline.WriteString(cmds[rng.IntN(len(cmds))](keys[rng.IntN(len(keys))], e))
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
		// Every load command answers an integer, but SET's OK.
		for i := 0; i < loadReplies; i++ {
			end := bytes.IndexByte(out, '\n')
			if end < 0 || out[0] != ':' && out[0] != '+' {
				t.Fatalf("load reply %d: %q", i, out[:min(len(out), 40)])
			}
			out = out[end+1:]
		}
		var keysWanted, elemsWanted bool
		var prefetched int64
		w := s.workers[0]
		if err := w.loop.Call(testCtx(t), func() {
			keysWanted, elemsWanted = w.ks.WantsPrefetch(0), w.ks.WantsPrefetchElement(0, []byte("bighash"))
			prefetched = w.prefetched
		}); err != nil {
			t.Fatal(err)
		}
		if keysWanted || !elemsWanted || ahead != (prefetched > 0) {
			t.Fatalf("read-ahead %v: keys wanted %v, elements wanted %v, prefetched %d", ahead, keysWanted, elemsWanted, prefetched)
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
