package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moond-db/moond/runtime/looptest"
	"github.com/moond-db/moond/server/config"
	"github.com/redis/go-redis/v9"
)

// startTest runs an in-process server on an ephemeral port.
func startTest(t testing.TB, backend string, shards int, set ...string) *Server {
	t.Helper()
	cfg := config.Default()
	cfg.Port = 0
	cfg.Shards = shards
	cfg.IOBackend = backend
	cfg.Dir = t.TempDir()
	for i := 0; i+1 < len(set); i += 2 {
		if err := cfg.Set(set[i], set[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	s := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	startLoaded(t, s)
	return s
}

// startLoaded starts s, stops it when the test ends, and waits (with a
// deadline) until its shards loaded their data.
func startLoaded(t testing.TB, s *Server) {
	t.Helper()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	waitLoaded(t, s)
}

// waitLoaded waits (with a deadline) until s's shards loaded their data,
// and fails the test if the load failed.
func waitLoaded(t testing.TB, s *Server) {
	t.Helper()
	select {
	case <-s.Loaded():
		if err := s.LoadErr(); err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the shards did not load within 30s")
	}
}

func client(t *testing.T, s *Server) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func eachBackend(t *testing.T, shards int, f func(t *testing.T, s *Server)) {
	for _, b := range []string{"uring", "pool"} {
		t.Run(b, func(t *testing.T) { f(t, startTest(t, b, shards)) })
	}
}

func TestShardsShareThePort(t *testing.T) {
	eachBackend(t, 3, func(t *testing.T, s *Server) {
		// SO_REUSEPORT spreads connections over the shards' listeners: with
		// 60 of them every shard gets some (all on one shard: p < 1e-10).
		var conns []net.Conn
		for i := 0; i < 60; i++ {
			nc, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.Write([]byte("PING\r\n"))
			if l, _ := bufio.NewReader(nc).ReadString('\n'); l != "+PONG\r\n" {
				t.Fatalf("PING: %q", l)
			}
			conns = append(conns, nc)
		}
		total := 0
		for _, w := range s.workers {
			var n int
			looptest.On(t, w.loop, func() { n = len(w.conns) })
			if n == 0 {
				t.Errorf("shard %d accepted none of %d connections", w.id, len(conns))
			}
			total += n
		}
		if total != len(conns) {
			t.Fatalf("shards hold %d connections, %d are open", total, len(conns))
		}
	})
}

// TestConcurrentClientsAcrossShards runs many clients whose commands cross
// shards, under the race detector in make test.
func TestConcurrentClientsAcrossShards(t *testing.T) {
	eachBackend(t, 3, func(t *testing.T, s *Server) {
		ctx := testCtx(t)
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for g := 0; g < 16; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				c := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true, PoolSize: 1})
				defer c.Close()
				for i := 0; i < 200; i++ {
					k := fmt.Sprintf("g%d:k%d", g, i)
					pipe := c.Pipeline()
					set := pipe.Set(ctx, k, i, 0)
					mget := pipe.MGet(ctx, k, "other:"+k, k)
					incr := pipe.Incr(ctx, fmt.Sprintf("ctr:%d", g))
					if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
						errs <- err
						return
					}
					if set.Err() != nil || mget.Val()[0] != strconv.Itoa(i) || mget.Val()[1] != nil || incr.Val() != int64(i+1) {
						errs <- fmt.Errorf("g%d i%d: set %v mget %v incr %d", g, i, set.Err(), mget.Val(), incr.Val())
						return
					}
				}
			}(g)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if n, err := client(t, s).DBSize(ctx).Result(); err != nil || n != 16*200+16 {
			t.Fatalf("DBSIZE = %d, %v", n, err)
		}
	})
}

// TestClosingWhileOtherShardsAnswer closes connections while replies from
// other shards are in flight: the late replies must be dropped, not sent.
func TestClosingWhileOtherShardsAnswer(t *testing.T) {
	eachBackend(t, 2, func(t *testing.T, s *Server) {
		var cmds strings.Builder
		for i := 0; i < 500; i++ {
			k := "k" + strconv.Itoa(i)
			fmt.Fprintf(&cmds, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nv\r\n", len(k), k)
		}
		for i := 0; i < 50; i++ {
			nc, err := net.Dial("tcp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			nc.Write([]byte(cmds.String()))
			nc.Close()
		}
		// The server still answers everyone else, and every closed
		// connection is released, late replies or not.
		c := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true, PoolSize: 1})
		defer c.Close()
		if err := c.Ping(testCtx(t)).Err(); err != nil {
			t.Fatal(err)
		}
		open := func() int {
			n := 0
			for _, w := range s.workers {
				looptest.On(t, w.loop, func() { n += len(w.conns) })
			}
			return n
		}
		deadline := time.Now().Add(looptest.Deadline)
		for open() != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections still held after 50 clients closed theirs", open()-1)
			}
			time.Sleep(time.Millisecond)
		}
		if n := s.clients.Load(); n != 1 {
			t.Fatalf("connected_clients = %d, want 1", n)
		}
	})
}

