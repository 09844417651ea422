package tests

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestHashCommands runs every hash command through go-redis, in RESP2 and
// RESP3, on both backends with 1 and 2 shards.
func TestHashCommands(t *testing.T) {
	eachServer(t, func(t *testing.T, s *server) {
		for _, proto := range []int{2, 3} {
			c := s.client(proto)
			ctx := ctx(t)
			p := "p" + strconv.Itoa(proto) + ":"
			h, big := p+"h", p+"big"
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			if n, err := c.HSet(ctx, h, "a", "1", "b", "2").Result(); err != nil || n != 2 {
				t.Fatalf("HSET = %d, %v", n, err)
			}
			if ok, err := c.HSetNX(ctx, h, "a", "x").Result(); err != nil || ok {
				t.Fatalf("HSETNX of an existing field = %v, %v", ok, err)
			}
			if ok, err := c.HSetNX(ctx, h, "c", "3").Result(); err != nil || !ok {
				t.Fatalf("HSETNX of a new field = %v, %v", ok, err)
			}
			must(c.HMSet(ctx, h, "d", "4", "e", "").Err())
			if v, err := c.HGet(ctx, h, "a").Result(); err != nil || v != "1" {
				t.Fatalf("HGET = %q, %v", v, err)
			}
			if _, err := c.HGet(ctx, h, "nofield").Result(); err != redis.Nil {
				t.Fatalf("HGET of a missing field: %v", err)
			}
			if v, err := c.HMGet(ctx, h, "a", "zz", "d").Result(); err != nil || fmt.Sprint(v) != "[1 <nil> 4]" {
				t.Fatalf("HMGET = %v, %v", v, err)
			}
			if n, _ := c.HLen(ctx, h).Result(); n != 5 {
				t.Fatalf("HLEN = %d", n)
			}
			if n, _ := c.HStrLen(ctx, h, "d").Result(); n != 1 {
				t.Fatalf("HSTRLEN = %d", n)
			}
			if ok, _ := c.HExists(ctx, h, "e").Result(); !ok {
				t.Fatal("HEXISTS of a field with an empty value = false")
			}
			if k, _ := c.HKeys(ctx, h).Result(); !slices.Equal(k, []string{"a", "b", "c", "d", "e"}) {
				t.Fatalf("HKEYS = %q (a listpack keeps insertion order)", k)
			}
			if v, _ := c.HVals(ctx, h).Result(); !slices.Equal(v, []string{"1", "2", "3", "4", ""}) {
				t.Fatalf("HVALS = %q", v)
			}
			want := map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": ""}
			if m, err := c.HGetAll(ctx, h).Result(); err != nil || !maps.Equal(m, want) {
				t.Fatalf("HGETALL = %v, %v", m, err)
			}
			if n, err := c.HIncrBy(ctx, h, "a", 41).Result(); err != nil || n != 42 {
				t.Fatalf("HINCRBY = %d, %v", n, err)
			}
			if f, err := c.HIncrByFloat(ctx, h, "f", 1.5).Result(); err != nil || f != 1.5 {
				t.Fatalf("HINCRBYFLOAT = %v, %v", f, err)
			}
			if err := c.HIncrBy(ctx, h, "f", 1).Err(); err == nil || err.Error() != "ERR hash value is not an integer" {
				t.Fatalf("HINCRBY of a float: %v", err)
			}
			if f, err := c.HRandField(ctx, h, -10).Result(); err != nil || len(f) != 10 {
				t.Fatalf("HRANDFIELD -10 = %q, %v", f, err)
			}
			if f, err := c.HRandField(ctx, h, 3).Result(); err != nil || len(slices.Compact(slices.Sorted(slices.Values(f)))) != 3 {
				t.Fatalf("HRANDFIELD 3 = %q, %v", f, err)
			}
			kv, err := c.HRandFieldWithValues(ctx, h, 2).Result()
			if err != nil || len(kv) != 2 {
				t.Fatalf("HRANDFIELD 2 WITHVALUES = %v, %v", kv, err)
			}
			for _, e := range kv {
				if v, _ := c.HGet(ctx, h, e.Key).Result(); v != e.Value {
					t.Fatalf("HRANDFIELD WITHVALUES paired %s with %q, HGET says %q", e.Key, e.Value, v)
				}
			}
			if n, err := c.HDel(ctx, h, "b", "nofield", "c").Result(); err != nil || n != 2 {
				t.Fatalf("HDEL = %d, %v", n, err)
			}

			// a hashtable, walked with HSCAN
			args := make([]any, 0, 600)
			for i := range 300 {
				args = append(args, "f"+strconv.Itoa(i), strconv.Itoa(i))
			}
			must(c.HSet(ctx, big, args...).Err())
			// OBJECT runs on the connection's shard whatever its key (the
			// server routes containers by their own key positions, none),
			// so its answer is checked where there is one shard only.
			oneShard := strings.HasSuffix(t.Name(), "shards=1")
			if enc, err := c.ObjectEncoding(ctx, big).Result(); oneShard && enc != "hashtable" {
				t.Fatalf("OBJECT ENCODING of 300 fields = %q, %v", enc, err)
			}
			if enc, _ := c.ObjectEncoding(ctx, h).Result(); oneShard && enc != "listpack" {
				t.Fatalf("OBJECT ENCODING of a small hash = %q", enc)
			}
			if oneShard {
				// CONFIG SET reaches the limits: a third field converts.
				conv := p + "conv"
				must(c.ConfigSet(ctx, "hash-max-ziplist-entries", "2").Err())
				must(c.HSet(ctx, conv, "a", "1", "b", "2").Err())
				enc1, _ := c.ObjectEncoding(ctx, conv).Result()
				must(c.HSet(ctx, conv, "c", "3").Err())
				enc2, _ := c.ObjectEncoding(ctx, conv).Result()
				must(c.ConfigSet(ctx, "hash-max-listpack-entries", "128").Err())
				if enc1 != "listpack" || enc2 != "hashtable" {
					t.Fatalf("under hash-max-ziplist-entries 2: %s with 2 fields, %s with 3", enc1, enc2)
				}
			}
			seen := map[string]string{}
			var cursor uint64
			for {
				kvs, next, err := c.HScan(ctx, big, cursor, "f1*", 20).Result()
				must(err)
				for i := 0; i+1 < len(kvs); i += 2 {
					seen[kvs[i]] = kvs[i+1]
				}
				if cursor = next; cursor == 0 {
					break
				}
			}
			if len(seen) != 111 || seen["f123"] != "123" {
				t.Fatalf("HSCAN MATCH f1* found %d fields", len(seen))
			}
			if typ, _ := c.Type(ctx, big).Result(); typ != "hash" {
				t.Fatalf("TYPE = %q", typ)
			}
			if err := c.Get(ctx, big).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
				t.Fatalf("GET of a hash: %v", err)
			}
			must(c.Set(ctx, p+"str", "x", 0).Err())
			if err := c.HGet(ctx, p+"str", "a").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
				t.Fatalf("HGET of a string: %v", err)
			}
			if n, _ := c.HDel(ctx, big, "nofield").Result(); n != 0 {
				t.Fatalf("HDEL of a missing field = %d", n)
			}
			must(c.Expire(ctx, big, time.Hour).Err())
			if ttl, _ := c.TTL(ctx, big).Result(); ttl <= 0 {
				t.Fatalf("TTL of a hash = %v", ttl)
			}
			if n, _ := c.Del(ctx, big, h).Result(); n != 2 {
				t.Fatalf("DEL = %d", n)
			}
		}
	})
}

