package tests

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// moond as a replication master: a real redis-server 7.0 replica, and a
// moond replica, get a full copy of the data, then follow its writes.

// masterWrites runs writes of every kind on a moond master, among them
// commands over several shards (MSET, a MULTI/EXEC, RENAME and SMOVE,
// which moond journals as MOOND.APPLY), SELECT, FLUSHDB and SWAPDB.
func masterWrites(t *testing.T, maddr string) {
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
	pairs := []any{}
	for i := range 20 {
		pairs = append(pairs, "mset:"+strconv.Itoa(i), i)
	}
	must(c0.MSet(ctx(t), pairs...).Err())
	_, err := c0.TxPipelined(ctx(t), func(p redis.Pipeliner) error {
		for i := range 8 {
			p.Set(ctx(t), "tx:a"+strconv.Itoa(i), i, 0)
		}
		p.Incr(ctx(t), "tx:b")
		p.RPush(ctx(t), "tx:c", "x", "y")
		return nil
	})
	must(err)
	must(c0.Rename(ctx(t), "db0:list", "db0:renamed").Err())
	must(c0.SMove(ctx(t), "db0:intset", "db0:moved", 100000).Err())
	must(c0.Do(ctx(t), "COPY", "db0:hash", "db0:hashcopy").Err())
	must(c5.Set(ctx(t), "db5:new", "in db 5", 0).Err())
	must(c5.SAdd(ctx(t), "db5:set", "z").Err())
	c1 := onDB(t, maddr, 1)
	must(c1.Set(ctx(t), "db1:only", "x", 0).Err())
	must(c1.Set(ctx(t), "db1:other", "y", 0).Err())
	must(c1.FlushDB(ctx(t)).Err())
	must(c1.Set(ctx(t), "db1:after", "z", 0).Err())
	// Every shard logs SWAPDB; the replica must swap once.
	must(c1.Do(ctx(t), "SWAPDB", 1, 5).Err())
}

