package tests

import (
	"fmt"
	"testing"
	"time"
)

// The WATCH cases of Redis 7.0's multi.tcl, on both backends with 1 and 2
// shards (keys without hash tags: with 2 shards the watched keys and the
// transaction's keys spread over both), RESP2 and RESP3. moond has no
// SORT: "SORT with STORE even if the result is empty" is SINTERSTORE of
// missing sets, which deletes its destination the same way.
func TestMultiWatchSuite(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		for _, proto := range []int{2, 3} {
			for _, wc := range watchCases {
				t.Run(fmt.Sprintf("RESP%d/%s", proto, wc.name), func(t *testing.T) {
					x := newTxClient(t, s, proto)
					x.want("OK", "flushall")
					t.Cleanup(func() { s.client(2).Do(ctx(t), "debug", "set-active-expire", "1") })
					wc.run(x, s)
				})
			}
		}
	})
}

// staleSoon sets key to a value that expires in 1 ms with active expiry
// off, and waits until that time has passed: the key is stale (logically
// expired, still stored).
func staleSoon(x *txClient, key string) {
	x.want("OK", "debug", "set-active-expire", 0)
	x.want("OK", "set", key, "foo", "px", 1)
	deadline := time.Now().Add(3 * time.Millisecond)
	for time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // the clock, not the server, is what is waited for
	}
}

// execPing runs MULTI; PING; EXEC and checks EXEC's reply.
func execPing(x *txClient, want string) {
	x.t.Helper()
	x.want("OK", "multi")
	x.want("QUEUED", "ping")
	x.want(want, "exec")
}

// watchCase is one WATCH test; s is the server, for other clients.
type watchCase struct {
	name string
	run  func(x *txClient, s *server)
}

