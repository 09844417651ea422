package server

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The directory counts the channels notifications may go to, which lets a
// shard skip building an event's messages when nobody could receive them.
func TestNotifyDirCountsKeyChannels(t *testing.T) {
	var d pubsubDir
	d.setName(false, "__keyspace@0__:k", 0, true)
	d.setName(false, "__keyspace@0__:k", 1, true)
	d.setName(false, "news", 0, true)
	d.setName(true, "__keyevent@0__:set", 0, true) // a shard channel: no notification goes there
	if n := d.nKeyChannels.Load(); n != 1 {
		t.Fatalf("nKeyChannels = %d, want 1", n)
	}
	d.setName(false, "__keyspace@0__:k", 0, false)
	if n := d.nKeyChannels.Load(); n != 1 {
		t.Fatalf("after one shard left: nKeyChannels = %d, want 1", n)
	}
	d.setName(false, "__keyspace@0__:k", 1, false)
	if n := d.nKeyChannels.Load(); n != 0 {
		t.Fatalf("after both left: nKeyChannels = %d, want 0", n)
	}
}

// Writers on keys of three shards and subscribers on every shard: each
// subscriber gets every key's events in the order the key's writes ran.
func TestNotifyOrderPerKeyAcrossShards(t *testing.T) {
	eachBackend(t, 3, func(t *testing.T, s *Server) {
		ctx := testCtx(t)
		c := client(t, s)
		if err := c.ConfigSet(ctx, "notify-keyspace-events", "K$").Err(); err != nil {
			t.Fatal(err)
		}
		const writers, rounds = 6, 100
		var subs []*redis.PubSub
		for range 6 {
			sc := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true})
			ps := sc.PSubscribe(ctx, "__keyspace@0__:*")
			t.Cleanup(func() { ps.Close(); sc.Close() })
			if _, err := ps.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			subs = append(subs, ps)
		}
		var wg sync.WaitGroup
		for g := range writers {
			wg.Go(func() {
				wc := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true, PoolSize: 1})
				defer wc.Close()
				k := fmt.Sprintf("w%d", g)
				for i := range rounds {
					pipe := wc.Pipeline()
					pipe.Set(ctx, k, i, 0)
					pipe.Append(ctx, k, "x")
					if _, err := pipe.Exec(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		for i, ps := range subs {
			next := map[string]int{} // per key: how many events came
			for n := 0; n < writers*rounds*2; n++ {
				m, err := ps.ReceiveMessage(ctx)
				if err != nil {
					t.Fatalf("subscriber %d after %d messages: %v", i, n, err)
				}
				key := strings.TrimPrefix(m.Channel, "__keyspace@0__:")
				want := "set"
				if next[key]%2 == 1 {
					want = "append"
				}
				if m.Payload != want {
					t.Fatalf("subscriber %d: key %s event %d is %q, want %q", i, key, next[key], m.Payload, want)
				}
				next[key]++
			}
		}
	})
}

// Notifications switched on and off, subscriptions coming and going, and
// keys expiring while shards write: nothing races, and once things
// settle every subscriber gets the events of a write.
func TestNotifyConfigAndSubscribersChurn(t *testing.T) {
	eachBackend(t, 2, func(t *testing.T, s *Server) {
		ctx := testCtx(t)
		c := client(t, s)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { // writers with expiring keys
			wc := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true})
			defer wc.Close()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("k%d", i%50)
				wc.Set(ctx, k, i, time.Millisecond)
				wc.LPush(ctx, "l"+k, i)
				wc.Get(ctx, fmt.Sprintf("k%d", (i+25)%50))
			}
		})
		wg.Go(func() { // the setting flips
			cc := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true})
			defer cc.Close()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				cc.ConfigSet(ctx, "notify-keyspace-events", []string{"KEA", "", "Exlm", "Kn$"}[i%4])
			}
		})
		wg.Go(func() { // subscribers come and go
			for {
				select {
				case <-stop:
					return
				default:
				}
				cl := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true})
				ps := cl.PSubscribe(ctx, "__key*")
				ps.Receive(ctx)
				ps.PUnsubscribe(ctx, "__key*")
				ps.Close()
				cl.Close()
			}
		})
		time.AfterFunc(300*time.Millisecond, func() { close(stop) })
		wg.Wait()
		if err := c.ConfigSet(ctx, "notify-keyspace-events", "E$").Err(); err != nil {
			t.Fatal(err)
		}
		ps := c.PSubscribe(ctx, "__keyevent@0__:set")
		if _, err := ps.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		w := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true})
		t.Cleanup(func() { w.Close() })
		for _, k := range []string{"a", "b", "c"} {
			w.Set(ctx, k, 1, 0)
			m, err := ps.ReceiveMessage(ctx)
			if err != nil || m.Payload != k {
				t.Fatalf("after the churn: %v %v, want the SET of %s", m, err, k)
			}
		}
	})
}
