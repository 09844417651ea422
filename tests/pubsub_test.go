package tests

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Pub/Sub end to end with go-redis's PubSub API on both backends, with one
// and two shards. Each subscriber is a connection of its own, so with two
// shards eight of them land on both shards with near certainty, and a
// publisher's messages cross shards.

// subscribers opens n PubSub connections, alternating RESP2 and RESP3,
// each subscribed by sub and confirmed.
func subscribers(t *testing.T, s *server, n int, sub func(cl *redis.Client) *redis.PubSub) []*redis.PubSub {
	t.Helper()
	var out []*redis.PubSub
	for i := range n {
		ps := sub(s.client(2 + i%2))
		t.Cleanup(func() { ps.Close() })
		if _, err := ps.Receive(ctx(t)); err != nil {
			t.Fatalf("subscriber %d: confirmation: %v", i, err)
		}
		out = append(out, ps)
	}
	return out
}

func TestPubSubAcrossShards(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := ctx(t)
		pub := s.client(2)
		chans := subscribers(t, s, 8, func(cl *redis.Client) *redis.PubSub { return cl.Subscribe(c, "news") })
		pats := subscribers(t, s, 4, func(cl *redis.Client) *redis.PubSub { return cl.PSubscribe(c, "ne*") })
		if n, err := pub.Publish(c, "news", "hello").Result(); err != nil || n != 12 {
			t.Fatalf("PUBLISH news = %d, %v; want 12 receivers", n, err)
		}
		for i, ps := range chans {
			m, err := ps.ReceiveMessage(c)
			if err != nil || m.Channel != "news" || m.Payload != "hello" || m.Pattern != "" {
				t.Fatalf("channel subscriber %d got %+v, %v", i, m, err)
			}
		}
		for i, ps := range pats {
			m, err := ps.ReceiveMessage(c)
			if err != nil || m.Channel != "news" || m.Payload != "hello" || m.Pattern != "ne*" {
				t.Fatalf("pattern subscriber %d got %+v, %v", i, m, err)
			}
		}
		if n := pub.Publish(c, "nexus", "x").Val(); n != 4 {
			t.Fatalf("PUBLISH nexus = %d; want the 4 pattern subscribers", n)
		}
		if n := pub.Publish(c, "other", "x").Val(); n != 0 {
			t.Fatalf("PUBLISH other = %d; want 0", n)
		}
		for i, ps := range pats {
			if m, err := ps.ReceiveMessage(c); err != nil || m.Channel != "nexus" {
				t.Fatalf("pattern subscriber %d got %+v, %v", i, m, err)
			}
		}
		// Half the channel subscribers leave: the count follows at once.
		for _, ps := range chans[:4] {
			if err := ps.Unsubscribe(c, "news"); err != nil {
				t.Fatal(err)
			}
			if _, err := ps.Receive(c); err != nil {
				t.Fatal(err)
			}
		}
		if n := pub.Publish(c, "news", "again").Val(); n != 8 {
			t.Fatalf("PUBLISH after 4 left = %d; want 8", n)
		}
		// Closed subscribers stop counting (the close is seen a little later).
		for _, ps := range pats {
			ps.Close()
		}
		waitFor(t, "closed pattern subscribers gone", func() bool { return pub.PubSubNumPat(c).Val() == 0 })
		if n := pub.Publish(c, "news", "last").Val(); n != 4 {
			t.Fatalf("PUBLISH after the pattern subscribers closed = %d; want 4", n)
		}
	})
}

// waitFor polls cond until it holds, failing the test after 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitForWithin(t, 10*time.Second, what, cond)
}

// waitForWithin is waitFor with a deadline of its own, for what takes
// long on a slow host (a snapshot of many megabytes under -race).
func waitForWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// One publisher, 1000 messages: every subscriber, on either shard, gets
// them all in publish order, and every PUBLISH counts all of them.
func TestPubSubOrderPerPublisher(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := ctx(t)
		const msgs, nsubs = 1000, 8
		subs := subscribers(t, s, nsubs/2, func(cl *redis.Client) *redis.PubSub { return cl.Subscribe(c, "seq") })
		subs = append(subs, subscribers(t, s, nsubs/2, func(cl *redis.Client) *redis.PubSub { return cl.PSubscribe(c, "s?q") })...)
		var wg sync.WaitGroup
		errs := make([]error, len(subs))
		for i, ps := range subs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for want := range msgs {
					m, err := ps.ReceiveMessage(c)
					if err != nil {
						errs[i] = err
						return
					}
					if m.Payload != strconv.Itoa(want) {
						errs[i] = fmt.Errorf("message %d is %q", want, m.Payload)
						return
					}
				}
			}()
		}
		pipe := s.client(2).Pipeline()
		for i := range msgs {
			pipe.Publish(c, "seq", strconv.Itoa(i))
		}
		cmds, err := pipe.Exec(c)
		if err != nil {
			t.Fatal(err)
		}
		for i, cmd := range cmds {
			if n := cmd.(*redis.IntCmd).Val(); n != nsubs {
				t.Fatalf("PUBLISH %d counted %d receivers; want %d", i, n, nsubs)
			}
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("subscriber %d: %v", i, err)
			}
		}
	})
}

