package tests

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// waitBlocked waits until INFO says n clients are blocked.
func waitBlocked(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	want := fmt.Sprintf("blocked_clients:%d\r", n)
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := c.Info(ctx(t), "clients").Result()
		if err == nil && strings.Contains(info, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("blocked clients never reached %d: %q (%v)", n, info, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// result is what a blocking call in a goroutine returned.
type result struct {
	val []string
	err error
}

// goBLPop runs BLPOP keys timeout on its own client and returns its result
// on a channel.
func goBLPop(s *server, timeout time.Duration, keys ...string) <-chan result {
	c := s.client(2)
	ch := make(chan result, 1)
	go func() {
		v, err := c.BLPop(ctx(s.t), timeout, keys...).Result()
		ch <- result{v, err}
	}()
	return ch
}

func recvResult(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("a blocked client was never answered")
	}
	return result{}
}

// The keys tried: on a two-shard server some live on the connection's
// shard and some on the other, so both the local and the remote wait run.
var blockKeys = []string{"q1", "q2", "q3", "q4"}

func TestBlockingPopWaitsForAPush(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		for _, k := range blockKeys {
			ch := goBLPop(s, 0, k)
			waitBlocked(t, c, 1)
			if err := c.RPush(ctx(t), k, "a", "b").Err(); err != nil {
				t.Fatal(err)
			}
			if r := recvResult(t, ch); r.err != nil || !slices.Equal(r.val, []string{k, "a"}) {
				t.Fatalf("BLPOP %s = %q (%v)", k, r.val, r.err)
			}
			if got := c.LRange(ctx(t), k, 0, -1).Val(); !slices.Equal(got, []string{"b"}) {
				t.Fatalf("%s after the pop: %q", k, got)
			}
			waitBlocked(t, c, 0)
		}
	})
}

// First blocked, first served: 50 clients (on both shards' connections
// when there are two) block on one key in turn; one push of 50 elements
// serves them in the order they blocked.
func TestBlockingPopServesInOrder(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		const n = 50
		var chans []<-chan result
		for i := range n {
			chans = append(chans, goBLPop(s, 0, "fifo"))
			waitBlocked(t, c, i+1)
		}
		elems := make([]any, n)
		for i := range elems {
			elems[i] = fmt.Sprint(i)
		}
		if err := c.RPush(ctx(t), "fifo", elems...).Err(); err != nil {
			t.Fatal(err)
		}
		for i, ch := range chans {
			if r := recvResult(t, ch); r.err != nil || r.val[1] != fmt.Sprint(i) {
				t.Fatalf("waiter %d got %q (%v)", i, r.val, r.err)
			}
		}
		if n := c.Exists(ctx(t), "fifo").Val(); n != 0 {
			t.Fatalf("the list is left with %d", n)
		}
	})
}

func TestBlockingPopTimesOut(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		for _, proto := range []int{2, 3} {
			c := s.client(proto)
			start := time.Now()
			_, err := c.BLPop(ctx(t), 150*time.Millisecond, "never1", "never2{never1}").Result()
			if !errors.Is(err, redis.Nil) {
				t.Fatalf("RESP%d: BLPOP timeout: %v", proto, err)
			}
			if d := time.Since(start); d < 150*time.Millisecond {
				t.Fatalf("RESP%d: BLPOP returned after %v, before its timeout", proto, d)
			}
			_, err = c.BLMove(ctx(t), "never1", "never2{never1}", "LEFT", "RIGHT", 50*time.Millisecond).Result()
			if !errors.Is(err, redis.Nil) {
				t.Fatalf("RESP%d: BLMOVE timeout: %v", proto, err)
			}
		}
	})
}

// A client that hangs up while it waits is forgotten: the next push is not
// popped for it.
func TestBlockedClientThatDisconnectsLosesNothing(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		r := s.raw()
		r.send("*3\r\n$5\r\nBLPOP\r\n$4\r\ngone\r\n$1\r\n0\r\n")
		waitBlocked(t, c, 1)
		r.c.Close()
		waitBlocked(t, c, 0)
		if err := c.RPush(ctx(t), "gone", "x").Err(); err != nil {
			t.Fatal(err)
		}
		if got := c.LRange(ctx(t), "gone", 0, -1).Val(); !slices.Equal(got, []string{"x"}) {
			t.Fatalf("the element went to a closed connection: %q", got)
		}
	})
}

