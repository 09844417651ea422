package keyspace

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// Ported from Redis's tests/unit/keyspace.tcl.

func TestDel(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET x foo", "OK",
		"GET x", q("foo"),
		"DEL x", n(1),
		"GET x", "(nil)",
		// vararg
		"SET foo1{t} a", "OK",
		"SET foo2{t} b", "OK",
		"SET foo3{t} c", "OK",
		"DEL foo1{t} foo2{t} foo3{t} foo4{t}", n(3),
		"MGET foo1{t} foo2{t} foo3{t}", "[(nil) (nil) (nil)]",
		// untagged multi-key commands
		"MSET foo1 a foo2 b foo3 c", "OK",
		"MGET foo1 foo2 foo3 foo4", `["a" "b" "c" (nil)]`,
		"DEL foo1 foo2 foo3 foo4", n(3),
		// UNLINK is DEL here
		"SET a 1", "OK",
		"UNLINK a a b", n(1),
	)
}

func TestKeys(t *testing.T) {
	h := newHarness(t)
	for _, k := range []string{"key_x", "key_y", "key_z", "foo_a", "foo_b", "foo_c"} {
		h.expect("SET "+k+" hello", "OK")
	}
	h.expectSorted("KEYS foo*", "foo_a", "foo_b", "foo_c")
	h.expectSorted("KEYS *", "foo_a", "foo_b", "foo_c", "key_x", "key_y", "key_z")
	h.expect("DBSIZE", n(6))
	for _, k := range []string{"{a}x", "{a}y", "{a}z", "{b}a", "{b}b", "{b}c"} {
		h.expect("SET "+k+" hello", "OK")
	}
	h.expectSorted("KEYS {a}*", "{a}x", "{a}y", "{a}z")
	h.expectSorted("KEYS *{b}*", "{b}a", "{b}b", "{b}c")
	for _, k := range h.sortedReply("KEYS *") {
		h.expectArgs(n(1), "DEL", k)
	}
	h.expect("DBSIZE", n(0))
}

// expectSorted checks an array reply of bulk strings, in any order.
func (h *harness) expectSorted(line string, want ...string) {
	h.t.Helper()
	got := h.sortedReply(line)
	if !slices.Equal(got, want) {
		h.t.Errorf("%s: got %q, want %q", line, got, want)
	}
}

func (h *harness) sortedReply(line string) []string {
	h.t.Helper()
	s := h.run(line)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	var out []string
	for _, f := range strings.Fields(s) {
		out = append(out, strings.Trim(f, `"`))
	}
	slices.Sort(out)
	return out
}

func TestDelAgainstExpiredKey(t *testing.T) {
	h := newHarness(t)
	h.expect("SETEX keyExpire 1 valExpire", "OK")
	h.advance(1100)
	h.expect("DEL keyExpire", n(0))
	if got := h.ks.Stats().ExpiredKeys; got != 1 {
		t.Errorf("expired_keys = %d, want 1", got)
	}
}

func TestExistsAndEmptyValue(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET newkey test", "OK",
		"EXISTS newkey", n(1),
		"DEL newkey", n(1),
		"EXISTS newkey", n(0),
		"SET a 1", "OK",
		"EXISTS a a nokey", n(2),
	)
	h.expectArgs("OK", "SET", "emptykey", "")
	h.script(
		"GET emptykey", q(""),
		"EXISTS emptykey", n(1),
		"DEL emptykey", n(1),
		"EXISTS emptykey", n(0),
	)
	// The empty key is a key like any other.
	h.expect("FLUSHDB", "OK")
	h.expectArgs("OK", "SET", "", "v")
	h.expectArgs(q("v"), "GET", "")
	h.expect("KEYS *", `[""]`)
	h.expectArgs(n(1), "DEL", "")
}

