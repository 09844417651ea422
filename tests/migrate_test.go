package tests

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// MIGRATE between moond and redis-server 7.0, both ways: values of every
// type, TTLs, keys of several shards in one MIGRATE, COPY and REPLACE,
// the target's errors, and what a kill -9 after it leaves.

// migrateFixture writes keys of every type into c under prefix and
// returns them.
func migrateFixture(t *testing.T, c *redis.Client, keys ...string) {
	t.Helper()
	cx := ctx(t)
	for i, k := range keys {
		var err error
		switch i % 5 {
		case 0:
			err = c.Set(cx, k, "value-"+k, time.Hour).Err()
		case 1:
			err = c.HSet(cx, k, "f1", "v1", "f2", "v2").Err()
		case 2:
			err = c.RPush(cx, k, "a", "b", "c").Err()
		case 3:
			err = c.SAdd(cx, k, "x", "y", 42).Err()
		case 4:
			err = c.ZAdd(cx, k, redis.Z{Score: 1.5, Member: "m1"}, redis.Z{Score: -2, Member: "m2"}).Err()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// sameKeys fails t unless every key holds the same value, of the same
// type, with about the same TTL in a and b.
func sameKeys(t *testing.T, a, b *redis.Client, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if va, vb := migratedValue(t, a, k), migratedValue(t, b, k); va != vb {
			t.Errorf("%s: %s against %s", k, va, vb)
		}
		ta, tb := a.PTTL(ctx(t), k).Val(), b.PTTL(ctx(t), k).Val()
		if (ta < 0) != (tb < 0) || (ta-tb) > time.Minute || (tb-ta) > time.Minute {
			t.Errorf("%s: TTL %v against %v", k, ta, tb)
		}
	}
}

// migratedValue renders key's type and value in c.
func migratedValue(t *testing.T, c *redis.Client, k string) string {
	t.Helper()
	cx := ctx(t)
	ty := c.Type(cx, k).Val()
	var v any
	switch ty {
	case "string":
		v = c.Get(cx, k).Val()
	case "hash":
		v = c.HGetAll(cx, k).Val()
	case "list":
		v = c.LRange(cx, k, 0, -1).Val()
	case "set":
		m := c.SMembers(cx, k).Val()
		slices.Sort(m)
		v = m
	case "zset":
		v = c.ZRangeWithScores(cx, k, 0, -1).Val()
	}
	return fmt.Sprintf("%s %v", ty, v)
}

func hostPort(t *testing.T, addr string) (string, string) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return h, p
}

// TestMigrateMoondToRedisAndBack moves keys of every type, on every shard,
// from moond to redis-server in one MIGRATE ... KEYS, then back with
// redis-server's MIGRATE, and checks the values on the way.
func TestMigrateMoondToRedisAndBack(t *testing.T) {
	rs := startRedisServer(t)
	s := startServer(t, "uring", 2)
	mc := s.client(2)
	var keys []string
	for i := range 10 {
		keys = append(keys, keyOnShardOf(fmt.Sprintf("mig%d-", i), i%2, 2))
	}
	migrateFixture(t, mc, keys...)
	want := map[string]string{}
	for _, k := range keys {
		want[k] = fmt.Sprint(mc.Do(ctx(t), "TYPE", k).Val())
	}
	// A reference copy to compare against once the keys are moved.
	ref := startRedisServer(t)
	migrateFixture(t, ref, keys...)

	rh, rp := hostPort(t, rs.Options().Addr)
	args := []any{"MIGRATE", rh, rp, "", 3, 5000, "KEYS"}
	for _, k := range keys {
		args = append(args, k)
	}
	if r, err := mc.Do(ctx(t), args...).Result(); err != nil || r != "OK" {
		t.Fatalf("MIGRATE to redis-server: %v %v", r, err)
	}
	if n := mc.Exists(ctx(t), keys...).Val(); n != 0 {
		t.Fatalf("%d keys still in moond after MIGRATE", n)
	}
	rs3 := redis.NewClient(&redis.Options{Addr: rs.Options().Addr, DB: 3, Protocol: 2, DisableIdentity: true})
	defer rs3.Close()
	sameKeys(t, rs3, ref, keys...)
	if v := rs3.HGetAll(ctx(t), keys[1]).Val(); v["f2"] != "v2" {
		t.Errorf("hash after MIGRATE: %v", v)
	}

	// And back: redis-server's MIGRATE into moond, one key at a time.
	mh, mp := hostPort(t, s.addr())
	for _, k := range keys {
		if r, err := rs3.Do(ctx(t), "MIGRATE", mh, mp, k, 0, 5000).Result(); err != nil || r != "OK" {
			t.Fatalf("redis-server MIGRATE %s to moond: %v %v", k, r, err)
		}
	}
	sameKeys(t, mc, ref, keys...)
	for _, k := range keys {
		if got := fmt.Sprint(mc.Do(ctx(t), "TYPE", k).Val()); got != want[k] {
			t.Errorf("%s: type %s after the round trip, want %s", k, got, want[k])
		}
	}
	if v := mc.ZRangeWithScores(ctx(t), keys[4], 0, -1).Val(); len(v) != 2 || v[0].Score != -2 {
		t.Errorf("sorted set after the round trip: %v", v)
	}
}

// TestMigrateOptionsAndErrors: COPY keeps the keys, the target's BUSYKEY
// comes back in Redis's words and keeps the key, REPLACE overwrites,
// NOKEY, a closed port, a wrong password, and the syntax errors, each as
// redis-server answers it.
func TestMigrateOptionsAndErrors(t *testing.T) {
	rs := startRedisServer(t)
	if err := rs.ConfigSet(ctx(t), "requirepass", "sesame").Err(); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "pool", 2)
	mc := s.client(2)
	rc := redis.NewClient(&redis.Options{Addr: rs.Options().Addr, Password: "sesame", Protocol: 2, DisableIdentity: true})
	defer rc.Close()
	rh, rp := hostPort(t, rs.Options().Addr)
	k0, k1 := keyOnShardOf("opt-", 0, 2), keyOnShardOf("opt-", 1, 2)
	mc.Set(ctx(t), k0, "zero", 0)
	mc.Set(ctx(t), k1, "one", 0)

	do := func(args ...any) string {
		r, err := mc.Do(ctx(t), args...).Result()
		if err != nil {
			return err.Error()
		}
		return fmt.Sprint(r)
	}
	if r := do("MIGRATE", rh, rp, "", 0, 5000, "COPY", "AUTH", "sesame", "KEYS", k0, k1); r != "OK" {
		t.Fatalf("MIGRATE COPY: %s", r)
	}
	if mc.Exists(ctx(t), k0, k1).Val() != 2 || rc.Get(ctx(t), k1).Val() != "one" {
		t.Fatal("COPY did not copy and keep both keys")
	}
	mc.Set(ctx(t), k0, "zero-2", 0)
	busy := "ERR Target instance replied with error: BUSYKEY Target key name already exists."
	if r := do("MIGRATE", rh, rp, k0, 0, 5000, "AUTH2", "default", "sesame"); r != busy {
		t.Fatalf("MIGRATE onto an existing key: %q, want %q", r, busy)
	}
	if mc.Get(ctx(t), k0).Val() != "zero-2" {
		t.Fatal("the key the target refused was not kept")
	}
	if r := do("MIGRATE", rh, rp, k0, 0, 5000, "REPLACE", "AUTH", "sesame"); r != "OK" {
		t.Fatalf("MIGRATE REPLACE: %s", r)
	}
	if rc.Get(ctx(t), k0).Val() != "zero-2" || mc.Exists(ctx(t), k0).Val() != 0 {
		t.Fatal("REPLACE did not move the new value")
	}
	if r := do("MIGRATE", rh, rp, k1, 0, 5000, "AUTH", "wrong", "REPLACE"); !strings.HasPrefix(r, "ERR Target instance replied with error: WRONGPASS") {
		t.Fatalf("a wrong password: %q", r)
	}
	if mc.Get(ctx(t), k1).Val() != "one" {
		t.Fatal("a key was deleted although the target refused the password")
	}

	// Replies that need no target compare with redis-server's own.
	closed := freePort(t)
	cases := [][]any{
		{"MIGRATE", rh, rp, "nosuchkey", 0, 5000},
		{"MIGRATE", rh, rp, "", 0, 5000, "KEYS", "nosuch1", "nosuch2"},
		{"MIGRATE", rh, rp, "x", 0, 5000, "KEYS", "a"},
		{"MIGRATE", rh, rp, "x", "db", 5000},
		{"MIGRATE", rh, rp, "x", 0, "1.5"},
		{"MIGRATE", rh, rp, "x", 0, 5000, "BOGUS"},
		{"MIGRATE", rh, rp, "x", 0, 5000, "AUTH"},
		{"MIGRATE", rh, rp, "x", 0, 5000, "AUTH2", "u"},
		{"MIGRATE", rh, rp, "x"},
		{"MIGRATE", "127.0.0.1", closed, k1, 0, 1000},
		{"COMMAND", "GETKEYS", "MIGRATE", rh, rp, "", 0, 5000, "AUTH", "x", "KEYS", "a", "b"},
		{"COMMAND", "GETKEYS", "MIGRATE", rh, rp, "k", 0, 5000, "COPY"},
	}
	rc.Set(ctx(t), k1, "one", 0)
	for _, args := range cases {
		want, got := "", do(args...)
		if r, err := rc.Do(ctx(t), args...).Result(); err != nil {
			want = err.Error()
		} else {
			want = fmt.Sprint(r)
		}
		if got != want {
			t.Errorf("%v: moond %q, redis-server %q", args, got, want)
		}
	}
}