func TestConfigSetGetAndErrors(t *testing.T) {
	s := startTest(t, "pool", 1)
	c := client(t, s)
	ctx := testCtx(t)
	if err := c.ConfigSet(ctx, "maxmemory", "10mb").Err(); err != nil {
		t.Fatal(err)
	}
	got, err := c.ConfigGet(ctx, "maxmem*").Result()
	if err != nil || got["maxmemory"] != strconv.Itoa(10<<20) || got["maxmemory-policy"] != "noeviction" {
		t.Fatalf("CONFIG GET maxmem* = %v, %v", got, err)
	}
	if err := c.ConfigSet(ctx, "nosuch", "1").Err(); err == nil || err.Error() != "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'" {
		t.Fatalf("unknown option: %v", err)
	}
	if err := c.ConfigSet(ctx, "appendfsync", "sometimes").Err(); err == nil || !strings.HasPrefix(err.Error(), "ERR CONFIG SET failed (possibly related to argument 'appendfsync')") {
		t.Fatalf("bad value: %v", err)
	}
	if err := c.ConfigSet(ctx, "shards", "4").Err(); err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Fatalf("immutable: %v", err)
	}
}

func TestInfoHasRedisSectionsAndMoondFields(t *testing.T) {
	s := startTest(t, "uring", 2)
	c := client(t, s)
	ctx := testCtx(t)
	c.Set(ctx, "a", "1", 0)
	c.Set(ctx, "b", "1", time.Hour)
	c.Do(ctx, "NOSUCHCMD")
	c.Do(ctx, "GET")              // wrong arity: a rejected call
	c.Do(ctx, "get", "a")         // the same command in another case
	c.Do(ctx, "CLIENT", "NOSUCH") // a server command
	c.Do(ctx, "CLIENT")           // a server command's rejected call
	info, err := c.Info(ctx, "everything").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Server", "redis_version:", "io_backend:uring", "shards:2", "# Clients", "connected_clients:",
		"# Memory", "used_memory:", "# Persistence", "aof_last_write_status:ok", "rdb_changes_since_last_save:",
		"# Stats", "total_commands_processed:", "# Replication", "role:master", "# CPU", "# Errorstats",
		"errorstat_ERR:count=", "# Commandstats", "cmdstat_set:calls=2,",
		"rejected_calls=1,failed_calls=0\r\ncmdstat_get:", "# Latencystats", "latency_percentiles_usec_set:p50=",
		"# Keyspace", "db0:keys=2,expires=1"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO lacks %q", want)
		}
	}
	// The GET that ran was timed (cmd_timing.go).
	if !regexp.MustCompile(`cmdstat_get:calls=1,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=1,failed_calls=0\r\n`).MatchString(info) {
		t.Errorf("INFO's GET line is not calls=1,usec=N,usec_per_call=N.NN,rejected_calls=1,failed_calls=0:\n%s", info)
	}
}

func TestClientListAndKillAcrossShards(t *testing.T) {
	s := startTest(t, "uring", 2)
	ctx := testCtx(t)
	var victims []*redis.Client
	for i := 0; i < 6; i++ {
		v := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true, PoolSize: 1})
		defer v.Close()
		if err := v.Do(ctx, "CLIENT", "SETNAME", "victim"+strconv.Itoa(i)).Err(); err != nil {
			t.Fatal(err)
		}
		victims = append(victims, v)
	}
	c := client(t, s)
	list, err := c.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for i := range victims {
		if !strings.Contains(list, "name=victim"+strconv.Itoa(i)+" ") {
			t.Fatalf("CLIENT LIST misses victim%d:\n%s", i, list)
		}
	}
	id, _ := victims[3].ClientID(ctx).Result()
	if n, err := c.ClientKillByFilter(ctx, "ID", strconv.FormatInt(id, 10)).Result(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL ID = %d, %v", n, err)
	}
	list, _ = c.ClientList(ctx).Result()
	if strings.Contains(list, "name=victim3 ") {
		t.Fatalf("victim3 still listed after CLIENT KILL")
	}
}

