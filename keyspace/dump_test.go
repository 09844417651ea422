package keyspace

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/moond-db/moond/rdb"
)

// dumpOf returns DUMP key's payload, failing the test on a nil reply.
func (h *harness) dumpOf(key string) string {
	h.t.Helper()
	r := h.do("DUMP", key)
	s, err := strconv.Unquote(r)
	if err != nil {
		h.t.Fatalf("DUMP %s = %s", key, r)
	}
	return s
}

// view renders the value of key canonically: its type, encoding and
// contents (a set's members and a hash's pairs sorted).
func (h *harness) view(key string) string {
	h.t.Helper()
	sl, _ := h.ks.lookup(h.c.DB, []byte(key))
	if sl == nil {
		return "(none)"
	}
	v := sl.v.value
	head := fmt.Sprintf("%s/%s ", v.kind(), v.encoding())
	switch v.kind() {
	case KindString:
		return head + q(string(v.appendTo(nil)))
	case KindList:
		return head + h.do("LRANGE", key, "0", "-1")
	case KindZSet:
		return head + h.do("ZRANGE", key, "0", "-1", "WITHSCORES")
	case KindSet:
		ms := setMembers(v.p)
		slices.SortFunc(ms, bytes.Compare)
		return head + fmt.Sprintf("%q", ms)
	case KindHash:
		var pairs []string
		hashEach(v.p, func(f, val []byte) bool {
			pairs = append(pairs, fmt.Sprintf("%q=%q", f, val))
			return true
		})
		slices.Sort(pairs)
		return head + strings.Join(pairs, " ")
	}
	return head + "?"
}

// build runs the commands that make each test value, one per key.
func dumpFixtures(h *harness) []string {
	bin := "\x00\x01\xff\r\n"
	long := strings.Repeat("L", 100)
	h.do("SET", "str-short", "hello")
	h.do("SET", "str-long", strings.Repeat("abcdefghij", 100))
	h.do("SET", "str-bin", bin)
	h.do("SET", "str-empty", "")
	h.do("SET", "str-int", "12345")
	h.do("SET", "str-negint", "-9223372036854775808")
	h.do("SET", "str-notint", "007")
	h.do("APPEND", "str-raw", "appended")
	h.do("PFADD", "hll", "a", "b", "c")
	h.do("RPUSH", "list-small", "a", "", "12", bin, long)
	big := []string{"RPUSH", "list-large"}
	for i := range 3000 {
		big = append(big, fmt.Sprintf("e%d", i))
	}
	h.do(big...)
	h.do("SADD", "set-intset", "1", "-2", "70000000000")
	h.do("SADD", "set-listpack", "a", "", "3", bin)
	bigSet := []string{"SADD", "set-large"}
	for i := range 1000 {
		bigSet = append(bigSet, fmt.Sprintf("m%d", i))
	}
	h.do(bigSet...)
	h.do("ZADD", "zset-small", "1", "a", "-inf", "", "inf", bin, "2.5", "12")
	bigZ := []string{"ZADD", "zset-large"}
	for i := range 500 {
		bigZ = append(bigZ, strconv.FormatFloat(float64(i)/3, 'g', -1, 64), fmt.Sprintf("z%d", i))
	}
	h.do(bigZ...)
	h.do("HSET", "hash-small", "f", "v", "", "empty", "n", "1", bin, bin)
	bigH := []string{"HSET", "hash-large"}
	for i := range 1000 {
		bigH = append(bigH, fmt.Sprintf("f%d", i), fmt.Sprintf("%d", i))
	}
	h.do(bigH...)
	h.do("HSET", "hash-longvalue", "f", long)
	h.do("PEXPIRE", "hash-small", "100000")
	return []string{"str-short", "str-long", "str-bin", "str-empty", "str-int", "str-negint", "str-notint",
		"str-raw", "hll", "list-small", "list-large", "set-intset", "set-listpack", "set-large",
		"zset-small", "zset-large", "hash-small", "hash-large", "hash-longvalue"}
}