// A blocked connection runs none of its later commands until it is served,
// as in Redis; what it sent meanwhile runs after the reply.
func TestBlockedConnectionHoldsItsLaterInput(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		r := s.raw()
		r.send("*2\r\n$4\r\nECHO\r\n$6\r\nbefore\r\n*3\r\n$5\r\nBLPOP\r\n$4\r\nhold\r\n$1\r\n0\r\n*2\r\n$4\r\nECHO\r\n$5\r\nafter\r\n")
		if l := r.line(); l != "$6" || r.line() != "before" {
			t.Fatalf("the reply before the blocked command did not leave: %q", l)
		}
		waitBlocked(t, c, 1)
		r.send("*2\r\n$4\r\nECHO\r\n$5\r\nlater\r\n")
		c.RPush(ctx(t), "hold", "v")
		want := []string{"*2", "$4", "hold", "$1", "v", "$5", "after", "$5", "later"}
		for _, w := range want {
			if l := r.line(); l != w {
				t.Fatalf("got %q, want %q", l, w)
			}
		}
	})
}

func TestClientUnblock(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		for _, mode := range []string{"TIMEOUT", "ERROR"} {
			bc := s.client(2)
			id := bc.ClientID(ctx(t)).Val()
			ch := make(chan result, 1)
			go func() {
				v, err := bc.BRPop(ctx(t), 0, "ub").Result()
				ch <- result{v, err}
			}()
			waitBlocked(t, c, 1)
			list := c.ClientList(ctx(t)).Val()
			if !strings.Contains(list, fmt.Sprintf("id=%d ", id)) || !strings.Contains(list, "flags=b ") {
				t.Fatalf("CLIENT LIST does not show the blocked client with flags=b:\n%s", list)
			}
			if n, err := c.Do(ctx(t), "CLIENT", "UNBLOCK", id, mode).Int(); n != 1 || err != nil {
				t.Fatalf("CLIENT UNBLOCK %s = %d (%v)", mode, n, err)
			}
			r := recvResult(t, ch)
			switch mode {
			case "TIMEOUT":
				if !errors.Is(r.err, redis.Nil) {
					t.Fatalf("unblocked with TIMEOUT: %q (%v)", r.val, r.err)
				}
			case "ERROR":
				if r.err == nil || r.err.Error() != "UNBLOCKED client unblocked via CLIENT UNBLOCK" {
					t.Fatalf("unblocked with ERROR: %q (%v)", r.val, r.err)
				}
			}
			if n := c.Do(ctx(t), "CLIENT", "UNBLOCK", id).Val(); n != int64(0) {
				t.Fatalf("CLIENT UNBLOCK of a client not blocked = %v", n)
			}
		}
		if err := c.Do(ctx(t), "CLIENT", "UNBLOCK", 1, "LATER").Err(); err == nil || err.Error() != "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR" {
			t.Fatalf("bad reason: %v", err)
		}
	})
}

// A key that is deleted or holds another kind does not wake the waiter;
// one moved into place (RENAME, MOVE, SWAPDB) does.
func TestBlockedClientWakesOnlyForItsKind(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		ch := goBLPop(s, 0, "k{w}")
		waitBlocked(t, c, 1)
		c.Set(ctx(t), "k{w}", "string", 0)
		c.Del(ctx(t), "k{w}")
		c.ZAdd(ctx(t), "k{w}", redis.Z{Score: 1, Member: "m"})
		c.Del(ctx(t), "k{w}")
		c.RPush(ctx(t), "src{w}", "moved")
		c.Rename(ctx(t), "src{w}", "k{w}")
		if r := recvResult(t, ch); r.err != nil || !slices.Equal(r.val, []string{"k{w}", "moved"}) {
			t.Fatalf("after RENAME: %q (%v)", r.val, r.err)
		}

		// SWAPDB: the waiter stays on database 0, whose data becomes db 1's.
		ch = goBLPop(s, 0, "swapped")
		waitBlocked(t, c, 1)
		c1 := redis.NewClient(&redis.Options{Addr: s.addr(), DB: 1, Protocol: 2, DisableIdentity: true})
		defer c1.Close()
		c1.RPush(ctx(t), "swapped", "from-db1")
		if err := c.Do(ctx(t), "SWAPDB", 0, 1).Err(); err != nil {
			t.Fatal(err)
		}
		if r := recvResult(t, ch); r.err != nil || !slices.Equal(r.val, []string{"swapped", "from-db1"}) {
			t.Fatalf("after SWAPDB: %q (%v)", r.val, r.err)
		}

		// MOVE from database 1 into the waited-on key of database 0.
		ch = goBLPop(s, 0, "mv")
		waitBlocked(t, c, 1)
		c1.RPush(ctx(t), "mv", "moved")
		c1.Move(ctx(t), "mv", 0)
		if r := recvResult(t, ch); r.err != nil || !slices.Equal(r.val, []string{"mv", "moved"}) {
			t.Fatalf("after MOVE: %q (%v)", r.val, r.err)
		}
	})
}