func TestPubSubUnsubscribeAll(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := ctx(t)
		ps := s.client(2).Subscribe(c, "a", "b", "c")
		defer ps.Close()
		for range 3 {
			if _, err := ps.Receive(c); err != nil {
				t.Fatal(err)
			}
		}
		if err := ps.PSubscribe(c, "p1", "p2"); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := ps.Receive(c); err != nil {
				t.Fatal(err)
			}
		}
		if err := ps.Unsubscribe(c); err != nil {
			t.Fatal(err)
		}
		var names []string
		var counts []int
		for range 3 {
			m, err := ps.Receive(c)
			sub, ok := m.(*redis.Subscription)
			if err != nil || !ok || sub.Kind != "unsubscribe" {
				t.Fatalf("got %#v, %v; want an unsubscribe reply", m, err)
			}
			names, counts = append(names, sub.Channel), append(counts, sub.Count)
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"a", "b", "c"}) || !slices.Equal(counts, []int{4, 3, 2}) {
			t.Fatalf("UNSUBSCRIBE replies: channels %v counts %v; want a b c with 4 3 2 (patterns still count)", names, counts)
		}
		if err := ps.PUnsubscribe(c); err != nil {
			t.Fatal(err)
		}
		for i, want := range []string{"p1", "p2"} {
			m, err := ps.Receive(c)
			sub, ok := m.(*redis.Subscription)
			if err != nil || !ok || sub.Kind != "punsubscribe" || sub.Channel != want || sub.Count != 1-i {
				t.Fatalf("got %#v, %v; want punsubscribe %s %d", m, err, want, 1-i)
			}
		}
	})
}

func TestPubSubSubscribedModeRESP2(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		r := s.raw()
		r.send("SUBSCRIBE ch\r\n")
		for _, want := range []string{"*3", "$9", "subscribe", "$2", "ch", ":1"} {
			if got := r.line(); got != want {
				t.Fatalf("SUBSCRIBE reply line %q; want %q", got, want)
			}
		}
		r.send("GET k\r\nCLIENT LIST\r\nPING\r\nPING hi\r\n")
		for _, want := range []string{
			"-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
			"-ERR Can't execute 'client|list': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
			"*2", "$4", "pong", "$0", "", "*2", "$4", "pong", "$2", "hi",
		} {
			if got := r.line(); got != want {
				t.Fatalf("got %q; want %q", got, want)
			}
		}
		c := ctx(t)
		list := s.client(2).ClientList(c).Val()
		if !strings.Contains(list, "flags=P db=0 sub=1 psub=0 ssub=0") {
			t.Fatalf("CLIENT LIST does not show the subscriber:\n%s", list)
		}
		if got := s.client(2).Do(c, "CLIENT", "LIST", "TYPE", "pubsub").String(); strings.Count(got, "id=") != 1 {
			t.Fatalf("CLIENT LIST TYPE pubsub: %s", got)
		}
		r.send("RESET\r\nGET k\r\n")
		if got := r.line(); got != "+RESET" {
			t.Fatalf("RESET: %q", got)
		}
		if got := r.line(); got != "$-1" {
			t.Fatalf("GET after RESET: %q", got)
		}
	})
}

