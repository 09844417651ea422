package keyspace

import (
	"strconv"
	"strings"
	"testing"

	"github.com/moond-db/moond/rdb"
	"github.com/moond-db/moond/resp"
)

// newLoadBatch returns a MOOND.LOAD batch of entries; each value is the
// DUMP payload of a key of h's (its footer cut off).
func newLoadBatch(entries ...rdb.LoadEntry) []byte {
	var b []byte
	for i := range entries {
		b = rdb.AppendLoadEntry(b, &entries[i])
	}
	return b
}

// doLoad runs MOOND.LOAD keys expires batch on h.
func (h *harness) doLoad(keys, expires int, batch []byte) string {
	h.t.Helper()
	h.w.Reset()
	args := [][]byte{[]byte("MOOND.LOAD"), []byte(strconv.Itoa(keys)), []byte(strconv.Itoa(expires)), batch}
	h.ks.ExecSpec(&h.c, LoadSpec, args, &h.w)
	s, _, err := decodeReply(h.w.Buf)
	if err != nil {
		h.t.Fatalf("bad reply %q: %v", h.w.Buf, err)
	}
	return s
}

// body is the DUMP payload of key without its footer.
func (h *harness) body(key string) []byte {
	p := h.dumpOf(key)
	return []byte(p[:len(p)-10])
}

// TestLoadBatch: MOOND.LOAD creates every key of its batch with its value,
// expiry and idle time, skips a key whose expiry is past, loads the keys
// after one whose value does not decode and says how many failed, and
// journals one MOOND.APPLY record that replays to the same data.
func TestLoadBatch(t *testing.T) {
	src := newHarness(t)
	src.run("RPUSH list a b c")
	src.run("SET str hello")
	src.run("HSET hash f v")
	h := newHarness(t)
	h.recordJournal()
	past, later := h.clock-1000, h.clock+3_600_000
	batch := newLoadBatch(
		rdb.LoadEntry{Key: []byte("l"), Value: src.body("list"), ExpireMS: -1, Idle: 100, Freq: -1},
		rdb.LoadEntry{Key: []byte("gone"), Value: src.body("str"), ExpireMS: past, Idle: -1, Freq: -1},
		rdb.LoadEntry{Key: []byte("bad"), Value: []byte{rdb.TypeList, 5}, ExpireMS: -1, Idle: -1, Freq: -1},
		rdb.LoadEntry{Key: []byte("s"), Value: src.body("str"), ExpireMS: later, Idle: -1, Freq: -1},
		rdb.LoadEntry{Key: []byte("h"), Value: src.body("hash"), ExpireMS: -1, Idle: -1, Freq: -1},
	)
	if got := h.doLoad(4, 1, batch); !strings.HasPrefix(got, "(error) ERR Bad data format: 1 keys of the batch not loaded, the first key 'bad'") {
		t.Fatalf("MOOND.LOAD: %s", got)
	}
	h.expect("OBJECT IDLETIME l", "(integer) 100") // before a read touches it
	h.expect("LRANGE l 0 -1", `["a" "b" "c"]`)
	h.expect("GET s", `"hello"`)
	h.expect("PEXPIRETIME s", "(integer) "+strconv.FormatInt(later, 10))
	h.expect("HGET h f", `"v"`)
	h.expect("EXISTS gone bad", "(integer) 0")
	if len(h.records) != 1 || h.records[0].args[0] != applyName || strings.Count(strings.Join(h.records[0].args, " "), " PUT ") != 3 {
		t.Fatalf("journal: %v, want one MOOND.APPLY of 3 PUTs", h.records)
	}
	r := newHarness(t)
	r.ks.Loading = true
	r.do(h.records[0].args...)
	r.ks.Loading = false
	for _, line := range []string{"LRANGE l 0 -1", "GET s", "PEXPIRETIME s", "HGET h f", "DBSIZE"} {
		if a, b := h.run(line), r.run(line); a != b {
			t.Errorf("%s after replay: %s, loaded: %s", line, b, a)
		}
	}
}

// TestLoadBatchReservesTables: the first batch into an empty database
// sizes its tables from the hint, so loading that many keys splits no
// segment.
func TestLoadBatchReservesTables(t *testing.T) {
	h := newHarness(t)
	src := newHarness(t)
	src.run("SET v x")
	var entries []rdb.LoadEntry
	for i := range 5000 {
		entries = append(entries, rdb.LoadEntry{Key: []byte("k" + strconv.Itoa(i)), Value: src.body("v"), ExpireMS: -1, Idle: -1, Freq: -1})
	}
	h.doLoad(5000, 0, newLoadBatch(entries[:1]...))
	segs := len(h.ks.dbs[0].keys.segs)
	if got := h.doLoad(0, 0, newLoadBatch(entries[1:]...)); got != "OK" {
		t.Fatal(got)
	}
	if n := len(h.ks.dbs[0].keys.segs); n != segs || segs < 5000/splitLoad {
		t.Fatalf("%d segments after the hint, %d after the load; want %d at least, unchanged", segs, n, 5000/splitLoad)
	}
}

// BenchmarkLoadBatch loads 200,000 keys of 100 bytes in batches of 512
// into a fresh keyspace that journals.
func BenchmarkLoadBatch(b *testing.B) {
	const keys, per = 200000, 512
	val := rdb.AppendString([]byte{rdb.TypeString}, []byte(strings.Repeat("v", 100)))
	var batches [][]byte
	for i := 0; i < keys; i += per {
		var buf []byte
		for j := i; j < min(keys, i+per); j++ {
			buf = rdb.AppendLoadEntry(buf, &rdb.LoadEntry{Key: []byte("key:" + pad12(j)), Value: val, ExpireMS: -1, Idle: -1, Freq: -1})
		}
		batches = append(batches, buf)
	}
	b.ResetTimer()
	for range b.N {
		ks := NewKeyspace(16, func() int64 { return startClock })
		setJournal(ks, func(int, [][]byte) {})
		var w resp.Writer
		c := &Client{}
		for i, batch := range batches {
			hint := []byte("0")
			if i == 0 {
				hint = []byte(strconv.Itoa(keys))
			}
			w.Reset()
			ks.ExecSpec(c, LoadSpec, [][]byte{[]byte("MOOND.LOAD"), hint, []byte("0"), batch}, &w)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys), "ns/key")
}
