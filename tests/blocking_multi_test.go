package tests

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	moond "github.com/moond-db/moond/server"
	"github.com/redis/go-redis/v9"
)

// keyOnShard returns a key with prefix whose slot maps to shard i of 2.
func keyOnShard(prefix string, i int) string {
	for n := 0; ; n++ {
		k := fmt.Sprintf("%s%d", prefix, n)
		if moond.KeySlot([]byte(k))*2/moond.SlotCount == i {
			return k
		}
	}
}

// startTwoShards starts moond with two shards on each backend.
func eachTwoShardServer(t *testing.T, f func(t *testing.T, s *server)) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			f(t, startServer(t, backend, 2))
		})
	}
}

// A wait on keys of two shards is served by whichever gets data first.
func TestBlockingAcrossShards(t *testing.T) {
	eachTwoShardServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		a, b := keyOnShard("a", 0), keyOnShard("b", 1)
		for _, push := range []string{b, a} {
			ch := goBLPop(s, 0, a, b)
			waitBlocked(t, c, 1)
			c.RPush(ctx(t), push, "v-"+push)
			if r := recvResult(t, ch); r.err != nil || !slices.Equal(r.val, []string{push, "v-" + push}) {
				t.Fatalf("BLPOP %s %s, push to %s: %q (%v)", a, b, push, r.val, r.err)
			}
			waitBlocked(t, c, 0)
		}
		// Data already there, on the second key's shard.
		c.RPush(ctx(t), b, "there")
		if v, err := c.BLPop(ctx(t), 0, a, b).Result(); err != nil || !slices.Equal(v, []string{b, "there"}) {
			t.Fatalf("BLPOP with data on %s: %q (%v)", b, v, err)
		}
		// Timeout, RESP2 and RESP3.
		for _, proto := range []int{2, 3} {
			if _, err := s.client(proto).BZPopMin(ctx(t), 100*time.Millisecond, a, b).Result(); !errors.Is(err, redis.Nil) {
				t.Fatalf("RESP%d: BZPOPMIN timeout across shards: %v", proto, err)
			}
		}
		// A key of another kind: WRONGTYPE.
		c.Set(ctx(t), b, "string", 0)
		if err := c.BLPop(ctx(t), 0, a, b).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
			t.Fatalf("BLPOP with a string key: %v", err)
		}
		c.Del(ctx(t), b)
		// BLMPOP and BZMPOP across shards.
		c.ZAdd(ctx(t), a, redis.Z{Score: 3, Member: "m"})
		if k, zs, err := c.BZMPop(ctx(t), 0, "min", 1, b, a).Result(); err != nil || k != a || len(zs) != 1 || zs[0].Member != "m" {
			t.Fatalf("BZMPOP across shards: %s %v (%v)", k, zs, err)
		}
		// CLIENT UNBLOCK, and a client that hangs up.
		bc := s.client(2)
		id := bc.ClientID(ctx(t)).Val()
		ch := make(chan error, 1)
		go func() { ch <- bc.BLPop(ctx(t), 0, a, b).Err() }()
		waitBlocked(t, c, 1)
		if n := c.Do(ctx(t), "CLIENT", "UNBLOCK", id).Val(); n != int64(1) {
			t.Fatalf("CLIENT UNBLOCK = %v", n)
		}
		if err := <-ch; !errors.Is(err, redis.Nil) {
			t.Fatalf("unblocked: %v", err)
		}
		r := s.raw()
		r.send(fmt.Sprintf("*4\r\n$5\r\nBLPOP\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$1\r\n0\r\n", len(a), a, len(b), b))
		waitBlocked(t, c, 1)
		r.c.Close()
		waitBlocked(t, c, 0)
		c.RPush(ctx(t), a, "kept")
		c.RPush(ctx(t), b, "kept")
		if n := c.LLen(ctx(t), a).Val() + c.LLen(ctx(t), b).Val(); n != 2 {
			t.Fatalf("a closed connection's wait popped: %d left of 2", n)
		}
	})
}

