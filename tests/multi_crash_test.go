package tests

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Transactions and kill -9. Each writer owns a pair of keys, one on each
// shard of two, and writes generation g to both in one transaction
// (MULTI SET SET EXEC, or MSET across shards), g = 1, 2, 3...; moond is
// killed while they run and restarted. Then each pair must hold one
// generation (both keys from one transaction, or both absent), at least
// the last one acknowledged (an acknowledged write is in the WAL) and at
// most the last one sent.

// crashWriter is one writer's progress: the last generation it sent and
// the last one moond acknowledged.
type crashWriter struct {
	x, y       string
	mset       bool // MSET instead of MULTI/EXEC
	sent, ackd atomic.Int64
}

// crashRound runs writers against s until each had minAcked acknowledged
// transactions, kills s with SIGKILL while they still write, restarts moond
// on s's directory and returns the pairs that hold two generations
// (partial transactions) and how many transactions were acknowledged;
// acknowledged writes that were lost fail t.
func crashRound(t *testing.T, s *server, backend string, shards, round, minAcked int) (*server, int, int64) {
	ws := crashWriters(t, s, round, minAcked)
	s2 := startServerIn(t, s.dir, backend, shards)
	partial, acked := checkPairs(t, s2, ws, round)
	return s2, partial, acked
}

// crashWriters runs the writers of a crash round against s until each had
// minAcked transactions acknowledged, then kills s with SIGKILL while they
// still write, and returns them.
func crashWriters(t *testing.T, s *server, round, minAcked int) []*crashWriter {
	const writers = 8
	ws := make([]*crashWriter, writers)
	for i := range ws {
		ws[i] = &crashWriter{
			x:    keyOnShard(fmt.Sprintf("cx%d-%d-", round, i), 0),
			y:    keyOnShard(fmt.Sprintf("cy%d-%d-", round, i), 1),
			mset: i%2 == 1,
		}
	}
	c := redis.NewClient(&redis.Options{Addr: s.addr(), Protocol: 2, DisableIdentity: true,
		PoolSize: writers, MaxRetries: -1})
	defer c.Close()
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := int64(1); ; g++ {
				w.sent.Store(g)
				var err error
				if w.mset {
					err = c.MSet(context.Background(), w.x, g, w.y, g).Err()
				} else {
					_, err = c.TxPipelined(context.Background(), func(p redis.Pipeliner) error {
						p.Set(context.Background(), w.x, g, 0)
						p.Set(context.Background(), w.y, g, 0)
						return nil
					})
				}
				if err != nil {
					return // the kill
				}
				w.ackd.Store(g)
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for !allAcked(ws, int64(minAcked)) {
		if time.Now().After(deadline) {
			s.kill9()
			wg.Wait()
			t.Fatalf("round %d: writers did not get %d acknowledgements each within 10s", round, minAcked)
		}
		time.Sleep(time.Millisecond)
	}
	s.kill9()
	wg.Wait()

	return ws
}

// checkPairs reads every writer's pair from s2, the server restarted after
// the kill: it fails t on a lost acknowledged generation and returns the
// partial transactions found and the transactions acknowledged.
func checkPairs(t *testing.T, s2 *server, ws []*crashWriter, round int) (int, int64) {
	c2 := s2.client(2)
	partial, acked := 0, int64(0)
	for i, w := range ws {
		acked += w.ackd.Load()
		vals, err := c2.MGet(ctx(t), w.x, w.y).Result()
		if err != nil {
			t.Fatal(err)
		}
		gx, gy := genOf(t, vals[0]), genOf(t, vals[1])
		ackd, sent := w.ackd.Load(), w.sent.Load()
		for _, g := range []int64{gx, gy} {
			if g < ackd || g > sent {
				t.Errorf("round %d writer %d (mset %v): generation %d after the restart; acknowledged %d, sent %d",
					round, i, w.mset, g, ackd, sent)
			}
		}
		if gx != gy {
			partial++
			t.Logf("round %d writer %d (mset %v): partial transaction: %s=%d %s=%d (acknowledged %d, sent %d)",
				round, i, w.mset, w.x, gx, w.y, gy, ackd, sent)
		}
	}
	return partial, acked
}

func allAcked(ws []*crashWriter, minAcked int64) bool {
	for _, w := range ws {
		if w.ackd.Load() < minAcked {
			return false
		}
	}
	return true
}

// genOf is a key's generation: 0 when absent.
func genOf(t *testing.T, v any) int64 {
	if v == nil {
		return 0
	}
	g, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
	if err != nil {
		t.Fatalf("value %v: %v", v, err)
	}
	return g
}

// TestMultiKill9KeepsAcknowledgedTransactions: after kill -9, every
// acknowledged transaction is there; with one shard, no transaction is
// half there (its writes are in one WAL).
func TestMultiKill9KeepsAcknowledgedTransactions(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		for _, shards := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/shards=%d", backend, shards), func(t *testing.T) {
				t.Parallel()
				s := startServer(t, backend, shards)
				total := 0
				for round := range 3 {
					var partial int
					s, partial, _ = crashRound(t, s, backend, shards, round, 20)
					total += partial
				}
				if shards == 1 && total > 0 {
					t.Errorf("one shard: %d partial transactions after kill -9", total)
				}
				t.Logf("%d partial transactions in 3 rounds of 8 writers", total)
			})
		}
	}
}