// hashWorkload writes hashes of both representations through every
// writing hash command and returns what they must hold.
func hashWorkload(t *testing.T, c *redis.Client, prefix string) map[string]map[string]string {
	t.Helper()
	ctx := ctx(t)
	model := map[string]map[string]string{}
	set := func(k, f, v string) {
		if model[k] == nil {
			model[k] = map[string]string{}
		}
		model[k][f] = v
	}
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		k := prefix + "small:" + strconv.Itoa(i)
		check(c.HSet(ctx, k, "a", i, "b", "x").Err())
		set(k, "a", strconv.Itoa(i))
		set(k, "b", "x")
		check(c.HIncrBy(ctx, k, "a", 10).Err())
		set(k, "a", strconv.Itoa(i+10))
		check(c.HIncrByFloat(ctx, k, "fl", 0.1).Err())
		set(k, "fl", "0.1")
		check(c.HSetNX(ctx, k, "nx", "y").Err())
		set(k, "nx", "y")
		if i%3 == 0 {
			check(c.HDel(ctx, k, "b").Err())
			delete(model[k], "b")
		}
		if i%10 == 0 {
			check(c.HDel(ctx, k, "a", "fl", "nx", "b").Err())
			delete(model, k)
		}
	}
	for i := range 3 {
		k := prefix + "big:" + strconv.Itoa(i)
		pipe := c.Pipeline()
		for j := range 500 {
			f, v := "field:"+strconv.Itoa(j), strings.Repeat("v", j%100)
			pipe.HSet(ctx, k, f, v)
			set(k, f, v)
		}
		_, err := pipe.Exec(ctx)
		check(err)
		for j := 0; j < 500; j += 7 {
			check(c.HDel(ctx, k, "field:"+strconv.Itoa(j)).Err())
			delete(model[k], "field:"+strconv.Itoa(j))
		}
		check(c.HIncrBy(ctx, k, "counter", 5).Err())
		set(k, "counter", "5")
	}
	return model
}

func checkHashes(t *testing.T, c *redis.Client, model map[string]map[string]string, gone []string) {
	t.Helper()
	ctx := ctx(t)
	for k, want := range model {
		got, err := c.HGetAll(ctx, k).Result()
		if err != nil || !maps.Equal(got, want) {
			t.Fatalf("%s after the restart: %d fields (%v), want %d", k, len(got), err, len(want))
		}
	}
	for _, k := range gone {
		if n, _ := c.Exists(ctx, k).Result(); n != 0 {
			t.Fatalf("%s, emptied by HDEL, exists after the restart", k)
		}
	}
}

// TestHashKill9KeepsEveryAcknowledgedWrite: hashes written under
// appendfsync always come back exactly after kill -9, from the WAL alone
// and from a checkpoint (SAVE) plus the WAL after it.
func TestHashKill9KeepsEveryAcknowledgedWrite(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		for _, save := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/save=%v", backend, save), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				s := startServerIn(t, dir, backend, 2, "--appendfsync", "always")
				c := s.client(2)
				model := hashWorkload(t, c, "one:")
				if save {
					if err := c.Save(ctx(t)).Err(); err != nil {
						t.Fatal(err)
					}
				}
				for k, v := range hashWorkload(t, c, "two:") {
					model[k] = v
				}
				// changes to hashes the checkpoint holds
				cx := ctx(t)
				if err := c.HSet(cx, "one:big:0", "field:1", "changed").Err(); err != nil {
					t.Fatal(err)
				}
				model["one:big:0"]["field:1"] = "changed"
				if err := c.HDel(cx, "one:small:1", "nx").Err(); err != nil {
					t.Fatal(err)
				}
				delete(model["one:small:1"], "nx")
				s.kill9()

				s2 := startServerIn(t, dir, backend, 2)
				checkHashes(t, s2.client(2), model, []string{"one:small:0", "one:small:10", "two:small:20"})
			})
		}
	}
}
