package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Ported from Redis 7.0's tests/unit/type/hash.tcl (the commands moond
// has). Left out: the DEBUG-only checks (DEBUG OBJECT, DEBUG RELOAD,
// DEBUG LISTPACK), SORT BY hash fields, the "stress" conversion loop with
// 100 × 64 fields (TestHashEncodingConversionAtThresholds covers the
// conversion instead), and the big-data (HRANDFIELD distribution chi-square)
// statistics.

// list runs a command whose reply is a flat array (or map) of bulk strings
// and nulls and returns its elements, nulls as "(nil)".
func (h *harness) list(args ...string) []string {
	h.t.Helper()
	h.do(args...)
	b := h.w.Buf
	line := func() string {
		i := strings.Index(string(b), "\r\n")
		s := string(b[:i])
		b = b[i+2:]
		return s
	}
	head := line()
	if head[0] != '*' && head[0] != '%' {
		h.t.Fatalf("%q: not an array: %q", args, h.w.Buf)
	}
	cnt, _ := strconv.Atoi(head[1:])
	if head[0] == '%' {
		cnt *= 2
	}
	out := make([]string, 0, cnt)
	for range cnt {
		l := line()
		if l == "$-1" || l == "_" {
			out = append(out, "(nil)")
			continue
		}
		n, err := strconv.Atoi(l[1:])
		if err != nil || l[0] != '$' {
			h.t.Fatalf("%q: element %q is not a bulk string", args, l)
		}
		out = append(out, string(b[:n]))
		b = b[n+2:]
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// hashFixture builds Redis's smallhash (8 fields) and bighash (1024
// fields) and returns their models.
func hashFixture(t *testing.T, h *harness) (small, big map[string]string) {
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(key string, n int) map[string]string {
		m := map[string]string{}
		for len(m) < n {
			f := "__avoid_collisions__" + randAlpha(rng, 0, 8)
			v := "__avoid_collisions__" + randAlpha(rng, 0, 8)
			if _, dup := m[f]; dup {
				continue
			}
			h.do("HSET", key, f, v)
			m[f] = v
		}
		return m
	}
	small, big = fill("smallhash", 8), fill("bighash", 1024)
	h.expect("HLEN smallhash", n(8))
	h.expect("HLEN bighash", n(1024))
	h.expect("OBJECT ENCODING smallhash", q("listpack"))
	h.expect("OBJECT ENCODING bighash", q("hashtable"))
	return small, big
}

func randAlpha(rng *rand.Rand, minLen, maxLen int) string {
	b := make([]byte, minLen+rng.IntN(maxLen-minLen+1))
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return string(b)
}

func firstField(m map[string]string) string { return sorted(keysOf(m))[0] }

func keysOf(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func TestHashSmallAndBig(t *testing.T) {
	h := newHarness(t)
	small, big := hashFixture(t, h)
	for _, c := range []struct {
		key string
		m   map[string]string
	}{{"smallhash", small}, {"bighash", big}} {
		// HGET, HSTRLEN, HEXISTS against every field
		for f, v := range c.m {
			h.expectArgs(q(v), "HGET", c.key, f)
			h.expectArgs(n(int64(len(v))), "HSTRLEN", c.key, f)
		}
		h.expectArgs("(nil)", "HGET", c.key, "__123123123__")
		h.expectArgs(n(0), "HSTRLEN", c.key, "__123123123__")
		h.expectArgs(n(1), "HEXISTS", c.key, firstField(c.m))
		h.expectArgs(n(0), "HEXISTS", c.key, "nokey")

		// HSET in update and insert mode
		k := firstField(c.m)
		h.expectArgs(n(0), "HSET", c.key, k, "newval1")
		c.m[k] = "newval1"
		h.expectArgs(q("newval1"), "HGET", c.key, k)
		h.expectArgs(n(1), "HSET", c.key, "__foobar123__", "newval")
		h.expectArgs(n(1), "HDEL", c.key, "__foobar123__")

		// HSETNX target key missing / exists
		h.expectArgs(n(1), "HSETNX", c.key, "__123123123__", "foo")
		h.expectArgs(q("foo"), "HGET", c.key, "__123123123__")
		h.expectArgs(n(0), "HSETNX", c.key, "__123123123__", "bar")
		h.expectArgs(q("foo"), "HGET", c.key, "__123123123__")
		h.expectArgs(n(1), "HDEL", c.key, "__123123123__")

		// HMSET, then HMGET, HKEYS, HVALS, HGETALL
		rng := rand.New(rand.NewPCG(3, 4))
		args := []string{"HMSET", c.key}
		var fields, vals []string
		for f := range c.m {
			c.m[f] = randAlpha(rng, 0, 8)
			args = append(args, f, c.m[f])
			fields, vals = append(fields, f), append(vals, c.m[f])
		}
		h.expectArgs("OK", args...)
		if got := h.list(append([]string{"HMGET", c.key}, fields...)...); !slices.Equal(got, vals) {
			t.Errorf("HMGET %s: got %q, want %q", c.key, got, vals)
		}
		h.expectArgs("[(nil) (nil)]", "HMGET", c.key, "__123123123__", "__456456456__")
		if got := sorted(h.list("HKEYS", c.key)); !slices.Equal(got, sorted(fields)) {
			t.Errorf("HKEYS %s differs", c.key)
		}
		if got := sorted(h.list("HVALS", c.key)); !slices.Equal(got, sorted(vals)) {
			t.Errorf("HVALS %s differs", c.key)
		}
		all := h.list("HGETALL", c.key)
		got := map[string]string{}
		for i := 0; i+1 < len(all); i += 2 {
			got[all[i]] = all[i+1]
		}
		if len(all) != 2*len(c.m) || fmt.Sprint(got) != fmt.Sprint(c.m) {
			t.Errorf("HGETALL %s differs", c.key)
		}

		// HDEL and return value
		h.expectArgs(n(0), "HDEL", c.key, "nokey")
		h.expectArgs(n(1), "HDEL", c.key, k)
		h.expectArgs(n(0), "HDEL", c.key, k)
		h.expectArgs("(nil)", "HGET", c.key, k)
	}
	h.expect("HMGET doesntexist __123123123__ __456456456__", "[(nil) (nil)]")
	h.expect("OBJECT ENCODING smallhash", q("listpack"))
	// Is a listpack encoded hash promoted on big payload?
	h.expectArgs(n(1), "HSET", "smallhash", "foo", strings.Repeat("a", 1024))
	h.expect("OBJECT ENCODING smallhash", q("hashtable"))
}

func TestHashArgumentErrors(t *testing.T) {
	h := newHarness(t)
	h.script(
		"HSET smallhash key1 val1 key2", "(error) ERR wrong number of arguments for 'hset' command",
		"HMSET smallhash key1 val1 key2", "(error) ERR wrong number of arguments for 'hmset' command",
		"HSET smallhash key1", "(error) ERR wrong number of arguments for 'hset' command",
		"HGET smallhash", "(error) ERR wrong number of arguments for 'hget' command",
		"HSCAN smallhash", "(error) ERR wrong number of arguments for 'hscan' command",
		"EXISTS smallhash", n(0),
	)
}

func TestHashCommandsAgainstWrongType(t *testing.T) {
	h := newHarness(t)
	h.expect("SET wrongtype somevalue", "OK")
	for _, line := range []string{
		"HMGET wrongtype field1 field2", "HRANDFIELD wrongtype", "HRANDFIELD wrongtype 3",
		"HGET wrongtype field1", "HGETALL wrongtype", "HDEL wrongtype field1",
		"HINCRBY wrongtype field1 2", "HINCRBYFLOAT wrongtype field1 2.5",
		"HSTRLEN wrongtype field1", "HVALS wrongtype", "HKEYS wrongtype",
		"HEXISTS wrongtype field1", "HSET wrongtype field1 val1",
		"HMSET wrongtype field1 val1 field2 val2", "HSETNX wrongtype field1 val1",
		"HLEN wrongtype", "HSCAN wrongtype 0",
	} {
		h.expect(line, "(error) WRONGTYPE Operation against a key holding the wrong kind of value")
	}
	// and the string commands against a hash
	h.expect("HSET hash f v", n(1))
	for _, line := range []string{"GET hash", "APPEND hash x", "INCR hash", "STRLEN hash", "GETRANGE hash 0 1"} {
		h.expect(line, "(error) WRONGTYPE Operation against a key holding the wrong kind of value")
	}
	h.expect("MGET hash", "[(nil)]")
}

func TestHDelMoreThanOneField(t *testing.T) {
	h := newHarness(t)
	h.script(
		"HMSET myhash a 1 b 2 c 3", "OK",
		"HDEL myhash x y", n(0),
		"HDEL myhash a c f", n(2),
		"HGETALL myhash", `["b" "2"]`,
		// the hash becomes empty before every field is deleted
		"DEL myhash", n(1),
		"HMSET myhash a 1 b 2 c 3", "OK",
		"HDEL myhash a b c d e", n(3),
		"EXISTS myhash", n(0),
		"HGETALL myhash", "[]",
		"HKEYS myhash", "[]",
		"HLEN myhash", n(0),
	)
}

func TestHIncrBy(t *testing.T) {
	h := newHarness(t)
	hashFixture(t, h)
	h.expect("HINCRBY htest foo 2", n(2))
	for _, key := range []string{"smallhash", "bighash"} {
		h.script(
			"HDEL "+key+" tmp", n(0),
			"HINCRBY "+key+" tmp 2", n(2),
			"HGET "+key+" tmp", q("2"),
			"HINCRBY "+key+" tmp 3", n(5),
			"HGET "+key+" tmp", q("5"),
			"HSET "+key+" tmp 100", n(0),
			"HINCRBY "+key+" tmp 2", n(102),
			"HSET "+key+" tmp 17179869184", n(0),
			"HINCRBY "+key+" tmp 1", n(17179869185),
			"HSET "+key+" tmp 17179869184", n(0),
			"HINCRBY "+key+" tmp 17179869184", n(34359738368),
		)
		for _, bad := range []string{" 11", "11 "} {
			h.do("HSET", key, "str", bad)
			h.expect("HINCRBY "+key+" str 1", "(error) ERR hash value is not an integer")
		}
	}
	h.script(
		"HSET hash n -9223372036854775484", n(1),
		"HINCRBY hash n -1", n(-9223372036854775485),
		"HINCRBY hash n -10000", "(error) ERR increment or decrement would overflow",
		"HINCRBY hash n x", "(error) ERR value is not an integer or out of range",
		"HINCRBY nokey n x", "(error) ERR value is not an integer or out of range",
		"EXISTS nokey", n(0),
	)
}

func TestHIncrByFloat(t *testing.T) {
	h := newHarness(t)
	hashFixture(t, h)
	h.expect("HINCRBYFLOAT htest foo 2.5", q("2.5"))
	for _, key := range []string{"smallhash", "bighash"} {
		h.script(
			"HINCRBYFLOAT "+key+" tmp 2.5", q("2.5"),
			"HGET "+key+" tmp", q("2.5"),
			"HINCRBYFLOAT "+key+" tmp 3.5", q("6"),
			"HGET "+key+" tmp", q("6"),
			"HSET "+key+" tmp 100", n(0),
			"HINCRBYFLOAT "+key+" tmp 2.5", q("102.5"),
			"HSET "+key+" tmp 17179869184", n(0),
			"HINCRBYFLOAT "+key+" tmp 1", q("17179869185"),
			"HSET "+key+" tmp 17179869184", n(0),
			"HINCRBYFLOAT "+key+" tmp 17179869184", q("34359738368"),
		)
		for _, bad := range []string{" 11", "11 "} {
			h.do("HSET", key, "str", bad)
			h.expect("HINCRBYFLOAT "+key+" str 1", "(error) ERR hash value is not a float")
		}
	}
	h.script(
		// does not allow NaN or Infinity
		"HINCRBYFLOAT hfoo field +inf", "(error) ERR value is NaN or Infinity",
		"EXISTS hfoo", n(0),
		"HSET incrhash field 5", n(1),
		"HINCRBYFLOAT incrhash field v", "(error) ERR value is not a valid float",
		"HINCRBYFLOAT incrhash field nan", "(error) ERR value is not a valid float",
		"HSET incrhash inf inf", n(1),
		"HINCRBYFLOAT incrhash inf 1", "(error) ERR increment would produce NaN or Infinity",
		"HINCRBYFLOAT incrhash field 1.2e4932", "(error) ERR value is not a valid float",
		"HINCRBYFLOAT incrhash f2 0.1", q("0.1"),
		"HINCRBYFLOAT incrhash f2 0.2", q("0.3"),
		"HINCRBYFLOAT incrhash f2 -0.3", q("0"),
	)
}

// TestHIncrByFloatOverListpackValue: a result longer than
// hash-max-listpack-value converts the hash, as any other write.
func TestHIncrByFloatOverListpackValue(t *testing.T) {
	h := newHarness(t)
	h.ks.Limits.HashMaxListpackValue = 8
	h.script(
		"HSET smallhash tmp 0", n(1),
		"HSET bighash tmp 0", n(1),
		"HINCRBYFLOAT smallhash tmp 0.000005", q("0.000005"),
		"HINCRBYFLOAT bighash tmp 0.0000005", q("0.0000005"),
		"OBJECT ENCODING smallhash", q("listpack"),
		"OBJECT ENCODING bighash", q("hashtable"),
	)
}

func TestHStrlenCornerCases(t *testing.T) {
	h := newHarness(t)
	hashFixture(t, h)
	for _, v := range []string{"-9223372036854775808", "9223372036854775807", "9223372036854775808", "", "0", "-1", "x"} {
		h.expectArgs("OK", "HMSET", "smallhash", "field", v)
		h.expectArgs("OK", "HMSET", "bighash", "field", v)
		h.expectArgs(n(int64(len(v))), "HSTRLEN", "smallhash", "field")
		h.expectArgs(n(int64(len(v))), "HSTRLEN", "bighash", "field")
	}
}

func TestHashRegressionForLargeKeys(t *testing.T) {
	h := newHarness(t)
	k1, k2 := strings.Repeat("k", 336), strings.Repeat("k", 337)
	h.expectArgs(n(1), "HSET", "hash", k1, "a")
	h.expectArgs(n(1), "HSET", "hash", k2, "b")
	h.expectArgs(q("b"), "HGET", "hash", k2)
	h.expectArgs(q("a"), "HGET", "hash", k1)
}

// randomValue is the tcl suite's randomValue: integers of several sizes,
// or strings of several alphabets.
func randomValue(rng *rand.Rand) string {
	switch rng.IntN(6) {
	case 0:
		return strconv.FormatInt(rng.Int64N(1<<62)-1<<61, 10)
	case 1:
		return strconv.Itoa(rng.IntN(2000) - 1000)
	case 2:
		return randAlpha(rng, 0, 256)
	case 3:
		b := make([]byte, rng.IntN(64))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	case 4:
		return ""
	}
	return randAlpha(rng, 0, 16)
}

func TestHashFuzzing(t *testing.T) {
	for _, size := range []int{10, 512} {
		h := newHarness(t)
		rng := rand.New(rand.NewPCG(uint64(size), 5))
		for times := range 10 {
			model := map[string]string{}
			h.do("DEL", "hash")
			for range size {
				f, v := randomValue(rng), randomValue(rng)
				switch rng.IntN(3) {
				case 0, 1:
					if times%2 == 1 {
						f, v = strconv.Itoa(rng.IntN(1024)-512), strconv.Itoa(rng.IntN(1024)-512)
					}
					h.do("HSET", "hash", f, v)
					model[f] = v
				default:
					h.do("HDEL", "hash", f)
					delete(model, f)
				}
			}
			for f, v := range model {
				h.expectArgs(q(v), "HGET", "hash", f)
			}
			h.expect("HLEN hash", n(int64(len(model))))
		}
	}
}

func TestHGetAllInRESP3IsAMap(t *testing.T) {
	h := newHarness(t)
	h.w.Proto = 3
	h.script("HSET h a 1 b 2", n(2))
	h.do("HGETALL", "h")
	if got := string(h.w.Buf); got != "%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n" {
		t.Errorf("HGETALL in RESP3: %q", got)
	}
	h.do("HGETALL", "nokey")
	if got := string(h.w.Buf); got != "%0\r\n" {
		t.Errorf("HGETALL of a missing key in RESP3: %q", got)
	}
	h.do("HGET", "nokey", "f")
	if got := string(h.w.Buf); got != "_\r\n" {
		t.Errorf("HGET of a missing key in RESP3: %q", got)
	}
}
