package tests

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// moond as a replica of a real redis-server 7.0 (the migration path): the
// full sync in both of its transfer forms, the command stream, the
// read-only rule, promotion, a kill -9 in the middle, a master that sends
// garbage.

// replDBs are the databases the tests fill.
var replDBs = []int{0, 5}

// onDB returns a client of addr on database db (protocol 2).
func onDB(t *testing.T, addr string, db int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, DB: db, Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	return c
}

// fillMaster writes keys of every type, in small and large encodings,
// some with expiries, in each of replDBs.
func fillMaster(t *testing.T, addr string) {
	t.Helper()
	long := strings.Repeat("payload-", 20)
	for _, db := range replDBs {
		c := onDB(t, addr, db)
		p := c.Pipeline()
		pre := fmt.Sprintf("db%d:", db)
		p.Set(ctx(t), pre+"str", "hello", 0)
		p.Set(ctx(t), pre+"num", "42", 0)
		p.Set(ctx(t), pre+"long", long, 0)
		p.Set(ctx(t), pre+"ttl", "v", time.Hour)
		p.Set(ctx(t), "777", "integer key", 0)
		p.RPush(ctx(t), pre+"list", "a", "b", 3)
		for i := range 200 {
			p.RPush(ctx(t), pre+"biglist", long+strconv.Itoa(i))
			p.SAdd(ctx(t), pre+"bigset", "m"+strconv.Itoa(i))
			p.ZAdd(ctx(t), pre+"bigzset", redis.Z{Score: float64(i) / 7, Member: "z" + strconv.Itoa(i)})
			p.HSet(ctx(t), pre+"bighash", "f"+strconv.Itoa(i), long)
		}
		p.SAdd(ctx(t), pre+"intset", 1, 2, 3, 100000)
		p.SAdd(ctx(t), pre+"set", "x", "y")
		p.ZAdd(ctx(t), pre+"zset", redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: -3, Member: "b"})
		p.HSet(ctx(t), pre+"hash", "f", "v", "g", 7)
		p.PExpire(ctx(t), pre+"bigzset", 2*time.Hour)
		if _, err := p.Exec(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
}

// replSnapshot is one database's keys, each as its type and value in a
// comparable form, and its TTL.
type replSnapshot map[string]replKey

type replKey struct {
	typ, value string
	pttl       time.Duration
}

// snap reads every key of db through c.
func snap(t *testing.T, c *redis.Client) replSnapshot {
	t.Helper()
	keys, err := c.Keys(ctx(t), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	s := replSnapshot{}
	for _, k := range keys {
		typ, err := c.Type(ctx(t), k).Result()
		if err != nil {
			t.Fatal(err)
		}
		var v any
		switch typ {
		case "string":
			v, err = c.Get(ctx(t), k).Result()
		case "list":
			v, err = c.LRange(ctx(t), k, 0, -1).Result()
		case "set":
			var ms []string
			ms, err = c.SMembers(ctx(t), k).Result()
			sort.Strings(ms)
			v = ms
		case "zset":
			v, err = c.ZRangeWithScores(ctx(t), k, 0, -1).Result()
		case "hash":
			v, err = c.HGetAll(ctx(t), k).Result()
		case "none":
			continue // expired between KEYS and TYPE
		}
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		pttl, _ := c.PTTL(ctx(t), k).Result()
		s[k] = replKey{typ: typ, value: fmt.Sprint(v), pttl: pttl}
	}
	return s
}

// diff says how b differs from a ("" when equal), TTLs within 2 s.
func (a replSnapshot) diff(b replSnapshot) string {
	var out []string
	for k, x := range a {
		y, ok := b[k]
		switch {
		case !ok:
			out = append(out, "missing "+k)
		case x.typ != y.typ || x.value != y.value:
			out = append(out, fmt.Sprintf("%s: %s %.80s vs %s %.80s", k, x.typ, x.value, y.typ, y.value))
		case (x.pttl < 0) != (y.pttl < 0) || (x.pttl-y.pttl).Abs() > 2*time.Second:
			out = append(out, fmt.Sprintf("%s: pttl %v vs %v", k, x.pttl, y.pttl))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "extra "+k)
		}
	}
	sort.Strings(out)
	if len(out) > 5 {
		out = append(out[:5], fmt.Sprintf("... %d differences", len(out)))
	}
	return strings.Join(out, "; ")
}

// waitEqual waits (30 s at most) until every db of the replica equals the
// master's.
func waitEqual(t *testing.T, master, replica string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d := ""
		for _, db := range append(replDBs, 1) {
			if x := snap(t, onDB(t, master, db)).diff(snap(t, onDB(t, replica, db))); x != "" {
				d += fmt.Sprintf("db %d: %s\n", db, x)
			}
		}
		if d == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica does not equal the master after 30s:\n%s", d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitLinkUp waits (30 s at most) for master_link_status:up.
func waitLinkUp(t *testing.T, c *redis.Client) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for infoField(t, c, "master_link_status") != "up" {
		if time.Now().After(deadline) {
			info, _ := c.Info(ctx(t), "replication").Result()
			t.Fatalf("master_link_status not up after 30s:\n%s", info)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReplicaOfRedisMaster: a redis-server master with keys of every
// type, expiries and two dbs; REPLICAOF on moond (two shards) loads them
// (diskless transfer, the $EOF: form), then follows the master's writes;
// the replica refuses a client's write; REPLICAOF NO ONE makes it a
// writable master with the data kept.
func TestReplicaOfRedisMaster(t *testing.T) {
	m := startRedisServer(t, "--dir", t.TempDir(), "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0")
	maddr := m.Options().Addr
	fillMaster(t, maddr)
	s := startServer(t, "uring", 2)
	r := s.client(2)
	host, port := hostPort(t, m.Options().Addr)

	if err := r.Do(ctx(t), "REPLICAOF", host, "70000").Err(); err == nil || err.Error() != "ERR Invalid master port" {
		t.Fatalf("REPLICAOF with a bad port: %v", err)
	}
	if v, err := r.Do(ctx(t), "REPLICAOF", host, port).Text(); err != nil || v != "OK" {
		t.Fatalf("REPLICAOF: %q %v", v, err)
	}
	waitLinkUp(t, r)
	waitEqual(t, maddr, s.addr())
	if v, err := r.Do(ctx(t), "SLAVEOF", host, port).Text(); err != nil || v != "OK Already connected to specified master" {
		t.Fatalf("REPLICAOF again: %q %v", v, err)
	}
	role, err := r.Do(ctx(t), "ROLE").Slice()
	if err != nil || len(role) != 5 || role[0] != "slave" || role[1] != host || fmt.Sprint(role[2]) != port || role[3] != "connected" {
		t.Fatalf("ROLE = %v %v", role, err)
	}

	followWrites(t, m, maddr, s.addr())
	waitAcked(t, m, r)

	if err := r.Set(ctx(t), "mine", "1", 0).Err(); err == nil || err.Error() != "READONLY You can't write against a read only replica." {
		t.Fatalf("a write on the replica: %v", err)
	}
	if err := r.Do(ctx(t), "MIGRATE", host, port, "db0:str", 0, 1000).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Fatalf("MIGRATE on the replica: %v", err)
	}
	if v, err := r.Get(ctx(t), "db0:str").Result(); err != nil || v != "changed" {
		t.Fatalf("a read on the replica: %q %v", v, err)
	}

	if v, err := r.Do(ctx(t), "REPLICAOF", "NO", "ONE").Text(); err != nil || v != "OK" {
		t.Fatalf("REPLICAOF NO ONE: %q %v", v, err)
	}
	if got := infoField(t, r, "role"); got != "master" {
		t.Fatalf("role after NO ONE: %q", got)
	}
	if err := r.Set(ctx(t), "mine", "1", 0).Err(); err != nil {
		t.Fatalf("a write after NO ONE: %v", err)
	}
	m.Set(ctx(t), "db0:str", "after promotion", 0)
	if v, _ := r.Get(ctx(t), "db0:str").Result(); v != "changed" {
		t.Fatalf("the promoted replica still follows the master: %q", v)
	}
}

// followWrites runs writes of every kind on the master and waits until
// the replica equals it again.
func followWrites(t *testing.T, m *redis.Client, maddr, raddr string) {
	t.Helper()
	c0, c5 := onDB(t, maddr, 0), onDB(t, maddr, 5)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c0.Set(ctx(t), "db0:str", "changed", 0).Err())
	must(c0.Incr(ctx(t), "db0:num").Err())
	must(c0.HSet(ctx(t), "db0:hash", "new", "field").Err())
	must(c0.LPush(ctx(t), "db0:list", "head").Err())
	must(c0.ZAdd(ctx(t), "db0:zset", redis.Z{Score: 9, Member: "c"}).Err())
	must(c0.Expire(ctx(t), "db0:str", time.Hour).Err())
	must(c0.Del(ctx(t), "db0:set").Err())
	must(c0.Do(ctx(t), "SET", "db0:gone", "x", "PX", "50").Err())
	_, err := c0.TxPipelined(ctx(t), func(p redis.Pipeliner) error {
		p.Set(ctx(t), "tx:a", "1", 0)
		p.Incr(ctx(t), "tx:b")
		p.RPush(ctx(t), "tx:c", "x", "y")
		return nil
	})
	must(err)
	must(c5.Set(ctx(t), "db5:new", "in db 5", 0).Err())
	must(c5.SAdd(ctx(t), "db5:set", "z").Err())
	c1 := onDB(t, maddr, 1)
	must(c1.Set(ctx(t), "db1:only", "x", 0).Err())
	must(c1.FlushDB(ctx(t)).Err())
	waitEqual(t, maddr, raddr)
}

// waitAcked checks the offsets: WAIT on the master counts the replica
// (REPLCONF GETACK answered), and the replica's offset, acknowledged,
// reaches the master's (the stream's bytes counted as Redis counts them).
func waitAcked(t *testing.T, m, r *redis.Client) {
	t.Helper()
	if n, err := m.Do(ctx(t), "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 on the master: %d %v", n, err)
	}
	waitOffsets(t, m, r, "slave_repl_offset")
}

// TestReplicaKill9Resync kills the replica with SIGKILL while the master
// writes (disk-based transfer, the $<len> form), restarts it on the same
// data directory with replicaof in its config file: it syncs again and
// equals the master.
func TestReplicaKill9Resync(t *testing.T) {
	m := startRedisServer(t, "--dir", t.TempDir(), "--repl-diskless-sync", "no")
	maddr := m.Options().Addr
	fillMaster(t, maddr)
	host, port := hostPort(t, m.Options().Addr)
	conf := filepath.Join(t.TempDir(), "moond.conf")
	if err := os.WriteFile(conf, []byte("replicaof "+host+" "+port+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := startServerIn(t, dir, "uring", 2, conf)
	waitLinkUp(t, s.client(2))

	stop := make(chan struct{})
	writerDone := make(chan error, 1)
	go func() { writerDone <- writeUntil(ctx(t), onDB(t, maddr, 0), stop) }()
	deadline := time.Now().Add(10 * time.Second)
	for s.client(2).HLen(ctx(t), "w:h").Val() < 100 { // the stream flows
		if time.Now().After(deadline) {
			t.Fatal("the master's writes do not reach the replica")
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.kill9()
	s2 := startServerIn(t, dir, "uring", 2, conf)
	close(stop)
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
	waitLinkUp(t, s2.client(2))
	waitEqual(t, maddr, s2.addr())
	if got := infoField(t, s2.client(2), "role"); got != "slave" {
		t.Fatalf("role after the restart: %q", got)
	}
}

// writeUntil writes to the master until stop is closed.
func writeUntil(ctx context.Context, c *redis.Client, stop <-chan struct{}) error {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return nil
		default:
		}
		k := "w:" + strconv.Itoa(i%500)
		if err := c.Incr(ctx, k).Err(); err != nil {
			return err
		}
		if err := c.HSet(ctx, "w:h", k, i).Err(); err != nil {
			return err
		}
	}
}

// TestReplicaPartialResync drops the link from the master's side (CLIENT
// KILL TYPE replica): the replica reconnects with PSYNC <replid> <offset>,
// the master answers +CONTINUE, and the writes made meanwhile arrive. The
// replica's maxmemory is far below the data: a replica does not evict.
func TestReplicaPartialResync(t *testing.T) {
	m := startRedisServer(t, "--dir", t.TempDir(), "--repl-diskless-sync-delay", "0")
	maddr := m.Options().Addr
	fillMaster(t, maddr)
	s := startServer(t, "pool", 1, "--maxmemory", "50kb", "--maxmemory-policy", "allkeys-random")
	r := s.client(2)
	host, port := hostPort(t, m.Options().Addr)
	mustDo(t, r, "REPLICAOF", host, port)
	waitLinkUp(t, r)
	waitEqual(t, maddr, s.addr())
	if n, err := m.Do(ctx(t), "CLIENT", "KILL", "TYPE", "replica").Int(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL TYPE replica: %d %v", n, err)
	}
	m.Set(ctx(t), "db0:while-down", "x", 0)
	waitEqual(t, maddr, s.addr())
	if !s.logShows("partial resync accepted") {
		t.Fatal("the replica did not resync partially")
	}
	if got := infoField(t, m, "sync_partial_ok"); got != "1" {
		t.Fatalf("the master's sync_partial_ok = %s", got)
	}
}

// TestReplicaMultiReadOnly: on a replica a queued write answers READONLY
// and EXEC then fails with EXECABORT, as in Redis; a write pipelined after
// REPLICAOF NO ONE runs on the promoted server.
func TestReplicaMultiReadOnly(t *testing.T) {
	s := startServer(t, "pool", 1)
	c := s.raw()
	c.send("REPLICAOF 127.0.0.1 1\r\n") // nobody listens: the link stays down
	if l := c.line(); l != "+OK" {
		t.Fatalf("REPLICAOF: %q", l)
	}
	c.send("MULTI\r\nSET k v\r\nGET k\r\nEXEC\r\n")
	for _, want := range []string{"+OK", "-READONLY You can't write against a read only replica.", "+QUEUED",
		"-EXECABORT Transaction discarded because of previous errors."} {
		if l := c.line(); l != want {
			t.Fatalf("got %q, want %q", l, want)
		}
	}
	// Pipelined: the SET runs after the promotion, as in Redis.
	c.send("REPLICAOF NO ONE\r\nSET k v\r\n")
	for _, want := range []string{"+OK", "+OK"} {
		if l := c.line(); l != want {
			t.Fatalf("got %q, want %q", l, want)
		}
	}
}

// TestReplicaServeStaleData: with replica-serve-stale-data no and the link
// down, commands answer MASTERDOWN but those Redis flags "stale" (the
// replies compared with a redis-server replica's).
// CONFIG REWRITE writes replicaof, and drops it after REPLICAOF NO ONE.
func TestReplicaServeStaleData(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "moond.conf")
	if err := os.WriteFile(conf, []byte("replica-serve-stale-data no\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "pool", 1, conf)
	c := s.client(2)
	dead := strconv.Itoa(freePort(t))
	mustDo(t, c, "REPLICAOF", "127.0.0.1", dead)
	want := "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
	if err := c.Get(ctx(t), "k").Err(); err == nil || err.Error() != want {
		t.Fatalf("GET while the link is down: %v", err)
	}
	staleRepliesAsRedis(t, s)
	if got := infoField(t, c, "master_link_status"); got != "down" {
		t.Fatalf("master_link_status = %q", got)
	}
	mustDo(t, c, "CONFIG", "REWRITE")
	text, _ := os.ReadFile(conf)
	if !strings.Contains(string(text), "replicaof 127.0.0.1 "+dead+"\n") {
		t.Fatalf("CONFIG REWRITE wrote no replicaof:\n%s", text)
	}
	mustDo(t, c, "CONFIG", "SET", "replica-serve-stale-data", "yes")
	if err := c.Get(ctx(t), "k").Err(); err != redis.Nil {
		t.Fatalf("GET with replica-serve-stale-data yes: %v", err)
	}
	mustDo(t, c, "REPLICAOF", "NO", "ONE")
	mustDo(t, c, "CONFIG", "REWRITE")
	text, _ = os.ReadFile(conf)
	if strings.Contains(string(text), "replicaof") {
		t.Fatalf("CONFIG REWRITE kept replicaof after NO ONE:\n%s", text)
	}
}

// fakeMaster answers each replica connection's handshake and hands the
// PSYNC's arguments and the connection to session, which plays the rest.
func fakeMaster(l net.Listener, session func(n int, psync []string, conn net.Conn, br *bufio.Reader)) {
	for n := 1; ; n++ {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			br := bufio.NewReader(conn)
			for _, reply := range []string{"+PONG\r\n", "+OK\r\n", "+OK\r\n"} {
				if _, err := readRESPCommand(br); err != nil {
					return
				}
				conn.Write([]byte(reply))
			}
			psync, err := readRESPCommand(br)
			if err != nil {
				return
			}
			session(n, psync, conn, br)
		}()
	}
}

// readRESPCommand reads one multibulk command.
func readRESPCommand(br *bufio.Reader) ([]string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return nil, err
	}
	args := make([]string, n)
	for i := range args {
		if _, err := br.ReadString('\n'); err != nil { // $len
			return nil, err
		}
		a, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		args[i] = strings.TrimSuffix(a, "\r\n")
	}
	return args, nil
}

// emptyRDB is an RDB file with no key and no checksum (rdbchecksum no).
const emptyRDB = "REDIS0010\xff\x00\x00\x00\x00\x00\x00\x00\x00"

// TestReplicaBrokenSyncIsFullAgain: a master syncs the replica, drops
// the link, refuses the partial resync the replica asks for and sends a
// snapshot that breaks off in the middle: the replica answers LOADING
// meanwhile (its data is half there), and its next PSYNC asks for a full
// sync, never a partial one from the id it had before.
func TestReplicaBrokenSyncIsFullAgain(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	psyncs := make(chan []string, 16)
	mark, id1 := strings.Repeat("m", 40), strings.Repeat("a", 40)
	go fakeMaster(l, func(n int, psync []string, conn net.Conn, br *bufio.Reader) {
		psyncs <- psync
		switch n {
		case 1: // a whole sync; the link drops once the replica acknowledged it
			conn.Write([]byte("+FULLRESYNC " + id1 + " 100\r\n$EOF:" + mark + "\r\n" + emptyRDB + mark))
			if ack, err := readRESPCommand(br); err != nil || ack[0] != "REPLCONF" {
				return
			}
		case 2: // a snapshot cut short
			conn.Write([]byte("+FULLRESYNC " + strings.Repeat("b", 40) + " 7\r\n$EOF:" + mark + "\r\nREDIS0010\xfe\x00\x00\x01k"))
		default:
			io.Copy(io.Discard, br)
		}
	})
	s := startServer(t, "pool", 1)
	c := s.client(2)
	_, port, _ := net.SplitHostPort(l.Addr().String())
	mustDo(t, c, "REPLICAOF", "127.0.0.1", port)
	for i, want := range []string{"? -1", id1 + " 101", "? -1"} {
		select {
		case p := <-psyncs:
			if got := strings.Join(p[1:], " "); p[0] != "PSYNC" || got != want {
				t.Fatalf("PSYNC %d: %q, want PSYNC %s", i+1, p, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no PSYNC %d", i+1)
		}
	}
	if err := c.Get(ctx(t), "k").Err(); err == nil || !strings.HasPrefix(err.Error(), "LOADING") {
		t.Fatalf("GET after a broken-off load: %v", err)
	}
}

// TestReplicaMasterGarbage: a master that answers the handshake, sends an
// empty snapshot, then garbage in its stream: the replica drops the link,
// says why in its log, keeps serving, and connects again.
func TestReplicaMasterGarbage(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	conns := make(chan int, 16)
	go fakeMaster(l, func(n int, _ []string, conn net.Conn, br *bufio.Reader) {
		conns <- n
		mark := strings.Repeat("m", 40)
		conn.Write([]byte("+FULLRESYNC " + strings.Repeat("a", 40) + " 0\r\n$EOF:" + mark + "\r\n" + emptyRDB + mark))
		conn.Write([]byte("*1\r\n$4\r\nPING\r\n%garbage\r\n"))
		io.Copy(io.Discard, br) // until the replica hangs up
	})
	s := startServer(t, "pool", 1)
	c := s.client(2)
	_, port, _ := net.SplitHostPort(l.Addr().String())
	mustDo(t, c, "REPLICAOF", "127.0.0.1", port)
	if !s.logShows("protocol error") {
		t.Fatal("no log line for the garbage")
	}
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("the replica stopped serving: %v", err)
	}
	for _, what := range []string{"connect", "connect again"} {
		select {
		case <-conns:
		case <-time.After(10 * time.Second):
			t.Fatalf("the replica did not %s", what)
		}
	}
	if got := infoField(t, c, "master_link_status"); got != "down" {
		t.Fatalf("master_link_status = %q", got)
	}
	if v, err := c.Get(ctx(t), "k").Result(); err != redis.Nil {
		t.Fatalf("GET on the replica: %q %v", v, err)
	}
}

// staleRepliesAsRedis sends the same commands to moond s and to a
// redis-server replica of a dead master with replica-serve-stale-data no:
// the replies must be the same.
func staleRepliesAsRedis(t *testing.T, s *server) {
	t.Helper()
	dead := strconv.Itoa(freePort(t))
	rr := startRedisServer(t, "--dir", t.TempDir(), "--replica-serve-stale-data", "no")
	mustDo(t, rr, "REPLICAOF", "127.0.0.1", dead)
	script := "MULTI\r\nGET k\r\nEXEC\r\nPING\r\nECHO x\r\nGET k\r\nDBSIZE\r\nSET k v\r\nSELECT 1\r\n" +
		"MULTI\r\nSET k v\r\nDISCARD\r\nCONFIG GET replica-serve-stale-data\r\nPUBLISH ch m\r\n"
	const replies = 19 // lines the script's replies take
	read := func(addr string) []string {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Write([]byte(script))
		br := bufio.NewReader(c)
		var out []string
		for range replies {
			l, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: %v after %q", addr, err, out)
			}
			out = append(out, strings.TrimSpace(l))
		}
		return out
	}
	if want, got := read(rr.Options().Addr), read(s.addr()); !slices.Equal(want, got) {
		t.Fatalf("replies while stale:\nmoond %q\nredis %q", got, want)
	}
}

// TestReplicaMasterAuth: a master with requirepass, moond started with
// masterauth and replicaof as flags: the link comes up; with a wrong
// password it stays down and the log says why, until CONFIG SET
// masterauth gives the right one. replica-read-only no lets
// a client write on the replica.
func TestReplicaMasterAuth(t *testing.T) {
	m := startRedisServer(t, "--dir", t.TempDir(), "--repl-diskless-sync-delay", "0")
	mustDo(t, m, "CONFIG", "SET", "requirepass", "s3cret")
	host, port := hostPort(t, m.Options().Addr)
	bad := startServer(t, "pool", 1, "--masterauth", "wrong", "--replicaof", host, port)
	s := startServer(t, "pool", 1, "--masterauth", "s3cret", "--replicaof", host, port)
	r := s.client(2)
	waitLinkUp(t, r)
	if !bad.logShows("unable to AUTH to the master") {
		t.Fatal("no log line for the refused AUTH")
	}
	if got := infoField(t, bad.client(2), "master_link_status"); got != "down" {
		t.Fatalf("with a wrong masterauth master_link_status = %q", got)
	}
	mustDo(t, bad.client(2), "CONFIG", "SET", "masterauth", "s3cret") // taken at the next attempt
	waitLinkUp(t, bad.client(2))
	mustDo(t, r, "CONFIG", "SET", "replica-read-only", "no")
	if got := infoField(t, r, "slave_read_only"); got != "0" {
		t.Fatalf("slave_read_only = %q", got)
	}
	mustDo(t, r, "SET", "local", "write")
}

// TestReplicaInfoAsRedis: moond and redis-server 7.0, replicas of one
// master, print the same INFO replication fields in the same order, and
// the same ROLE.
func TestReplicaInfoAsRedis(t *testing.T) {
	m := startRedisServer(t, "--dir", t.TempDir(), "--repl-diskless-sync-delay", "0")
	host, port := hostPort(t, m.Options().Addr)
	rr := startRedisServer(t, "--dir", t.TempDir(), "--replicaof", host, port)
	s := startServer(t, "pool", 2, "--replicaof", host, port)
	mr := s.client(2)
	waitLinkUp(t, rr)
	waitLinkUp(t, mr)
	names := func(c *redis.Client) []string {
		info, err := c.Info(ctx(t), "replication").Result()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(info), "\r\n") {
			name, _, _ := strings.Cut(l, ":")
			out = append(out, name)
		}
		return out
	}
	if want, got := names(rr), names(mr); !slices.Equal(want, got) {
		t.Fatalf("INFO replication fields:\nmoond %q\nredis %q", got, want)
	}
	role := func(c *redis.Client) string {
		r, err := c.Do(ctx(t), "ROLE").Slice()
		if err != nil || len(r) != 5 {
			t.Fatalf("ROLE: %v %v", r, err)
		}
		return fmt.Sprint(r[:4])
	}
	if want, got := role(rr), role(mr); got != want {
		t.Fatalf("ROLE: moond %s, redis %s", got, want)
	}
}

// TestReplicaAckedWritesSurviveKill9: a write the replica acknowledged
// (WAIT on the master counts it) is in its WAL: after kill -9 and a
// restart without replicaof, the replica has it.
func TestReplicaAckedWritesSurviveKill9(t *testing.T) {
	m := startRedisServer(t, "--dir", t.TempDir(), "--repl-diskless-sync-delay", "0")
	host, port := hostPort(t, m.Options().Addr)
	dir := t.TempDir()
	s := startServerIn(t, dir, "uring", 2, "--replicaof", host, port)
	waitLinkUp(t, s.client(2))
	for i := range 50 {
		m.Set(ctx(t), "acked:"+strconv.Itoa(i), i, 0)
	}
	mustDo(t, m, "MSET", "acked:a", "1", "acked:b", "2")
	if n, err := m.Do(ctx(t), "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d %v", n, err)
	}
	s.kill9()
	s2 := startServerIn(t, dir, "uring", 2)
	if n, err := s2.client(2).Exists(ctx(t), "acked:49", "acked:a", "acked:b").Result(); err != nil || n != 3 {
		t.Fatalf("after kill -9, %d of the 3 acknowledged keys checked are there (%v)", n, err)
	}
}

