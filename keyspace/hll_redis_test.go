package keyspace

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/moond-db/moond/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// startRedis runs a redis-server 7.0 for the test, or skips it when there
// is none, and returns a client of it.
func startRedis(t *testing.T) *redis.Client {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return redistest.Start(t, port, t.TempDir())
}

// redisDo runs a command on redis-server and shows its reply as the
// harness shows moond's.
func redisDo(t *testing.T, rc *redis.Client, args ...string) string {
	t.Helper()
	iargs := make([]any, len(args))
	for i, a := range args {
		iargs[i] = a
	}
	v, err := rc.Do(context.Background(), iargs...).Result()
	if err != nil {
		if err == redis.Nil {
			return "(nil)"
		}
		return "(error) " + err.Error()
	}
	return showRedisValue(v)
}

func showRedisValue(v any) string {
	switch x := v.(type) {
	case string:
		return q(x)
	case int64:
		return n(x)
	case []any:
		elems := make([]string, len(x))
		for i, e := range x {
			elems[i] = showRedisValue(e)
		}
		return "[" + strings.Join(elems, " ") + "]"
	}
	return fmt.Sprintf("%v", v)
}

// both runs a command on moond and redis-server and fails unless they
// answer the same.
func both(t *testing.T, h *harness, rc *redis.Client, args ...string) string {
	t.Helper()
	got, want := h.do(args...), redisDo(t, rc, args...)
	if want == q(got) { // go-redis shows a status reply as a string
		want = got
	}
	if got != want {
		if len(got) > 200 {
			got, want = got[:200]+"...", want[:min(200, len(want))]+"..."
		}
		t.Fatalf("%.80q:\nmoond: %s\nredis: %s", args, got, want)
	}
	return got
}

// hllElements returns n distinct elements of mixed shapes: decimals,
// words, binary and (first) the empty string.
func hllElements(rng *rand.Rand, n int) []string {
	out := make([]string, 0, n)
	for i := range n {
		switch i % 4 {
		case 0:
			out = append(out, strconv.Itoa(rng.IntN(1<<40)))
		case 1:
			out = append(out, fmt.Sprintf("ele:%d:%x", i, rng.Uint64()))
		case 2:
			b := make([]byte, rng.IntN(20))
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
			out = append(out, string(b))
		default:
			out = append(out, strconv.Itoa(i))
		}
	}
	return out
}

// TestHLLBytesMatchRedis adds the same elements on moond and on a real
// redis-server 7.0 and compares, after every batch, the replies and the
// raw bytes of the value (sparse, at the promotion, dense), PFCOUNT and
// the bytes again with the cache filled; then PFMERGE and multi-key
// PFCOUNT over sparse and dense keys, and PFDEBUG's views.
func TestHLLBytesMatchRedis(t *testing.T) {
	rc := startRedis(t)
	for _, sparseMax := range []int64{3000, 300, 25} {
		t.Run(fmt.Sprint("hll-sparse-max-bytes=", sparseMax), func(t *testing.T) {
			h := newHarness(t)
			h.ks.Limits.HLLSparseMaxBytes = sparseMax
			redisDo(t, rc, "FLUSHALL")
			redisDo(t, rc, "CONFIG", "SET", "hll-sparse-max-bytes", strconv.FormatInt(sparseMax, 10))
			rng := rand.New(rand.NewPCG(uint64(sparseMax), 7))
			for k, size := range []int{0, 1, 3, 10, 100, 300, 1000, 3000, 20000} {
				key := fmt.Sprintf("hll%d", k)
				eles := hllElements(rng, size)
				both(t, h, rc, "PFADD", key)
				for i := 0; i < len(eles); {
					batch := min(1+rng.IntN(50), len(eles)-i)
					both(t, h, rc, append([]string{"PFADD", key}, eles[i:i+batch]...)...)
					if rng.IntN(8) == 0 {
						both(t, h, rc, "GET", key)
						both(t, h, rc, "PFCOUNT", key)
					}
					i += batch
				}
				both(t, h, rc, "GET", key)
				both(t, h, rc, "PFCOUNT", key)
				both(t, h, rc, "GET", key)
				both(t, h, rc, "PFDEBUG", "ENCODING", key)
				if h.do("PFDEBUG", "ENCODING", key) == "sparse" {
					both(t, h, rc, "PFDEBUG", "DECODE", key)
				}
				// Re-adding changes nothing.
				both(t, h, rc, append([]string{"PFADD", key}, eles...)...)
			}
			both(t, h, rc, "PFCOUNT", "hll1", "hll3", "hll5")
			both(t, h, rc, "PFCOUNT", "hll2", "hll8", "nokey")
			both(t, h, rc, "PFMERGE", "m1", "hll2", "hll3", "hll4")
			both(t, h, rc, "GET", "m1")
			both(t, h, rc, "PFMERGE", "hll5", "hll6", "hll8")
			both(t, h, rc, "GET", "hll5")
			both(t, h, rc, "PFMERGE", "m2")
			both(t, h, rc, "GET", "m2")
			both(t, h, rc, "PFCOUNT", "m1")
			both(t, h, rc, "PFDEBUG", "TODENSE", "hll3")
			both(t, h, rc, "GET", "hll3")
			both(t, h, rc, "PFDEBUG", "GETREG", "hll4")
			both(t, h, rc, "GET", "hll4")
		})
	}
}

