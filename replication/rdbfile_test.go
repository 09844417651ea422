package replication

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moond-db/moond/internal/redistest"
	"github.com/moond-db/moond/rdb"
	"github.com/redis/go-redis/v9"
)

// startRedis starts redis-server 7.0 with its data in dir, or skips the
// test when there is none.
func startRedis(t *testing.T, dir string, extra ...string) *redis.Client {
	t.Helper()
	port, err := netListen()
	if err != nil {
		t.Fatal(err)
	}
	return redistest.Start(t, port, dir, extra...)
}

// fillEveryType writes keys of every type moond has, in each encoding
// redis-server 7.0 picks, some with expiries, in dbs 0 and 3. It returns
// the keys by db.
func fillEveryType(t *testing.T, c *redis.Client) map[int][]string {
	t.Helper()
	ctx := context.Background()
	keys := map[int][]string{}
	long := strings.Repeat("abcdefgh", 40) // compressed by LZF
	for _, db := range []int{0, 3} {
		p := c.Pipeline()
		p.Select(ctx, db)
		pre := fmt.Sprintf("d%d:", db)
		add := func(k string) string { keys[db] = append(keys[db], pre+k); return pre + k }
		p.Set(ctx, add("str"), "hello", 0)
		p.Set(ctx, add("int"), "12345", 0)
		p.Set(ctx, add("neg"), "-7", 0)
		p.Set(ctx, add("long"), long, 0)
		p.Set(ctx, add("ttl"), "soon", time.Hour)
		p.Set(ctx, add("12345"), "integer key", 0)
		p.RPush(ctx, add("list"), "a", "b", 3, long)
		for i := range 300 {
			p.RPush(ctx, pre+"biglist", strconv.Itoa(i)+long)
		}
		add("biglist")
		p.SAdd(ctx, add("intset"), 1, 2, 3, -40000)
		p.SAdd(ctx, add("set"), "x", "y", long)
		p.ZAdd(ctx, add("zset"), redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: -2, Member: long})
		for i := range 200 {
			p.ZAdd(ctx, pre+"bigzset", redis.Z{Score: float64(i) / 3, Member: "m" + strconv.Itoa(i)})
			p.HSet(ctx, pre+"bighash", "f"+strconv.Itoa(i), long)
		}
		add("bigzset")
		add("bighash")
		p.HSet(ctx, add("hash"), "f1", "v1", "f2", 2)
		p.PExpire(ctx, pre+"bighash", 90*time.Minute)
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// savedRDB fills a redis-server, SAVEs, and returns its dump.rdb and the
// server (still running, with the same data).
func savedRDB(t *testing.T) ([]byte, *redis.Client, map[int][]string) {
	t.Helper()
	dir := t.TempDir()
	c := startRedis(t, dir)
	keys := fillEveryType(t, c)
	if err := c.Save(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	return b, c, keys
}

func readAll(b []byte) (*FileReader, []*Entry, error) {
	f := NewFileReader(bufio.NewReader(bytes.NewReader(b)))
	if err := f.Header(); err != nil {
		return f, nil, err
	}
	var es []*Entry
	for {
		e, err := f.Next()
		if err == io.EOF {
			return f, es, nil
		}
		if err != nil {
			return f, es, err
		}
		es = append(es, e)
	}
}

// TestFileReaderRedisDump reads a dump.rdb redis-server wrote: every key
// is there, in its db, each value byte for byte as redis-server's DUMP
// of the key (the same encoding without the footer), with its expiry.
func TestFileReaderRedisDump(t *testing.T) {
	b, c, keys := savedRDB(t)
	f, es, err := readAll(b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f.Aux["redis-ver"], "7.0.") {
		t.Errorf("aux redis-ver = %q", f.Aux["redis-ver"])
	}
	ctx := context.Background()
	got := map[string]*Entry{}
	for _, e := range es {
		got[fmt.Sprintf("%d/%s", e.DB, e.Key)] = e
	}
	n := 0
	for db, ks := range keys {
		if err := c.Do(ctx, "SELECT", db).Err(); err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			n++
			e := got[fmt.Sprintf("%d/%s", db, k)]
			if e == nil {
				t.Errorf("db %d key %q missing", db, k)
				continue
			}
			dump, err := c.Dump(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			body, err := rdb.VerifyPayload([]byte(dump))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(e.Value, body) {
				t.Errorf("db %d key %q: value %x, DUMP %x", db, k, e.Value, body)
			}
			if _, err := rdb.Restore(rdb.AppendFooter(append([]byte(nil), e.Value...), 0)); err != nil {
				t.Errorf("db %d key %q: value does not decode: %v", db, k, err)
			}
			want, err := c.PExpireTime(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			if ms := want.Milliseconds(); (ms > 0 || e.ExpireMS != -1) && e.ExpireMS != ms {
				t.Errorf("db %d key %q: expiry %d, PEXPIRETIME %d", db, k, e.ExpireMS, ms)
			}
		}
	}
	if len(es) != n {
		t.Errorf("%d entries, %d keys written", len(es), n)
	}
}

// TestFileReaderTruncated cuts a real dump.rdb at every length: each
// cut is an ErrRDB, never a panic or a clean end.
func TestFileReaderTruncated(t *testing.T) {
	b, _, _ := savedRDB(t)
	step := max(1, len(b)/2000)
	for n := 0; n < len(b); n += step {
		if _, _, err := readAll(b[:n]); !errors.Is(err, ErrRDB) {
			t.Fatalf("cut at %d of %d: error %v, want ErrRDB", n, len(b), err)
		}
	}
	if _, _, err := readAll(b[:len(b)-1]); !errors.Is(err, ErrRDB) {
		t.Fatalf("cut in the checksum: error %v", err)
	}
}

// TestFileReaderBadChecksum changes one byte of the checksum, then one
// byte of the data: both are refused.
func TestFileReaderBadChecksum(t *testing.T) {
	b, _, _ := savedRDB(t)
	bad := append([]byte(nil), b...)
	bad[len(bad)-3] ^= 0x40
	if _, _, err := readAll(bad); !errors.Is(err, ErrRDB) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("bad checksum: error %v", err)
	}
	bad = append([]byte(nil), b...)
	i := bytes.Index(bad, []byte("hello"))
	bad[i] = 'j'
	if _, _, err := readAll(bad); !errors.Is(err, ErrRDB) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("changed data: error %v", err)
	}
}

// netListen returns a port nobody listens on.
func netListen() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// TestFileReaderIdleFreq reads the IDLE opcode a master under an LRU
// policy saves, and the FREQ opcode under an LFU policy.
func TestFileReaderIdleFreq(t *testing.T) {
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu"} {
		dir := t.TempDir()
		c := startRedis(t, dir, "--maxmemory-policy", policy)
		ctx := context.Background()
		c.Set(ctx, "k", "v", 0)
		for range 20 {
			c.Get(ctx, "k")
		}
		if err := c.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
		if err != nil {
			t.Fatal(err)
		}
		_, es, err := readAll(b)
		if err != nil || len(es) != 1 {
			t.Fatalf("%s: %d entries, %v", policy, len(es), err)
		}
		e := es[0]
		if policy == "allkeys-lru" && (e.Idle < 0 || e.Freq != -1) || policy == "allkeys-lfu" && (e.Freq <= 0 || e.Idle != -1) {
			t.Fatalf("%s: idle %d freq %d", policy, e.Idle, e.Freq)
		}
	}
}