// TestDumpRestoreRoundTrip dumps a value of every kind and encoding and
// restores it under another key: same contents and encoding; the payload
// decodes with package rdb; DUMP of the copy is the same payload.
func TestDumpRestoreRoundTrip(t *testing.T) {
	h := newHarness(t)
	keys := dumpFixtures(h)
	encodings := map[string]bool{}
	for _, k := range keys {
		p := h.dumpOf(k)
		if _, err := rdb.Restore([]byte(p)); err != nil {
			t.Errorf("%s: the payload does not decode: %v", k, err)
		}
		h.expectArgs("OK", "RESTORE", "copy-"+k, "0", p)
		want := h.view(k)
		if sl, _ := h.ks.lookup(0, []byte(k)); sl.v.kind() == KindString {
			// A string restores as SET would store it: a short raw
			// string (APPEND's, PFADD's) as embstr, as in Redis.
			b := sl.v.appendTo(nil)
			want = fmt.Sprintf("string/%s %s", newStringValue(b).encoding(), q(string(b)))
		}
		if got := h.view("copy-" + k); got != want {
			t.Errorf("%s restored as\n %.300s\nwant\n %.300s", k, got, want)
		}
		if k != "set-large" && k != "hash-large" { // tables: any order
			if p2 := h.dumpOf("copy-" + k); p2 != p {
				t.Errorf("%s: DUMP of the copy differs", k)
			}
		}
		sl, _ := h.ks.lookup(0, []byte(k))
		encodings[sl.v.kind().String()+"/"+sl.v.encoding()] = true
	}
	for _, e := range []string{"string/int", "string/embstr", "string/raw", "list/quicklist", "set/intset",
		"set/listpack", "set/hashtable", "zset/listpack", "zset/skiplist", "hash/listpack", "hash/hashtable"} {
		if !encodings[e] {
			t.Errorf("no fixture of %s", e)
		}
	}
}

// TestRestoreRedisPayloads restores what redis-server 7.0.15 dumped
// (package rdb's test vectors): the listpack, intset, quicklist and LZF
// forms moond never writes.
func TestRestoreRedisPayloads(t *testing.T) {
	raw, err := os.ReadFile("../rdb/testdata/redis70_dumps.json")
	if err != nil {
		t.Fatal(err)
	}
	var dumps map[string]string
	if err := json.Unmarshal(raw, &dumps); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	for name, hx := range dumps {
		p, err := hex.DecodeString(hx)
		if err != nil {
			t.Fatal(err)
		}
		h.expectArgs("OK", "RESTORE", name, "0", string(p))
	}
	for _, c := range []struct{ line, want string }{
		{"GET string-10", q("0123456789")},
		{"GET string-1000-lzf", q(strings.Repeat("abcdefghij", 100))},
		{"GET string-int64", q("9223372036854775807")},
		{"OBJECT ENCODING string-int16", q("int")},
		{"LLEN list-large", n(2000)},
		{"LINDEX list-large 1999", q("elem-1999-" + strings.Repeat("y", 50))},
		{"LRANGE list-small 0 3", fmt.Sprintf("[%s %s %s %s]", q("a"), q("b"), q(""), q("12"))},
		{"STRLEN list-plain", "(error) WRONGTYPE Operation against a key holding the wrong kind of value"},
		{"LLEN list-plain", n(1)},
		{"OBJECT ENCODING set-intset", q("intset")},
		{"SISMEMBER set-intset 70000000000", n(1)},
		{"SCARD set-large-ints", n(600)},
		{"SISMEMBER set-hashtable \"\"", n(0)},
		{"ZSCORE zset-listpack c", q("-inf")},
		{"OBJECT ENCODING zset-listpack", q("listpack")},
		{"ZCARD zset-skiplist", n(300)},
		{"OBJECT ENCODING zset-skiplist", q("skiplist")},
		{"HGET hash-listpack n", q("123")},
		{"OBJECT ENCODING hash-hashtable", q("hashtable")},
		{"HGET hash-hashtable f999", q("v999")},
		{"PFCOUNT hll-sparse", n(3)},
	} {
		h.expect(c.line, c.want)
	}
	h.expectArgs(n(1), "SISMEMBER", "set-hashtable", "")
	h.expectArgs(q("empty"), "HGET", "hash-listpack", "")
}

