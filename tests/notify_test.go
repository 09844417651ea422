package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Keyspace notifications end to end with go-redis, on both backends with
// one and two shards: eight subscribers to __key*@*__:* (so that with two
// shards some are on another shard than the writer, with near
// certainty) see the events of writes to keys of either shard, each
// step's messages exactly, in order (per shard; a command split over
// shards sends each shard's events in order, in any interleaving).

// notifyEnv is a writer and subscribers to every keyspace notification.
type notifyEnv struct {
	t    *testing.T
	c    context.Context
	w    *redis.Client
	subs []*redis.PubSub
	// a and b are keys of shard 0 and of shard 1 (of two).
	a, b string
}

func newNotifyEnv(t *testing.T, s *server, classes string) *notifyEnv {
	e := &notifyEnv{t: t, c: ctx(t), w: s.client(2), a: keyOnShard("ka", 0), b: keyOnShard("kb", 1)}
	if err := e.w.ConfigSet(e.c, "notify-keyspace-events", classes).Err(); err != nil {
		t.Fatal(err)
	}
	e.subs = subscribers(t, s, 8, func(cl *redis.Client) *redis.PubSub { return cl.PSubscribe(e.c, "__key*@*__:*") })
	return e
}

// ks and ke are the messages of an event on key in database 0: on the
// keyspace channel and on the keyevent channel.
func ks(event, key string) string { return "__keyspace@0__:" + key + " " + event }
func ke(event, key string) string { return "__keyevent@0__:" + event + " " + key }

// kse is both messages of an event, keyspace first, as K and E send them.
func kse(event, key string) []string { return []string{ks(event, key), ke(event, key)} }

// expect runs cmd (nil: none) and checks that every subscriber receives
// want, in order.
func (e *notifyEnv) expect(cmd []any, want ...string) {
	e.t.Helper()
	e.run(cmd)
	for i, ps := range e.subs {
		if got := e.receive(ps, len(want)); !slices.Equal(got, want) {
			e.t.Fatalf("%v: subscriber %d got\n%q\nwant\n%q", cmd, i, got, want)
		}
	}
}

// expectSplit is expect for a command whose events come from two shards:
// each shard's in order (per key here), in any interleaving.
func (e *notifyEnv) expectSplit(cmd []any, want ...string) {
	e.t.Helper()
	e.run(cmd)
	for i, ps := range e.subs {
		got := e.receive(ps, len(want))
		for _, key := range []string{e.a, e.b} {
			if g, w := ofKey(got, key), ofKey(want, key); !slices.Equal(g, w) {
				e.t.Fatalf("%v: subscriber %d got\n%q\nwant\n%q (order per key)", cmd, i, got, want)
			}
		}
	}
}

// ofKey is the messages of msgs about key, in order.
func ofKey(msgs []string, key string) []string {
	var out []string
	for _, m := range msgs {
		if strings.HasPrefix(m, "__keyspace@0__:"+key+" ") || strings.HasSuffix(m, " "+key) {
			out = append(out, m)
		}
	}
	return out
}

func (e *notifyEnv) run(cmd []any) {
	e.t.Helper()
	if cmd == nil {
		return
	}
	if err := e.w.Do(e.c, cmd...).Err(); err != nil && err != redis.Nil {
		e.t.Fatalf("%v: %v", cmd, err)
	}
}

// receive reads n messages as "channel payload", failing after 10s.
func (e *notifyEnv) receive(ps *redis.PubSub, n int) []string {
	e.t.Helper()
	var got []string
	for len(got) < n {
		c, cancel := context.WithTimeout(e.c, 10*time.Second)
		m, err := ps.ReceiveMessage(c)
		cancel()
		if err != nil {
			e.t.Fatalf("after %q: %v", got, err)
		}
		if m.Pattern != "__key*@*__:*" {
			e.t.Fatalf("message of pattern %q", m.Pattern)
		}
		got = append(got, m.Channel+" "+m.Payload)
	}
	return got
}

func args(s ...any) []any { return s }