// The moves of Redis's list tests: a BLMOVE that serves another waiter on
// its destination, circular and self-referential BRPOPLPUSH, and a
// destination of another kind.
func TestBlockingMoves(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		goMove := func(src, dst string) <-chan result {
			bc := s.client(2)
			ch := make(chan result, 1)
			go func() {
				v, err := bc.BLMove(ctx(t), src, dst, "RIGHT", "LEFT", 0).Result()
				ch <- result{[]string{v}, err}
			}()
			return ch
		}
		// Linked LMOVEs: list1 -> list2 -> list3.
		ch1 := goMove("list1{t}", "list2{t}")
		waitBlocked(t, c, 1)
		ch2 := goMove("list2{t}", "list3{t}")
		waitBlocked(t, c, 2)
		c.RPush(ctx(t), "list1{t}", "foo")
		recvResult(t, ch1)
		recvResult(t, ch2)
		if got := c.LRange(ctx(t), "list3{t}", 0, -1).Val(); !slices.Equal(got, []string{"foo"}) {
			t.Fatalf("linked moves: list3 = %q", got)
		}
		if n := c.Exists(ctx(t), "list1{t}", "list2{t}").Val(); n != 0 {
			t.Fatalf("linked moves left %d lists", n)
		}

		// Circular: list1 -> list2 -> list1.
		ch1 = goMove("c1{t}", "c2{t}")
		waitBlocked(t, c, 1)
		ch2 = goMove("c2{t}", "c1{t}")
		waitBlocked(t, c, 2)
		c.RPush(ctx(t), "c1{t}", "foo")
		recvResult(t, ch1)
		recvResult(t, ch2)
		if got := c.LRange(ctx(t), "c1{t}", 0, -1).Val(); !slices.Equal(got, []string{"foo"}) {
			t.Fatalf("circular moves: c1 = %q", got)
		}

		// Self-referential.
		ch1 = goMove("self{t}", "self{t}")
		waitBlocked(t, c, 1)
		c.RPush(ctx(t), "self{t}", "foo")
		if r := recvResult(t, ch1); r.err != nil || r.val[0] != "foo" {
			t.Fatalf("self move: %q (%v)", r.val, r.err)
		}

		// A destination of another kind: WRONGTYPE, and the element stays.
		c.Set(ctx(t), "dst{t}", "nolist", 0)
		ch1 = goMove("src{t}", "dst{t}")
		waitBlocked(t, c, 1)
		c.RPush(ctx(t), "src{t}", "a", "b", "c")
		if r := recvResult(t, ch1); r.err == nil || !strings.HasPrefix(r.err.Error(), "WRONGTYPE") {
			t.Fatalf("move to a string: %q (%v)", r.val, r.err)
		}
		if got := c.LRange(ctx(t), "src{t}", 0, -1).Val(); !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Fatalf("the source after the refused move: %q", got)
		}

		// Keys on two shards: block_move_test.go.
	})
}

func TestBlockingSortedSetAndMPops(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := s.client(3)
		bc := s.client(3)
		ch := make(chan any, 4)
		go func() {
			v, err := bc.BZPopMin(ctx(t), 0, "z1{z}", "z2{z}").Result()
			ch <- fmt.Sprint(v, err)
			k, elems, err := bc.BLMPop(ctx(t), 0, "right", 2, "l1{z}", "l2{z}").Result()
			ch <- fmt.Sprintf("%s %v %v", k, elems, err)
			k, zs, err := bc.BZMPop(ctx(t), 0, "max", 5, "z1{z}", "z2{z}").Result()
			ch <- fmt.Sprintf("%s %v %v", k, zs, err)
		}()
		step := func(push func(), want string) {
			t.Helper()
			waitBlocked(t, c, 1)
			push()
			select {
			case got := <-ch:
				if got != want {
					t.Fatalf("got %s, want %s", got, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("never served")
			}
		}
		step(func() { c.ZAdd(ctx(t), "z2{z}", redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 1, Member: "a"}) },
			"&{{1 a} z2{z}} <nil>")
		c.Del(ctx(t), "z2{z}") // before BZMPOP below can run
		step(func() { c.RPush(ctx(t), "l2{z}", "x", "y", "z") }, "l2{z} [z y] <nil>")
		step(func() { c.ZAdd(ctx(t), "z1{z}", redis.Z{Score: 5, Member: "e"}, redis.Z{Score: 7, Member: "g"}) },
			"z1{z} [{7 g} {5 e}] <nil>")
	})
}