// TestMultiKill9AtomicAcrossShards: after kill -9, no transaction over two
// shards is half there, although each shard logs its part in its own WAL
// (persistence/txnlog: a txn commits when every shard holds its END).
// MOOND_CRASH_ROUNDS sets the rounds per backend (default 10).
func TestMultiKill9AtomicAcrossShards(t *testing.T) {
	rounds := 10
	if n, err := strconv.Atoi(os.Getenv("MOOND_CRASH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, backend, 2)
			partial, hit, acked := 0, 0, int64(0)
			for round := range rounds {
				var p int
				var a int64
				s, p, a = crashRound(t, s, backend, 2, round, 10)
				partial += p
				acked += a
				if p > 0 {
					hit++
				}
			}
			t.Logf("%s: %d kill -9 cycles, %d transactions acknowledged, %d partial", backend, rounds, acked, partial)
			if partial > 0 {
				t.Errorf("%s: %d partial transactions in %d of %d rounds of 8 writers", backend, partial, hit, rounds)
			}
		})
	}
}

// TestMultiKill9ThenReshardKeepsTxnsWhole: transactions over two shards
// are killed mid-flight, and the restart changes the shard count (2 → 3,
// then 3 → 2): the reshard moves each transaction whole or not at all.
func TestMultiKill9ThenReshardKeepsTxnsWhole(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, backend, 2)
			partial := 0
			for round, next := range []int{3, 2, 3} {
				ws := crashWriters(t, s, round, 10)
				s = startServerIn(t, s.dir, backend, next)
				p, _ := checkPairs(t, s, ws, round)
				partial += p
			}
			if partial > 0 {
				t.Errorf("%s: %d partial transactions after kill -9 and a reshard", backend, partial)
			}
		})
	}
}

// TestMultiFlushallSurvivesRestart is multi.tcl's "MULTI with FLUSHALL and
// AOF" in moond's terms: the FLUSHALL of an EXEC, and what the EXEC wrote
// after it, are what a restart after kill -9 finds.
func TestMultiFlushallSurvivesRestart(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		for _, shards := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/shards=%d", backend, shards), func(t *testing.T) {
				t.Parallel()
				s := startServer(t, backend, shards, "--appendfsync", "always")
				x := newTxClient(t, s, 2)
				x.want("OK", "mset", "foo1", "old", "foo2", "old", "foo3", "old")
				x.want("OK", "multi")
				x.want("QUEUED", "set", "foo", "bar")
				x.want("QUEUED", "flushall")
				x.want("QUEUED", "mset", "foo1", "new", "foo2", "new")
				x.want("[OK OK OK]", "exec")
				s.kill9()
				s2 := startServerIn(t, s.dir, backend, shards)
				x2 := newTxClient(t, s2, 2)
				x2.want("[(nil) new new (nil)]", "mget", "foo", "foo1", "foo2", "foo3")
				x2.want("2", "dbsize")
			})
		}
	}
}

// TestMultiSIGTERMDuringTransactions: moond stopped with SIGTERM while
// transfers over both shards run exits cleanly, and after the restart the
// counters' total is exact: a clean shutdown never leaves half of a
// transaction.
func TestMultiSIGTERMDuringTransactions(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, backend, 2)
			for round := range 3 {
				s = sigtermRound(t, s, backend, round)
			}
		})
	}
}

