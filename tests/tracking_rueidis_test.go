package tests

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// rueidis is a client built around RESP3 client-side caching: DoCache
// serves a key from its local cache until the server invalidates it. Its
// cached reads must see every write another client makes, and every
// expiry, eviction and flush, whatever shard the key lives on.

func newRueidis(t *testing.T, addr string) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableRetry: true})
	if err != nil {
		t.Fatalf("rueidis: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// cachedGet is a GET through rueidis's cache: the value ("" for none) and
// whether the cache served it.
func cachedGet(t *testing.T, c rueidis.Client, key string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := c.DoCache(ctx, c.B().Get().Key(key).Cache(), time.Hour)
	v, err := r.ToString()
	if rueidis.IsRedisNil(err) {
		return "", r.IsCacheHit()
	}
	if err != nil {
		t.Fatalf("cached GET %s: %v", key, err)
	}
	return v, r.IsCacheHit()
}

// eventuallyCached waits until the cached read of key returns want: the
// invalidation of a write travels after the write's reply, so the cache
// may lag, but never stays stale.
func eventuallyCached(t *testing.T, c rueidis.Client, key, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _ := cachedGet(t, c, key)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cached %s = %q, want %q: no invalidation reached the cache", key, got, want)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRueidisCacheSeesEveryWrite(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		cache := newRueidis(t, s.addr())
		wr := s.client(2)
		keys := []string{keyOnShard("c", 0), keyOnShard("c", 1), keyOnShard("d", 0), keyOnShard("d", 1)}
		for _, k := range keys {
			if err := wr.Set(ctx(t), k, "0", 0).Err(); err != nil {
				t.Fatal(err)
			}
			eventuallyCached(t, cache, k, "0")
			if v, hit := cachedGet(t, cache, k); !hit || v != "0" {
				t.Fatalf("second read of %s: %q hit=%v; the cache does not serve it", k, v, hit)
			}
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 1; i <= 300; i++ {
			k := keys[rng.IntN(len(keys))]
			v := strconv.Itoa(i)
			switch rng.IntN(3) {
			case 0:
				if err := wr.Set(ctx(t), k, v, 0).Err(); err != nil {
					t.Fatal(err)
				}
			case 1:
				if err := wr.Del(ctx(t), k).Err(); err != nil {
					t.Fatal(err)
				}
				v = ""
			case 2: // a transaction over both shards
				other := keys[(slices.Index(keys, k)+1)%len(keys)]
				if _, err := wr.TxPipelined(ctx(t), func(p redis.Pipeliner) error {
					p.Set(ctx(t), k, v, 0)
					p.Set(ctx(t), other, v, 0)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				eventuallyCached(t, cache, other, v)
			}
			eventuallyCached(t, cache, k, v)
		}
	})
}

func TestRueidisCacheSeesExpiryAndFlush(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		cache := newRueidis(t, s.addr())
		wr := s.client(2)
		k0, k1 := keyOnShard("x", 0), keyOnShard("x", 1)
		for _, k := range []string{k0, k1} {
			if err := wr.Set(ctx(t), k, "v", 100*time.Millisecond).Err(); err != nil {
				t.Fatal(err)
			}
			eventuallyCached(t, cache, k, "v")
		}
		// Nobody touches the keys: the active expiry's invalidations empty the cache.
		eventuallyCached(t, cache, k0, "")
		eventuallyCached(t, cache, k1, "")
		for _, k := range []string{k0, k1} {
			if err := wr.Set(ctx(t), k, "w", 0).Err(); err != nil {
				t.Fatal(err)
			}
			eventuallyCached(t, cache, k, "w")
		}
		if err := wr.FlushAll(ctx(t)).Err(); err != nil {
			t.Fatal(err)
		}
		eventuallyCached(t, cache, k0, "")
		eventuallyCached(t, cache, k1, "")
	})
}

func TestRueidisCacheSeesEvictions(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		cache := newRueidis(t, s.addr())
		wr := s.client(2)
		k0, k1 := keyOnShard("ev", 0), keyOnShard("ev", 1)
		for _, k := range []string{k0, k1} {
			if err := wr.Set(ctx(t), k, "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
			eventuallyCached(t, cache, k, "v")
		}
		// maxmemory 1 evicts every key before CONFIG SET replies: nobody
		// writes them, and the cache must still stop serving them. (Under
		// maxmemory 1 the server stays over it, and refuses the MULTI
		// rueidis wraps its cached reads in, as Redis would: the limit
		// goes back to 0 before the reads.)
		for _, kv := range [][2]string{{"maxmemory-policy", "allkeys-random"}, {"maxmemory", "1"}, {"maxmemory", "0"}} {
			if err := wr.ConfigSet(ctx(t), kv[0], kv[1]).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if n := wr.DBSize(ctx(t)).Val(); n != 0 {
			t.Fatalf("DBSIZE %d after maxmemory 1 under allkeys-random", n)
		}
		eventuallyCached(t, cache, k0, "")
		eventuallyCached(t, cache, k1, "")
	})
}

func TestRueidisCacheAfterRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, "uring", 2)
	cache := newRueidis(t, s.addr())
	k := keyOnShard("r", 1)
	if err := s.client(2).Set(ctx(t), k, "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	eventuallyCached(t, cache, k, "before")
	// The server dies; its tracking state with it. The client reconnects
	// and enables tracking again: no stale value survives.
	s.kill9()
	s2 := startServerIn(t, dir, "uring", 2, "--port", strconv.Itoa(s.port))
	s2.port = s.port // the flag given last wins: the client reconnects to the same address
	if err := s2.client(2).Set(ctx(t), k, "after", 0).Err(); err != nil {
		t.Fatal(err)
	}
	eventuallyCached(t, cache, k, "after")
	if v, hit := cachedGet(t, cache, k); v != "after" || !hit {
		t.Fatalf("after the restart: %q hit=%v; tracking is not on again", v, hit)
	}
}