// INFO counts the blocked clients, and those with a timeout apart.
func TestInfoCountsBlockedClients(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		forever := goBLPop(s, 0, "info-a")
		timed := goBLPop(s, time.Minute, "info-b")
		waitBlocked(t, c, 2)
		if info := c.Info(ctx(t), "clients").Val(); !strings.Contains(info, "clients_in_timeout_table:1\r") {
			t.Fatalf("INFO clients:\n%s", info)
		}
		c.RPush(ctx(t), "info-a", "x")
		c.RPush(ctx(t), "info-b", "y")
		recvResult(t, forever)
		recvResult(t, timed)
		waitBlocked(t, c, 0)
		if info := c.Info(ctx(t), "clients").Val(); !strings.Contains(info, "clients_in_timeout_table:0\r") {
			t.Fatalf("INFO clients after the pushes:\n%s", info)
		}
	})
}

// What the comparison with redis-server 7.0 (blocking_redis_test.go)
// found, checked without one: argument errors of commands with no valid
// key, timeouts rounded up, BLMOVE's timeout reply, waiters of two kinds
// on one key, and CLIENT UNBLOCK's arity.
func TestBlockingCornersFoundAgainstRedis(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		r := s.raw()
		expect := func(cmd string, want ...string) {
			t.Helper()
			r.send(cmd)
			for _, w := range want {
				if l := r.line(); l != w {
					t.Fatalf("%q: got %q, want %q", cmd, l, w)
				}
			}
		}
		expect("BLMPOP 0 0 k LEFT\r\n", "-ERR numkeys should be greater than 0")
		expect("BZMPOP -1 0 k MIN\r\n", "-ERR numkeys should be greater than 0")
		expect("BLMPOP -1 1 k LEFT COUNT 0\r\n", "-ERR count should be greater than 0")
		expect("BLMOVE k{m} k2{m} LEFT RIGHT 0.01\r\n", "*-1")
		expect("BRPOPLPUSH k{m} k2{m} 0.001\r\n", "*-1")
		expect("BLPOP k 0.0001\r\n", "*-1")
		expect("BLPOP k 9223372036854776\r\n", "-ERR timeout is negative")
		expect("CLIENT UNBLOCK\r\n", "-ERR wrong number of arguments for 'client|unblock' command")

		// A list waiter first, a sorted-set waiter second: a ZADD serves
		// the second.
		expect("BLPOP mixed 0\r\n")
		waitBlocked(t, c, 1)
		z := s.raw()
		z.send("BZPOPMIN mixed 0\r\n")
		waitBlocked(t, c, 2)
		c.ZAdd(ctx(t), "mixed", redis.Z{Score: 1, Member: "m"})
		for _, w := range []string{"*3", "$5", "mixed", "$1", "m", "$1", "1"} {
			if l := z.line(); l != w {
				t.Fatalf("BZPOPMIN behind a BLPOP: got %q, want %q", l, w)
			}
		}
		c.RPush(ctx(t), "mixed", "l")
		expect("", "*2", "$5", "mixed", "$1", "l")
	})
}

// A wait across shards checks its arguments first, and decides in key
// order when it starts: a key of another kind before the one with data
// is WRONGTYPE, one after it is passed over.
func TestBlockingAcrossShardsChecksAsRedisDoes(t *testing.T) {
	eachTwoShardServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		a, b := keyOnShard("ca", 0), keyOnShard("cb", 1)
		for _, cmd := range [][]any{
			{"BLPOP", a, b, "-1"}, {"BZPOPMIN", a, b, "abc"},
			{"BLMPOP", "0", "2", a, b, "LEFT", "COUNT", "0"}, {"BZMPOP", "-1", "2", a, b, "MIN"},
		} {
			if err := c.Do(ctx(t), cmd...).Err(); err == nil || !strings.HasPrefix(err.Error(), "ERR ") {
				t.Fatalf("%v: %v", cmd, err)
			}
		}
		for range 20 {
			c.Del(ctx(t), a, b)
			c.RPush(ctx(t), a, "first")
			c.Set(ctx(t), b, "str", 0)
			if v, err := c.BLPop(ctx(t), 0, a, b).Result(); err != nil || !slices.Equal(v, []string{a, "first"}) {
				t.Fatalf("BLPOP with data first: %q (%v)", v, err)
			}
			c.RPush(ctx(t), a, "second")
			if err := c.BLPop(ctx(t), 0, b, a).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
				t.Fatalf("BLPOP with another kind first: %v", err)
			}
		}
	})
}