// TestRestoreOptionsAndErrors covers dump.tcl's cases: the errors and
// their order, REPLACE, ABSTTL, TTLs in the past, IDLETIME and FREQ.
func TestRestoreOptionsAndErrors(t *testing.T) {
	h := newHarness(t)
	h.expect("DUMP nokey", "(nil)")
	h.do("SET", "foo", "bar")
	p := h.dumpOf("foo")
	bad := p[:len(p)-1] + string(p[len(p)-1]^1)
	junk := string(rdb.AppendFooter([]byte{rdb.TypeList, 0}, 0))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"RESTORE", "foo", "0", p}, "(error) BUSYKEY Target key name already exists."},
		{[]string{"RESTORE", "foo", "-1", bad}, "(error) BUSYKEY Target key name already exists."},
		{[]string{"RESTORE", "foo", "0", p, "NOPE"}, "(error) ERR syntax error"},
		{[]string{"RESTORE", "new", "-1", p}, "(error) ERR Invalid TTL value, must be >= 0"},
		{[]string{"RESTORE", "new", "x", p}, "(error) ERR value is not an integer or out of range"},
		{[]string{"RESTORE", "new", "0", bad}, "(error) ERR DUMP payload version or checksum are wrong"},
		{[]string{"RESTORE", "new", "0", "short"}, "(error) ERR DUMP payload version or checksum are wrong"},
		{[]string{"RESTORE", "new", "0", junk}, "(error) ERR Bad data format"},
		{[]string{"RESTORE", "new", "0", p, "IDLETIME", "-1"}, "(error) ERR Invalid IDLETIME value, must be >= 0"},
		{[]string{"RESTORE", "new", "0", p, "IDLETIME", "x"}, "(error) ERR value is not an integer or out of range"},
		{[]string{"RESTORE", "new", "0", p, "IDLETIME"}, "(error) ERR syntax error"},
		{[]string{"RESTORE", "new", "0", p, "FREQ", "256"}, "(error) ERR Invalid FREQ value, must be >= 0 and <= 255"},
		{[]string{"RESTORE", "new", "0", p, "FREQ", "-1"}, "(error) ERR Invalid FREQ value, must be >= 0 and <= 255"},
		{[]string{"RESTORE", "new", "0", p, "IDLETIME", "1", "FREQ", "1"}, "(error) ERR syntax error"},
		{[]string{"RESTORE", "new", "0", p, "FREQ", "1", "IDLETIME", "1"}, "(error) ERR syntax error"},
		{[]string{"RESTORE", "new"}, "(error) ERR wrong number of arguments for 'restore' command"},
		{[]string{"DUMP"}, "(error) ERR wrong number of arguments for 'dump' command"},
	}
	for _, c := range cases {
		if got := h.do(c.args...); got != c.want {
			t.Errorf("%.40q = %s, want %s", c.args, got, c.want)
		}
	}
	h.expect("EXISTS new", n(0))
	h.expect("GET foo", q("bar"))

	// REPLACE, a relative TTL, ABSTTL.
	h.do("SET", "other", "x")
	h.expectArgs("OK", "RESTORE", "other", "3000", p, "REPLACE")
	h.expect("GET other", q("bar"))
	h.expect("PTTL other", n(3000))
	h.expectArgs("OK", "RESTORE", "abs", strconv.FormatInt(startClock+5000, 10), p, "ABSTTL")
	h.expect("PTTL abs", n(5000))
	// A TTL over 32 bits.
	h.expectArgs("OK", "RESTORE", "far", "2569591501", p)
	h.expect("PTTL far", n(2569591501))

	// A TTL already past: nothing is created; with REPLACE the key goes.
	h.expectArgs("OK", "RESTORE", "past", strconv.FormatInt(startClock-1, 10), p, "ABSTTL")
	h.expect("EXISTS past", n(0))
	h.expectArgs("OK", "RESTORE", "other", strconv.FormatInt(startClock, 10), p, "ABSTTL", "REPLACE")
	h.expect("EXISTS other", n(0))

	// IDLETIME under an LRU policy; FREQ is ignored there.
	h.expectArgs("OK", "RESTORE", "idle", "0", p, "IDLETIME", "1000")
	h.expect("OBJECT IDLETIME idle", n(1000))
	h.advance(5000)
	h.expect("OBJECT IDLETIME idle", n(1005))
	h.expectArgs("OK", "RESTORE", "f", "0", p, "FREQ", "100")
	h.expect("OBJECT IDLETIME f", n(0))

	// FREQ under an LFU policy; IDLETIME is ignored there.
	h.ks.SetEviction(Eviction{Policy: AllKeysLFU, Samples: 5, LFULogFactor: 10, LFUDecayTime: 1})
	h.expectArgs("OK", "RESTORE", "lfu", "0", p, "FREQ", "100")
	h.expect("OBJECT FREQ lfu", n(100))
	h.expectArgs("OK", "RESTORE", "lfu2", "0", p, "IDLETIME", "100")
	h.expect("OBJECT FREQ lfu2", n(lfuInitVal))
}