func TestUnknownCommand(t *testing.T) {
	h := newHarness(t)
	h.script(
		"foobaredcommand", "(error) ERR unknown command 'foobaredcommand', with args beginning with: ",
		"FOO a b", "(error) ERR unknown command 'FOO', with args beginning with: 'a' 'b' ",
	)
	long := strings.Repeat("x", 100)
	h.expectArgs("(error) ERR unknown command 'foo', with args beginning with: '"+long+"' '"+strings.Repeat("y", 25)+"' ",
		"foo", long, strings.Repeat("y", 100), "z")
	h.expectArgs("(error) ERR unknown command 'foo', with args beginning with: 'a  b' 'c' ", "foo", "a\r\nb", "c\x00d")
}

func TestWrongNumberOfArguments(t *testing.T) {
	h := newHarness(t)
	h.script(
		"GET", "(error) ERR wrong number of arguments for 'get' command",
		"get a b", "(error) ERR wrong number of arguments for 'get' command",
		"SET a", "(error) ERR wrong number of arguments for 'set' command",
		"Object", "(error) ERR wrong number of arguments for 'object' command",
		"OBJECT ENCODING", "(error) ERR wrong number of arguments for 'object|encoding' command",
		"OBJECT foo bar", "(error) ERR unknown subcommand 'foo'. Try OBJECT HELP.",
		"object foo", "(error) ERR unknown subcommand 'foo'. Try OBJECT HELP.",
		"DBSIZE x", "(error) ERR wrong number of arguments for 'dbsize' command",
	)
}

func TestRename(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET mykey{t} hello", "OK",
		"RENAME mykey{t} mykey1{t}", "OK",
		"RENAME mykey1{t} mykey2{t}", "OK",
		"GET mykey2{t}", q("hello"),
		"EXISTS mykey{t}", n(0),
		// against an existing key
		"SET mykey{t} a", "OK",
		"SET mykey2{t} b", "OK",
		"RENAME mykey2{t} mykey{t}", "OK",
		"GET mykey{t}", q("b"),
		"EXISTS mykey2{t}", n(0),
		// RENAMENX
		"DEL mykey{t}", n(1),
		"SET mykey{t} foobar", "OK",
		"RENAMENX mykey{t} mykey2{t}", n(1),
		"GET mykey2{t}", q("foobar"),
		"EXISTS mykey{t}", n(0),
		"SET mykey{t} foo", "OK",
		"SET mykey2{t} bar", "OK",
		"RENAMENX mykey{t} mykey2{t}", n(0),
		"GET mykey{t}", q("foo"),
		"GET mykey2{t}", q("bar"),
		// errors and same names
		"RENAME nokey{t} foobar{t}", "(error) ERR no such key",
		"SET mykey foo", "OK",
		"RENAME mykey mykey", "OK",
		"RENAMENX mykey mykey", n(0),
		"DEL mykey", n(1),
		"RENAME mykey mykey", "(error) ERR no such key",
	)
}

func TestRenameMovesTheTTL(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET mykey{t} foo", "OK",
		"EXPIRE mykey{t} 100", n(1),
		"RENAME mykey{t} mykey2{t}", "OK",
		"TTL mykey2{t}", n(100),
		// the target's TTL does not survive
		"SET mykey{t} foo", "OK",
		"SET mykey2{t} bar", "OK",
		"EXPIRE mykey2{t} 100", n(1),
		"RENAME mykey{t} mykey2{t}", "OK",
		"TTL mykey2{t}", n(-1),
	)
}

