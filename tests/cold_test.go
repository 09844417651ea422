package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The cold tier end to end (tiered-storage, DESIGN §4 and §9): a data set
// of 4x maxmemory is kept whole, most of it cold in the heap, and reads
// back exactly, before and after kill -9; a write to a cold key needs no
// read; a heap file removed or damaged under cold keys answers errors,
// counted, and the server goes on serving.

const (
	coldMaxmemory = 2 << 20
	coldKeys      = 4 * coldMaxmemory >> 10 // 1 KiB values: 4x maxmemory
)

// tieredFlags are the flags of a server whose data set is mostly cold.
var tieredFlags = []string{"--maxmemory", strconv.Itoa(coldMaxmemory), "--maxmemory-policy", "allkeys-lru",
	"--tiered-storage", "yes", "--pagecache-size", "1mb", "--checkpoint-timeout", "1", "--appendfsync", "everysec"}

// coldValue is key i's value: 1 KiB that names the key, so that a value
// read back under another key's name is caught.
func coldValue(i int) string {
	head := fmt.Sprintf("value of cold%d|", i)
	return head + strings.Repeat(strconv.Itoa(i%10), 1024-len(head))
}

// writeCold writes keys cold0..cold(n-1). Under tiered-storage a write
// that finds no room answers OOM until a checkpoint has made the keys
// before it durable (and so coolable): such keys are written again until
// every one is in, within a deadline.
func writeCold(t *testing.T, c context.Context, cl *redis.Client, n int) {
	t.Helper()
	todo := make([]int, n)
	for i := range todo {
		todo[i] = i
	}
	deadline := time.Now().Add(2 * time.Minute)
	for len(todo) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d keys still refused after 2 minutes", len(todo))
		}
		var again []int
		for start := 0; start < len(todo); start += 128 {
			batch := todo[start:min(start+128, len(todo))]
			pipe := cl.Pipeline()
			for _, i := range batch {
				pipe.Set(c, "cold"+strconv.Itoa(i), coldValue(i), 0)
			}
			cmds, _ := pipe.Exec(c)
			for j, cmd := range cmds {
				switch err := cmd.Err(); {
				case err == nil:
				case strings.HasPrefix(err.Error(), "OOM "):
					again = append(again, batch[j])
				default:
					t.Fatalf("SET cold%d: %v", batch[j], err)
				}
			}
		}
		if len(again) > 0 {
			time.Sleep(20 * time.Millisecond) // polling: a checkpoint makes room
		}
		todo = again
	}
}

// readCold GETs keys cold0..cold(n-1) and returns the errors' texts by
// key; every value read must be the key's own, exactly.
func readCold(t *testing.T, c context.Context, cl *redis.Client, n int) map[int]string {
	t.Helper()
	errs := map[int]string{}
	for start := 0; start < n; start += 128 {
		pipe := cl.Pipeline()
		for i := start; i < min(start+128, n); i++ {
			pipe.Get(c, "cold"+strconv.Itoa(i))
		}
		cmds, _ := pipe.Exec(c)
		for j, cmd := range cmds {
			i := start + j
			v, err := cmd.(*redis.StringCmd).Result()
			switch {
			case err != nil:
				errs[i] = err.Error()
			case v != coldValue(i):
				t.Fatalf("GET cold%d: %d bytes %.40q..., want its own value", i, len(v), v)
			}
		}
	}
	return errs
}

