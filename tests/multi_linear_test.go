package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	moond "github.com/moond-db/moond/server"
	"github.com/redis/go-redis/v9"
)

// Randomized checks that transactions over two shards are atomic and
// serializable as clients see them: money transfers between counters on
// both shards never change the total any reader sees, and racing MSETNX
// over overlapping keys of both shards leave the winners, whole, and no
// trace of the losers.

// transfer is one committed MULTI; DECRBY from; INCRBY to[0]...; EXEC
// that moves amount to each of to.
type transfer struct {
	from   int
	to     []int
	amount int64
}

// TestMultiTransfersKeepTheTotal runs writers that move amounts between
// random counters in MULTI/EXEC while readers read every counter with one
// MGET or one MULTI GET... EXEC and check that the total never changes;
// at the end each counter holds exactly its start plus what the
// committed transfers moved.
func TestMultiTransfersKeepTheTotal(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) { runTransfers(t, s, 2) })
}

// TestMultiTransfersOnFourShards: the transfers over four shards, each
// transaction touching two or three of them, so that txns over different
// sets of shards queue for each other (the holds' order keeps them from
// deadlocking: a deadlock would hang the writers past their deadline).
func TestMultiTransfersOnFourShards(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			runTransfers(t, startServer(t, backend, 4), 4)
		})
	}
}

// keyOnShardOf returns a key with prefix whose slot maps to shard i of n.
func keyOnShardOf(prefix string, i, n int) string {
	for j := 0; ; j++ {
		k := fmt.Sprintf("%s%d", prefix, j)
		if moond.KeySlot([]byte(k))*n/moond.SlotCount == i {
			return k
		}
	}
}

// runTransfers is TestMultiTransfersKeepTheTotal on s, its counters
// spread over spread shards.
func runTransfers(t *testing.T, s *server, spread int) {
	const (
		counters = 8
		start    = 1000
		writers  = 6
		readers  = 2
		perWrite = 300 // transfers per writer
	)
	keys := make([]string, counters)
	for i := range keys {
		keys[i] = keyOnShardOf(fmt.Sprintf("acct%d-", i), i%spread, spread)
	}
	c := redis.NewClient(&redis.Options{Addr: s.addr(), Protocol: 2, DisableIdentity: true, PoolSize: writers + readers + 1})
	t.Cleanup(func() { c.Close() })
	cx := ctx(t)
	pairs := make([]any, 0, 2*counters)
	for _, k := range keys {
		pairs = append(pairs, k, start)
	}
	if err := c.MSet(cx, pairs...).Err(); err != nil {
		t.Fatal(err)
	}
	const total = counters * start
	deadline := time.Now().Add(20 * time.Second)

	done := make(chan struct{})
	var rwg sync.WaitGroup
	reads := make([]int, readers)
	for r := range readers {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for n := 0; ; n++ {
				select {
				case <-done:
					reads[r] = n
					return
				default:
				}
				vals, how, err := readCounters(cx, c, keys, n%2 == 0)
				if err != nil {
					t.Errorf("%s: %v", how, err)
					return
				}
				if sum := sumInts(vals); sum != total {
					t.Errorf("%s saw a total of %d, want %d: %v", how, sum, total, vals)
					return
				}
			}
		}()
	}

	var wwg sync.WaitGroup
	committed := make([][]transfer, writers)
	for w := range writers {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 17))
			for range perWrite {
				if time.Now().After(deadline) {
					t.Errorf("writer %d: past the deadline", w)
					return
				}
				perm := rng.Perm(counters)
				tr := transfer{from: perm[0], to: perm[1 : 2+rng.IntN(2)], amount: 1 + rng.Int64N(20)}
				_, err := c.TxPipelined(cx, func(p redis.Pipeliner) error {
					p.DecrBy(cx, keys[tr.from], tr.amount*int64(len(tr.to)))
					for _, to := range tr.to {
						p.IncrBy(cx, keys[to], tr.amount)
					}
					return nil
				})
				if err != nil {
					t.Errorf("writer %d: transfer: %v", w, err)
					return
				}
				committed[w] = append(committed[w], tr)
			}
		}()
	}
	wwg.Wait()
	close(done)
	rwg.Wait()

	want := make([]int64, counters)
	for i := range want {
		want[i] = start
	}
	moved := 0
	for _, trs := range committed {
		for _, tr := range trs {
			want[tr.from] -= tr.amount * int64(len(tr.to))
			for _, to := range tr.to {
				want[to] += tr.amount
			}
			moved++
		}
	}
	got, _, err := readCounters(cx, c, keys, true)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("counter %s = %d, want %d after %d transfers", keys[i], got[i], want[i], moved)
		}
	}
	t.Logf("%d transfers; reads: %v", moved, reads)
}