// TestRestoreIdleUnderflow: an IDLETIME beyond the 24-bit clock's
// reading lands half the clock's range ahead, as in Redis.
func TestRestoreIdleUnderflow(t *testing.T) {
	h := newHarness(t)
	h.do("SET", "foo", "bar")
	p := h.dumpOf("foo")
	h.expectArgs("OK", "RESTORE", "k", "0", p, "IDLETIME", "100000000")
	sl, _ := h.ks.lookup(0, []byte("k"))
	clock := h.ks.lru() >> kwLRUShift
	if got, want := lfuBits(sl.kw), (clock+lruClockMax/2)%lruClockMax; got != want {
		t.Errorf("LRU field %d, want %d", got, want)
	}
}

// TestRestoreJournal checks RESTORE's records and that replaying them
// rebuilds the same keys and expiry times.
func TestRestoreJournal(t *testing.T) {
	src := newHarness(t)
	keys := dumpFixtures(src)
	payloads := map[string]string{}
	for _, k := range keys {
		payloads[k] = src.dumpOf(k)
	}
	src.recordJournal()
	src.selectDB(3)
	for i, k := range keys {
		ttl := "0"
		if i%3 == 1 {
			ttl = "60000"
		}
		src.expectArgs("OK", "RESTORE", k, ttl, payloads[k])
	}
	src.expectArgs("OK", "RESTORE", "str-short", "0", payloads["list-small"], "REPLACE")
	if len(src.records) != len(keys)+1 {
		t.Fatalf("%d records for %d restores", len(src.records), len(keys)+1)
	}
	r := src.records[1]
	if r.db != 3 || r.args[0] != applyName || r.args[1] != "PUT" || r.args[2] != "3" || r.args[3] != keys[1] ||
		r.args[6] != strconv.FormatInt(startClock+60000, 10) {
		t.Errorf("record of RESTORE with a TTL: %.80q", r.args)
	}
	// Nothing is created, nothing journaled; a REPLACE that deletes, DEL.
	n0 := len(src.records)
	src.expectArgs("OK", "RESTORE", "gone", "1", payloads["str-int"], "ABSTTL")
	src.expectArgs("(error) BUSYKEY Target key name already exists.", "RESTORE", "str-int", "0", payloads["str-int"])
	if len(src.records) != n0 {
		t.Errorf("a RESTORE that wrote nothing journaled %v", src.records[n0:])
	}
	src.expectArgs("OK", "RESTORE", "str-int", "1", payloads["str-int"], "ABSTTL", "REPLACE")
	if got := src.records[len(src.records)-1]; len(src.records) != n0+1 || got.db != 3 || !slices.Equal(got.args, []string{"DEL", "str-int"}) {
		t.Errorf("a RESTORE REPLACE in the past journaled %v", src.records[n0:])
	}

	dst := newHarness(t)
	dst.ks.Loading = true
	for _, r := range src.records {
		dst.selectDB(r.db)
		if got := dst.do(r.args...); strings.HasPrefix(got, "(error)") {
			t.Fatalf("replaying %.60q: %s", r.args, got)
		}
	}
	dst.ks.Loading = false
	src.selectDB(3)
	dst.selectDB(3)
	for _, k := range append(keys, "gone") {
		if got, want := dst.view(k)+dst.do("PTTL", k), src.view(k)+src.do("PTTL", k); got != want {
			t.Errorf("%s replayed as\n %.200s\nwant\n %.200s", k, got, want)
		}
	}
}

