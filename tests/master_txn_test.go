package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A txn over several shards of a moond master reaches a redis-server
// replica as one MULTI/EXEC: a reader of the replica never sees part of
// one (docs/DESIGN.md §3, "Order and transactions").

// replicaInvariants are what the master's txns keep true at every point,
// read on the replica in one MULTI/EXEC (atomic on a redis-server).
type replicaInvariants struct {
	counters []string // MULTI/EXEC transfers: the sum is constant
	pair     []string // MSET of one value, or DEL of all
	tokens   []string // RENAME back and forth: exactly one exists
	sets     []string // SMOVE back and forth: the members' count is constant
	swapped  []string // in dbs 1 and 2, SWAPDB 1 2: db 1's are all alike
}

// check reads the replica once and says what is wrong, "" when nothing.
func (v *replicaInvariants) check(cx context.Context, r, r1 *redis.Client, total int64, members int64) string {
	var mget *redis.SliceCmd
	var pair *redis.SliceCmd
	var exists *redis.IntCmd
	cards := make([]*redis.IntCmd, len(v.sets))
	if _, err := r.TxPipelined(cx, func(p redis.Pipeliner) error {
		mget = p.MGet(cx, v.counters...)
		pair = p.MGet(cx, v.pair...)
		exists = p.Exists(cx, v.tokens...)
		for i, s := range v.sets {
			cards[i] = p.SCard(cx, s)
		}
		return nil
	}); err != nil {
		return "read: " + err.Error()
	}
	sum := int64(0)
	for _, x := range mget.Val() {
		n, _ := strconv.ParseInt(fmt.Sprint(x), 10, 64)
		sum += n
	}
	if sum != total {
		return fmt.Sprintf("the counters sum to %d, not %d: %v", sum, total, mget.Val())
	}
	if !allAlike(pair.Val()) {
		return fmt.Sprintf("an MSET or DEL seen in part: %v", pair.Val())
	}
	if exists.Val() != 1 {
		return fmt.Sprintf("%d of the RENAMEd tokens exist", exists.Val())
	}
	n := int64(0)
	for _, c := range cards {
		n += c.Val()
	}
	if n != members {
		return fmt.Sprintf("the sets hold %d members, not %d", n, members)
	}
	if vals, err := r1.MGet(cx, v.swapped...).Result(); err != nil || !allAlike(vals) {
		return fmt.Sprintf("db 1 after SWAPDB: %v %v", vals, err)
	}
	return ""
}

// allAlike reports whether every value of vals is the same (nil counts).
func allAlike(vals []any) bool {
	for _, x := range vals {
		if x != vals[0] {
			return false
		}
	}
	return true
}