var watchCases = []watchCase{
	{"EXEC works on WATCHed key not modified", func(x *txClient, _ *server) {
		x.want("OK", "watch", "x", "y", "z")
		x.want("OK", "watch", "k")
		execPing(x, "[PONG]")
	}},
	{"EXEC fail on WATCHed key modified (1 key of 1 watched)", func(x *txClient, _ *server) {
		x.want("OK", "set", "x", 30)
		x.want("OK", "watch", "x")
		x.want("OK", "set", "x", 40)
		execPing(x, "(nil)")
	}},
	{"EXEC fail on WATCHed key modified (1 key of 5 watched)", func(x *txClient, _ *server) {
		x.want("OK", "set", "x", 30)
		x.want("OK", "watch", "a", "b", "x", "k", "z")
		x.want("OK", "set", "x", 40)
		execPing(x, "(nil)")
	}},
	{"EXEC fail on WATCHed key modified by a STORE even if the result is empty", func(x *txClient, _ *server) {
		x.want("1", "lpush", "foo", "bar")
		x.want("OK", "watch", "foo")
		x.want("0", "sinterstore", "foo", "emptyset1", "emptyset2")
		execPing(x, "(nil)")
	}},
	{"EXEC fail on lazy expired WATCHed key", func(x *txClient, _ *server) {
		x.want("OK", "debug", "set-active-expire", 0)
		x.want("OK", "set", "key", 1, "px", 100)
		x.want("OK", "watch", "key")
		deadline := time.Now().Add(101 * time.Millisecond)
		for time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond) // the TTL's time passing
		}
		x.want("OK", "multi")
		x.want("QUEUED", "incr", "key")
		x.want("(nil)", "exec")
	}},
	{"WATCH stale keys should not fail EXEC", func(x *txClient, _ *server) {
		staleSoon(x, "x")
		x.want("OK", "watch", "x")
		execPing(x, "[PONG]")
	}},
	{"Delete WATCHed stale keys should not fail EXEC", func(x *txClient, _ *server) {
		staleSoon(x, "x")
		x.want("OK", "watch", "x")
		x.want("0", "exists", "x")
		execPing(x, "[PONG]")
	}},
	{"FLUSHDB while watching stale keys should not fail EXEC", func(x *txClient, _ *server) {
		staleSoon(x, "x")
		x.want("OK", "watch", "x")
		x.want("OK", "flushdb")
		execPing(x, "[PONG]")
	}},
	{"After successful EXEC key is no longer watched", func(x *txClient, _ *server) {
		x.want("OK", "set", "x", 30)
		x.want("OK", "watch", "x")
		execPing(x, "[PONG]")
		x.want("OK", "set", "x", 40)
		execPing(x, "[PONG]")
	}},
	{"After failed EXEC key is no longer watched", func(x *txClient, _ *server) {
		x.want("OK", "set", "x", 30)
		x.want("OK", "watch", "x")
		x.want("OK", "set", "x", 40)
		execPing(x, "(nil)")
		x.want("OK", "set", "x", 40)
		execPing(x, "[PONG]")
	}},
	{"It is possible to UNWATCH", func(x *txClient, _ *server) {
		x.want("OK", "set", "x", 30)
		x.want("OK", "watch", "x")
		x.want("OK", "set", "x", 40)
		x.want("OK", "unwatch")
		execPing(x, "[PONG]")
	}},
	{"UNWATCH when there is nothing watched works as expected", func(x *txClient, _ *server) {
		x.want("OK", "unwatch")
	}},
	{"FLUSHALL is able to touch the watched keys", func(x *txClient, _ *server) {
		x.want("OK", "set", "x", 30)
		x.want("OK", "watch", "x")
		x.want("OK", "flushall")
		execPing(x, "(nil)")
	}},
	{"FLUSHALL does not touch non affected keys", func(x *txClient, _ *server) {
		x.want("0", "del", "x")
		x.want("OK", "watch", "x")
		x.want("OK", "flushall")
		execPing(x, "[PONG]")
	}},
	{"FLUSHDB is able to touch the watched keys", func(x *txClient, _ *server) {
		x.want("OK", "set", "x", 30)
		x.want("OK", "watch", "x")
		x.want("OK", "flushdb")
		execPing(x, "(nil)")
	}},
	{"FLUSHDB does not touch non affected keys", func(x *txClient, _ *server) {
		x.want("0", "del", "x")
		x.want("OK", "watch", "x")
		x.want("OK", "flushdb")
		execPing(x, "[PONG]")
	}},
	{"SWAPDB is able to touch the watched keys that exist", func(x *txClient, _ *server) {
		x.want("OK", "set", "x", 30)
		x.want("OK", "watch", "x")
		x.want("OK", "swapdb", 0, 1)
		execPing(x, "(nil)")
	}},
	{"SWAPDB is able to touch the watched keys that do not exist", func(x *txClient, _ *server) {
		x.want("OK", "select", 1)
		x.want("OK", "set", "x", 30)
		x.want("OK", "select", 0)
		x.want("OK", "watch", "x")
		x.want("OK", "swapdb", 0, 1)
		execPing(x, "(nil)")
	}},
	{"SWAPDB does not touch watched stale keys", func(x *txClient, _ *server) {
		x.want("OK", "select", 1)
		staleSoon(x, "x")
		x.want("OK", "watch", "x")
		x.want("OK", "swapdb", 0, 1)
		execPing(x, "[PONG]")
	}},
	{"SWAPDB does not touch non-existing key replaced with stale key", func(x *txClient, _ *server) {
		staleSoon(x, "x")
		x.want("OK", "select", 1)
		x.want("OK", "watch", "x")
		x.want("OK", "swapdb", 0, 1)
		execPing(x, "[PONG]")
	}},
	{"SWAPDB does not touch stale key replaced with another stale key", func(x *txClient, _ *server) {
		x.want("OK", "debug", "set-active-expire", 0)
		x.want("OK", "select", 1)
		x.want("OK", "set", "x", "foo", "px", 1)
		x.want("OK", "select", 0)
		staleSoon(x, "x")
		x.want("OK", "select", 1)
		x.want("OK", "watch", "x")
		x.want("OK", "swapdb", 0, 1)
		execPing(x, "[PONG]")
	}},
	{"WATCH is able to remember the DB a key belongs to", func(x *txClient, _ *server) {
		x.want("OK", "select", 5)
		x.want("OK", "set", "x", 30)
		x.want("OK", "watch", "x")
		x.want("OK", "select", 1)
		x.want("OK", "set", "x", 10)
		x.want("OK", "select", 5)
		execPing(x, "[PONG]")
	}},
	{"WATCH will consider touched keys target of EXPIRE", func(x *txClient, _ *server) {
		x.want("OK", "set", "x", "foo")
		x.want("OK", "watch", "x")
		x.want("1", "expire", "x", 10)
		execPing(x, "(nil)")
	}},
	{"WATCH will consider touched expired keys", func(x *txClient, _ *server) {
		x.want("OK", "set", "x", "foo")
		x.want("1", "pexpire", "x", 50)
		x.want("OK", "watch", "x")
		deadline := time.Now().Add(10 * time.Second)
		for x.do("dbsize") != "0" {
			if time.Now().After(deadline) {
				x.t.Fatal("the key never expired")
			}
			time.Sleep(10 * time.Millisecond)
		}
		execPing(x, "(nil)")
	}},
	{"DISCARD should clear the WATCH dirty flag on the client", func(x *txClient, _ *server) {
		x.want("OK", "watch", "x")
		x.want("OK", "set", "x", 10)
		x.want("OK", "multi")
		x.want("OK", "discard")
		x.want("OK", "multi")
		x.want("QUEUED", "incr", "x")
		x.want("[11]", "exec")
	}},
	{"DISCARD should UNWATCH all the keys", func(x *txClient, _ *server) {
		x.want("OK", "watch", "x")
		x.want("OK", "set", "x", 10)
		x.want("OK", "multi")
		x.want("OK", "discard")
		x.want("OK", "set", "x", 10)
		x.want("OK", "multi")
		x.want("QUEUED", "incr", "x")
		x.want("[11]", "exec")
	}},
	{"Flushall while watching several keys by one client", func(x *txClient, _ *server) {
		x.want("OK", "mset", "a", "a", "b", "b")
		x.want("OK", "watch", "b", "a")
		x.want("OK", "flushall")
		x.want("PONG", "ping")
	}},
	{"RESET unwatches (moond)", func(x *txClient, _ *server) {
		x.want("OK", "set", "x", 30)
		x.want("OK", "watch", "x", "y")
		x.want("OK", "set", "x", 40)
		x.want("RESET", "reset")
		execPing(x, "[PONG]")
	}},
	{"a write by another client to a watched key on either shard aborts EXEC, and nothing of it runs (moond)", func(x *txClient, s *server) {
		other := s.client(2)
		for _, key := range []string{keyOnShard("w", 0), keyOnShard("w", 1)} {
			x.want("OK", "mset", "n1", 1, "n2", 2)
			x.want("OK", "watch", key, "n1")
			if err := other.Set(ctx(x.t), key, "changed", 0).Err(); err != nil {
				x.t.Fatal(err)
			}
			x.want("OK", "multi")
			x.want("QUEUED", "incr", "n1")
			x.want("QUEUED", "incr", "n2")
			x.want("QUEUED", "rename", "n1", "n3")
			x.want("(nil)", "exec")
			x.want("[1 2 (nil)]", "mget", "n1", "n2", "n3")
			// Unwatched by the failed EXEC: the next one runs.
			x.want("OK", "multi")
			x.want("QUEUED", "incr", "n1")
			x.want("[2]", "exec")
		}
	}},
}