// TestMigrateDeletesSurviveKill9: the keys MIGRATE moved are deleted in
// moond's logs before it answers, so a kill -9 right after does not bring
// them back; a key the target refused stays.
func TestMigrateDeletesSurviveKill9(t *testing.T) {
	rs := startRedisServer(t)
	s := startServer(t, "uring", 2)
	mc := s.client(2)
	rh, rp := hostPort(t, rs.Options().Addr)
	var keys []any
	for i := range 6 {
		k := keyOnShardOf(fmt.Sprintf("k9m%d-", i), i%2, 2)
		mc.Set(ctx(t), k, i, 0)
		keys = append(keys, k)
	}
	rs.Set(ctx(t), keys[5].(string), "there", 0) // the target refuses this one
	r := mc.Do(ctx(t), append([]any{"MIGRATE", rh, rp, "", 0, 5000, "KEYS"}, keys...)...)
	if !strings.Contains(fmt.Sprint(r.Err()), "BUSYKEY") {
		t.Fatalf("MIGRATE: %v, want the target's BUSYKEY", r.Err())
	}
	s.kill9()
	s = startServerIn(t, s.dir, "uring", 2)
	mc = s.client(2)
	for i, k := range keys {
		n := mc.Exists(ctx(t), k.(string)).Val()
		if want := int64(0); i == 5 && n != 1 || i < 5 && n != want {
			t.Errorf("key %d after kill -9: exists %d", i, n)
		}
		if i < 5 && rs.Get(ctx(t), k.(string)).Val() != fmt.Sprint(i) {
			t.Errorf("key %d is not on the target", i)
		}
	}
}

// TestMigrateRefusedInMulti: moond runs a queued server command when EXEC
// plans the transaction, before the commands queued ahead of it, so
// MIGRATE, which Redis runs in order inside EXEC, is refused when queued
// (a difference on purpose, rather than a reordering).
func TestMigrateRefusedInMulti(t *testing.T) {
	s := startServer(t, "uring", 2)
	c := s.raw()
	c.send("MULTI\r\nMIGRATE 127.0.0.1 1 k 0 10\r\nEXEC\r\n")
	for _, want := range []string{"+OK", "-ERR Command not allowed inside a transaction",
		"-EXECABORT Transaction discarded because of previous errors."} {
		if got := c.line(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}
