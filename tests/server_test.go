package tests

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestStringCommandsOverRESP2AndRESP3(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		for _, proto := range []int{2, 3} {
			c := s.client(proto)
			ctx := ctx(t)
			key := fmt.Sprintf("greeting:%d", proto)
			if err := c.Set(ctx, key, "hello", 0).Err(); err != nil {
				t.Fatalf("RESP%d SET: %v", proto, err)
			}
			if v, err := c.Get(ctx, key).Result(); err != nil || v != "hello" {
				t.Fatalf("RESP%d GET = %q, %v", proto, v, err)
			}
			if _, err := c.Get(ctx, "missing").Result(); err != redis.Nil {
				t.Fatalf("RESP%d GET missing: %v, want redis.Nil", proto, err)
			}
			if n, err := c.Incr(ctx, "counter").Result(); err != nil || n < 1 {
				t.Fatalf("RESP%d INCR = %d, %v", proto, n, err)
			}
			if n, err := c.Append(ctx, key, " world").Result(); err != nil || n != 11 {
				t.Fatalf("RESP%d APPEND = %d, %v", proto, n, err)
			}
			if err := c.Set(ctx, "k:ttl", "v", 10*time.Second).Err(); err != nil {
				t.Fatal(err)
			}
			if ttl, err := c.TTL(ctx, "k:ttl").Result(); err != nil || ttl <= 0 || ttl > 10*time.Second {
				t.Fatalf("RESP%d TTL = %v, %v", proto, ttl, err)
			}
			if f, err := c.IncrByFloat(ctx, "float", 1.5).Result(); err != nil || f < 1.5 {
				t.Fatalf("RESP%d INCRBYFLOAT = %v, %v", proto, f, err)
			}
		}
	})
}

func TestHelloSwitchesProtocolPerConnection(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		r := s.raw()
		r.send("HELLO 3\r\n")
		if l := r.line(); l != "%7" {
			t.Fatalf("HELLO 3 reply starts %q, want a map of 7", l)
		}
		r.send("PING\r\n")
		for l := r.line(); l != "+PONG"; l = r.line() {
		}
		r.send("GET nothing-here\r\n")
		if l := r.line(); l != "_" {
			t.Fatalf("RESP3 null is %q, want _", l)
		}
		other := s.raw()
		other.send("GET nothing-here\r\n")
		if l := other.line(); l != "$-1" {
			t.Fatalf("another connection got %q: HELLO leaked across connections", l)
		}
		r.send("HELLO 4\r\n")
		if l := r.line(); l != "-NOPROTO unsupported protocol version" {
			t.Fatalf("HELLO 4: %q", l)
		}
	})
}

// TestPipelineAcrossShardsKeepsReplyOrder sends one long pipeline whose
// commands touch keys on every shard and checks each reply is the one for
// its own command.
func TestPipelineAcrossShardsKeepsReplyOrder(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		ctx := ctx(t)
		const n = 2000
		pipe := c.Pipeline()
		sets := make([]*redis.StatusCmd, n)
		gets := make([]*redis.StringCmd, n)
		incrs := make([]*redis.IntCmd, n)
		for i := 0; i < n; i++ {
			k := "pipe:" + strconv.Itoa(i)
			sets[i] = pipe.Set(ctx, k, "v"+strconv.Itoa(i), 0)
			gets[i] = pipe.Get(ctx, k)
			incrs[i] = pipe.Incr(ctx, "ctr:"+strconv.Itoa(i%7))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		seen := map[int]int64{}
		for i := 0; i < n; i++ {
			if sets[i].Val() != "OK" {
				t.Fatalf("SET %d: %v", i, sets[i].Err())
			}
			if gets[i].Val() != "v"+strconv.Itoa(i) {
				t.Fatalf("GET pipe:%d = %q: replies out of order", i, gets[i].Val())
			}
			v := incrs[i].Val()
			if v != seen[i%7]+1 {
				t.Fatalf("INCR ctr:%d = %d after %d: replies out of order", i%7, v, seen[i%7])
			}
			seen[i%7] = v
		}
	})
}

