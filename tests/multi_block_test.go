package tests

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Blocked clients and EXEC: a client blocked on a key that a transaction
// writes is served after the EXEC, from what the whole transaction left
// (Redis serves blocked clients after EXEC, never between its commands).

// TestMultiServesBlockedClientAfterExec blocks a client on a list, then
// runs transactions that push and pop it: over both shards (a txn) and
// over the list's shard alone (on that shard at once when the
// connection is there: several connections, so that one is).
func TestMultiServesBlockedClientAfterExec(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		list, other := keyOnShard("bl-list", 1), keyOnShard("bl-other", 0)
		c := s.client(2)
		for conn := range 4 {
			x := newTxClient(t, s, 2)
			for _, across := range []bool{true, false} {
				serveAfterExec(t, s, c, x, list, other, across)
				if t.Failed() {
					t.Fatalf("connection %d, across shards %v", conn, across)
				}
			}
		}
	})
}

// serveAfterExec is one round of TestMultiServesBlockedClientAfterExec;
// with across, each transaction also writes other.
func serveAfterExec(t *testing.T, s *server, c *redis.Client, x *txClient, list, other string, across bool) {
	queueOther := func() string {
		if across {
			x.want("QUEUED", "set", other, "x")
			return " OK"
		}
		return ""
	}
	// The transaction pushes two and pops one: the waiter gets what is
	// left, b, not a.
	ch := goBLPop(s, 0, list)
	waitBlocked(t, c, 1)
	x.want("OK", "multi")
	x.want("QUEUED", "rpush", list, "a", "b")
	mid := queueOther()
	x.want("QUEUED", "lpop", list)
	x.want("[2"+mid+" a]", "exec")
	if r := recvResult(t, ch); r.err != nil || !slices.Equal(r.val, []string{list, "b"}) {
		t.Errorf("BLPOP after EXEC: %q (%v)", r.val, r.err)
		return
	}
	waitBlocked(t, c, 0)

	// The transaction pushes and deletes: the waiter goes on waiting,
	// and gets the next push.
	ch = goBLPop(s, 0, list)
	waitBlocked(t, c, 1)
	x.want("OK", "multi")
	x.want("QUEUED", "rpush", list, "gone")
	mid = queueOther()
	x.want("QUEUED", "del", list)
	x.want("[1"+mid+" 1]", "exec")
	x.want("1", "rpush", list, "later")
	if r := recvResult(t, ch); r.err != nil || !slices.Equal(r.val, []string{list, "later"}) {
		t.Errorf("BLPOP after a transaction that left nothing: %q (%v)", r.val, r.err)
		return
	}
	waitBlocked(t, c, 0)
	x.want("0", "exists", list)
}

// TestMultiBlockingInsideExecDoesNotWait: a blocking command queued in a
// transaction pops what is there or answers nil at once, even with a
// timeout of 0, and leaves no blocked client behind.
func TestMultiBlockingInsideExecDoesNotWait(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		a, b := keyOnShard("bi-a", 0), keyOnShard("bi-b", 1)
		c := s.client(2)
		x := newTxClient(t, s, 2)
		x.want("OK", "multi")
		x.want("QUEUED", "rpush", a, "1")
		x.want("QUEUED", "blpop", a, 0)
		x.want("QUEUED", "blpop", b, 0)
		x.want("QUEUED", "bzpopmin", b, 0)
		x.want("QUEUED", "rpush", b, "2")
		x.want("QUEUED", "brpop", b, 0)
		done := make(chan string, 1)
		go func() { done <- x.do("exec") }()
		select {
		case got := <-done:
			if want := "[1 [" + a + " 1] (nil) (nil) 1 [" + b + " 2]]"; got != want {
				t.Fatalf("EXEC: %s, want %s", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("EXEC with blocking commands did not answer within 10s")
		}
		if n, err := c.Exists(ctx(t), a, b).Result(); err != nil || n != 0 {
			t.Fatalf("EXISTS after EXEC: %d (%v)", n, err)
		}
		if _, err := c.Get(ctx(t), a).Result(); !errors.Is(err, redis.Nil) {
			t.Fatalf("GET: %v", err)
		}
		waitBlocked(t, c, 0)
	})
}

// TestMultiExecServesAWaiterOnTwoShardsOnce: a client waits on keys of
// both shards; one transaction pushes to both. The waiter gets one
// element, the other stays. Redis serves the key the transaction made
// ready first (b here); moond does so on one shard.
func TestMultiExecServesAWaiterOnTwoShardsOnce(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		a, b := keyOnShard("w2-a", 0), keyOnShard("w2-b", 1)
		c := s.client(2)
		x := newTxClient(t, s, 2)
		for round := range 10 {
			ch := goBLPop(s, 0, a, b)
			waitBlocked(t, c, 1)
			x.want("OK", "multi")
			x.want("QUEUED", "rpush", b, "x")
			x.want("QUEUED", "rpush", a, "y")
			x.want("[1 1]", "exec")
			r := recvResult(t, ch)
			if r.err != nil || len(r.val) != 2 {
				t.Fatalf("round %d: BLPOP: %q (%v)", round, r.val, r.err)
			}
			left := x.do("lrange", a, 0, -1) + " " + x.do("lrange", b, 0, -1)
			switch {
			case r.val[0] == b && r.val[1] == "x" && left == "[y] []":
			case r.val[0] == a && r.val[1] == "y" && left == "[] [x]" && s.shardsCount() == 2:
				t.Logf("round %d: served from %s, Redis serves %s", round, a, b)
			default:
				t.Fatalf("round %d: BLPOP got %q, the lists hold %s", round, r.val, left)
			}
			waitBlocked(t, c, 0)
			x.want("OK", "flushall")
		}
	})
}