func TestCopy(t *testing.T) {
	h := newHarness(t)
	h.selectDB(9)
	h.script(
		"SET mykey{t} foobar", "OK",
		"COPY mykey{t} mynewkey{t}", n(1),
		"GET mynewkey{t}", q("foobar"),
		"DBSIZE", n(2),
		"COPY mykey{t} mynewkey{t} DB 10", n(1),
	)
	h.selectDB(10)
	h.script("GET mynewkey{t}", q("foobar"), "DBSIZE", n(1))
	h.selectDB(9)
	h.script(
		// shared integers stay shared
		"SET intkey{t} 1", "OK",
		"OBJECT REFCOUNT intkey{t}", n(2147483647),
		"COPY intkey{t} newintkey1{t}", n(1),
		"OBJECT REFCOUNT newintkey1{t}", n(2147483647),
		// no REPLACE, no copy
		"SET mykey2{t} hello", "OK",
		"COPY mykey2{t} mynewkey{t} DB 10", n(0),
		"COPY mykey2{t} mynewkey{t} DB 10 REPLACE", n(1),
	)
	h.selectDB(10)
	h.expect("GET mynewkey{t}", q("hello"))
	h.script(
		"COPY mykey mykey", "(error) ERR source and destination objects are the same",
		"COPY a b DB notanumber", "(error) ERR value is not an integer or out of range",
		"COPY a b DB 99", "(error) ERR DB index is out of range",
		"COPY a b FOO", "(error) ERR syntax error",
		"COPY a b DB", "(error) ERR syntax error",
	)
}

func TestCopiedDataIsIndependent(t *testing.T) {
	h := newHarness(t)
	h.selectDB(9)
	h.script("SET mykey{t} foobar", "OK", "COPY mykey{t} mynewkey{t} DB 10", n(1))
	h.selectDB(10)
	h.script("GET mynewkey{t}", q("foobar"), "SET mynewkey{t} hoge", "OK", "GET mynewkey{t}", q("hoge"))
	h.selectDB(9)
	h.expect("GET mykey{t}", q("foobar"))
	// A string grown by APPEND is copied, not shared.
	h.script(
		"APPEND buf abc", n(3),
		"COPY buf buf2", n(1),
		"APPEND buf2 def", n(6),
		"GET buf", q("abc"),
		"GET buf2", q("abcdef"),
	)
}

func TestCopyTTL(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET mykey{t} foobar EX 100", "OK",
		"COPY mykey{t} mynewkey{t} REPLACE", n(1),
		"TTL mynewkey{t}", n(100),
		"GET mynewkey{t}", q("foobar"),
		"SET mykey{t} foobar", "OK",
		"COPY mykey{t} mynewkey{t} REPLACE", n(1),
		"TTL mynewkey{t}", n(-1),
	)
}

func TestMove(t *testing.T) {
	h := newHarness(t)
	h.selectDB(9)
	h.script(
		"SET mykey foobar", "OK",
		"MOVE mykey 10", n(1),
		"EXISTS mykey", n(0),
		"DBSIZE", n(0),
	)
	h.selectDB(10)
	h.script("GET mykey", q("foobar"), "DBSIZE", n(1))
	h.selectDB(9)
	h.script(
		"SET mykey hello", "OK",
		"MOVE mykey 10", n(0),
		"MOVE mykey notanumber", "(error) ERR value is not an integer or out of range",
		"MOVE mykey 16", "(error) ERR DB index is out of range",
		"MOVE mykey 9", "(error) ERR source and destination objects are the same",
		"MOVE nokey 10", n(0),
	)
}

func TestMoveTTL(t *testing.T) {
	h := newHarness(t)
	h.selectDB(9)
	h.script("SET mykey foo EX 100", "OK", "MOVE mykey 10", n(1), "TTL mykey", n(-2))
	h.selectDB(10)
	h.script("TTL mykey", n(100), "GET mykey", q("foo"), "FLUSHDB", "OK")
	h.selectDB(9)
	h.script("SET mykey foo", "OK", "MOVE mykey 10", n(1), "TTL mykey", n(-2))
	h.selectDB(10)
	h.script("TTL mykey", n(-1), "GET mykey", q("foo"))
}

func TestKeysInDifferentDBs(t *testing.T) {
	h := newHarness(t)
	h.selectDB(9)
	h.script("SET a hello", "OK", "SET b world", "OK")
	h.selectDB(10)
	h.script("SET a foo", "OK", "SET b bared", "OK")
	h.selectDB(9)
	h.script("GET a", q("hello"), "GET b", q("world"))
	h.selectDB(10)
	h.script("GET a", q("foo"), "GET b", q("bared"))
}