func TestMultiKeyCommandsSpanShards(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		c := s.client(2)
		ctx := ctx(t)
		var kv []any
		var keys []string
		for i := 0; i < 100; i++ {
			k := "multi:" + strconv.Itoa(i)
			keys = append(keys, k)
			kv = append(kv, k, i)
		}
		if err := c.MSet(ctx, kv...).Err(); err != nil {
			t.Fatal(err)
		}
		vals, err := c.MGet(ctx, append(keys, "multi:missing")...).Result()
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vals[:100] {
			if v != strconv.Itoa(i) {
				t.Fatalf("MGET element %d = %v: merged out of order", i, v)
			}
		}
		if vals[100] != nil {
			t.Fatalf("MGET of a missing key gave %v", vals[100])
		}
		existing := append(append([]string{}, keys[:50]...), "multi:missing")
		if n, err := c.Exists(ctx, existing...).Result(); err != nil || n != 50 {
			t.Fatalf("EXISTS = %d, %v", n, err)
		}
		if n, err := c.Del(ctx, keys[:60]...).Result(); err != nil || n != 60 {
			t.Fatalf("DEL = %d, %v", n, err)
		}
		if n, err := c.DBSize(ctx).Result(); err != nil || n != 40 {
			t.Fatalf("DBSIZE = %d, %v", n, err)
		}
		all, err := c.Keys(ctx, "multi:*").Result()
		if err != nil || len(all) != 40 {
			t.Fatalf("KEYS = %d keys, %v", len(all), err)
		}
		var scanned []string
		var cursor uint64
		for {
			ks, next, err := c.Scan(ctx, cursor, "multi:*", 7).Result()
			if err != nil {
				t.Fatal(err)
			}
			scanned = append(scanned, ks...)
			if cursor = next; cursor == 0 {
				break
			}
		}
		uniq := map[string]bool{}
		for _, k := range scanned {
			uniq[k] = true
		}
		if len(uniq) != 40 {
			t.Fatalf("SCAN found %d distinct keys, want 40", len(uniq))
		}
		if err := c.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if n, _ := c.DBSize(ctx).Result(); n != 0 {
			t.Fatalf("DBSIZE after FLUSHALL = %d", n)
		}
	})
}

// keysOnDifferentShards finds two keys that live on different shards of a
// 2-shard server (slot ranges split at 8192).
func keysOnDifferentShards() (string, string) {
	return "{a}x", "{b}x" // slots 15495 and 3300
}

// Commands over keys of two shards run, never answering CROSSSLOT
// (tests/txn_gather_test.go compares them with redis-server at length).
func TestCrossShardCommandsRunAcrossShards(t *testing.T) {
	s := startServer(t, "uring", 2)
	c := s.client(2)
	ctx := ctx(t)
	a, b := keysOnDifferentShards()
	c.Set(ctx, a, "1", 0)
	if err := c.Rename(ctx, a, b).Err(); err != nil {
		t.Fatalf("RENAME across shards: %v", err)
	}
	if v, _ := c.Get(ctx, b).Result(); v != "1" || c.Exists(ctx, a).Val() != 0 {
		t.Fatalf("after RENAME across shards: %s = %q, %s exists %d", b, v, a, c.Exists(ctx, a).Val())
	}
	if ok, err := c.MSetNX(ctx, a, "1", b, "2").Result(); err != nil || ok {
		t.Fatalf("MSETNX across shards with one key set: %v (%v), want false", ok, err)
	}
	c.Del(ctx, b)
	if ok, err := c.MSetNX(ctx, a, "1", b, "2").Result(); err != nil || !ok {
		t.Fatalf("MSETNX across shards: %v (%v), want true", ok, err)
	}
}

func TestBadInputGetsRedisErrorsAndServerKeepsServing(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		healthy := s.client(2)
		ctx := ctx(t)
		cases := []struct {
			name, send, want string
			closes           bool
		}{
			{"unknown command", "FOO bar\r\n", "-ERR unknown command 'FOO', with args beginning with: 'bar' ", false},
			{"wrong arity", "GET\r\n", "-ERR wrong number of arguments for 'get' command", false},
			{"not an integer", "SET notint a\r\nINCR notint\r\n", "+OK", false},
			{"bad multibulk length", "*abc\r\n", "-ERR Protocol error: invalid multibulk length", true},
			{"bad bulk length", "*1\r\n$abc\r\n", "-ERR Protocol error: invalid bulk length", true},
			{"huge bulk length", "*1\r\n$9999999999999\r\n", "-ERR Protocol error: invalid bulk length", true},
			{"expected dollar", "*1\r\n+x\r\n", "-ERR Protocol error: expected '$', got '+'", true},
			{"unbalanced quotes", "SET \"a b\r\n", "-ERR Protocol error: unbalanced quotes in request", true},
		}
		for _, tc := range cases {
			r := s.raw()
			r.send(tc.send)
			got := r.line()
			if tc.name == "not an integer" {
				if l := r.line(); l != "-ERR value is not an integer or out of range" {
					t.Fatalf("INCR of a non-integer: %q", l)
				}
			}
			if got != tc.want {
				t.Fatalf("%s: got %q, want %q", tc.name, got, tc.want)
			}
			if tc.closes && !r.closed() {
				t.Fatalf("%s: connection left open after a protocol error", tc.name)
			}
			if !tc.closes {
				r.send("PING\r\n")
				if l := r.line(); l != "+PONG" {
					t.Fatalf("%s: connection not usable afterwards: %q", tc.name, l)
				}
			}
			if err := healthy.Ping(ctx).Err(); err != nil {
				t.Fatalf("after %s another client cannot PING: %v", tc.name, err)
			}
		}
	})
}

