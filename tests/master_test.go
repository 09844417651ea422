package tests

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// moond as a replication master: a real redis-server 7.0 replica, and a
// moond replica, get a full copy of the data, then follow its writes.

// masterWrites runs writes of every kind on a moond master, among them
// commands over several shards (MSET, a MULTI/EXEC, RENAME and SMOVE,
// which moond journals as MOOND.APPLY), SELECT and FLUSHDB.
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

// TestMasterRedisReplica: a moond master (2 and 4 shards) with keys of
// every type, TTLs and several dbs; a redis-server 7.0 started with
// --replicaof gets a full copy, then follows a workload; INFO's slave0
// and ROLE show it online at the master's offset.
func TestMasterRedisReplica(t *testing.T) {
	for _, shards := range []int{2, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			s := startServer(t, "uring", shards)
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