func TestNotifyEachTypeAcrossShards(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		e := newNotifyEnv(t, s, "KEA")
		a, b := e.a, e.b
		// Strings, on both shards.
		e.expect(args("SET", a, "1"), kse("set", a)...)
		e.expect(args("INCRBY", b, "2"), kse("incrby", b)...)
		e.expect(args("SET", a, "2", "EX", "100"), append(kse("set", a), kse("expire", a)...)...)
		e.expect(args("APPEND", b, "x"), kse("append", b)...)
		e.expect(args("SETRANGE", b, "0", "y"), kse("setrange", b)...)
		e.expect(args("GETDEL", b), kse("del", b)...)
		e.expect(args("PERSIST", a), kse("persist", a)...)
		// Lists, blocking pops included.
		e.expect(args("RPUSH", b, "x", "y"), kse("rpush", b)...)
		e.expect(args("LPOP", b), kse("lpop", b)...)
		e.expect(args("BRPOP", b, "0"), append(kse("rpop", b), kse("del", b)...)...)
		// Hashes, sets, sorted sets: a write that empties a key deletes it.
		e.expect(args("HSET", b, "f", "v"), kse("hset", b)...)
		e.expect(args("HDEL", b, "f"), append(kse("hdel", b), kse("del", b)...)...)
		e.expect(args("SADD", b, "m"), kse("sadd", b)...)
		e.expect(args("SREM", b, "m"), append(kse("srem", b), kse("del", b)...)...)
		e.expect(args("ZADD", b, "1", "m"), kse("zadd", b)...)
		e.expect(args("ZINCRBY", b, "1", "m"), kse("zincr", b)...)
		e.expect(args("ZPOPMIN", b), append(kse("zpopmin", b), kse("del", b)...)...)
		// Commands over keys of both shards: split ones, gathered ones (in
		// Redis's order, from the shard that coordinates), transactions.
		e.expectSplit(args("MSET", a, "1", b, "2"), append(kse("set", a), kse("set", b)...)...)
		e.expectSplit(args("DEL", a, b, "nosuch"), append(kse("del", a), kse("del", b)...)...)
		e.expect(args("RPUSH", a, "x"), kse("rpush", a)...)
		e.expect(args("RENAME", a, b), append(kse("rename_from", a), kse("rename_to", b)...)...)
		e.expect(args("LMOVE", b, a, "LEFT", "RIGHT"), append(append(kse("rpush", a), kse("lpop", b)...), kse("del", b)...)...)
		e.expect(args("COPY", a, b), kse("copy_to", b)...)
		e.expect(args("SUNIONSTORE", b, "nosuch"), kse("del", b)...)
		e.expect(args("DEL", a), kse("del", a)...)
		e.expect(args("SADD", a, "m", "n"), kse("sadd", a)...)
		e.expect(args("SMOVE", a, b, "m"), append(kse("srem", a), kse("sadd", b)...)...)
		e.expect(args("SINTERSTORE", a, b), kse("sinterstore", a)...)
		e.expect(args("ZUNIONSTORE", b, "2", a, b), kse("zunionstore", b)...)
		e.expect(args("COPY", b, a, "DB", "2"), "__keyspace@2__:"+a+" copy_to", "__keyevent@2__:copy_to "+a)
		e.expectSplit(args("DEL", a, b), append(kse("del", a), kse("del", b)...)...)
		e.expect(args("PFADD", a, "x"), kse("pfadd", a)...)
		e.expect(args("PFMERGE", b, a), kse("pfadd", b)...)
		e.expect(args("BITOP", "OR", a, b), kse("set", a)...)
		e.expectSplit(args("DEL", a, b), append(kse("del", a), kse("del", b)...)...)
		e.w.TxPipelined(e.c, func(p redis.Pipeliner) error {
			p.Set(e.c, a, "1", 0)
			p.Set(e.c, b, "2", 0)
			p.Incr(e.c, a)
			return nil
		})
		e.expectSplit(nil, append(append(kse("set", a), kse("set", b)...), kse("incrby", a)...)...)
		// A blocked pop served by another client's push.
		bl, q := s.client(2), keyOnShard("q", 1)
		popped := make(chan error, 1)
		go func() { popped <- bl.BLPop(e.c, 0, q).Err() }()
		waitFor(t, "the BLPOP to block", func() bool {
			return strings.Contains(e.w.Info(e.c, "clients").Val(), "blocked_clients:1\r\n")
		})
		e.expect(args("RPUSH", q, "x"), append(append(kse("rpush", q), kse("lpop", q)...), kse("del", q)...)...)
		if err := <-popped; err != nil {
			t.Fatal(err)
		}
		// Other databases: the channel names the database.
		e.run(args("MOVE", a, "3"))
		for i, ps := range e.subs {
			want := []string{ks("move_from", a), ke("move_from", a),
				"__keyspace@3__:" + a + " move_to", "__keyevent@3__:move_to " + a}
			if got := e.receive(ps, 4); !slices.Equal(got, want) {
				t.Fatalf("MOVE: subscriber %d got %q, want %q", i, got, want)
			}
		}
	})
}

func TestNotifyExpiryActiveAndLazy(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		e := newNotifyEnv(t, s, "Egxm")
		a, b := e.a, e.b
		// Active: the cycle deletes the keys in the background.
		e.expect(args("SET", a, "1", "PX", "20"), ke("expire", a))
		e.expect(nil, ke("expired", a))
		e.expect(args("SET", b, "1", "PX", "20"), ke("expire", b))
		e.expect(nil, ke("expired", b))
		// Lazy: with the cycle off, a read finds the key due.
		e.run(args("DEBUG", "SET-ACTIVE-EXPIRE", "0"))
		t.Cleanup(func() { e.w.Do(context.Background(), "DEBUG", "SET-ACTIVE-EXPIRE", "1") })
		for _, k := range []string{a, b} {
			// Timed from the SET's reply: the server started the TTL
			// before it answered, on a slow host well after the send.
			e.expect(args("SET", k, "1", "PX", "20"), ke("expire", k))
			start := time.Now()
			waitFor(t, "the key's time to pass", func() bool { return time.Since(start) > 30*time.Millisecond })
			e.expect(args("GET", k), ke("expired", k), ke("keymiss", k))
		}
		// A command over keys of both shards expires the one that is due
		// as a local read would, then writes.
		e.expect(args("SADD", b, "m"))
		e.expect(args("SET", a, "1", "PX", "20"), ke("expire", a))
		start := time.Now()
		waitFor(t, "the key's time to pass", func() bool { return time.Since(start) > 30*time.Millisecond })
		e.expectSplit(args("SUNIONSTORE", b, a), ke("expired", a), ke("keymiss", a), ke("del", b))
	})
}