func TestRequirePassGatesCommands(t *testing.T) {
	s := startServer(t, "pool", 2, "--requirepass", "s3cret")
	r := s.raw()
	r.send("GET x\r\n")
	if l := r.line(); l != "-NOAUTH Authentication required." {
		t.Fatalf("before AUTH: %q", l)
	}
	r.send("AUTH wrong\r\n")
	if l := r.line(); l != "-WRONGPASS invalid username-password pair or user is disabled." {
		t.Fatalf("bad AUTH: %q", l)
	}
	r.send("AUTH s3cret\r\nGET x\r\n")
	if l := r.line(); l != "+OK" {
		t.Fatalf("AUTH: %q", l)
	}
	if l := r.line(); l != "$-1" {
		t.Fatalf("GET after AUTH: %q", l)
	}
	c := redis.NewClient(&redis.Options{Addr: s.addr(), Password: "s3cret"})
	defer c.Close()
	if err := c.Set(ctx(t), "x", "1", 0).Err(); err != nil {
		t.Fatalf("go-redis with a password: %v", err)
	}
}

func TestRedisCLI(t *testing.T) {
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Skip("redis-cli not installed (make test installs redis-tools)")
	}
	s := startServer(t, "uring", 2)
	cli := func(args ...string) string {
		out, err := exec.Command("redis-cli", append([]string{"-p", strconv.Itoa(s.port)}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if out := cli("SET", "cli:key", "hello world"); out != "OK" {
		t.Fatalf("SET: %q", out)
	}
	if out := cli("GET", "cli:key"); out != "hello world" {
		t.Fatalf("GET: %q", out)
	}
	if out := cli("-3", "GET", "cli:key"); out != "hello world" {
		t.Fatalf("GET over RESP3: %q", out)
	}
	if out := cli("INFO", "server"); !strings.Contains(out, "io_backend:uring") || !strings.Contains(out, "redis_version:") {
		t.Fatalf("INFO server lacks io_backend/redis_version:\n%s", out)
	}
	if out := cli("CONFIG", "GET", "appendfsync"); out != "appendfsync\neverysec" {
		t.Fatalf("CONFIG GET: %q", out)
	}
}

func TestRedisBenchmarkRunsWithoutErrors(t *testing.T) {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		t.Skip("redis-benchmark not installed (make test installs redis-tools)")
	}
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			s := startServer(t, backend, 2)
			out, err := exec.Command("redis-benchmark", "-p", strconv.Itoa(s.port), "-t", "set,get,incr,mset",
				"-P", "16", "-c", "20", "-n", "20000", "-r", "10000", "-q").CombinedOutput()
			if err != nil {
				t.Fatalf("redis-benchmark: %v\n%s", err, out)
			}
			text := string(out)
			for _, test := range []string{"SET", "GET", "INCR", "MSET"} {
				if !strings.Contains(text, test) {
					t.Errorf("no %s result in:\n%s", test, text)
				}
			}
			if strings.Contains(text, "ERR") || strings.Contains(text, "Error") {
				t.Fatalf("errors under load:\n%s", text)
			}
		})
	}
}

func TestSigtermStopsCleanly(t *testing.T) {
	s := startServer(t, "uring", 2)
	c := s.client(2)
	if err := c.Set(ctx(t), "a", "b", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, s.log.String())
	}
}

