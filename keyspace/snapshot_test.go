package keyspace

import (
	"bytes"
	"sort"
	"testing"

	"github.com/moond-db/moond/rdb"
)

// TestSnapshotDBEntries: SnapshotDB writes SELECTDB and RESIZEDB, then
// each key's entry as an RDB file holds it (rdb.AppendFileEntry of its
// DUMP payload), with TTLs and every kind, in chunks of about the size
// asked; an expired key is left out, an empty database writes nothing.
func TestSnapshotDBEntries(t *testing.T) {
	h := newHarness(t)
	h.do("SET", "str", "a string long enough to be compressed, compressed, compressed")
	h.do("SET", "int", "12345")
	h.do("SET", "ttl", "v", "PX", "100000")
	h.do("RPUSH", "list", "a", "b", "c")
	h.do("SADD", "set", "x", "y")
	h.do("HSET", "hash", "f", "v")
	h.do("ZADD", "zset", "1", "m")
	h.do("SET", "gone", "v", "PX", "1")
	h.advance(10) // gone is past its TTL, not yet reclaimed
	var chunks [][]byte
	keys, expires := h.ks.SnapshotDB(0, 64, func(b []byte) { chunks = append(chunks, b) })
	if keys != 7 || expires != 1 {
		t.Fatalf("SnapshotDB: %d keys, %d with a TTL; want 7 and 1", keys, expires)
	}
	if len(chunks) < 2 {
		t.Fatalf("%d chunks of 64 bytes for 7 keys: not chunked", len(chunks))
	}
	got := bytes.Join(chunks, nil)
	head := rdb.AppendSelectDB(nil, 0, 8, 2)
	if !bytes.HasPrefix(got, head) {
		t.Fatalf("the snapshot starts %x, want SELECTDB/RESIZEDB %x", got[:min(len(got), len(head))], head)
	}
	// Every key's entry, in the snapshot's order, is its DUMP payload's.
	var want []string
	for _, k := range []string{"str", "int", "ttl", "list", "set", "hash", "zset"} {
		when := int64(0)
		if k == "ttl" {
			d := h.ks.dbs[0]
			when = d.expires.find(d.keys.hash([]byte(k)), []byte(k)).v
		}
		want = append(want, string(rdb.AppendFileEntry(nil, []byte(k), []byte(h.dumpOf(k)), when)))
	}
	rest := string(got[len(head):])
	sort.Strings(want)
	var found []string
	for _, e := range want {
		if !bytes.Contains([]byte(rest), []byte(e)) {
			t.Fatalf("entry %q is not in the snapshot", e)
		}
		found = append(found, e)
	}
	if len(rest) != totalLen(found) {
		t.Fatalf("the snapshot's entries take %d bytes, the keys' entries %d", len(rest), totalLen(found))
	}
	if keys, _ := h.ks.SnapshotDB(1, 64, func([]byte) { t.Fatal("an empty database wrote a chunk") }); keys != 0 {
		t.Fatalf("empty database: %d keys", keys)
	}
}

func totalLen(s []string) int {
	n := 0
	for _, x := range s {
		n += len(x)
	}
	return n
}