// sigtermRound runs transfers between counters of both shards, stops s
// with SIGTERM while they run, restarts moond and checks the total.
func sigtermRound(t *testing.T, s *server, backend string, round int) *server {
	const counters, start, writers = 8, 100, 8
	keys := make([]string, counters)
	for i := range keys {
		keys[i] = keyOnShard(fmt.Sprintf("st%d-%d-", round, i), i%2)
	}
	c := redis.NewClient(&redis.Options{Addr: s.addr(), Protocol: 2, DisableIdentity: true,
		PoolSize: writers, MaxRetries: -1})
	defer c.Close()
	pairs := []any{}
	for _, k := range keys {
		pairs = append(pairs, k, start)
	}
	if err := c.MSet(ctx(t), pairs...).Err(); err != nil {
		t.Fatal(err)
	}
	var acks atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				from, to := keys[(w+i)%counters], keys[(w+i+1+w%3)%counters]
				_, err := c.TxPipelined(context.Background(), func(p redis.Pipeliner) error {
					p.DecrBy(context.Background(), from, 1)
					p.IncrBy(context.Background(), to, 1)
					return nil
				})
				if err != nil {
					return
				}
				acks.Add(1)
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for acks.Load() < 200 {
		if time.Now().After(deadline) {
			t.Fatalf("round %d: 200 transactions not acknowledged within 10s", round)
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.stop(); err != nil {
		t.Fatalf("round %d: SIGTERM: %v", round, err)
	}
	wg.Wait()
	s2 := startServerIn(t, s.dir, backend, 2)
	vals, _, err := readCounters(ctx(t), s2.client(2), keys, true)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sumInts(vals); sum != counters*start {
		t.Errorf("round %d: after SIGTERM and restart the total is %d, want %d: %v", round, sum, counters*start, vals)
	}
	return s2
}

// TestMultiTransfersSurviveKill9: transfers between counters on four
// shards (MULTI DECRBY INCRBY... EXEC, each over two or three shards) run
// with readers checking the total, moond is killed with SIGKILL while they
// run, and after every restart the total is the same: no transfer is half
// there after a crash.
func TestMultiTransfersSurviveKill9(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			const shards, counters, start = 4, 8, 1000
			s := startServer(t, backend, shards)
			keys := make([]string, counters)
			pairs := []any{}
			for i := range keys {
				keys[i] = keyOnShardOf(fmt.Sprintf("kt%d-", i), i%shards, shards)
				pairs = append(pairs, keys[i], start)
			}
			if err := s.client(2).MSet(ctx(t), pairs...).Err(); err != nil {
				t.Fatal(err)
			}
			var acked int64
			for round := range 5 {
				var n int64
				s, n = transferKillRound(t, s, backend, shards, keys, round)
				acked += n
				vals, err := s.client(2).MGet(ctx(t), keys...).Result()
				if err != nil {
					t.Fatal(err)
				}
				sum := int64(0)
				for _, v := range vals {
					sum += genOf(t, v)
				}
				if sum != counters*start {
					t.Fatalf("round %d: the total after kill -9 is %d, want %d: %v", round, sum, counters*start, vals)
				}
			}
			t.Logf("%s: 5 kill -9 cycles, %d transfers acknowledged, the total whole after each", backend, acked)
		})
	}
}

// transferKillRound runs transfers and total-checking readers against s,
// kills s once every writer had 10 transfers acknowledged, restarts it and
// returns the new server and the transfers acknowledged.
func transferKillRound(t *testing.T, s *server, backend string, shards int, keys []string, round int) (*server, int64) {
	const writers = 6
	c := redis.NewClient(&redis.Options{Addr: s.addr(), Protocol: 2, DisableIdentity: true,
		PoolSize: writers + 1, MaxRetries: -1})
	defer c.Close()
	acks := make([]atomic.Int64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				from := (w + i + round) % len(keys)
				to := []int{(from + 1 + w%3) % len(keys)}
				if i%2 == 0 {
					to = append(to, (from+5)%len(keys))
				}
				_, err := c.TxPipelined(context.Background(), func(p redis.Pipeliner) error {
					p.DecrBy(context.Background(), keys[from], int64(len(to)))
					for _, k := range to {
						p.IncrBy(context.Background(), keys[k], 1)
					}
					return nil
				})
				if err != nil {
					return // the kill
				}
				acks[w].Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() { // a reader: every MGET sees the whole total
		defer wg.Done()
		for {
			vals, err := c.MGet(context.Background(), keys...).Result()
			if err != nil {
				return
			}
			sum := int64(0)
			for _, v := range vals {
				sum += genOf(t, v)
			}
			if sum != int64(len(keys))*1000 {
				t.Errorf("round %d: a reader saw a total of %d", round, sum)
				return
			}
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		least := int64(-1)
		for i := range acks {
			if n := acks[i].Load(); least < 0 || n < least {
				least = n
			}
		}
		if least >= 10 {
			break
		}
		if time.Now().After(deadline) {
			s.kill9()
			wg.Wait()
			t.Fatalf("round %d: the writers did not get 10 transfers each within 10s", round)
		}
		time.Sleep(time.Millisecond)
	}
	s.kill9()
	wg.Wait()
	total := int64(0)
	for i := range acks {
		total += acks[i].Load()
	}
	return startServerIn(t, s.dir, backend, shards), total
}