// keyRecorder is a Tracker that records the keys it is told of.
type keyRecorder struct{ keys []string }

func (r *keyRecorder) KeyModified(key []byte) { r.keys = append(r.keys, string(key)) }
func (r *keyRecorder) Flushed()               {}

// TestRestoreSignalsWatchersAndTrackers: RESTORE is a write of its key
// for WATCH and CLIENT TRACKING, when it creates the key and when a
// REPLACE with a TTL already past deletes it; a refused RESTORE is none.
func TestRestoreSignalsWatchersAndTrackers(t *testing.T) {
	h := newHarness(t)
	h.do("SET", "foo", "bar")
	p := h.dumpOf("foo")
	tr := &keyRecorder{}
	h.ks.Tracker, h.ks.Tracking = tr, true
	w := h.ks.Watch(0, []byte("k"))
	h.expectArgs("(error) BUSYKEY Target key name already exists.", "RESTORE", "foo", "0", p)
	h.expectArgs("(error) ERR Bad data format", "RESTORE", "k", "0", string(rdb.AppendFooter([]byte{9}, 0)))
	if w.Touched() || len(tr.keys) != 0 {
		t.Fatalf("a refused RESTORE signalled: watch %v, tracked %q", w.Touched(), tr.keys)
	}
	h.expectArgs("OK", "RESTORE", "k", "0", p)
	if !w.Touched() || !slices.Equal(tr.keys, []string{"k"}) {
		t.Errorf("RESTORE: watch touched %v, tracked %q", w.Touched(), tr.keys)
	}
	h.ks.Unwatch(w)
	w = h.ks.Watch(0, []byte("k"))
	tr.keys = nil
	h.expectArgs("OK", "RESTORE", "k", "1", p, "ABSTTL", "REPLACE")
	h.expect("EXISTS k", n(0))
	if !w.Touched() || !slices.Equal(tr.keys, []string{"k"}) {
		t.Errorf("RESTORE REPLACE in the past: watch touched %v, tracked %q", w.Touched(), tr.keys)
	}
}

// TestNotifyRestore: RESTORE reports "new" and "restore" (class g), with
// or without REPLACE; a REPLACE whose TTL is already past, "del"; DUMP of
// a missing key, "keymiss".
func TestNotifyRestore(t *testing.T) {
	h, l := notifyHarness(t)
	h.do("SET", "foo", "bar")
	p := h.dumpOf("foo")
	h.selectDB(2)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"RESTORE", "k", "0", p}, []string{"n new k@2", "g restore k@2"}},
		{[]string{"RESTORE", "k", "1000", p, "REPLACE"}, []string{"n new k@2", "g restore k@2"}},
		{[]string{"RESTORE", "k", "1", p, "REPLACE", "ABSTTL"}, []string{"g del k@2"}},
		{[]string{"RESTORE", "k", "1", p, "ABSTTL"}, nil},
		{[]string{"DUMP", "k"}, []string{"m keymiss k@2"}},
	} {
		l.events = nil
		h.do(c.args...)
		if !slices.Equal(l.events, c.want) {
			t.Errorf("%.30q: events %q, want %q", c.args, l.events, c.want)
		}
	}
}

// FuzzDecodeRestore restores arbitrary objects (given a valid footer):
// RESTORE never panics, and what it accepts dumps and restores again to
// the same value.
func FuzzDecodeRestore(f *testing.F) {
	h := newHarness(f)
	for _, k := range dumpFixtures(h) {
		p := h.dumpOf(k)
		f.Add([]byte(p[:len(p)-10]))
	}
	f.Fuzz(func(t *testing.T, obj []byte) {
		h := newHarness(t)
		p := rdb.AppendFooter(append([]byte(nil), obj...), 0)
		got := h.do("RESTORE", "k", "0", string(p))
		if got != "OK" {
			if got != "(error) ERR Bad data format" {
				t.Fatalf("RESTORE = %s", got)
			}
			return
		}
		want := h.view("k")
		h.expectArgs("OK", "RESTORE", "k2", "0", h.dumpOf("k"))
		if again := h.view("k2"); again != want {
			t.Fatalf("restored again as %.200s, want %.200s", again, want)
		}
	})
}
