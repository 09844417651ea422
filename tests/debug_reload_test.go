package tests

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestDebugReloadRebuildsKeyspace: DEBUG RELOAD, RELOAD NOSAVE and
// RELOAD MERGE drop every shard's keyspace and load it again from the
// heap and the WAL (each shard's boot logs its heap recovery once more),
// on both io backends with two shards: every key of every type and
// encoding, in several databases, keeps its value (DEBUG DIGEST-VALUE),
// type and expiry time, and DEBUG DIGEST is unchanged; each key's
// encoding after it is redis-server 7.0's after its DEBUG RELOAD of the
// same data (both turn a short raw string into embstr, as a restart
// does). Another client's INCRs meanwhile all answer and all count; writes
// go on after it and survive a kill -9.
func TestDebugReloadRebuildsKeyspace(t *testing.T) {
	rc := startRedisServer(t, "--enable-debug-command", "yes")
	fillReloadData(t, rc)
	mustDo(t, rc, "DEBUG", "RELOAD")
	wantEncodings := keyspaceState(t, rc, true)
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := startServerIn(t, dir, backend, 2)
			c := s.client(2)
			fillReloadData(t, c)
			before := keyspaceState(t, c, false)
			mustDo(t, c, "DEBUG", "RELOAD")
			if got := setsAs70(keyspaceState(t, c, true)); got != wantEncodings {
				t.Fatalf("after DEBUG RELOAD:\nredis-server %s\nmoond        %s", wantEncodings, got)
			}
			for _, opts := range [][]any{{}, {"NOSAVE"}, {"MERGE"}} {
				recovered := strings.Count(s.log.String(), `msg="heap recovered"`)
				if err := c.Do(ctx(t), append([]any{"DEBUG", "RELOAD"}, opts...)...).Err(); err != nil {
					t.Fatalf("DEBUG RELOAD %v: %v", opts, err)
				}
				// The log comes through a pipe: its lines may trail the reply.
				waitFor(t, fmt.Sprintf("both shards' heap recovery logged after DEBUG RELOAD %v", opts), func() bool {
					return strings.Count(s.log.String(), `msg="heap recovered"`)-recovered >= 2
				})
				if got := strings.Count(s.log.String(), `msg="heap recovered"`) - recovered; got != 2 {
					t.Fatalf("DEBUG RELOAD %v: %d shards recovered their heap, want 2", opts, got)
				}
				if after := keyspaceState(t, c, false); after != before {
					t.Fatalf("DEBUG RELOAD %v changed the data set:\nbefore %s\nafter  %s", opts, before, after)
				}
				// A write between two reloads is in the WAL only: NOSAVE must
				// bring it back from there.
				mustDo(t, c, "SET", "between", fmt.Sprint(opts))
				before = keyspaceState(t, c, false)
			}
			incrs := incrDuring(t, s.addr())
			for _, opts := range [][]any{{}, {"NOSAVE"}, {}} {
				mustDo(t, c, append([]any{"DEBUG", "RELOAD"}, opts...)...)
			}
			if n, counter := incrs(); counter != fmt.Sprint(n) || n == 0 {
				t.Fatalf("counter %s after %d INCRs", counter, n)
			}
			s.kill9()
			c2 := startServerIn(t, dir, backend, 2).client(2)
			if after := keyspaceState(t, c2, false); after != before {
				t.Fatalf("after kill -9 and a restart:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// TestDebugReloadRefusals: NOFLUSH and unknown options are refused, and
// nothing is reloaded.
func TestDebugReloadRefusals(t *testing.T) {
	t.Parallel()
	c := startServer(t, "pool", 2).client(2)
	for _, opts := range [][]any{{"NOFLUSH"}, {"MERGE", "NOFLUSH"}, {"bogus"}} {
		err := c.Do(ctx(t), append([]any{"DEBUG", "RELOAD"}, opts...)...).Err()
		if err == nil || !strings.HasPrefix(err.Error(), "ERR DEBUG RELOAD") {
			t.Errorf("DEBUG RELOAD %v: %v, want a refusal", opts, err)
		}
	}
}

// fillReloadData writes keys of every type and of each encoding moond
// has, with and without expiry, in databases 0, 1 and 9.
func fillReloadData(t *testing.T, c *redis.Client) {
	t.Helper()
	long := strings.Repeat("x", 100)
	for _, db := range []int{0, 1, 9} {
		cmds := [][]any{{"SELECT", db},
			{"SET", "int", "12345"}, {"SET", "embstr", "short"}, {"SET", "raw", long}, {"SET", "ttl", "v", "PXAT", "4102444800123"},
			{"SETBIT", "bits", "1000", "1"}, {"PFADD", "hll", "a", "b", "c"},
			{"RPUSH", "list", "a", "1", "b"}, {"RPUSH", "biglist", long, long, long},
			{"SADD", "intset", "1", "2", "3"}, {"SADD", "set", "x", "y"}, {"HSET", "hash", "f", "v", "g", "1"},
			{"ZADD", "zset", "1", "a", "0.5", "b"}, {"PEXPIREAT", "zset", "4102444800456"},
		}
		for i := range 200 {
			cmds = append(cmds, []any{"SADD", "bigset", fmt.Sprint("m", i)}, []any{"HSET", "bighash", fmt.Sprint("f", i), long},
				[]any{"ZADD", "bigzset", i, fmt.Sprint("m", i)}, []any{"SET", fmt.Sprint("key:", db, ":", i), i})
		}
		for _, cmd := range cmds {
			mustDo(t, c, cmd...)
		}
	}
	mustDo(t, c, "SELECT", 0)
}

// keyspaceState describes the data set: DEBUG DIGEST, then for each
// database its keys in order, each with its type, absolute expiry
// (PEXPIRETIME), value digest and, withEncoding, encoding.
func keyspaceState(t *testing.T, c *redis.Client, withEncoding bool) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "digest=%s", c.Do(ctx(t), "DEBUG", "DIGEST").Val())
	conn := c.Conn()
	defer conn.Close()
	for _, db := range []int{0, 1, 9} {
		if err := conn.Select(ctx(t), db).Err(); err != nil {
			t.Fatal(err)
		}
		keys, err := conn.Keys(ctx(t), "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, " db%d:%s:%s:%d:%v", db, k, conn.Type(ctx(t), k).Val(),
				conn.Do(ctx(t), "PEXPIRETIME", k).Val(), conn.Do(ctx(t), "DEBUG", "DIGEST-VALUE", k).Val())
			if withEncoding {
				fmt.Fprintf(&b, ":%s", conn.ObjectEncoding(ctx(t), k).Val())
			}
		}
	}
	return b.String()
}