func TestNotifyClassesAndConfig(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		e := newNotifyEnv(t, s, "Kl")
		a, b := e.a, e.b
		// Only list events, only on keyspace channels.
		e.run(args("SET", a, "1"))
		e.run(args("DEL", a))
		e.expect(args("LPUSH", a, "x"), ks("lpush", a))
		e.expect(args("LPUSH", b, "x"), ks("lpush", b))
		// new and keymiss are classes of their own (not in A).
		cfg := func(v string) {
			if err := e.w.ConfigSet(e.c, "notify-keyspace-events", v).Err(); err != nil {
				t.Fatal(err)
			}
		}
		cfg("KEA")
		e.run(args("GET", "nosuch"))
		e.expect(args("SET", "nk", "1"), kse("set", "nk")...)
		cfg("En")
		e.run(args("SET", "nk", "2"))
		e.expect(args("SET", "nk2", "1"), ke("new", "nk2"))
		cfg("Em")
		e.expect(args("GET", "nosuch"), ke("keymiss", "nosuch"))
		e.expect(args("MGET", a, "nosuch2"), ke("keymiss", "nosuch2"))
		// Off: nothing, then on again.
		cfg("")
		e.run(args("SET", a, "1"))
		cfg("E$")
		e.expect(args("SET", a, "2"), ke("set", a))
		// CONFIG GET answers Redis's normalized form; a bad class is
		// refused with Redis's error, and the setting stays.
		for in, out := range map[string]string{"KEA": "AKE", "EK$l": "$lKE", "gKE$lshzxetdm": "AKEm", "": ""} {
			cfg(in)
			got, err := e.w.ConfigGet(e.c, "notify-keyspace-events").Result()
			if err != nil || got["notify-keyspace-events"] != out {
				t.Fatalf("CONFIG SET %q, GET: %v %v; want %q", in, got, err, out)
			}
		}
		cfg("KEA")
		err := e.w.ConfigSet(e.c, "notify-keyspace-events", "KEZ").Err()
		want := "ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
		if err == nil || err.Error() != want {
			t.Fatalf("CONFIG SET KEZ: %v, want %q", err, want)
		}
		if got := e.w.ConfigGet(e.c, "notify-keyspace-events").Val()["notify-keyspace-events"]; got != "AKE" {
			t.Fatalf("after a refused SET: %q", got)
		}
		e.expect(args("SET", b, "1"), kse("set", b)...)
	})
}

// A shard that loads its keys at boot (heap and WAL replay) tells
// nobody, not even subscribers that were there while it loaded: the keys
// existed. notify-keyspace-events from the command line applies.
func TestNotifyNotOnBoot(t *testing.T) {
	dir := t.TempDir()
	s := startServerIn(t, dir, "uring", 2, "--notify-keyspace-events", "KEA")
	c := s.client(2)
	for i := range 20 {
		if i == 10 {
			c.Save(ctx(t))
		}
		c.Set(ctx(t), fmt.Sprintf("k%d", i), "v", 0)
		c.RPush(ctx(t), fmt.Sprintf("l%d", i), "v")
	}
	s.kill9()
	hold := filepath.Join(t.TempDir(), "release")
	s = launch(t, dir, "uring", 2, "--notify-keyspace-events", "KEA", "--test-hold-boot", hold)
	if !s.logShows("listening; loading the dataset") {
		t.Fatalf("moond did not log that it listens\n%s", s.log.String())
	}
	e := &notifyEnv{t: t, c: ctx(t), w: s.client(2)}
	e.subs = subscribers(t, s, 4, func(cl *redis.Client) *redis.PubSub { return cl.PSubscribe(e.c, "__key*@*__:*") })
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.waitReady()
	// The first message each subscriber gets is this write's.
	e.expect(args("DEL", "k0"), kse("del", "k0")...)
	e.expect(args("LPOP", "l19"), append(kse("lpop", "l19"), kse("del", "l19")...)...)
}

// Eviction on every shard tells of each key it takes.
func TestNotifyEvictedAcrossShards(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		e := newNotifyEnv(t, s, "Ee")
		a, b := e.a, e.b
		e.run(args("CONFIG", "SET", "maxmemory-policy", "allkeys-random"))
		e.run(args("MSET", a, "1", b, "2"))
		e.expectSplit(args("CONFIG", "SET", "maxmemory", "1"), ke("evicted", a), ke("evicted", b))
		e.run(args("CONFIG", "SET", "maxmemory", "0"))
		e.expect(args("SET", a, "1"))
		if n := e.w.DBSize(e.c).Val(); n != 1 {
			t.Fatalf("DBSIZE after the eviction: %d", n)
		}
	})
}