// TestReplicaSkipsStreams: moond has no streams. A stream in the master's
// snapshot is skipped with a log line and the keys after it load; an XADD
// in the stream fails here with a log line and the writes after it apply.
func TestReplicaSkipsStreams(t *testing.T) {
	m := startRedisServer(t, "--dir", t.TempDir(), "--repl-diskless-sync-delay", "0")
	mustDo(t, m, "XADD", "events", "*", "f", "v")
	mustDo(t, m, "XGROUP", "CREATE", "events", "g", "0")
	mustDo(t, m, "SET", "zzz", "after the stream")
	host, port := hostPort(t, m.Options().Addr)
	s := startServer(t, "pool", 2, "--replicaof", host, port)
	r := s.client(2)
	waitLinkUp(t, r)
	if v, err := r.Get(ctx(t), "zzz").Result(); err != nil || v != "after the stream" {
		t.Fatalf("GET zzz: %q %v", v, err)
	}
	if !s.logShows("a stream in the master's snapshot skipped") {
		t.Fatal("no log line for the skipped stream")
	}
	mustDo(t, m, "XADD", "events", "*", "f", "w")
	mustDo(t, m, "SET", "later", "1")
	deadline := time.Now().Add(10 * time.Second)
	for r.Get(ctx(t), "later").Val() != "1" {
		if time.Now().After(deadline) {
			t.Fatal("the write after an XADD did not arrive")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !s.logShows("a command from the master failed here") {
		t.Fatal("no log line for the failed XADD")
	}
}