// Many clients wait on two keys of two shards while producers push to
// both: every element is delivered exactly once.
func TestBlockingAcrossShardsDeliversEachElementOnce(t *testing.T) {
	eachTwoShardServer(t, func(t *testing.T, s *server) {
		a, b := keyOnShard("qa", 0), keyOnShard("qb", 1)
		const consumers, perKey = 20, 500
		var got sync.Map
		var delivered atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, consumers+2)
		for range consumers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := s.client(2)
				for delivered.Load() < 2*perKey {
					v, err := c.BLPop(ctx(t), 100*time.Millisecond, a, b).Result()
					if errors.Is(err, redis.Nil) {
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					if _, dup := got.LoadOrStore(v[1], v[0]); dup {
						errs <- fmt.Errorf("%s delivered twice", v[1])
						return
					}
					delivered.Add(1)
				}
			}()
		}
		for _, k := range []string{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := s.client(2)
				for i := range perKey {
					if err := c.RPush(ctx(t), k, fmt.Sprintf("%s-%d", k, i)).Err(); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if n := delivered.Load(); n != 2*perKey {
			t.Fatalf("delivered %d of %d", n, 2*perKey)
		}
		c := s.client(2)
		if n := c.Exists(ctx(t), a, b).Val(); n != 0 {
			t.Fatalf("%d lists left", n)
		}
	})
}

// Consumers blocked on keys of two shards take what a producer pushes;
// then, with every consumer blocked, moond is killed: after the restart
// every element pushed was popped exactly once (the pops are logged as
// what happened), nothing comes back, and no wait survives the crash.
func TestBlockingPopsSurviveKill9(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := startServerIn(t, dir, backend, 2, "--appendfsync", "always")
			c := s.client(2)
			a, b := keyOnShard("ka", 0), keyOnShard("kb", 1)
			const consumers, total = 8, 400
			var popped sync.Map
			var n atomic.Int64
			var wg sync.WaitGroup
			for range consumers {
				wg.Add(1)
				cc := s.client(2)
				go func() {
					defer wg.Done()
					for {
						v, err := cc.BLPop(context.Background(), 0, a, b).Result()
						if err != nil {
							return // the kill
						}
						popped.Store(v[1], true)
						n.Add(1)
					}
				}()
			}
			waitBlocked(t, c, consumers)
			for i := range total {
				k := a
				if i%2 == 1 {
					k = b
				}
				if err := c.RPush(ctx(t), k, fmt.Sprint(i)).Err(); err != nil {
					t.Fatal(err)
				}
			}
			c.RPush(ctx(t), "rest", "x", "y")
			deadline := time.Now().Add(20 * time.Second)
			for n.Load() < total && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if n.Load() != total {
				t.Fatalf("%d of %d delivered before the kill", n.Load(), total)
			}
			waitBlocked(t, c, consumers)
			s.kill9()
			wg.Wait()
			s2 := startServerIn(t, dir, backend, 2)
			c2 := s2.client(2)
			for i := range total {
				if _, ok := popped.Load(fmt.Sprint(i)); !ok {
					t.Fatalf("element %d never delivered", i)
				}
			}
			if n := c2.Exists(ctx(t), a, b).Val(); n != 0 {
				t.Fatalf("popped elements came back: %d lists", n)
			}
			if got := c2.LRange(ctx(t), "rest", 0, -1).Val(); !slices.Equal(got, []string{"x", "y"}) {
				t.Fatalf("rest = %q", got)
			}
			if info := c2.Info(ctx(t), "clients").Val(); !strings.Contains(info, "blocked_clients:0\r") {
				t.Fatalf("a wait survived the restart:\n%s", info)
			}
			c2.RPush(ctx(t), a, "after")
			if got := c2.LRange(ctx(t), a, 0, -1).Val(); !slices.Equal(got, []string{"after"}) {
				t.Fatalf("a push after the restart: %q", got)
			}
		})
	}
}
