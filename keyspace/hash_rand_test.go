package keyspace

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// HRANDFIELD and HSCAN, ported from Redis 7.0's hash.tcl and scan.tcl
// (the chi-square distribution checks left out: they are statistics, not
// replies).

func TestHRandFieldEdgeCases(t *testing.T) {
	h := newHarness(t)
	h.script(
		"HMSET myhash a 1", "OK",
		"HRANDFIELD myhash 0", "[]",
		"HRANDFIELD nonexisting_key 100", "[]",
		"HRANDFIELD nonexisting_key", "(nil)",
		"HRANDFIELD nonexisting_key 100 WITHVALUES", "[]",
		"HRANDFIELD myhash", q("a"),
		"HRANDFIELD myhash 1", `["a"]`,
		"HRANDFIELD myhash -3 WITHVALUES", `["a" "1" "a" "1" "a" "1"]`,
		"HRANDFIELD myhash -9223372036854770000 withvalues", "(error) ERR value is out of range",
		"HRANDFIELD myhash -9223372036854775808 withvalues", "(error) ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
		"HRANDFIELD myhash -9223372036854775808", "(error) ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
		"HRANDFIELD myhash x", "(error) ERR value is not an integer or out of range",
		"HRANDFIELD myhash 1 withvalue", "(error) ERR syntax error",
		"HRANDFIELD myhash 1 withvalues x", "(error) ERR syntax error",
	)
	// An empty array, not a null.
	h.do("HRANDFIELD", "myhash", "0")
	if got := string(h.w.Buf); got != "*0\r\n" {
		t.Errorf("HRANDFIELD myhash 0 = %q", got)
	}
}

func TestHRandFieldWithCount(t *testing.T) {
	for _, enc := range []string{"hashtable", "listpack"} {
		t.Run(enc, func(t *testing.T) {
			h := newHarness(t)
			h.ks.Limits.HashMaxListpackValue = 10
			contents := []string{"a", "1", "b", "2", "c", "3", "d", "4", "e", "5", "6", "f", "7", "g", "8", "h", "9", "i", "10", "j"}
			if enc == "hashtable" {
				contents[18] = strings.Repeat("x", 80)
			}
			h.expectArgs("OK", append([]string{"HMSET", "myhash"}, contents...)...)
			h.expect("OBJECT ENCODING myhash", q(enc))
			model := map[string]string{}
			for i := 0; i < len(contents); i += 2 {
				model[contents[i]] = contents[i+1]
			}
			checkPairs := func(res []string, withValues bool) {
				t.Helper()
				step := 1
				if withValues {
					step = 2
				}
				for i := 0; i < len(res); i += step {
					v, ok := model[res[i]]
					if !ok || withValues && res[i+1] != v {
						t.Fatalf("HRANDFIELD returned %q, not in the hash", res[i:i+step])
					}
				}
			}
			// without a count: one field, as a bulk string
			for range 50 {
				f, err := strconv.Unquote(h.do("HRANDFIELD", "myhash"))
				if _, ok := model[f]; err != nil || !ok {
					t.Fatalf("HRANDFIELD myhash = %q, not a field", f)
				}
			}
			// PATH 1: negative counts repeat fields
			for _, c := range []struct{ count, want int }{{-20, 20}, {-1001, 1001}} {
				res := h.list("HRANDFIELD", "myhash", strconv.Itoa(c.count))
				if len(res) != c.want {
					t.Fatalf("HRANDFIELD %d: %d fields", c.count, len(res))
				}
				checkPairs(res, false)
				res = h.list("HRANDFIELD", "myhash", strconv.Itoa(c.count), "WITHVALUES")
				if len(res) != 2*c.want {
					t.Fatalf("HRANDFIELD %d WITHVALUES: %d elements", c.count, len(res))
				}
				checkPairs(res, true)
			}
			seen := map[string]bool{}
			for range 1000 {
				for _, f := range h.list("HRANDFIELD", "myhash", "-3") {
					seen[f] = true
				}
				if len(seen) == len(model) {
					break
				}
			}
			if len(seen) != len(model) {
				t.Fatalf("negative counts returned only %d of %d fields", len(seen), len(model))
			}
			// PATH 2: the whole hash
			for _, size := range []string{"10", "20"} {
				res := h.list("HRANDFIELD", "myhash", size)
				if !slices.Equal(sorted(res), sorted(keysOf(model))) {
					t.Fatalf("HRANDFIELD %s = %q", size, res)
				}
				res = h.list("HRANDFIELD", "myhash", size, "WITHVALUES")
				if len(res) != 20 {
					t.Fatalf("HRANDFIELD %s WITHVALUES = %q", size, res)
				}
				checkPairs(res, true)
			}
			// PATHS 3 and 4: distinct fields, fewer than the hash has
			for _, size := range []int{8, 2} {
				seen := map[string]bool{}
				for range 1000 / size {
					res := h.list("HRANDFIELD", "myhash", strconv.Itoa(size), "WITHVALUES")
					if len(res) != 2*size {
						t.Fatalf("HRANDFIELD %d WITHVALUES: %d elements", size, len(res))
					}
					checkPairs(res, true)
					res = h.list("HRANDFIELD", "myhash", strconv.Itoa(size))
					if len(res) != size || len(slices.Compact(sorted(res))) != size {
						t.Fatalf("HRANDFIELD %d = %q: not %d distinct fields", size, res, size)
					}
					checkPairs(res, false)
					for _, f := range res {
						seen[f] = true
					}
				}
				if len(seen) != len(model) {
					t.Fatalf("HRANDFIELD %d returned only %d of %d fields", size, len(seen), len(model))
				}
			}
		})
	}
}

