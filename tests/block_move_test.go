package tests

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// goBLMove runs BLMOVE src dst LEFT RIGHT timeout on its own client.
func goBLMove(s *server, src, dst string, timeout time.Duration) <-chan result {
	c := s.client(2)
	ch := make(chan result, 1)
	go func() {
		v, err := c.BLMove(ctx(s.t), src, dst, "LEFT", "RIGHT", timeout).Result()
		ch <- result{[]string{v}, err}
	}()
	return ch
}

// BLMOVE and BRPOPLPUSH with the source and the destination on different
// shards: the move is atomic, a push to an empty source wakes the waiter,
// which moves what it finds, in the order the waiters blocked, and waits
// again when another client took the element first.
func TestBlockingMoveAcrossShards(t *testing.T) {
	eachTwoShardServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		cx := ctx(t)
		src, dst := keyOnShard("src", 0), keyOnShard("dst", 1)
		// Data there: moved at once.
		c.RPush(cx, src, "a", "b")
		if v, err := c.BLMove(cx, src, dst, "LEFT", "RIGHT", 0).Result(); err != nil || v != "a" {
			t.Fatalf("BLMOVE with data: %q (%v)", v, err)
		}
		if v, err := c.Do(cx, "BRPOPLPUSH", src, dst, 0).Text(); err != nil || v != "b" {
			t.Fatalf("BRPOPLPUSH with data: %q (%v)", v, err)
		}
		if got := c.LRange(cx, dst, 0, -1).Val(); strings.Join(got, ",") != "b,a" {
			t.Fatalf("destination %q, want b,a", got)
		}
		// Two waiters, then two pushes: first blocked, first served.
		first := goBLMove(s, src, dst, 0)
		waitBlocked(t, c, 1)
		second := goBLMove(s, src, dst, 0)
		waitBlocked(t, c, 2)
		c.RPush(cx, src, "x")
		if r := recvResult(t, first); r.err != nil || r.val[0] != "x" {
			t.Fatalf("first waiter: %q (%v)", r.val, r.err)
		}
		waitBlocked(t, c, 1)
		c.RPush(cx, src, "y")
		if r := recvResult(t, second); r.err != nil || r.val[0] != "y" {
			t.Fatalf("second waiter: %q (%v)", r.val, r.err)
		}
		if got := c.LRange(cx, dst, 0, -1).Val(); strings.Join(got, ",") != "b,a,x,y" {
			t.Fatalf("destination %q, want b,a,x,y", got)
		}
		if n := c.Exists(cx, src).Val(); n != 0 {
			t.Fatal("the emptied source still exists")
		}
		// Timeout: a null reply, nothing moved.
		start := time.Now()
		if _, err := c.BLMove(cx, src, dst, "LEFT", "RIGHT", 200*time.Millisecond).Result(); !errors.Is(err, redis.Nil) {
			t.Fatalf("BLMOVE timeout: %v", err)
		}
		if d := time.Since(start); d < 190*time.Millisecond {
			t.Fatalf("BLMOVE timed out after %v, before its 200 ms", d)
		}
		// A destination of another kind: WRONGTYPE once data comes, and
		// the element stays in the source.
		c.Set(cx, dst, "string", 0)
		ch := goBLMove(s, src, dst, 0)
		waitBlocked(t, c, 1)
		c.RPush(cx, src, "z")
		if r := recvResult(t, ch); r.err == nil || !strings.HasPrefix(r.err.Error(), "WRONGTYPE") {
			t.Fatalf("BLMOVE to a string: %q (%v)", r.val, r.err)
		}
		if got := c.LRange(cx, src, 0, -1).Val(); strings.Join(got, ",") != "z" {
			t.Fatalf("source after the refused move: %q", got)
		}
		// CLIENT UNBLOCK ends a cross-shard wait with the timeout's reply.
		c.Del(cx, src, dst)
		bc := s.client(2)
		id := bc.ClientID(cx).Val()
		done := make(chan error, 1)
		go func() { done <- bc.BLMove(cx, src, dst, "LEFT", "RIGHT", 0).Err() }()
		waitBlocked(t, c, 1)
		if n := c.Do(cx, "CLIENT", "UNBLOCK", id).Val(); n != int64(1) {
			t.Fatalf("CLIENT UNBLOCK = %v", n)
		}
		select {
		case err := <-done:
			if !errors.Is(err, redis.Nil) {
				t.Fatalf("unblocked BLMOVE: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("CLIENT UNBLOCK did not end the wait")
		}
	})
}

// A woken mover that finds the element taken by another client waits
// again, and moves the next element; every element is moved or popped
// exactly once.
func TestBlockingMoveAcrossShardsRaces(t *testing.T) {
	eachTwoShardServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		cx := ctx(t)
		src, dst := keyOnShard("rsrc", 0), keyOnShard("rdst", 1)
		const n = 200
		movers := make([]<-chan result, 4)
		moved := 0
		for i := range movers {
			movers[i] = goBLMove(s, src, dst, 5*time.Second)
		}
		waitBlocked(t, c, len(movers))
		popped := 0
		for i := range n {
			c.RPush(cx, src, "e"+strings.Repeat("x", i%3))
			if c.LPop(cx, src).Err() == nil { // races with the woken movers
				popped++
			}
			for j, ch := range movers {
				select {
				case r := <-ch:
					if r.err == nil {
						moved++
					} else if !errors.Is(r.err, redis.Nil) {
						t.Fatalf("mover: %v", r.err)
					}
					movers[j] = goBLMove(s, src, dst, 5*time.Second)
				default:
				}
			}
		}
		left := c.LLen(cx, src).Val()
		for _, ch := range movers {
			c.RPush(cx, src, "last")
			if r := recvResult(t, ch); r.err == nil {
				moved++
			}
		}
		inDst := c.LLen(cx, dst).Val()
		if int64(moved) != inDst {
			t.Fatalf("%d moves answered, %d elements in the destination", moved, inDst)
		}
		total := int64(popped) + inDst + c.LLen(cx, src).Val()
		if total != n+int64(len(movers)) {
			t.Fatalf("%d popped + %d moved + %d left (of which %d before the last pushes) = %d, want %d pushed",
				popped, inDst, c.LLen(cx, src).Val(), left, total, n+len(movers))
		}
	})
}