// A RESP3 connection runs any command while subscribed, and its messages
// arrive as pushes between the replies, each in order, replies of keys on
// other shards included.
func TestPubSubRESP3PushesMixedWithReplies(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		const n = 200
		rc := dialRaw(t, s.addr(), "sub", 3)
		defer rc.c.Close()
		rc.send("SUBSCRIBE", "ch")
		if r, err := rc.read(5 * time.Second); err != nil || r != ">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n" {
			t.Fatalf("SUBSCRIBE: %q %v", r, err)
		}
		keys := []string{keyOnShard("k", 0), keyOnShard("k", 1)}
		c := ctx(t)
		pub := s.client(2)
		done := make(chan error, 1)
		go func() {
			for i := range n {
				if err := pub.Publish(c, "ch", strconv.Itoa(i)).Err(); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		for i := range n {
			rc.send("SET", keys[i%2], strconv.Itoa(i))
		}
		nextMsg, nextReply := 0, 0
		for nextMsg < n || nextReply < n {
			r, err := rc.read(10 * time.Second)
			if err != nil {
				t.Fatalf("after %d messages and %d replies: %v", nextMsg, nextReply, err)
			}
			switch {
			case strings.HasPrefix(r, ">3\r\n$7\r\nmessage\r\n"):
				if want := fmt.Sprintf("$2\r\nch\r\n$%d\r\n%d\r\n", len(strconv.Itoa(nextMsg)), nextMsg); !strings.HasSuffix(r, want) {
					t.Fatalf("push %d: %q", nextMsg, r)
				}
				nextMsg++
			case r == "+OK\r\n":
				nextReply++
			default:
				t.Fatalf("unexpected %q", r)
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// Publishing to itself: the push comes before the reply, as in Redis.
		rc.send("PUBLISH", "ch", "self")
		for _, want := range []string{">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$4\r\nself\r\n", ":1\r\n"} {
			if r, err := rc.read(5 * time.Second); err != nil || r != want {
				t.Fatalf("got %q %v; want %q", r, err, want)
			}
		}
	})
}

func TestPubSubIntrospection(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := ctx(t)
		cl := s.client(2)
		subscribers(t, s, 3, func(cl *redis.Client) *redis.PubSub { return cl.Subscribe(c, "news.a", "news.b") })
		subscribers(t, s, 2, func(cl *redis.Client) *redis.PubSub { return cl.PSubscribe(c, "news.*") })
		subscribers(t, s, 2, func(cl *redis.Client) *redis.PubSub { return cl.PSubscribe(c, "x*") })
		subscribers(t, s, 2, func(cl *redis.Client) *redis.PubSub { return cl.SSubscribe(c, "shard.a") })
		numsub := cl.PubSubNumSub(c, "news.a", "news.b", "none").Val()
		if numsub["news.a"] != 3 || numsub["news.b"] != 3 || numsub["none"] != 0 {
			t.Fatalf("NUMSUB %v", numsub)
		}
		if n := cl.PubSubNumPat(c).Val(); n != 2 {
			t.Fatalf("NUMPAT %d; want 2 unique patterns", n)
		}
		chans := cl.PubSubChannels(c, "*").Val()
		slices.Sort(chans)
		if !slices.Equal(chans, []string{"news.a", "news.b"}) {
			t.Fatalf("CHANNELS %v", chans)
		}
		if got := cl.PubSubChannels(c, "*.b").Val(); !slices.Equal(got, []string{"news.b"}) {
			t.Fatalf("CHANNELS *.b %v", got)
		}
		if got := cl.PubSubShardChannels(c, "*").Val(); !slices.Equal(got, []string{"shard.a"}) {
			t.Fatalf("SHARDCHANNELS %v", got)
		}
		if got := cl.PubSubShardNumSub(c, "shard.a", "news.a").Val(); got["shard.a"] != 2 || got["news.a"] != 0 {
			t.Fatalf("SHARDNUMSUB %v", got)
		}
		// SPUBLISH reaches shard channel subscribers only, PUBLISH the others.
		if n := cl.SPublish(c, "shard.a", "m").Val(); n != 2 {
			t.Fatalf("SPUBLISH %d; want 2", n)
		}
		if n := cl.Publish(c, "shard.a", "m").Val(); n != 0 {
			t.Fatalf("PUBLISH to a shard channel %d; want 0", n)
		}
		if n := cl.Publish(c, "news.a", "m").Val(); n != 5 {
			t.Fatalf("PUBLISH news.a %d; want 3 + 2 pattern subscribers", n)
		}
		info := cl.Info(c, "stats").Val()
		for _, want := range []string{"pubsub_channels:2\r\n", "pubsub_patterns:2\r\n", "pubsubshard_channels:1\r\n"} {
			if !strings.Contains(info, want) {
				t.Errorf("INFO stats lacks %q", want)
			}
		}
	})
}