func TestRandomKey(t *testing.T) {
	h := newHarness(t)
	h.script("RANDOMKEY", "(nil)", "SET foo x", "OK", "SET bar y", "OK")
	seen := map[string]bool{}
	for range 100 {
		seen[h.run("RANDOMKEY")] = true
	}
	if !seen[q("foo")] || !seen[q("bar")] || len(seen) != 2 {
		t.Errorf("RANDOMKEY returned %v", seen)
	}
	h.script("FLUSHDB", "OK", "RANDOMKEY", "(nil)")
	// regression 1
	h.script("SET x 10", "OK", "DEL x", n(1), "RANDOMKEY", "(nil)")
}

func TestRandomKeySkipsAndDeletesExpiredKeys(t *testing.T) {
	h := newHarness(t)
	for i := range 100 {
		h.expect("SET k"+itoa(i)+" v PX 10", "OK")
	}
	h.expect("SET live v", "OK")
	h.advance(20)
	// Each RANDOMKEY skips the expired keys it meets and deletes them. One
	// call may pick "live" first (1 in 101) and meet none, so several are
	// asked: all of them picking it first has odds of 1 in 101^20.
	for range 20 {
		h.expect("RANDOMKEY", q("live"))
	}
	if got := h.ks.DBSize(0); got > 100 {
		t.Errorf("dbsize %d after 20 RANDOMKEYs: no expired key they met was deleted", got)
	}
	for i := range 100 {
		h.expect("DEL k"+itoa(i), n(0))
	}
	h.expect("DBSIZE", n(1))
}

func TestKeysWithLongKey(t *testing.T) {
	h := newHarness(t)
	h.expect("SET dlskeriewrioeuwqoirueioqwrueoqwrueqw test", "OK")
	h.expect("KEYS *", `["dlskeriewrioeuwqoirueioqwrueoqwrueqw"]`)
	h.expect("KEYS *", `["dlskeriewrioeuwqoirueioqwrueoqwrueqw"]`)
}

func TestKeysPatternWithLongNestedLoops(t *testing.T) {
	h := newHarness(t)
	h.expect("SET "+strings.Repeat("a", 40)+" 1", "OK")
	start := time.Now()
	h.expect("KEYS "+strings.Repeat("a*", 20)+"b", "[]")
	h.expectArgs("OK", "SET", strings.Repeat("a", 50000), "1")
	h.expectArgs("[]", "KEYS", strings.Repeat("*?", 50000))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("pathological patterns took %v", d)
	}
}

func TestKeysSkipsExpiredKeys(t *testing.T) {
	h := newHarness(t)
	h.script("SET a 1 PX 10", "OK", "SET b 2", "OK")
	h.advance(11)
	h.expect("KEYS *", `["b"]`)
	h.expect("DBSIZE", n(2)) // not reclaimed yet, as in Redis
}

func TestSwapDB(t *testing.T) {
	h := newHarness(t)
	h.expect("FLUSHALL", "OK")
	h.selectDB(0)
	h.expect("SET swapkey v1", "OK")
	h.selectDB(1)
	h.script("DBSIZE", n(0), "SWAPDB 0 1", "OK", "DBSIZE", n(1))
	h.selectDB(0)
	h.script(
		"DBSIZE", n(0),
		"FLUSHALL", "OK",
		"SWAPDB 44 55", "(error) ERR DB index is out of range",
		"SWAPDB 44 a", "(error) ERR invalid second DB index",
		"SWAPDB a 55", "(error) ERR invalid first DB index",
		"SWAPDB a b", "(error) ERR invalid first DB index",
		"SWAPDB 0 0", "OK",
	)
}