func TestHRandFieldInRESP3(t *testing.T) {
	h := newHarness(t)
	h.w.Proto = 3
	h.expect("HMSET myhash a 1 b 2 c 3 d 4", "OK")
	for _, count := range []string{"3", "-3", "10"} {
		res := h.do("HRANDFIELD", "myhash", count, "WITHVALUES")
		buf := string(h.w.Buf)
		nPairs := 3
		if count == "10" {
			nPairs = 4
		}
		if !strings.HasPrefix(buf, fmt.Sprintf("*%d\r\n*2\r\n$1\r\n", nPairs)) || strings.Count(buf, "*2\r\n") != nPairs {
			t.Errorf("HRANDFIELD myhash %s WITHVALUES in RESP3 = %s (%q)", count, res, buf)
		}
	}
	h.do("HRANDFIELD", "myhash", "3")
	if buf := string(h.w.Buf); !strings.HasPrefix(buf, "*3\r\n$1\r\n") || strings.Contains(buf, "*2") {
		t.Errorf("HRANDFIELD myhash 3 in RESP3 = %q", buf)
	}
	h.do("HRANDFIELD", "nokey")
	if buf := string(h.w.Buf); buf != "_\r\n" {
		t.Errorf("HRANDFIELD nokey in RESP3 = %q", buf)
	}
}

// hscanAll walks HSCAN from cursor 0 to 0 and returns the fields and values
// it returned, and the number of calls.
func (h *harness) hscanAll(key string, opts ...string) (map[string]string, int) {
	h.t.Helper()
	got := map[string]string{}
	cur, calls := "0", 0
	for {
		calls++
		h.do(append([]string{"HSCAN", key, cur}, opts...)...)
		reply := string(h.w.Buf)
		// *2 $n cursor *m elements...
		parts := strings.SplitN(reply, "\r\n", 4)
		cur = parts[2]
		elems := h.listOf([]byte(parts[3]))
		for i := 0; i+1 < len(elems); i += 2 {
			got[elems[i]] = elems[i+1]
		}
		if cur == "0" {
			return got, calls
		}
		if calls > 100000 {
			h.t.Fatal("HSCAN never returned to cursor 0")
		}
	}
}

