package server

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// BenchmarkHotPathList is BenchmarkHotPath for the list and sorted-set
// rows of bench-types (bench/types_compare.sh), with their data loaded
// first as the script loads it:
//
//   - LPUSH mylist xxx: one list that grows.
//
//   - RPOP mylist: one list that holds more elements than the run pops.
//
//   - ZADD myzset <random> element:<random>: random scores for random
//     members of a sorted set of 100,000, so that most updates move a
//     member and the descents miss the cache.
//
//   - ZRANGE zset1k 0 9: the first ten of a sorted set of 1,000.
//
//     go test -run '^$' -bench HotPathList -benchmem ./server/
func BenchmarkHotPathList(b *testing.B) {
	const zsetMembers = 100000
	rng := rand.New(rand.NewPCG(3, 4))
	zadds := make([][]string, 1024*hotPathBatch)
	for i := range zadds {
		zadds[i] = []string{"ZADD", "myzset", listBenchPad12(rng.IntN(zsetMembers)), "element:" + listBenchPad12(rng.IntN(zsetMembers))}
	}
	rows := []struct {
		name string
		load func(*worker, int)
		cmds [][]string
	}{
		{"LPUSH", nil, [][]string{{"LPUSH", "mylist", "xxx"}}},
		{"RPOP", listBenchLoadList, [][]string{{"RPOP", "mylist"}}},
		{"ZADD-100k", listBenchLoadZSet("myzset", "element:", zsetMembers), zadds},
		{"ZRANGE-0-9-1k", listBenchLoadZSet("zset1k", "member:", 1000), [][]string{{"ZRANGE", "zset1k", "0", "9"}}},
	}
	for _, aof := range []string{"no", "yes"} {
		for _, row := range rows {
			b.Run(fmt.Sprintf("appendonly=%s/%s", aof, row.name), func(b *testing.B) {
				if row.load == nil {
					benchHotPath(b, aof, row.cmds, 0)
					return
				}
				benchHotPathListLoaded(b, aof, row.cmds, row.load)
			})
		}
	}
}

// listBenchPad12 is redis-benchmark's __rand_int__ form of i: 12 digits.
func listBenchPad12(i int) string { return fmt.Sprintf("%012d", i) }

// listBenchLoadList pushes, to mylist, more elements than n RPOPs (and the warm-up
// batch) pop.
func listBenchLoadList(w *worker, n int) {
	args := [][]byte{[]byte("LPUSH"), []byte("mylist")}
	for range 1000 {
		args = append(args, []byte("xxx"))
	}
	var out resp.Writer
	for i := 0; i < n+2*hotPathBatch; i += 1000 {
		w.ks.Exec(&keyspace.Client{}, args, &out)
		out.Reset()
	}
}

// listBenchLoadZSet returns a loader of the sorted set key with members
// prefix0 ... prefix<members-1>, member i scored i, as bench-types fills
// myzset and zset1k (prefix "element:" takes the 12-digit form).
func listBenchLoadZSet(key, prefix string, members int) func(*worker, int) {
	return func(w *worker, _ int) {
		var out resp.Writer
		for i := range members {
			m := prefix + strconv.Itoa(i)
			if prefix == "element:" {
				m = prefix + listBenchPad12(i)
			}
			w.ks.Exec(&keyspace.Client{}, [][]byte{[]byte("ZADD"), []byte(key), []byte(strconv.Itoa(i)), []byte(m)}, &out)
			out.Reset()
		}
	}
}

// benchHotPathListLoaded is benchHotPath on a server whose data load(w, b.N)
// put there first, on the shard's loop: the same batches, turns and
// figures. (benchHotPath's own load is string keys only.)
func benchHotPathListLoaded(b *testing.B, appendonly string, cmds [][]string, load func(*worker, int)) {
	benchHotPathWith(b, appendonly, cmds, func(w *worker, call func(func())) {
		call(func() { load(w, b.N) })
	})
}

// BenchmarkBRPOPDeliveries is bench-types' delivery row in the test
// binary, for its allocations and profiles: 50 connections loop on BRPOP
// benchq 0 while one pipelines LPUSH benchq x, 16 at a time, over TCP to
// a one-shard server. One op is one delivery. The clients allocate
// nothing per request, so allocs/op is the server's per delivery.
//
//	go test -run '^$' -bench BRPOPDeliveries -benchmem ./server/
func BenchmarkBRPOPDeliveries(b *testing.B) {
	s := startTest(b, "auto", 1, "appendonly", "no")
	d := dialDeliveries(b, s.Addr(), 50)
	b.ReportAllocs()
	b.ResetTimer()
	d.run(b, b.N)
}

// deliveries is the delivery row's clients: consumers connections in a
// loop of BRPOP benchq 0 and one that pipelines LPUSH benchq x, 16 at a
// time; none allocates per request.
type deliveries struct {
	consumers []net.Conn
	producer  net.Conn
	r         *bufio.Reader
	push      []byte
}

const deliveryDepth = 16

func dialDeliveries(tb testing.TB, addr string, consumers int) *deliveries {
	d := &deliveries{}
	for i := range consumers + 1 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { c.Close() })
		if i < consumers {
			d.consumers = append(d.consumers, c)
		} else {
			d.producer = c
		}
	}
	d.r = bufio.NewReader(d.producer)
	for range deliveryDepth {
		d.push = append(d.push, "*3\r\n$5\r\nLPUSH\r\n$6\r\nbenchq\r\n$1\r\nx\r\n"...)
	}
	return d
}

// run makes n deliveries and returns once every consumer got its reply.
func (d *deliveries) run(tb testing.TB, n int) {
	brpop := []byte("*3\r\n$5\r\nBRPOP\r\n$6\r\nbenchq\r\n$1\r\n0\r\n")
	served := "*2\r\n$6\r\nbenchq\r\n$1\r\nx\r\n"
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	for _, c := range d.consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reply := make([]byte, len(served))
			for left.Add(-1) >= 0 {
				if _, err := c.Write(brpop); err != nil {
					tb.Error(err)
					return
				}
				if _, err := io.ReadFull(c, reply); err != nil || string(reply) != served {
					tb.Errorf("BRPOP: %q, %v", reply, err)
					return
				}
			}
		}()
	}
	for pushed := 0; pushed < n; {
		k := min(deliveryDepth, n-pushed)
		if _, err := d.producer.Write(d.push[:k*len(d.push)/deliveryDepth]); err != nil {
			tb.Fatal(err)
		}
		for range k {
			if line, err := d.r.ReadSlice('\n'); err != nil || line[0] != ':' {
				tb.Fatalf("LPUSH: %q, %v", line, err)
			}
		}
		pushed += k
	}
	wg.Wait()
}