func TestSwapDBAndFlushDB(t *testing.T) {
	h := newHarness(t)
	h.expect("FLUSHALL", "OK")
	h.selectDB(0)
	h.expect("SET swapkey v1", "OK")
	h.selectDB(1)
	h.expect("SET swapkey1 v1", "OK")
	if h.ks.DBInfo(2).Keys != 0 {
		t.Fatal("db2 has keys")
	}
	h.expect("SWAPDB 0 2", "OK")
	h.selectDB(0)
	h.expect("DBSIZE", n(0))
	if h.ks.DBInfo(0).Keys != 0 {
		t.Error("db0 has keys")
	}
	h.selectDB(2)
	h.script("FLUSHDB", "OK", "DBSIZE", n(0))
	if h.ks.DBInfo(1).Keys != 1 || h.ks.DBInfo(0).Keys != 0 || h.ks.DBInfo(2).Keys != 0 {
		t.Errorf("keyspace info wrong: %+v %+v %+v", h.ks.DBInfo(0), h.ks.DBInfo(1), h.ks.DBInfo(2))
	}
}

func TestFlushOptions(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SET a 1", "OK",
		"FLUSHDB ASYNC", "OK",
		"SET a 1", "OK",
		"FLUSHDB sync", "OK",
		"FLUSHALL ASYNC", "OK",
		"FLUSHALL SYNC", "OK",
		"FLUSHDB foo", "(error) ERR syntax error",
		"FLUSHALL ASYNC SYNC", "(error) ERR syntax error",
		"DBSIZE", n(0),
	)
}

func TestType(t *testing.T) {
	h := newHarness(t)
	h.script("TYPE nokey", "none", "SET s 1", "OK", "TYPE s", "string")
	h.addFakeObject("l")
	h.expect("TYPE l", "stream")
}

func TestSelectIndex(t *testing.T) {
	ks := NewKeyspace(16, nil)
	tests := []struct {
		arg  string
		idx  int
		errs string
	}{
		{"0", 0, ""},
		{"15", 15, ""},
		{"16", 0, "ERR DB index is out of range"},
		{"-1", 0, "ERR DB index is out of range"},
		{"x", 0, "ERR value is not an integer or out of range"},
		{"01", 0, "ERR value is not an integer or out of range"},
		{"4294967296", 0, "ERR value is not an integer or out of range"},
	}
	for _, tc := range tests {
		idx, e := ks.SelectIndex([]byte(tc.arg))
		if idx != tc.idx || e != tc.errs {
			t.Errorf("SelectIndex(%q) = %d, %q; want %d, %q", tc.arg, idx, e, tc.idx, tc.errs)
		}
	}
}

func TestObject(t *testing.T) {
	h := newHarness(t)
	h.script(
		"OBJECT ENCODING nokey", "(nil)",
		"OBJECT REFCOUNT nokey", "(nil)",
		"OBJECT IDLETIME nokey", "(nil)",
		"OBJECT FREQ nokey", "(nil)",
		"SET foo bar", "OK",
		"OBJECT REFCOUNT foo", n(1),
		"OBJECT IDLETIME foo", n(0),
		"OBJECT FREQ foo", "(error) ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
	)
	help := h.run("OBJECT HELP")
	if !strings.HasPrefix(help, "[OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are: ENCODING <key>") ||
		!strings.HasSuffix(help, "HELP     Prints this help.]") {
		t.Errorf("OBJECT HELP = %s", help)
	}
}

// TTL, TYPE, EXISTS and OBJECT leave the LRU clock alone; reads and TOUCH
// refresh it; a NO-TOUCH client's reads do not, its TOUCH does.
func TestIdleTimeAndTouch(t *testing.T) {
	h := newHarness(t)
	h.expect("SET foo bar", "OK")
	h.advance(3000)
	h.script(
		"TTL foo", n(-1),
		"TYPE foo", "string",
		"EXISTS foo", n(1),
		"OBJECT IDLETIME foo", n(3),
		"GET foo", q("bar"),
		"OBJECT IDLETIME foo", n(0),
		"TOUCH foo nokey foo", n(2),
	)
	h.c.NoTouch = true
	h.advance(5000)
	h.script("GET foo", q("bar"), "OBJECT IDLETIME foo", n(5), "TOUCH foo", n(1), "OBJECT IDLETIME foo", n(0))
}