func TestShutdownCommandStopsTheServer(t *testing.T) {
	s := startServer(t, "pool", 1)
	r := s.raw()
	r.send("SHUTDOWN NOSAVE\r\n")
	if !r.closed() {
		t.Fatal("SHUTDOWN left the connection open")
	}
	select {
	case err := <-s.done:
		s.done <- err
		if err != nil {
			t.Fatalf("exit status after SHUTDOWN: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("moond still running 15s after SHUTDOWN")
	}
}

// TestQueryBufferLimitClosesTheClientAndOthersKeepServing sends a command
// that never ends and grows past client-query-buffer-limit: like Redis,
// moond closes that client, and everyone else is served.
func TestQueryBufferLimitClosesTheClientAndOthersKeepServing(t *testing.T) {
	s := startServer(t, "uring", 1, "--client-query-buffer-limit", "1mb")
	r := s.raw()
	r.send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5000000\r\n")
	chunk := strings.Repeat("x", 64<<10)
	closed := false
	for i := 0; i < 40 && !closed; i++ { // up to 2.5 MB, past the 1 MB limit
		r.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := r.c.Write([]byte(chunk)); err != nil {
			closed = true
		}
	}
	if !closed && !r.closed() {
		t.Fatal("a client past client-query-buffer-limit was not disconnected")
	}
	if !s.logShows("max query buffer") {
		t.Errorf("the log does not say why the client was closed:\n%s", s.log.String())
	}
	if err := s.client(2).Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("another client after the limit: %v", err)
	}
}

// TestWholeKeyspaceCommandsSpanShards checks the commands the server sends
// to every shard: SWAPDB, RANDOMKEY, SCAN with TYPE and COUNT, FLUSHDB,
// DBSIZE per database, and KEYS with a pattern.
func TestWholeKeyspaceCommandsSpanShards(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			s := startServer(t, backend, 3)
			ctx := ctx(t)
			db0 := s.client(2)
			db1 := redis.NewClient(&redis.Options{Addr: s.addr(), DB: 1, DisableIdentity: true})
			defer db1.Close()
			for i := 0; i < 60; i++ {
				db0.Set(ctx, fmt.Sprintf("a:%d", i), i, 0)
			}
			for i := 0; i < 7; i++ {
				db1.Set(ctx, fmt.Sprintf("b:%d", i), i, 0)
			}
			if err := db0.Do(ctx, "SWAPDB", 0, 1).Err(); err != nil {
				t.Fatal(err)
			}
			if n, _ := db0.DBSize(ctx).Result(); n != 7 {
				t.Fatalf("DBSIZE of db 0 after SWAPDB = %d, want 7 (every shard must swap)", n)
			}
			if n, _ := db1.DBSize(ctx).Result(); n != 60 {
				t.Fatalf("DBSIZE of db 1 after SWAPDB = %d, want 60", n)
			}
			seen := map[string]bool{}
			for i := 0; i < 200 && len(seen) < 3; i++ {
				k, err := db1.RandomKey(ctx).Result()
				if err != nil || !strings.HasPrefix(k, "a:") {
					t.Fatalf("RANDOMKEY = %q, %v", k, err)
				}
				seen[k] = true
			}
			keys, err := db1.Keys(ctx, "a:1*").Result()
			if err != nil || len(keys) != 11 { // a:1, a:10..a:19
				t.Fatalf("KEYS a:1* = %d keys, %v", len(keys), err)
			}
			var scanned []string
			var cursor uint64
			for {
				ks, next, err := db1.ScanType(ctx, cursor, "*", 5, "string").Result()
				if err != nil {
					t.Fatal(err)
				}
				scanned = append(scanned, ks...)
				if cursor = next; cursor == 0 {
					break
				}
			}
			if len(scanned) < 60 {
				t.Fatalf("SCAN TYPE string over 3 shards found %d of 60 keys", len(scanned))
			}
			if ks, _, _ := db1.ScanType(ctx, 0, "*", 1000, "list").Result(); len(ks) != 0 {
				t.Fatalf("SCAN TYPE list returned strings: %v", ks)
			}
			if err := db1.FlushDBAsync(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if n, _ := db1.DBSize(ctx).Result(); n != 0 {
				t.Fatalf("DBSIZE after FLUSHDB ASYNC = %d", n)
			}
			if k, err := db1.RandomKey(ctx).Result(); err != redis.Nil {
				t.Fatalf("RANDOMKEY of an empty db = %q, %v; want nil", k, err)
			}
			if n, _ := db0.DBSize(ctx).Result(); n != 7 {
				t.Fatalf("FLUSHDB of db 1 touched db 0: DBSIZE %d", n)
			}
		})
	}
}

// TestKeyedSubcommandsRunOnTheKeysShard checks that OBJECT and MEMORY,
// whose key is their third argument, run where the key lives, whatever
// shard the connection is on.
func TestKeyedSubcommandsRunOnTheKeysShard(t *testing.T) {
	s := startServer(t, "uring", 3)
	ctx := ctx(t)
	c := s.client(2)
	for i := 0; i < 30; i++ {
		k := fmt.Sprintf("sub:%d", i)
		if err := c.Set(ctx, k, i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if enc, err := c.ObjectEncoding(ctx, k).Result(); err != nil || enc != "int" {
			t.Fatalf("OBJECT ENCODING %s = %q, %v: want int from the key's shard", k, enc, err)
		}
		if n, err := c.MemoryUsage(ctx, k).Result(); err != nil || n <= 0 {
			t.Fatalf("MEMORY USAGE %s = %d, %v", k, n, err)
		}
	}
}