// TestMasterTxnAtomicOnRedisReplica: a redis-server replica of a 4-shard
// master while writers run MULTI/EXEC transfers between counters on
// different shards, MSET and DEL over every shard, RENAME and SMOVE
// between shards and SWAPDB; a reader polling the replica never sees a
// state the master's txns do not allow, and the replica ends equal.
func TestMasterTxnAtomicOnRedisReplica(t *testing.T) {
	const shards, perShard, start, members = 4, 2, 1000, 10
	s := startServer(t, "uring", shards)
	maddr := s.addr()
	var v replicaInvariants
	for i := range shards * perShard {
		v.counters = append(v.counters, keyOnShardOf(fmt.Sprintf("acct%d-", i), i%shards, shards))
	}
	for i := range shards {
		v.pair = append(v.pair, keyOnShardOf(fmt.Sprintf("pair%d-", i), i, shards))
		v.swapped = append(v.swapped, keyOnShardOf(fmt.Sprintf("sw%d-", i), i, shards))
	}
	v.tokens = []string{keyOnShardOf("tokA", 0, shards), keyOnShardOf("tokB", 3, shards)}
	v.sets = []string{keyOnShardOf("setA", 1, shards), keyOnShardOf("setB", 2, shards)}

	m := redis.NewClient(&redis.Options{Addr: maddr, Protocol: 2, DisableIdentity: true, PoolSize: 8})
	t.Cleanup(func() { m.Close() })
	cx := ctx(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range v.counters {
		must(m.Set(cx, k, start, 0).Err())
	}
	must(m.Set(cx, v.tokens[0], "token", 0).Err())
	for i := range members {
		must(m.SAdd(cx, v.sets[0], "m"+strconv.Itoa(i)).Err())
	}
	for db, val := range map[int]string{1: "one", 2: "two"} {
		c := onDB(t, maddr, db)
		for _, k := range v.swapped {
			must(c.Set(cx, k, val, 0).Err())
		}
	}

	host, port := hostPort(t, maddr)
	r := startRedisServer(t, "--replicaof", host, port)
	waitLinkUp(t, r)
	r1 := onDB(t, r.Options().Addr, 1)
	total := int64(len(v.counters) * start)

	var wg sync.WaitGroup
	stop := make(chan struct{}) // closed when the reader saw a wrong state
	writer := func(name string, n int, op func(i int, rng *rand.Rand) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(len(name)), 7))
			for i := range n {
				select {
				case <-stop:
					return
				default:
				}
				if err := op(i, rng); err != nil {
					t.Errorf("%s %d: %v", name, i, err)
					return
				}
			}
		}()
	}
	for w := range 3 {
		writer(fmt.Sprintf("transfer%d", w), 400, func(_ int, rng *rand.Rand) error {
			perm := rng.Perm(len(v.counters))
			amount := 1 + rng.Int64N(20)
			_, err := m.TxPipelined(cx, func(p redis.Pipeliner) error {
				p.DecrBy(cx, v.counters[perm[0]], 2*amount)
				p.IncrBy(cx, v.counters[perm[1]], amount)
				p.IncrBy(cx, v.counters[perm[2]], amount)
				return nil
			})
			return err
		})
	}
	writer("mset", 400, func(i int, _ *rand.Rand) error {
		if i%5 == 4 {
			return m.Del(cx, v.pair...).Err()
		}
		var kv []any
		for _, k := range v.pair {
			kv = append(kv, k, i)
		}
		return m.MSet(cx, kv...).Err()
	})
	writer("move", 400, func(i int, _ *rand.Rand) error {
		from, to := v.tokens[i%2], v.tokens[1-i%2]
		if err := m.Rename(cx, from, to).Err(); err != nil {
			return err
		}
		mem := "m" + strconv.Itoa(i%members)
		src := (i / members) % 2 // each member moves over, then back
		if moved, err := m.SMove(cx, v.sets[src], v.sets[1-src], mem).Result(); err != nil || !moved {
			return fmt.Errorf("SMOVE %s: %v %v", mem, moved, err)
		}
		if i%20 == 0 {
			return m.Do(cx, "SWAPDB", 1, 2).Err()
		}
		return nil
	})
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	reads, bad := 0, ""
	for bad == "" {
		select {
		case <-done:
		default:
			if bad = v.check(cx, r, r1, total, members); bad == "" {
				reads++
			}
			continue
		}
		break
	}
	close(stop)
	<-done
	if bad != "" {
		t.Fatalf("after %d reads of the replica: %s", reads, bad)
	}
	if t.Failed() {
		return
	}
	waitEqual(t, maddr, r.Options().Addr)
	waitOffsets(t, s.client(2), r, "slave_repl_offset")
	if bad := v.check(cx, r, r1, total, members); bad != "" {
		t.Fatal(bad)
	}
	t.Logf("%d reads of the replica", reads)
}

// TestMasterStreamCrossShardTxn reads a 4-shard master's stream as a
// replica does: an MSET over every shard is one MULTI/EXEC, FLUSHALL and
// SWAPDB (logged by every shard) come once, and an EXEC that flushes
// between writes on two shards keeps the flush between them, also when
// the later write's shard had no keys to flush.
func TestMasterStreamCrossShardTxn(t *testing.T) {
	const shards = 4
	s := startServer(t, "uring", shards)
	m := s.client(2)
	k := make([]string, shards)
	for i := range k {
		k[i] = keyOnShardOf(fmt.Sprintf("k%d-", i), i, shards)
	}
	br := rawReplica(t, s.addr(), 20*time.Second)
	waitOnline(t, m)
	do := func(args ...any) {
		t.Helper()
		if err := m.Do(ctx(t), args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	exec := func(cmds ...[]any) {
		t.Helper()
		if _, err := m.TxPipelined(ctx(t), func(p redis.Pipeliner) error {
			for _, c := range cmds {
				p.Do(ctx(t), c...)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	do("MSET", k[0], 1, k[1], 1, k[2], 1, k[3], 1)
	do("FLUSHALL")
	do("SWAPDB", 0, 1)
	do("SET", k[1], "x")
	// Shard 1 logs SET and the flush, shard 0 (no keys) only its SET,
	// which must come after the flush.
	exec([]any{"SET", k[1], "before"}, []any{"FLUSHALL"}, []any{"SET", k[0], "after"})
	do("SET", "end", 1)
	want := []string{
		"MULTI", "MSET " + k[0], "MSET " + k[1], "MSET " + k[2], "MSET " + k[3], "EXEC",
		"FLUSHALL", "SWAPDB 0", "SET " + k[1],
		"MULTI", "SET " + k[1], "FLUSHALL", "SET " + k[0], "EXEC", "SET end",
	}
	var got []string
	for len(got) < len(want) {
		args := readStreamCommand(t, br)
		if name := strings.ToUpper(args[0]); name == "SELECT" || name == "PING" {
			continue
		}
		got = append(got, strings.Join(args[:min(len(args), 2)], " "))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("stream:\n%q\nwant\n%q", got, want)
	}
}
