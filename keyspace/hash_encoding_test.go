package keyspace

import (
	"strconv"
	"strings"
	"testing"
)

// checkDataBytes recomputes every database's dataBytes from its keys and
// values and compares it with the running figure the commands keep.
func checkDataBytes(t *testing.T, ks *Keyspace) {
	t.Helper()
	for i, d := range ks.dbs {
		var sum int64
		d.keys.each(func(sl *slot[entry]) {
			sum += allocSize(int64(len(sl.key()))) + sl.v.heapBytes()
		})
		if sum != d.dataBytes {
			t.Fatalf("db %d: dataBytes %d, the keys and values hold %d", i, d.dataBytes, sum)
		}
	}
}

func TestHashEncodingConversionAtThresholds(t *testing.T) {
	h := newHarness(t)
	h.ks.Limits.HashMaxListpackEntries = 4
	h.ks.Limits.HashMaxListpackValue = 8
	enc := func(key, want string) {
		t.Helper()
		h.expect("OBJECT ENCODING "+key, q(want))
		checkDataBytes(t, h.ks)
	}
	h.expect("HSET a f1 v f2 v f3 v f4 v", n(4))
	enc("a", "listpack")
	h.expect("HSET a f1 v2", n(0))
	enc("a", "listpack")
	h.expect("HSET a f5 v", n(1))
	enc("a", "hashtable")
	h.expect("HDEL a f1 f2 f3 f4", n(4))
	enc("a", "hashtable") // never back
	h.expect("HGETALL a", `["f5" "v"]`)

	// field and value lengths at and past hash-max-listpack-value
	h.expect("HSET b 12345678 12345678", n(1))
	enc("b", "listpack")
	h.expect("HSET b x 123456789", n(1))
	enc("b", "hashtable")
	h.expect("HSET c 123456789 x", n(1))
	enc("c", "hashtable")
	h.expect("HSETNX d f 123456789", n(1))
	enc("d", "hashtable")
	h.expect("HSETNX e 123456789 x", n(1))
	enc("e", "hashtable")

	// the count through HSETNX and HINCRBY
	h.expect("HSET g f1 1 f2 2 f3 3 f4 4", n(4))
	h.expect("HINCRBY g f5 1", n(1))
	enc("g", "hashtable")
	h.expect("HSET i f1 1 f2 2 f3 3 f4 4", n(4))
	h.expect("HSETNX i f5 1", n(1))
	enc("i", "hashtable")
	h.expect("HSET j f1 1 f2 2 f3 3 f4 4", n(4))
	h.expect("HINCRBYFLOAT j f5 1.5", q("1.5"))
	enc("j", "hashtable")

	// a lowered limit applies at the hash's next write (as in Redis)
	h.ks.Limits.HashMaxListpackEntries = 128
	h.expect("HSET k f1 1 f2 2 f3 3 f4 4 f5 5 f6 6", n(6))
	enc("k", "listpack")
	h.ks.Limits.HashMaxListpackEntries = 4
	h.expect("HGET k f6", q("6"))
	enc("k", "listpack")
	h.expect("HSET k f1 x", n(0))
	enc("k", "hashtable")
	h.expect("HMGET k f1 f6", `["x" "6"]`)

	// a limit of 0 entries makes every hash a table
	h.ks.Limits.HashMaxListpackEntries = 0
	h.expect("HSET z f v", n(1))
	enc("z", "hashtable")
}

// TestHashDecodePicksTheRepresentationOfTheLimits: a checkpointed hash comes
// back as a listpack or a table by the limits at load time, as Redis's RDB
// load converts.
func TestHashDecodePicksTheRepresentationOfTheLimits(t *testing.T) {
	h := newHarness(t)
	h.expect("HSET small a 1 b 2", n(2))
	args := []string{"HSET", "big"}
	for i := range 200 {
		args = append(args, "f"+strconv.Itoa(i), strconv.Itoa(i))
	}
	h.do(args...)
	enc := func(key string) []byte {
		sl, _ := h.ks.lookup(0, []byte(key))
		return sl.v.appendEncoded(nil)
	}
	small, big := enc("small"), enc("big")
	for _, c := range []struct {
		lim       EncodingLimits
		b         []byte
		wantTable bool
	}{
		{DefaultEncodingLimits(), small, false},
		{DefaultEncodingLimits(), big, true},
		{EncodingLimits{HashMaxListpackEntries: 1, HashMaxListpackValue: 64}, small, true},
		{EncodingLimits{HashMaxListpackEntries: 128, HashMaxListpackValue: 0}, small, true},
		{EncodingLimits{HashMaxListpackEntries: 1000, HashMaxListpackValue: 64}, big, false},
	} {
		p, err := hashDecode(c.b, &c.lim)
		if err != nil {
			t.Fatal(err)
		}
		if hashIsTable(p) != c.wantTable {
			t.Errorf("limits %+v: decoded a %s", c.lim, hashEncoding(p))
		}
		if got := hashEncode(p, nil); string(got) != string(c.b) && !c.wantTable {
			t.Errorf("a listpack re-encodes differently")
		}
		if want := map[bool]int{true: 2, false: 200}[len(c.b) == len(small)]; hashLen(p) != want {
			t.Errorf("decoded %d fields, want %d", hashLen(p), want)
		}
	}
}

func TestHashWithKeyCommands(t *testing.T) {
	h := newHarness(t)
	args := []string{"HSET", "big"}
	for i := range 300 {
		args = append(args, "f"+strconv.Itoa(i), strings.Repeat("v", i%70))
	}
	h.do(args...)
	h.script(
		"HSET small a 1 b 2", n(2),
		"TYPE small", "hash",
		"TYPE big", "hash",
		"OBJECT ENCODING small", q("listpack"),
		"OBJECT ENCODING big", q("hashtable"),
		"COPY small small2", n(1),
		"COPY big big2", n(1),
		"HSET small a changed", n(0),
		"HGET small2 a", q("1"),
		"OBJECT ENCODING small2", q("listpack"),
		"HDEL big f1", n(1),
		"HGET big2 f1", q("v"),
		"HLEN big2", n(300),
		"OBJECT ENCODING big2", q("hashtable"),
		"RENAME small2 small3", "OK",
		"HGETALL small3", `["a" "1" "b" "2"]`,
		"EXISTS small2", n(0),
		"MOVE small3 1", n(1),
		"EXISTS small3", n(0),
	)
	h.selectDB(1)
	h.expect("HGETALL small3", `["a" "1" "b" "2"]`)
	h.selectDB(0)
	h.expect("SET str x", "OK")
	h.do("SCAN", "0", "TYPE", "hash", "COUNT", "100")
	scan := h.listOf([]byte(strings.SplitN(string(h.w.Buf), "\r\n", 4)[3]))
	if got := strings.Join(sorted(scan), " "); got != "big big2 small" {
		t.Errorf("SCAN 0 TYPE hash = %q", scan)
	}
	h.script(
		"EXPIRE small 10", n(1),
		"TTL small", n(10),
		"HSET small c 3", n(1),
		"TTL small", n(10),
		"HDEL big2 f0 f1 f2", n(3),
		"DEL big2", n(1),
		"EXISTS big2", n(0),
	)
	checkDataBytes(t, h.ks)
	h.advance(11000)
	h.script(
		"HGET small a", "(nil)",
		"EXISTS small", n(0),
		"HLEN small", n(0),
	)
	checkDataBytes(t, h.ks)
}