// waitOffsets waits (30 s at most) until the replica's offset equals the
// master's master_repl_offset and the master's slave0 line shows it.
func waitOffsets(t *testing.T, m, r *redis.Client, replicaField string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		want := infoField(t, m, "master_repl_offset")
		got := infoField(t, r, replicaField)
		slave0 := infoField(t, m, "slave0")
		if got == want && strings.Contains(slave0, "state=online,offset="+want+",") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica offset %s, master's %s, master sees %s", got, want, slave0)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMasterRedisReplica: a moond master (2 and 4 shards; the pool
// backend, which hands the replica's socket over as io_uring does, too) with keys of
// every type, TTLs and several dbs (and one without a WAL, whose stream
// flows all the same); a redis-server 7.0 started with
// --replicaof gets a full copy, then follows a workload; INFO's slave0
// and ROLE show it online at the master's offset.
func TestMasterRedisReplica(t *testing.T) {
	for _, c := range []struct {
		backend string
		shards  int
		aof     string
	}{{"uring", 2, "yes"}, {"uring", 4, "yes"}, {"uring", 2, "no"}, {"pool", 2, "yes"}} {
		t.Run(fmt.Sprintf("%s,shards=%d,appendonly=%s", c.backend, c.shards, c.aof), func(t *testing.T) {
			s := startServer(t, c.backend, c.shards, "--appendonly", c.aof)
			maddr := s.addr()
			fillMaster(t, maddr)
			host, port := hostPort(t, maddr)
			r := startRedisServer(t, "--replicaof", host, port)
			raddr := r.Options().Addr
			waitLinkUp(t, r)
			waitEqual(t, maddr, raddr)

			masterWrites(t, maddr)
			waitEqual(t, maddr, raddr)
			m := s.client(2)
			waitOffsets(t, m, r, "slave_repl_offset")

			role, err := m.Do(ctx(t), "ROLE").Slice()
			if err != nil || len(role) != 3 || role[0] != "master" {
				t.Fatalf("ROLE = %v %v", role, err)
			}
			rs, _ := role[2].([]any)
			_, rport := hostPort(t, raddr)
			if len(rs) != 1 || fmt.Sprint(rs[0]) != fmt.Sprintf("[127.0.0.1 %s %v]", rport, role[1]) {
				t.Fatalf("ROLE's replicas = %v (master offset %v)", rs, role[1])
			}
		})
	}
}

// TestMasterMoondReplica: a moond replica (4 shards) of a moond master (2
// shards) gets the full copy, follows the writes, and WAIT on the master
// counts it once its WAL holds them.
func TestMasterMoondReplica(t *testing.T) {
	ms := startServer(t, "uring", 2)
	maddr := ms.addr()
	fillMaster(t, maddr)
	rs := startServer(t, "uring", 4)
	r := rs.client(2)
	host, port := hostPort(t, maddr)
	if err := r.Do(ctx(t), "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitLinkUp(t, r)
	waitEqual(t, maddr, rs.addr())
	masterWrites(t, maddr)
	m := ms.client(2)
	if n, err := m.Do(ctx(t), "WAIT", 1, 10000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 on the master: %d %v", n, err)
	}
	waitEqual(t, maddr, rs.addr())
	waitOffsets(t, m, r, "slave_repl_offset")
	if n, err := m.Do(ctx(t), "WAIT", 2, 100).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 2 with one replica: %d %v", n, err)
	}
	if err := r.Do(ctx(t), "WAIT", 1, 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "ERR WAIT cannot be used with replica instances.") {
		t.Fatalf("WAIT on the replica: %v", err)
	}
}

// killRedis kills a redis-server with SIGKILL (its process_id from INFO).
func killRedis(t *testing.T, c *redis.Client) {
	t.Helper()
	if err := syscall.Kill(redisPID(t, c), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// waitField waits (30 s at most) until INFO's field equals want.
func waitField(t *testing.T, c *redis.Client, field, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for infoField(t, c, field) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s is %q, not %q, after 30s", field, infoField(t, c, field), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitOnline waits (30 s at most) until the master's slave0 is online.
func waitOnline(t *testing.T, m *redis.Client) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		// slave0 shows up only once the replica's PSYNC was heard.
		v, _, _ := infoLookup(t, m, "slave0")
		if strings.Contains(v, "state=online") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("slave0 not online after 30s: %q", v)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMasterReplicaKill9AndReconnect: while a client writes, a
// redis-server replica is killed with SIGKILL (the master drops it), a
// new one syncs, drops its link and connects again (a full sync again),
// and ends equal to the master.
func TestMasterReplicaKill9AndReconnect(t *testing.T) {
	s := startServer(t, "uring", 2)
	maddr := s.addr()
	fillMaster(t, maddr)
	m := s.client(2)
	host, port := hostPort(t, maddr)
	stop := make(chan struct{})
	werr := make(chan error, 1)
	go func() { werr <- writeUntil(context.Background(), s.client(2), stop) }()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
	}()

	a := startRedisServer(t, "--replicaof", host, port)
	waitLinkUp(t, a)
	killRedis(t, a)
	waitField(t, m, "connected_slaves", "0")

	b := startRedisServer(t, "--replicaof", host, port)
	waitLinkUp(t, b)
	if err := b.Do(ctx(t), "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	waitField(t, m, "connected_slaves", "0")
	if err := b.Do(ctx(t), "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitLinkUp(t, b)
	close(stop)
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	waitEqual(t, maddr, b.Options().Addr)
	waitOffsets(t, m, b, "slave_repl_offset")
	if !s.logShows("replica disconnected") {
		t.Fatal("the master did not log the killed replica's disconnection")
	}
}

// TestMasterInfoAsRedis: INFO replication's field names and ROLE's shape
// on a moond master with one replica equal a redis-server master's.
func TestMasterInfoAsRedis(t *testing.T) {
	rm := startRedisServer(t, "--repl-diskless-sync-delay", "0")
	rhost, rport := hostPort(t, rm.Options().Addr)
	rr := startRedisServer(t, "--replicaof", rhost, rport)
	s := startServer(t, "uring", 2)
	mm := s.client(2)
	mhost, mport := hostPort(t, s.addr())
	mr := startRedisServer(t, "--replicaof", mhost, mport)
	waitLinkUp(t, rr)
	waitLinkUp(t, mr)
	waitOnline(t, rm)
	waitOnline(t, mm)
	names := func(c *redis.Client) []string {
		info, err := c.Info(ctx(t), "replication").Result()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(info), "\r\n") {
			name, v, _ := strings.Cut(l, ":")
			if name == "slave0" {
				// ip=,port=,state=,offset=,lag=: the names of its parts.
				for _, kv := range strings.Split(v, ",") {
					k, _, _ := strings.Cut(kv, "=")
					name += " " + k
				}
			}
			out = append(out, name)
		}
		return out
	}
	if want, got := names(rm), names(mm); !slices.Equal(want, got) {
		t.Fatalf("INFO replication fields:\nmoond %q\nredis %q", got, want)
	}
	shape := func(c *redis.Client) string {
		r, err := c.Do(ctx(t), "ROLE").Slice()
		if err != nil || len(r) != 3 {
			t.Fatalf("ROLE: %v %v", r, err)
		}
		rs := r[2].([]any)
		if len(rs) != 1 {
			t.Fatalf("ROLE's replicas: %v", rs)
		}
		return fmt.Sprintf("%v %T %d %T", r[0], r[1], len(rs[0].([]any)), rs[0].([]any)[1])
	}
	if want, got := shape(rm), shape(mm); got != want {
		t.Fatalf("ROLE: moond %s, redis %s", got, want)
	}
}

// TestMasterReplconfAndGarbage: REPLCONF's errors are Redis's; SYNC gets
// the snapshot without +FULLRESYNC (an RDB 10 file, "$<len>" form); a
// replica that then sends garbage is disconnected, with a log line, and
// the master goes on.
func TestMasterReplconfAndGarbage(t *testing.T) {
	s := startServer(t, "uring", 2)
	m := s.client(2)
	if err := m.Set(ctx(t), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{"REPLCONF", "listening-port"}, "ERR wrong number of arguments for 'replconf' command"},
		{[]any{"REPLCONF", "nosuch", "1"}, "ERR Unrecognized REPLCONF option: nosuch"},
		{[]any{"REPLCONF", "listening-port", "x"}, "ERR value is not an integer or out of range"},
	} {
		if err := m.Do(ctx(t), c.args...).Err(); err == nil || err.Error() != c.want {
			t.Fatalf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	if v, err := m.Do(ctx(t), "REPLCONF", "listening-port", "6380", "capa", "eof").Text(); err != nil || v != "OK" {
		t.Fatalf("REPLCONF: %q %v", v, err)
	}

	conn, err := net.Dial("tcp", s.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	if _, err := conn.Write([]byte("SYNC\r\n")); err != nil {
		t.Fatal(err)
	}
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "$") {
		t.Fatalf("SYNC's first line: %q %v", line, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	file := make([]byte, n)
	if _, err := io.ReadFull(br, file); err != nil || !strings.HasPrefix(string(file), "REDIS0010") || file[n-9] != 0xff {
		t.Fatalf("SYNC's file: %q... %v", file[:min(n, 9)], err)
	}
	waitOnline(t, m)
	if _, err := conn.Write([]byte("*1\r\n$99999999999\r\n")); err != nil {
		t.Fatal(err)
	}
	waitField(t, m, "connected_slaves", "0")
	if !s.logShows("replica disconnected") {
		t.Fatal("no log line for the replica that sent garbage")
	}
	if v, err := m.Get(ctx(t), "k").Result(); err != nil || v != "v" {
		t.Fatalf("the master after the replica went: %q %v", v, err)
	}
}

// TestMasterPartialResync: with replica A attached (the backlog is fed),
// replica B drops its link (CLIENT KILL TYPE master on B) while the
// master writes: B comes back with PSYNC <replid> <offset>, the master
// answers +CONTINUE, and B gets the writes from the backlog. Neither
// replica is ever dropped by the master (a loading replica's newlines
// are no protocol error).
func TestMasterPartialResync(t *testing.T) {
	s := startServer(t, "uring", 2)
	maddr := s.addr()
	fillMaster(t, maddr)
	m := s.client(2)
	host, port := hostPort(t, maddr)
	a := startRedisServer(t, "--replicaof", host, port)
	b := startRedisServer(t, "--replicaof", host, port)
	waitLinkUp(t, a)
	waitLinkUp(t, b)
	if err := b.Do(ctx(t), "CLIENT", "KILL", "TYPE", "master").Err(); err != nil {
		t.Fatal(err)
	}
	masterWrites(t, maddr)
	waitField(t, m, "sync_partial_ok", "1")
	waitLinkUp(t, b)
	waitEqual(t, maddr, b.Options().Addr)
	if !s.logShows("partial resynchronization request accepted") {
		t.Fatal("the replica's return was not a partial resync")
	}
	if full := infoField(t, m, "sync_full"); full != "2" {
		t.Fatalf("sync_full %s, want 2 (the first syncs only)", full)
	}
	if strings.Contains(s.log.String(), "protocol error") {
		t.Fatal("the master dropped a replica for a protocol error")
	}
	waitOffsets(t, m, b, "slave_repl_offset")
}

// readStreamCommand reads one command of a master's stream, its bulk
// strings read by their length (values may hold newlines).
func readStreamCommand(t *testing.T, br *bufio.Reader) []string {
	t.Helper()
	line, err := br.ReadString('\n')
	if err != nil || len(line) < 3 || line[0] != '*' {
		t.Fatalf("stream: %q %v", line, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	args := make([]string, n)
	for i := range args {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		size, _ := strconv.Atoi(strings.TrimSpace(l[1:]))
		b := make([]byte, size+2)
		if _, err := io.ReadFull(br, b); err != nil {
			t.Fatal(err)
		}
		args[i] = string(b[:size])
	}
	return args
}

// rawReplica connects to the master at addr as a replica that sends PSYNC
// ? -1 and skips the snapshot: what it reads next is the stream. The
// connection's deadline is d from now; it closes with the test.
func rawReplica(t *testing.T, addr string, d time.Duration) *bufio.Reader {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(d))
	br := bufio.NewReader(conn)
	conn.Write([]byte("PSYNC ? -1\r\n"))
	for _, prefix := range []string{"+FULLRESYNC ", "$"} {
		line, err := br.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, prefix) {
			t.Fatalf("%q, want %s...: %v", line, prefix, err)
		}
		if prefix == "$" {
			n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
			io.CopyN(io.Discard, br, int64(n))
		}
	}
	return br
}

// TestMasterStreamForm reads the stream as a replica does: an EXEC on one
// shard arrives as MULTI ... EXEC, RENAME (MOOND.APPLY in moond's journal)
// as DEL and RESTORE ... REPLACE ABSTTL, an INCR as the SET of its result,
// and no MOOND.* record reaches the replica.
func TestMasterStreamForm(t *testing.T) {
	s := startServer(t, "uring", 1)
	m := s.client(2)
	br := rawReplica(t, s.addr(), 10*time.Second)
	waitOnline(t, m)
	if _, err := m.TxPipelined(ctx(t), func(p redis.Pipeliner) error {
		p.Set(ctx(t), "a", "1", 0)
		p.Incr(ctx(t), "a")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := m.Rename(ctx(t), "a", "b").Err(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 6 {
		args := readStreamCommand(t, br)
		if strings.HasPrefix(strings.ToUpper(args[0]), "MOOND.") {
			t.Fatalf("a moond record reached the replica: %q", args)
		}
		got = append(got, strings.Join(args[:min(len(args), 3)], " "))
		if args[0] == "RESTORE" && strings.Join(args[4:], " ") != "REPLACE ABSTTL" {
			t.Fatalf("RESTORE's options: %q", args[4:])
		}
	}
	want := []string{"SELECT 0", "MULTI", "SET a 1", "SET a 2", "EXEC", "MULTI"}
	if !slices.Equal(got, want) {
		t.Fatalf("stream = %q, want %q", got, want)
	}
	var rest []string
	for range 3 {
		args := readStreamCommand(t, br)
		rest = append(rest, strings.Join(args[:min(len(args), 2)], " "))
	}
	if want := []string{"DEL a", "RESTORE b", "EXEC"}; !slices.Equal(rest, want) {
		t.Fatalf("RENAME's stream = %q, want %q", rest, want)
	}
}

// TestMasterSyncOnDisconnectedReplica: a replica whose link is down
// refuses SYNC and PSYNC with Redis's NOMASTERLINK error.
func TestMasterSyncOnDisconnectedReplica(t *testing.T) {
	s := startServer(t, "uring", 1)
	c := s.client(2)
	if err := c.Do(ctx(t), "REPLICAOF", "127.0.0.1", freePort(t)).Err(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]any{{"PSYNC", "?", "-1"}, {"SYNC"}} {
		want := "NOMASTERLINK Can't SYNC while not connected with my master"
		if err := c.Do(ctx(t), args...).Err(); err == nil || err.Error() != want {
			t.Fatalf("%v: %v, want %q", args, err, want)
		}
	}
}

// TestMasterSlowReplicaKeepsUp: a replica that reads nothing while the
// master writes four times the backlog's size is not dropped: its output
// buffer holds the stream, and it gets every write once it reads.
func TestMasterSlowReplicaKeepsUp(t *testing.T) {
	s := startServer(t, "uring", 2)
	m := s.client(2)
	conn, err := net.Dial("tcp", s.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("PSYNC ? -1\r\n"))
	waitOnline(t, m)
	val := strings.Repeat("v", 100<<10)
	const writes = 40
	for i := range writes {
		if err := m.Set(ctx(t), "big:"+strconv.Itoa(i), val, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(conn)
	for _, prefix := range []string{"+FULLRESYNC ", "$"} {
		line, err := br.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, prefix) {
			t.Fatalf("%q, want %s...: %v", line, prefix, err)
		}
		if prefix == "$" {
			n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
			io.CopyN(io.Discard, br, int64(n))
		}
	}
	sets := 0
	for sets < writes {
		args := readStreamCommand(t, br)
		if args[0] == "SET" {
			if args[1] != "big:"+strconv.Itoa(sets) && !strings.HasPrefix(args[1], "big:") || len(args[2]) != len(val) {
				t.Fatalf("stream command %q", args[:2])
			}
			sets++
		}
	}
	if got := infoField(t, m, "connected_slaves"); got != "1" || strings.Contains(s.log.String(), "replica disconnected") {
		t.Fatalf("connected_slaves %s after the slow replica read up", got)
	}
}