// TestFileReaderStream reads streams redis-server 7.0 saved, with consumer
// groups, pending entries and consumers, byte for byte as its DUMP, and
// the keys after them.
func TestFileReaderStream(t *testing.T) {
	dir := t.TempDir()
	c := startRedis(t, dir)
	ctx := context.Background()
	for i := range 300 {
		c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []any{"f", i, "g", strings.Repeat("x", i%40)}})
	}
	c.XAdd(ctx, &redis.XAddArgs{Stream: "empty", ID: "5-1", Values: []any{"a", 1}})
	c.XDel(ctx, "empty", "5-1")
	c.XGroupCreate(ctx, "s", "g1", "0")
	c.XGroupCreate(ctx, "s", "g2", "$")
	c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g1", Consumer: "alice", Streams: []string{"s", ">"}, Count: 10})
	c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g1", Consumer: "bob", Streams: []string{"s", ">"}, Count: 5})
	c.Set(ctx, "after", "v", 0)
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	_, es, err := readAll(b)
	if err != nil || len(es) != 3 {
		t.Fatalf("%d entries, %v", len(es), err)
	}
	for _, e := range es {
		dump, err := c.Dump(ctx, string(e.Key)).Result()
		if err != nil {
			t.Fatal(err)
		}
		body, err := rdb.VerifyPayload([]byte(dump))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.Value, body) {
			t.Errorf("key %q: value %d bytes, DUMP %d bytes", e.Key, len(e.Value), len(body))
		}
	}
}