// readCounters reads every key with one MGET, or with one MULTI GET...
// EXEC, and returns their integer values.
func readCounters(ctx context.Context, c *redis.Client, keys []string, mget bool) ([]int64, string, error) {
	var raw []any
	how := "MGET"
	if mget {
		v, err := c.MGet(ctx, keys...).Result()
		if err != nil {
			return nil, how, err
		}
		raw = v
	} else {
		how = "MULTI GET... EXEC"
		cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range keys {
				p.Get(ctx, k)
			}
			return nil
		})
		if err != nil {
			return nil, how, err
		}
		for _, cmd := range cmds {
			raw = append(raw, cmd.(*redis.StringCmd).Val())
		}
	}
	vals := make([]int64, len(raw))
	for i, v := range raw {
		s, _ := v.(string)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, how, fmt.Errorf("%s = %v: %v", keys[i], v, err)
		}
		vals[i] = n
	}
	return vals, how, nil
}

func sumInts(vals []int64) int64 {
	var s int64
	for _, v := range vals {
		s += v
	}
	return s
}

// TestMultiMSETNXRaces runs rounds of clients that MSETNX overlapping key
// sets over both shards at once, each setting its keys to its own id,
// while a reader reads every key of the round. Per round: winners' sets
// are disjoint and each winner's keys hold its id; no key holds a loser's
// id; each loser's set meets a winner's (something stopped it); the
// reader never saw part of a winner's keys.
func TestMultiMSETNXRaces(t *testing.T) {
	const (
		nkeys   = 8
		clients = 8
		rounds  = 80
	)
	eachServer(t, func(t *testing.T, s *server) {
		c := redis.NewClient(&redis.Options{Addr: s.addr(), Protocol: 2, DisableIdentity: true, PoolSize: clients + 2})
		t.Cleanup(func() { c.Close() })
		cx := ctx(t)
		// Client i wants keys i, i+1 and i+4 (mod 8), on both shards:
		// clients i and i+2 (or i+6) want disjoint sets and may both
		// win; every other pair meets.
		sets := make([][]int, clients)
		for i := range sets {
			sets[i] = []int{i % nkeys, (i + 1) % nkeys, (i + 4) % nkeys}
		}
		wins := 0
		for r := range rounds {
			keys := make([]string, nkeys)
			for i := range keys {
				keys[i] = keyOnShard(fmt.Sprintf("nx%d-%d-", r, i), i%2)
			}
			won := make([]bool, clients)
			go1 := make(chan struct{})
			var wg sync.WaitGroup
			for i := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					pairs := []any{}
					for _, k := range sets[i] {
						pairs = append(pairs, keys[k], i)
					}
					<-go1
					ok, err := c.MSetNX(cx, pairs...).Result()
					if err != nil {
						t.Errorf("round %d client %d: MSETNX: %v", r, i, err)
					}
					won[i] = ok
				}()
			}
			stop := make(chan struct{})
			readerDone := make(chan struct{})
			go func() {
				defer close(readerDone)
				for {
					select {
					case <-stop:
						return
					default:
					}
					vals, err := c.MGet(cx, keys...).Result()
					if err != nil {
						t.Errorf("round %d: MGET: %v", r, err)
						return
					}
					if msg := partialWinner(vals, sets, keys); msg != "" {
						t.Errorf("round %d: a reader saw %s", r, msg)
						return
					}
				}
			}()
			close(go1)
			wg.Wait()
			close(stop)
			<-readerDone
			vals, err := c.MGet(cx, keys...).Result()
			if err != nil {
				t.Fatal(err)
			}
			if msg := checkMSETNXRound(vals, sets, won); msg != "" {
				t.Fatalf("round %d: %s (values %v, won %v)", r, msg, vals, won)
			}
			for _, w := range won {
				if w {
					wins++
				}
			}
		}
		t.Logf("%d rounds, %d winners", rounds, wins)
	})
}

// partialWinner names a client some but not all of whose keys hold its id.
func partialWinner(vals []any, sets [][]int, keys []string) string {
	for id, set := range sets {
		have := 0
		for _, k := range set {
			if vals[k] == strconv.Itoa(id) {
				have++
			}
		}
		if have > 0 && have < len(set) {
			return fmt.Sprintf("%d of the %d keys of client %d: %v", have, len(set), id, vals)
		}
	}
	return ""
}

// checkMSETNXRound checks a finished round; "" when it is right.
func checkMSETNXRound(vals []any, sets [][]int, won []bool) string {
	owner := map[int]int{} // key -> winner
	anyWin := false
	for id, set := range sets {
		if !won[id] {
			continue
		}
		anyWin = true
		for _, k := range set {
			if o, ok := owner[k]; ok {
				return fmt.Sprintf("clients %d and %d both won key %d", o, id, k)
			}
			owner[k] = id
			if vals[k] != strconv.Itoa(id) {
				return fmt.Sprintf("winner %d's key %d holds %v", id, k, vals[k])
			}
		}
	}
	if !anyWin {
		return "no MSETNX won on empty keys"
	}
	for k, v := range vals {
		if _, ok := owner[k]; !ok && v != nil {
			return fmt.Sprintf("key %d holds %v, no winner's", k, v)
		}
	}
	for id, set := range sets {
		if won[id] {
			continue
		}
		met := false
		for _, k := range set {
			if _, ok := owner[k]; ok {
				met = true
			}
		}
		if !met {
			return fmt.Sprintf("client %d lost though no winner has any of its keys", id)
		}
	}
	return ""
}