func TestCommandCountAndInfo(t *testing.T) {
	s := startTest(t, "pool", 1)
	r, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	br := bufio.NewReader(r)
	r.Write([]byte("COMMAND INFO get\r\n"))
	for _, want := range []string{"*1", "*10", "$3", "get", ":2"} {
		l, _ := br.ReadString('\n')
		if strings.TrimSpace(l) != want {
			t.Fatalf("COMMAND INFO get: line %q, want %q", l, want)
		}
	}
	c := client(t, s)
	n, err := c.Do(testCtx(t), "COMMAND", "COUNT").Int()
	if err != nil || n < 50 {
		t.Fatalf("COMMAND COUNT = %d, %v", n, err)
	}
}

// startHeld starts an in-process server whose shards hold their boot
// until the returned function is called.
func startHeld(t *testing.T, backend string, shards int, set ...string) (*Server, func()) {
	t.Helper()
	cfg := config.Default()
	cfg.Port, cfg.Shards, cfg.IOBackend, cfg.Dir = 0, shards, backend, t.TempDir()
	for i := 0; i+1 < len(set); i += 2 {
		if err := cfg.Set(set[i], set[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	s := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	hold := make(chan struct{})
	s.HoldBoot = hold
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	var once sync.Once
	return s, func() { once.Do(func() { close(hold) }) }
}

func TestLoadingRefusesDataCommandsUntilEveryShardLoaded(t *testing.T) {
	for _, b := range []string{"uring", "pool"} {
		t.Run(b, func(t *testing.T) {
			s, release := startHeld(t, b, 3)
			c := client(t, s)
			ctx := testCtx(t)
			for i := 0; i < 20; i++ { // keys on every shard
				if err := c.Get(ctx, fmt.Sprint("k", i)).Err(); err == nil || err.Error() != loadingError {
					t.Fatalf("GET while loading: %v, want %q", err, loadingError)
				}
			}
			if err := c.Ping(ctx).Err(); err != nil {
				t.Fatalf("PING while loading: %v", err)
			}
			if v, err := c.Echo(ctx, "x").Result(); err != nil || v != "x" {
				t.Fatalf("ECHO (loading flag in Redis) while loading: %q, %v", v, err)
			}
			refusedInMulti(t, c) // MULTI runs while loading (Redis's flag), GET inside it does not
			if err := c.Do(ctx, "SLOWLOG", "LEN").Err(); err != nil {
				t.Fatalf("SLOWLOG LEN (loading flag on the subcommand in Redis) while loading: %v", err)
			}
			if err := c.Do(ctx, "FUNCTION", "LIST").Err(); err == nil || err.Error() != loadingError {
				t.Fatalf("FUNCTION LIST (no loading flag in Redis) while loading: %v", err)
			}
			if v, err := c.Info(ctx, "persistence").Result(); err != nil || !strings.Contains(v, "loading:1\r\n") {
				t.Fatalf("INFO while loading: %v %q", err, v)
			}
			release()
			waitLoaded(t, s)
			for i := 0; i < 20; i++ {
				if err := c.Set(ctx, fmt.Sprint("k", i), "v", 0).Err(); err != nil {
					t.Fatalf("SET after loading: %v", err)
				}
			}
		})
	}
}

// refusedInMulti checks that a transaction started while the shards load
// refuses a data command and so fails at EXEC.
func refusedInMulti(t *testing.T, c *redis.Client) {
	t.Helper()
	ctx := testCtx(t)
	tx := c.Conn()
	defer tx.Close()
	if err := tx.Do(ctx, "MULTI").Err(); err != nil {
		t.Fatalf("MULTI while loading: %v", err)
	}
	if err := tx.Do(ctx, "GET", "k0").Err(); err == nil || err.Error() != loadingError {
		t.Fatalf("GET in MULTI while loading: %v, want %q", err, loadingError)
	}
	if err := tx.Do(ctx, "EXEC").Err(); err == nil || !strings.HasPrefix(err.Error(), "EXECABORT") {
		t.Fatalf("EXEC after a refused command: %v", err)
	}
}

func TestStopWhileShardsLoadReleasesTheBoot(t *testing.T) {
	s, _ := startHeld(t, "pool", 2)
	stopped := make(chan struct{})
	go func() { s.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("Stop did not return while the boot was held")
	}
	select {
	case <-s.Loaded():
	default:
		t.Fatal("Stop returned before the boot ended")
	}
}