// waitCold waits until INFO says at least min keys are cold.
func waitCold(t *testing.T, cl *redis.Client, min int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for infoInt(t, cl, "cold_keys") < min {
		if time.Now().After(deadline) {
			t.Fatalf("cold_keys %d after 30s, want at least %d", infoInt(t, cl, "cold_keys"), min)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTieredStorageReadsFourTimesMaxmemoryBackAfterKill9(t *testing.T) {
	// Two shards: a connection's reads of the other shard's cold keys go
	// there in batches, which wait for their values in order.
	for _, run := range []struct {
		backend string
		shards  int
	}{{"uring", 1}, {"pool", 1}, {"uring", 2}} {
		backend, shards := run.backend, run.shards
		t.Run(fmt.Sprintf("%s/shards=%d", backend, shards), func(t *testing.T) {
			dir := t.TempDir()
			s := startServerIn(t, dir, backend, shards, tieredFlags...)
			c := ctx(t)
			cl := s.client(2)
			if v := cl.ConfigGet(c, "tiered-storage").Val()["tiered-storage"]; v != "yes" {
				t.Fatalf("CONFIG GET tiered-storage = %q", v)
			}
			writeCold(t, c, cl, coldKeys)
			waitCold(t, cl, coldKeys/2)
			if shards > 1 {
				// MGET over both shards runs as a txn: its parts read
				// under their holds, synchronously.
				var keys []string
				for i := range 64 {
					keys = append(keys, "cold"+strconv.Itoa(i))
				}
				vals, err := cl.MGet(c, keys...).Result()
				if err != nil {
					t.Fatal(err)
				}
				for i, v := range vals {
					if v != coldValue(i) {
						t.Fatalf("MGET: cold%d = %.40v..., want its own value", i, v)
					}
				}
				if infoInt(t, cl, "cold_reads_sync") == 0 {
					t.Fatal("MGET over cold keys of two shards read nothing synchronously")
				}
			}
			if errs := readCold(t, c, cl, coldKeys); len(errs) > 0 {
				t.Fatalf("%d reads failed, one: %v", len(errs), errs)
			}
			if n := infoInt(t, cl, "cold_reads"); n == 0 {
				t.Fatal("every key read back, but cold_reads is 0: no value was cold")
			}
			t.Logf("%d keys: %d cold reads (%d synchronous), %d µs each, %d cold now", coldKeys, infoInt(t, cl, "cold_reads"),
				infoInt(t, cl, "cold_reads_sync"), infoInt(t, cl, "cold_read_usec_per_read"), infoInt(t, cl, "cold_keys"))
			if n, ev := cl.DBSize(c).Val(), infoInt(t, cl, "evicted_keys"); n != coldKeys || ev != 0 {
				t.Fatalf("DBSIZE %d, evicted_keys %d: tiered-storage must keep all %d keys", n, ev, coldKeys)
			}

			s.kill9()
			s = startServerIn(t, dir, backend, shards, tieredFlags...)
			cl = s.client(2)
			// The boot loads the records over maxmemory cold, not every
			// value to cool them after.
			if cold, cooled := infoInt(t, cl, "cold_keys"), infoInt(t, cl, "cold_keys_cooled"); cold < coldKeys/2 || cooled >= cold {
				t.Fatalf("after the restart: %d cold keys, %d of them made cold by eviction: want most loaded cold", cold, cooled)
			}
			if errs := readCold(t, c, cl, coldKeys); len(errs) > 0 {
				t.Fatalf("after kill -9: %d reads failed, one: %v", len(errs), errs)
			}
			if n := cl.DBSize(c).Val(); n != coldKeys {
				t.Fatalf("after kill -9: DBSIZE %d, want %d", n, coldKeys)
			}
			// Reading every key warmed them; eviction makes them cold again.
			waitCold(t, cl, coldKeys/2)
			if errs := readCold(t, c, cl, coldKeys); len(errs) > 0 || infoInt(t, cl, "cold_reads") == 0 {
				t.Fatalf("after cooling again: %d reads failed, cold_reads %d", len(errs), infoInt(t, cl, "cold_reads"))
			}
		})
	}
}

func TestTieredStorageOverwriteOfAColdKeyReadsNothing(t *testing.T) {
	s := startServer(t, "uring", 1, tieredFlags...)
	c := ctx(t)
	cl := s.client(2)
	writeCold(t, c, cl, coldKeys)
	waitCold(t, cl, coldKeys/2)
	reads, cold, cooled := infoInt(t, cl, "cold_reads"), infoInt(t, cl, "cold_keys"), infoInt(t, cl, "cold_keys_cooled")
	// The first keys written are the least recently used: most are cold.
	pipe := cl.Pipeline()
	for i := range 200 {
		pipe.Set(c, "cold"+strconv.Itoa(i), "new "+strconv.Itoa(i), 0)
	}
	if _, err := pipe.Exec(c); err != nil {
		t.Fatal(err)
	}
	overwritten := cold + infoInt(t, cl, "cold_keys_cooled") - cooled - infoInt(t, cl, "cold_keys")
	if overwritten == 0 {
		t.Fatal("none of the 200 keys overwritten was cold: the test missed its case")
	}
	if n := infoInt(t, cl, "cold_reads"); n != reads {
		t.Fatalf("overwriting %d cold keys read %d cold values", overwritten, n-reads)
	}
	for i := range 200 {
		if v := cl.Get(c, "cold"+strconv.Itoa(i)).Val(); v != "new "+strconv.Itoa(i) {
			t.Fatalf("GET cold%d after its overwrite: %q", i, v)
		}
	}
}

func TestTieredStorageDamagedOrMissingHeapFileAnswersAnError(t *testing.T) {
	for _, fault := range []string{"removed", "corrupted"} {
		t.Run(fault, func(t *testing.T) {
			dir := t.TempDir()
			s := startServerIn(t, dir, "pool", 1, tieredFlags...)
			c := ctx(t)
			cl := s.client(2)
			writeCold(t, c, cl, coldKeys)
			waitCold(t, cl, coldKeys/2)
			files, err := filepath.Glob(filepath.Join(dir, "shard-*", "heap", "*"))
			if err != nil || len(files) == 0 {
				t.Fatalf("no heap file under %s (%v)", dir, err)
			}
			for _, f := range files {
				if fault == "removed" {
					err = os.Remove(f)
				} else {
					err = corruptPages(f)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			errs := readCold(t, c, cl, coldKeys)
			if len(errs) == 0 {
				t.Fatal("every cold key read back after its heap files were " + fault)
			}
			for i, e := range errs {
				t.Logf("%d of %d reads failed, as cold%d: %s", len(errs), coldKeys, i, e)
				break
			}
			for i, e := range errs {
				if want := fmt.Sprintf("IOERR cold value of key 'cold%d' cannot be read: ", i); !strings.HasPrefix(e, want) {
					t.Fatalf("GET cold%d: %q, want %q...", i, e, want)
				}
			}
			if n := infoInt(t, cl, "cold_read_misses"); n < int64(len(errs)) {
				t.Fatalf("cold_read_misses %d after %d failed reads", n, len(errs))
			}
			// The keys stay, and the server goes on serving.
			if n := cl.DBSize(c).Val(); n != coldKeys {
				t.Fatalf("DBSIZE %d after failed reads, want %d", n, coldKeys)
			}
			// A write may meet OOM while the checkpoint that rewrites what
			// the lost file held runs: no key can be made cold until it
			// placed the versions it took (keyspace.coolable).
			waitFor(t, "a write accepted after the heap files were "+fault, func() bool {
				return cl.Set(c, "fresh", "value", 0).Err() == nil
			})
			if v, err := cl.Get(c, "fresh").Result(); err != nil || v != "value" {
				t.Fatalf("GET fresh: %q, %v", v, err)
			}
			for i := range errs {
				if v, err := cl.Type(c, "cold"+strconv.Itoa(i)).Result(); err != nil || v != "string" {
					t.Fatalf("TYPE of the unreadable cold%d: %q, %v", i, v, err)
				}
				break
			}
		})
	}
}

// corruptPages overwrites part of the body of every 4 KiB page of a heap
// file (its header and checksum left alone), so that each page fails its
// checksum when read.
func corruptPages(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	junk := []byte(strings.Repeat("\xa5", 64))
	for off := int64(0); off+4096 <= st.Size(); off += 4096 {
		if _, err := f.WriteAt(junk, off+2048); err != nil {
			return err
		}
	}
	return f.Sync()
}

func TestTieredStorageDebugReloadLoadsColdAndReadsBack(t *testing.T) {
	s := startServer(t, "pool", 2, tieredFlags...)
	c := ctx(t)
	cl := s.client(2)
	writeCold(t, c, cl, coldKeys)
	waitCold(t, cl, coldKeys/2)
	if err := cl.Do(c, "DEBUG", "RELOAD").Err(); err != nil {
		t.Fatal(err)
	}
	if n := infoInt(t, cl, "cold_keys"); n < coldKeys/2 {
		t.Fatalf("after DEBUG RELOAD %d cold keys, want the records over maxmemory loaded cold", n)
	}
	if errs := readCold(t, c, cl, coldKeys); len(errs) > 0 {
		t.Fatalf("after DEBUG RELOAD: %d reads failed, one: %v", len(errs), errs)
	}
}