// TestHLLCountMatchesRedis compares PFCOUNT with redis-server's at
// cardinalities from 1 to 200,000, through both encodings and the union
// of several keys: the estimator must give the same integer.
func TestHLLCountMatchesRedis(t *testing.T) {
	rc := startRedis(t)
	h := newHarness(t)
	redisDo(t, rc, "FLUSHALL")
	redisDo(t, rc, "CONFIG", "SET", "hll-sparse-max-bytes", "3000")
	added := 0
	next := 1
	for added < 200_000 {
		var eles []string
		for added < next {
			eles = append(eles, "e"+strconv.Itoa(added))
			added++
		}
		for len(eles) > 0 {
			batch := eles[:min(1000, len(eles))]
			eles = eles[len(batch):]
			both(t, h, rc, append([]string{"PFADD", "c"}, batch...)...)
			both(t, h, rc, append([]string{"PFADD", "c" + strconv.Itoa(added%3)}, batch...)...)
		}
		both(t, h, rc, "PFCOUNT", "c")
		both(t, h, rc, "PFCOUNT", "c0", "c1", "c2")
		next = next*5/4 + 1
	}
}

// TestHLLCorruptionMatchesRedis damages sparse and dense values the same
// way on both servers and compares what every command answers and
// leaves: damaged values are refused, or read, exactly as Redis does.
func TestHLLCorruptionMatchesRedis(t *testing.T) {
	rc := startRedis(t)
	h := newHarness(t)
	redisDo(t, rc, "FLUSHALL")
	redisDo(t, rc, "CONFIG", "SET", "hll-sparse-max-bytes", "3000")
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range 400 {
		both(t, h, rc, "DEL", "hll", "m")
		both(t, h, rc, append([]string{"PFADD", "hll"}, hllElements(rng, rng.IntN(400))...)...)
		if i%3 == 0 {
			both(t, h, rc, "PFDEBUG", "TODENSE", "hll")
		}
		l, _ := strconv.Atoi(strings.TrimPrefix(h.run("STRLEN hll"), "(integer) "))
		for range 1 + rng.IntN(3) {
			b := make([]byte, 1+rng.IntN(2))
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
			off := hllHdrSize + rng.IntN(l-hllHdrSize+2)
			both(t, h, rc, "SETRANGE", "hll", strconv.Itoa(off), string(b))
		}
		both(t, h, rc, "PFCOUNT", "hll", "nokey")
		both(t, h, rc, "PFMERGE", "m", "hll")
		both(t, h, rc, "GET", "m")
		both(t, h, rc, "PFADD", "hll", "x", "y", "z")
		both(t, h, rc, "GET", "hll")
		both(t, h, rc, "PFCOUNT", "hll")
	}
}

// TestHLLValuesCrossBetweenServers: a value built by redis-server alone,
// SET into moond, reads and grows the same as on redis-server, and a
// value built by moond alone does the same on redis-server (as DUMP and
// RESTORE or a replica would carry them).
func TestHLLValuesCrossBetweenServers(t *testing.T) {
	rc := startRedis(t)
	h := newHarness(t)
	redisDo(t, rc, "FLUSHALL")
	redisDo(t, rc, "CONFIG", "SET", "hll-sparse-max-bytes", "3000")
	rng := rand.New(rand.NewPCG(31, 32))
	for i, size := range []int{5, 500, 5000} {
		fromRedis, fromMoond := fmt.Sprintf("r%d", i), fmt.Sprintf("m%d", i)
		eles := hllElements(rng, size)
		redisDo(t, rc, append([]string{"PFADD", fromRedis}, eles...)...)
		h.do(append([]string{"PFADD", fromMoond}, eles[:size/2]...)...)
		rb, _ := strconv.Unquote(redisDo(t, rc, "GET", fromRedis))
		mb, _ := strconv.Unquote(h.do("GET", fromMoond))
		h.expectArgs("OK", "SET", fromRedis, rb)
		if got := redisDo(t, rc, "SET", fromMoond, mb); got != `"OK"` {
			t.Fatalf("SET on redis-server: %s", got)
		}
		for _, key := range []string{fromRedis, fromMoond} {
			both(t, h, rc, "PFCOUNT", key)
			both(t, h, rc, append([]string{"PFADD", key}, hllElements(rng, 300)...)...)
			both(t, h, rc, "GET", key)
			both(t, h, rc, "PFCOUNT", key)
		}
	}
}
