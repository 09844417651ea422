// Command coldload loads and reads keys for bench/cold_compare.sh
// (issue 19's cold-tier rows). Modes:
//
//	load  KEYSPACE SETs of key:%012d (0 .. KEYSPACE-1, each once) with
//	      VALUE-byte values, over CLIENTS connections in pipelines of P;
//	      prints SETs/s. A SET refused with -OOM (over maxmemory before
//	      a checkpoint made the values durable, so they can go cold) is
//	      sent again after 100 ms, the refused SETs only.
//	get   N GETs of key:%012d below KEYSPACE over CLIENTS connections in
//	      pipelines of P, the key drawn uniformly (-dist uniform) or from a
//	      zipfian distribution of exponent S over the keys (-dist zipf);
//	      prints "GETs/s p50_ms p99_ms hits"
//
// A GET's latency is the time from the write of its pipeline to the read
// of its reply, as redis-benchmark counts it. The zipfian ranks go through
// a fixed permutation of the keys, so the hot keys are spread over the
// load order (the first keys loaded are not the hottest). S may be below 1
// (math/rand's Zipf needs s > 1): the draw is a binary search of the
// cumulative distribution.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address")
	mode := flag.String("mode", "get", "load or get")
	clients := flag.Int("clients", 50, "connections")
	n := flag.Int("n", 1000000, "GETs in all (get)")
	pipeline := flag.Int("P", 16, "commands per pipeline")
	keyspace := flag.Int("keyspace", 262144, "keys")
	value := flag.Int("value", 1024, "value size in bytes (load)")
	dist := flag.String("dist", "uniform", "uniform or zipf (get)")
	s := flag.Float64("s", 0.99, "zipfian exponent (get -dist zipf)")
	flag.Parse()
	var err error
	switch *mode {
	case "load":
		var rate float64
		rate, err = load(*addr, *clients, *pipeline, *keyspace, *value)
		if err == nil {
			fmt.Printf("%.0f\n", rate)
		}
	case "get":
		var pick func(*rand.Rand) int
		pick, err = picker(*dist, *keyspace, *s)
		if err == nil {
			var r result
			r, err = get(*addr, *clients, *n, *pipeline, pick)
			if err == nil {
				fmt.Printf("%.0f %.3f %.3f %d\n", r.rate, r.p50, r.p99, r.hits)
			}
		}
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "coldload:", err)
		os.Exit(1)
	}
}

// picker returns a function that draws a key index.
func picker(dist string, keyspace int, s float64) (func(*rand.Rand) int, error) {
	switch dist {
	case "uniform":
		return func(r *rand.Rand) int { return r.IntN(keyspace) }, nil
	case "zipf":
		cdf := make([]float64, keyspace)
		sum := 0.0
		for i := range keyspace {
			sum += 1 / math.Pow(float64(i+1), s)
			cdf[i] = sum
		}
		perm := rand.New(rand.NewPCG(19, 19)).Perm(keyspace)
		return func(r *rand.Rand) int {
			u := r.Float64() * sum
			return perm[min(sort.SearchFloat64s(cdf, u), keyspace-1)]
		}, nil
	}
	return nil, fmt.Errorf("unknown distribution %q", dist)
}

type conn struct {
	c net.Conn
	r *bufio.Reader
}

func dial(addr string) (*conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &conn{c: c, r: bufio.NewReaderSize(c, 256<<10)}, nil
}

func appendKey(b []byte, i int) []byte {
	// key:%012d as a bulk string.
	b = append(b, "$16\r\nkey:"...)
	var d [12]byte
	for j := 11; j >= 0; j-- {
		d[j] = byte('0' + i%10)
		i /= 10
	}
	b = append(b, d[:]...)
	return append(b, "\r\n"...)
}

// reply reads one reply (bulk, simple or error); hit reports a non-nil bulk.
func (c *conn) reply() (hit bool, err error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return false, err
	}
	if len(line) < 3 {
		return false, fmt.Errorf("short line %q", line)
	}
	switch line[0] {
	case '-':
		return false, errors.New(string(line[:len(line)-2]))
	case '$':
		n, _ := strconv.Atoi(string(line[1 : len(line)-2]))
		if n < 0 {
			return false, nil
		}
		_, err = c.r.Discard(n + 2)
		return true, err
	}
	return false, nil
}

func load(addr string, clients, pipeline, keyspace, value int) (float64, error) {
	var next, ooms atomic.Int64
	val := make([]byte, value)
	for i := range val {
		val[i] = 'a' + byte(i%26)
	}
	hdr := []byte("$" + strconv.Itoa(value) + "\r\n")
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dial(addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.c.Close()
			var b []byte
			for {
				first := int(next.Add(int64(pipeline))) - pipeline
				if first >= keyspace {
					return
				}
				last := min(first+pipeline, keyspace)
				todo := make([]int, 0, pipeline)
				for i := first; i < last; i++ {
					todo = append(todo, i)
				}
				for try := 0; len(todo) > 0; try++ {
					if try == 6000 {
						errs <- fmt.Errorf("still refused with OOM after 10 minutes")
						return
					}
					if try > 0 {
						// Over maxmemory until a checkpoint makes the values
						// durable (and so coolable): wait, send the refused
						// SETs again (only those: each key is written once).
						ooms.Add(1)
						time.Sleep(100 * time.Millisecond)
					}
					b = b[:0]
					for _, i := range todo {
						b = append(b, "*3\r\n$3\r\nSET\r\n"...)
						b = appendKey(b, i)
						b = append(b, hdr...)
						b = append(b, val...)
						b = append(b, "\r\n"...)
					}
					if _, err := c.c.Write(b); err != nil {
						errs <- err
						return
					}
					refused := todo[:0]
					for _, i := range todo {
						if _, err := c.reply(); err != nil {
							if !strings.HasPrefix(err.Error(), "-OOM") {
								errs <- err
								return
							}
							refused = append(refused, i)
						}
					}
					todo = refused
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	if o := ooms.Load(); o > 0 {
		fmt.Fprintf(os.Stderr, "coldload: %d batches refused with OOM and sent again\n", o)
	}
	return float64(keyspace) / el.Seconds(), nil
}

type result struct {
	rate, p50, p99 float64
	hits           int64
}

func get(addr string, clients, n, pipeline int, pick func(*rand.Rand) int) (result, error) {
	var left, hits atomic.Int64
	left.Store(int64(n))
	errs := make(chan error, clients)
	lat := make([][]float64, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for ci := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(ci), uint64(time.Now().UnixNano())))
			c, err := dial(addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.c.Close()
			var b []byte
			var l []float64
			for {
				k := int(left.Add(-int64(pipeline))) + pipeline
				if k <= 0 {
					break
				}
				k = min(k, pipeline)
				b = b[:0]
				for range k {
					b = append(b, "*2\r\n$3\r\nGET\r\n"...)
					b = appendKey(b, pick(r))
				}
				t0 := time.Now()
				if _, err := c.c.Write(b); err != nil {
					errs <- err
					return
				}
				for range k {
					hit, err := c.reply()
					if err != nil {
						errs <- err
						return
					}
					if hit {
						hits.Add(1)
					}
					l = append(l, float64(time.Since(t0).Microseconds())/1000)
				}
			}
			lat[ci] = l
		}()
	}
	wg.Wait()
	el := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return result{}, err
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	q := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return all[min(int(p*float64(len(all))), len(all)-1)]
	}
	return result{rate: float64(n) / el.Seconds(), p50: q(0.50), p99: q(0.99), hits: hits.Load()}, nil
}