// setsAs70 names the encoding of the sets in a keyspaceState as Redis 7.0
// would: moond keeps a small set of strings as a listpack, Redis 7.2's
// encoding, where Redis 7.0 has a hashtable (keyspace/set.go).
func setsAs70(state string) string {
	entries := strings.Split(state, " ")
	for i, e := range entries {
		if strings.Contains(e, ":set:") && strings.HasSuffix(e, ":listpack") {
			entries[i] = strings.TrimSuffix(e, "listpack") + "hashtable"
		}
	}
	return strings.Join(entries, " ")
}

// incrDuring INCRs "counter" in database 2 of the server at addr until
// the function it returns is called, which returns how many INCRs
// answered and the counter's value, and deletes it; an error fails the
// test.
func incrDuring(t *testing.T, addr string) func() (int, string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, DB: 2})
	t.Cleanup(func() { c.Close() })
	stop, done := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		defer func() { done <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := c.Incr(context.Background(), "counter").Err(); err != nil {
				t.Errorf("INCR during DEBUG RELOAD: %v", err)
				return
			}
			n++
		}
	}()
	return func() (int, string) {
		close(stop)
		n := <-done
		return n, c.GetDel(ctx(t), "counter").Val()
	}
}

// TestDebugReloadKeepsReplicaFed: a redis-server replica of a moond master
// (two shards) follows the writes made after DEBUG RELOAD and DEBUG
// RELOAD NOSAVE: the rebooted shards feed the replication stream as the
// retired ones did.
func TestDebugReloadKeepsReplicaFed(t *testing.T) {
	t.Parallel()
	s := startServer(t, "uring", 2)
	maddr := s.addr()
	fillMaster(t, maddr)
	host, port := hostPort(t, maddr)
	r := startRedisServer(t, "--replicaof", host, port)
	waitLinkUp(t, r)
	waitEqual(t, maddr, r.Options().Addr)
	m := s.client(2)
	mustDo(t, m, "DEBUG", "RELOAD")
	mustDo(t, m, "SET", "after-reload", "1")
	mustDo(t, m, "DEBUG", "RELOAD", "NOSAVE")
	masterWrites(t, maddr)
	waitEqual(t, maddr, r.Options().Addr)
	waitOffsets(t, m, r, "slave_repl_offset")
}