func TestKeyspaceHitsAndMisses(t *testing.T) {
	h := newHarness(t)
	h.script("SET a 1", "OK", "GET a", q("1"), "GET b", "(nil)", "MGET a b c", `["1" (nil) (nil)]`, "SET a 2", "OK")
	st := h.ks.Stats()
	if st.KeyspaceHits != 2 || st.KeyspaceMisses != 3 {
		t.Errorf("hits %d misses %d, want 2 3", st.KeyspaceHits, st.KeyspaceMisses)
	}
	h.ks.ResetStats()
	if h.ks.Stats() != (Stats{}) {
		t.Error("ResetStats left figures")
	}
}

func TestUsedMemoryFollowsTheData(t *testing.T) {
	h := newHarness(t)
	empty := h.ks.UsedMemory()
	for i := range 1000 {
		h.expect("SET key:"+itoa(i)+" "+strings.Repeat("v", 100), "OK")
	}
	full := h.ks.UsedMemory()
	if perKey := (full - empty) / 1000; perKey < 100+8 || perKey > 300 {
		t.Errorf("%d bytes per key of 100-byte values", perKey)
	}
	h.expect("FLUSHALL", "OK")
	if got := h.ks.UsedMemory(); got != empty {
		t.Errorf("used memory %d after FLUSHALL, want %d", got, empty)
	}
	for i := range 1000 {
		h.expect("SET key:"+itoa(i)+" x", "OK")
		h.expect("DEL key:"+itoa(i), n(1))
	}
	if got := h.ks.UsedMemory(); got > empty+4096 {
		t.Errorf("used memory %d after deleting everything, empty is %d", got, empty)
	}
}

func TestWritesIsTheWriteFlag(t *testing.T) {
	writes := 0
	for _, s := range Specs() {
		for _, c := range append([]*CommandSpec{s}, s.Subcommands...) {
			if c.Writes() != slices.Contains(c.Flags, "write") {
				t.Errorf("%s: Writes() %v, flags %v", c.Name, c.Writes(), c.Flags)
			}
			if c.Writes() {
				writes++
			}
		}
	}
	if writes == 0 || Lookup([]byte("SET")).Writes() != true || Lookup([]byte("GET")).Writes() || (*CommandSpec)(nil).Writes() {
		t.Errorf("%d write commands; SET, GET or nil misclassified", writes)
	}
}

func TestMemoryUsage(t *testing.T) {
	h := newHarness(t)
	h.script(
		"MEMORY USAGE nokey", "(nil)",
		"SET k v", "OK",
		"MEMORY USAGE k SAMPLES", "(error) ERR syntax error",
		"MEMORY USAGE k SAMPLES x", "(error) ERR value is not an integer or out of range",
		"MEMORY USAGE k SAMPLES -1", "(error) ERR syntax error",
		"MEMORY USAGE k FOO 1", "(error) ERR syntax error",
		"MEMORY NOSUCH", "(error) ERR unknown subcommand 'NOSUCH'. Try MEMORY HELP.",
		"MEMORY PURGE", "OK",
	)
	small := h.do("MEMORY", "USAGE", "k", "SAMPLES", "0")
	h.do("SET", "k", strings.Repeat("x", 1000))
	big := h.do("MEMORY", "USAGE", "k")
	var a, b int
	fmt.Sscanf(small, "(integer) %d", &a)
	fmt.Sscanf(big, "(integer) %d", &b)
	if a <= 0 || b < a+1000 {
		t.Errorf("MEMORY USAGE of a 1-byte value %s, of a 1000-byte value %s: want the second at least 1000 more", small, big)
	}
}
