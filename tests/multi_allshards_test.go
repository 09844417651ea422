package tests

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// DBSIZE, KEYS, SWAPDB and FLUSHDB concern every shard; over two shards
// they run as txns, so they never see, or cut through, half of a
// transaction that writes keys of both shards.

// raceLoops runs each writer iters times while the readers run in loops
// until the writers are done; the first error of any fails t.
func raceLoops(t *testing.T, iters int, writers, readers []func(i int) error) {
	t.Helper()
	var mu sync.Mutex
	var first error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	}
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return first != nil
	}
	done := make(chan struct{})
	var rwg, wwg sync.WaitGroup
	reads := make([]int, len(readers))
	for ri, r := range readers {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					reads[ri] = i
					return
				default:
				}
				if err := r(i); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	for _, w := range writers {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			for i := range iters {
				if failed() {
					return
				}
				if err := w(i); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	wwg.Wait()
	close(done)
	rwg.Wait()
	if first != nil {
		t.Fatal(first)
	}
	t.Logf("reads per reader while %d writers ran %d times each: %v", len(writers), iters, reads)
}

// pairKeys are n pairs of keys, one of each pair on each shard of two.
func pairKeys(prefix string, n int) [][2]string {
	p := make([][2]string, n)
	for i := range p {
		p[i] = [2]string{keyOnShard(fmt.Sprintf("%sx%d-", prefix, i), 0), keyOnShard(fmt.Sprintf("%sy%d-", prefix, i), 1)}
	}
	return p
}

// TestMultiDBSIZEAndKEYSSeeWholePairs: writers set and delete pairs of
// keys of both shards (MSET/DEL, and MULTI/EXEC); DBSIZE is always even
// and KEYS never holds half of a pair, alone or inside MULTI.
func TestMultiDBSIZEAndKEYSSeeWholePairs(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		pairs := pairKeys("dk", 4)
		c := redis.NewClient(&redis.Options{Addr: s.addr(), Protocol: 2, DisableIdentity: true, PoolSize: 8})
		t.Cleanup(func() { c.Close() })
		cx := ctx(t)
		partner := map[string]string{}
		for _, p := range pairs {
			partner[p[0]], partner[p[1]] = p[1], p[0]
		}
		var writers []func(int) error
		for wi, p := range pairs {
			writers = append(writers, func(i int) error {
				if wi%2 == 0 {
					if err := c.MSet(cx, p[0], i, p[1], i).Err(); err != nil {
						return err
					}
					return c.Del(cx, p[0], p[1]).Err()
				}
				_, err := c.TxPipelined(cx, func(tx redis.Pipeliner) error {
					tx.Set(cx, p[0], i, 0)
					tx.Set(cx, p[1], i, 0)
					return nil
				})
				if err != nil {
					return err
				}
				_, err = c.TxPipelined(cx, func(tx redis.Pipeliner) error {
					tx.Del(cx, p[1])
					tx.Del(cx, p[0])
					return nil
				})
				return err
			})
		}
		wholePairs := func(keys []string) error {
			for _, k := range keys {
				if !slices.Contains(keys, partner[k]) {
					return fmt.Errorf("KEYS holds %s without %s: %q", k, partner[k], keys)
				}
			}
			return nil
		}
		readers := []func(int) error{
			func(int) error {
				n, err := c.DBSize(cx).Result()
				if err == nil && n%2 != 0 {
					err = fmt.Errorf("DBSIZE %d: half of a pair", n)
				}
				return err
			},
			func(int) error {
				keys, err := c.Keys(cx, "*").Result()
				if err != nil {
					return err
				}
				return wholePairs(keys)
			},
			func(int) error {
				cmds, err := c.TxPipelined(cx, func(tx redis.Pipeliner) error {
					tx.DBSize(cx)
					tx.Keys(cx, "*")
					return nil
				})
				if err != nil {
					return err
				}
				n, keys := cmds[0].(*redis.IntCmd).Val(), cmds[1].(*redis.StringSliceCmd).Val()
				if int(n) != len(keys) {
					return fmt.Errorf("MULTI DBSIZE KEYS EXEC: %d and %q", n, keys)
				}
				return wholePairs(keys)
			},
		}
		raceLoops(t, 150, writers, readers)
	})
}

// TestMultiSWAPDBAndFLUSHDBAreWhole: while SWAPDB 0 1 swaps two databases
// that hold different pairs over both shards, and FLUSHDB empties a third
// that writers fill by pairs, a reader of the pair (MGET, or MULTI GET
// GET EXEC) sees both keys from one database, and both or neither of a
// flushed pair.
func TestMultiSWAPDBAndFLUSHDBAreWhole(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		p := pairKeys("sw", 1)[0]
		c := redis.NewClient(&redis.Options{Addr: s.addr(), Protocol: 2, DisableIdentity: true, PoolSize: 8})
		t.Cleanup(func() { c.Close() })
		c2 := redis.NewClient(&redis.Options{Addr: s.addr(), Protocol: 2, DisableIdentity: true, PoolSize: 4, DB: 2})
		t.Cleanup(func() { c2.Close() })
		cx := ctx(t)
		for db, v := range []string{"zero", "one"} {
			x := newTxClient(t, s, 2)
			x.want("OK", "select", db)
			x.want("OK", "mset", p[0], v, p[1], v)
		}
		samePair := func(how string, vals []any) error {
			if len(vals) != 2 || vals[0] != vals[1] {
				return fmt.Errorf("%s %s %s: %v", how, p[0], p[1], vals)
			}
			return nil
		}
		writers := []func(int) error{
			func(int) error { return c.Do(cx, "swapdb", 0, 1).Err() },
			func(i int) error { return c2.MSet(cx, p[0], i, p[1], i).Err() },
			func(int) error { return c2.FlushDB(cx).Err() },
		}
		readers := []func(int) error{
			func(int) error {
				vals, err := c.MGet(cx, p[0], p[1]).Result()
				if err != nil {
					return err
				}
				if vals[0] == nil {
					return fmt.Errorf("MGET in db 0: %v", vals)
				}
				return samePair("MGET in db 0", vals)
			},
			func(int) error {
				cmds, err := c.TxPipelined(cx, func(tx redis.Pipeliner) error {
					tx.Get(cx, p[0])
					tx.Get(cx, p[1])
					return nil
				})
				if err != nil {
					return err
				}
				return samePair("MULTI GET GET EXEC in db 0", []any{cmds[0].(*redis.StringCmd).Val(), cmds[1].(*redis.StringCmd).Val()})
			},
			func(int) error {
				vals, err := c2.MGet(cx, p[0], p[1]).Result()
				if err != nil {
					return err
				}
				return samePair("MGET in db 2", vals)
			},
		}
		const swaps = 200 // even: database 0 ends as it began
		raceLoops(t, swaps, writers, readers)
		if got, err := c.MGet(cx, p[0], p[1]).Result(); err != nil || showReply(got, nil) != "[zero zero]" {
			t.Fatalf("after %d SWAPDB: %v (%v), want [zero zero]", swaps, got, err)
		}
	})
}