// listOf decodes a flat array of bulk strings.
func (h *harness) listOf(b []byte) []string {
	s, rest, err := decodeReply(b)
	if err != nil || len(rest) != 0 {
		h.t.Fatalf("bad array %q", b)
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	var out []string
	for s != "" {
		v, err := strconv.QuotedPrefix(s)
		if err != nil {
			h.t.Fatalf("bad element in %q", s)
		}
		u, _ := strconv.Unquote(v)
		out = append(out, u)
		s = strings.TrimPrefix(s[len(v):], " ")
	}
	return out
}

func TestHScan(t *testing.T) {
	for _, c := range []struct {
		enc   string
		count int
	}{{"listpack", 30}, {"hashtable", 1000}} {
		h := newHarness(t)
		args := []string{"HMSET", "hash"}
		for j := range c.count {
			args = append(args, "key:"+strconv.Itoa(j), strconv.Itoa(j))
		}
		h.expectArgs("OK", args...)
		h.expect("OBJECT ENCODING hash", q(c.enc))
		got, calls := h.hscanAll("hash")
		if len(got) != c.count {
			t.Fatalf("%s: HSCAN returned %d fields, want %d", c.enc, len(got), c.count)
		}
		for f, v := range got {
			if f != "key:"+v {
				t.Fatalf("%s: HSCAN returned %s=%s", c.enc, f, v)
			}
		}
		if c.enc == "listpack" && calls != 1 {
			t.Errorf("a listpack took %d HSCAN calls, want 1 (cursor 0 at once)", calls)
		}
		if c.enc == "hashtable" && calls < 2 {
			t.Errorf("a table of %d fields returned whole in one call of COUNT 10", c.count)
		}
		// COUNT makes calls return more
		if _, calls2 := h.hscanAll("hash", "COUNT", "500"); c.enc == "hashtable" && calls2 >= calls {
			t.Errorf("COUNT 500 took %d calls, COUNT 10 %d", calls2, calls)
		}
		// MATCH filters fields
		m, _ := h.hscanAll("hash", "MATCH", "key:1?", "COUNT", "7")
		if len(m) != 10 {
			t.Errorf("%s: MATCH key:1? returned %d fields", c.enc, len(m))
		}
	}
	h := newHarness(t)
	h.script(
		"HMSET mykey foo 1 fab 2 fiz 3 foobar 10 1 a 2 b 3 c 4 d", "OK",
		"HSCAN mykey 0 MATCH foo* COUNT 10000", `["0" ["foo" "1" "foobar" "10"]]`,
		"HSCAN nokey 0", `["0" []]`,
		"HSCAN nokey 0 BADOPT", `["0" []]`,
		"HSCAN mykey 0 COUNT 0", "(error) ERR syntax error",
		"HSCAN mykey 0 COUNT x", "(error) ERR value is not an integer or out of range",
		"HSCAN mykey 0 TYPE hash", "(error) ERR syntax error",
		"HSCAN mykey 0 MATCH", "(error) ERR syntax error",
		"HSCAN mykey x", "(error) ERR invalid cursor",
		"HSCAN nokey x", "(error) ERR invalid cursor",
	)
}

// TestHScanGuaranteesUnderWrites: every field present for a whole walk
// of a hashtable is returned, however many fields are added meanwhile.
func TestHScanGuaranteesUnderWrites(t *testing.T) {
	h := newHarness(t)
	args := []string{"HMSET", "hash"}
	for j := range 500 {
		args = append(args, "f"+strconv.Itoa(j), "v")
	}
	h.do(args...)
	got := map[string]bool{}
	cur, added := "0", 0
	for {
		h.do("HSCAN", "hash", cur)
		parts := strings.SplitN(string(h.w.Buf), "\r\n", 4)
		cur = parts[2]
		elems := h.listOf([]byte(parts[3]))
		for i := 0; i < len(elems); i += 2 {
			got[elems[i]] = true
		}
		for range 20 {
			h.do("HSET", "hash", "new"+strconv.Itoa(added), "v")
			added++
		}
		if cur == "0" {
			break
		}
	}
	for j := range 500 {
		if !got["f"+strconv.Itoa(j)] {
			t.Fatalf("field f%d present throughout was never returned", j)
		}
	}
}
