package keyspace

import (
	"strings"
	"testing"
)

// More of zset.tcl: the set operations, the pops, ZRANDMEMBER, ZSCAN, and
// the key-level commands and encoding limits on sorted sets.

func TestZUnionInterDiff(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		h.script(
			"ZUNIONSTORE dst_key 1 zseta", n(0),
			"EXISTS dst_key", n(0),
			"ZUNION 1 zseta", "[]",
			"ZINTER 1 zseta", "[]",
			"ZINTERCARD 1 zseta", n(0),
			"ZINTERCARD 1 zseta limit 0", n(0),
			"ZDIFF 1 zseta", "[]",
			"ZADD zseta 1 a 2 b", n(2),
			"ZUNIONSTORE zsetc 2 zseta zsetb", n(2),
			"ZRANGE zsetc 0 -1 withscores", words("a 1 b 2"),
			"ZUNION 2 zseta zsetb withscores", words("a 1 b 2"),
			"ZINTER 2 zseta zsetb withscores", "[]",
			"ZINTERCARD 2 zseta zsetb", n(0),
			"ZDIFF 2 zseta zsetb withscores", words("a 1 b 2"),
			"DEL zseta zsetb zsetc", n(2),
			"ZADD zseta 1 a 2 b 3 c", n(3),
			"ZADD zsetb 1 b 2 c 3 d", n(3),
			"ZUNIONSTORE zsetc 2 zseta zsetb", n(4),
			"ZRANGE zsetc 0 -1 withscores", words("a 1 b 3 d 3 c 5"),
			"ZUNIONSTORE zsetc 2 zseta zsetb weights 2 3", n(4),
			"ZRANGE zsetc 0 -1 withscores", words("a 2 b 7 d 9 c 12"),
			"ZUNION 2 zseta zsetb weights 2 3 withscores", words("a 2 b 7 d 9 c 12"),
			"ZINTER 2 zseta zsetb weights 2 3 withscores", words("b 7 c 12"),
			"ZUNIONSTORE zsetc 2 zseta zsetb aggregate min", n(4),
			"ZRANGE zsetc 0 -1 withscores", words("a 1 b 1 c 2 d 3"),
			"ZUNION 2 zseta zsetb aggregate min withscores", words("a 1 b 1 c 2 d 3"),
			"ZINTER 2 zseta zsetb aggregate min withscores", words("b 1 c 2"),
			"ZUNIONSTORE zsetc 2 zseta zsetb aggregate max", n(4),
			"ZRANGE zsetc 0 -1 withscores", words("a 1 b 2 c 3 d 3"),
			"ZINTER 2 zseta zsetb aggregate max withscores", words("b 2 c 3"),
			"ZINTERSTORE zsetc 2 zseta zsetb", n(2),
			"ZRANGE zsetc 0 -1 withscores", words("b 3 c 5"),
			"ZINTER 2 zseta zsetb withscores", words("b 3 c 5"),
			"ZINTERCARD 2 zseta zsetb", n(2),
			"ZINTERCARD 2 zseta zsetb limit 0", n(2),
			"ZINTERCARD 2 zseta zsetb limit 1", n(1),
			"ZINTERCARD 2 zseta zsetb limit 10", n(2),
			"ZINTERSTORE zsetc 2 zseta zsetb weights 2 3", n(2),
			"ZRANGE zsetc 0 -1 withscores", words("b 7 c 12"),
			"ZINTERSTORE zsetc 2 zseta zsetb aggregate min", n(2),
			"ZRANGE zsetc 0 -1 withscores", words("b 1 c 2"),
			"ZDIFFSTORE zsetc 2 zseta zsetb", n(1),
			"ZRANGE zsetc 0 -1 withscores", words("a 1"),
			"ZDIFF 2 zseta zsetb withscores", words("a 1"),
			"ZDIFFSTORE zsetc 2 zseta zseta", n(0),
			"ZRANGE zsetc 0 -1 withscores", "[]",
			"DEL zseta zsetb", n(2),
			"ZADD zseta 1 a 2 b 3 c 5 e", n(4),
			"ZADD zsetb 1 b", n(1),
			"ZADD zsetc 1 c", n(1),
			"ZADD zsetd 1 d", n(1),
			"ZDIFFSTORE zsete 4 zseta zsetb zsetc zsetd", n(2),
			"ZRANGE zsete 0 -1 withscores", words("a 1 e 5"),
		)
	})
}

func TestZSetOpsInfAndNaN(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		for _, c := range []struct{ s1, s2, want string }{
			{"+inf", "+inf", "inf"}, {"-inf", "+inf", "0"}, {"+inf", "-inf", "0"}, {"-inf", "-inf", "-inf"},
		} {
			h.do("ZADD", "zsetinf1", c.s1, "key")
			h.do("ZADD", "zsetinf2", c.s2, "key")
			for _, cmd := range []string{"ZUNIONSTORE", "ZINTERSTORE"} {
				h.do(cmd, "zsetinf3", "2", "zsetinf1", "zsetinf2")
				h.expect("ZSCORE zsetinf3 key", q(c.want))
			}
			h.expect("ZUNION 2 zsetinf1 zsetinf2 WITHSCORES", words("key "+c.want))
			h.expect("ZINTER 2 zsetinf1 zsetinf2 WITHSCORES", words("key "+c.want))
		}
		h.script(
			"ZUNIONSTORE zsetinf3 2 zsetinf1 zsetinf2 weights nan nan", "(error) ERR weight value is not a float",
			"ZINTER 2 zsetinf1 zsetinf2 weights nan nan", "(error) ERR weight value is not a float",
			"ZADD z -inf neginf", n(1),
			"ZUNIONSTORE out 1 z weights 0", n(1),
			"ZRANGE out 0 -1 withscores", words("neginf 0"),
		)
	})
}

func TestZSetOpsIllegalArguments(t *testing.T) {
	h := newHarness(t)
	h.expect("ZADD zseta 1 a", n(1))
	for _, pair := range [][2]string{{"ZUNION", "ZUNIONSTORE"}, {"ZINTER", "ZINTERSTORE"}} {
		cmd, store := pair[0], pair[1]
		for _, tail := range []string{"1 zseta WRONG_ARG", "2 zseta zsetb zsetc", "1 zseta WEIGHTS 2 3",
			"1 zseta WEIGHTS 2 WEIGHTS 3", "1 zseta AGGREGATE NONE", "1 zseta AGGREGATE SUM AGGREGATE MIN"} {
			h.expect(cmd+" "+tail, "(error) ERR syntax error")
			h.expect(store+" zsetc "+tail, "(error) ERR syntax error")
		}
		h.expect(cmd+" 1 zseta WITHSCORES WITHSCORES", "(error) ERR syntax error")
		h.expect(cmd+" 1 zseta WEIGHTS a", "(error) ERR weight value is not a float")
		h.expect(store+" zsetc 1 zseta WEIGHTS a", "(error) ERR weight value is not a float")
		h.expect(store+" foo 1 zseta withscores", "(error) ERR syntax error")
		h.expect(cmd+" x zseta", "(error) ERR value is not an integer or out of range")
	}
	h.script(
		"ZDIFF 2 zseta zsetb zsetc", "(error) ERR syntax error",
		"ZDIFF 1 zseta WRONG_ARG", "(error) ERR syntax error",
		"ZDIFF 1 zseta WITHSCORES WITHSCORES", "(error) ERR syntax error",
		"ZDIFF 1 zseta WEIGHTS 1", "(error) ERR syntax error",
		"ZDIFFSTORE zsetc 2 zseta zsetb zsetc", "(error) ERR syntax error",
		"ZDIFFSTORE zsetc 1 zseta WRONG_ARG", "(error) ERR syntax error",
		"ZDIFFSTORE foo 1 zseta withscores", "(error) ERR syntax error",
		"ZINTERCARD 1 zseta zseta", "(error) ERR syntax error",
		"ZINTERCARD 1 zseta bar_arg", "(error) ERR syntax error",
		"ZINTERCARD 1 zseta LIMIT", "(error) ERR syntax error",
		"ZINTERCARD 1 zseta LIMIT 0 LIMIT 1", "(error) ERR syntax error",
		"ZINTERCARD 1 zseta WITHSCORES", "(error) ERR syntax error",
		"ZINTERCARD 1 myset LIMIT -1", "(error) ERR LIMIT can't be negative",
		"ZINTERCARD 1 myset LIMIT a", "(error) ERR LIMIT can't be negative",
	)
	for _, name := range []string{"zunion", "zinter", "zdiff", "zintercard"} {
		h.expect(strings.ToUpper(name)+" 0 key", "(error) ERR at least 1 input key is needed for '"+name+"' command")
	}
	for _, name := range []string{"zunionstore", "zinterstore", "zdiffstore"} {
		h.expect(strings.ToUpper(name)+" dst_key 0 key", "(error) ERR at least 1 input key is needed for '"+name+"' command")
	}
	h.script("SET str v", "OK", "ZUNION 2 zseta str", "(error) "+errWrongType, "ZINTERSTORE d 2 str zseta", "(error) "+errWrongType)
}

func TestZPopAndZMPop(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		h.script(
			"ZADD zset 1 a 2 b 3 c", n(3),
			"ZPOPMIN zset 0", "[]",
			"ZPOPMAX zset 0", "[]",
			"ZCARD zset", n(3),
			"ZPOPMIN zset -1", "(error) ERR value is out of range, must be positive",
			"SET str foo", "OK",
			"ZPOPMIN str -1", "(error) ERR value is out of range, must be positive",
			"ZPOPMIN str", "(error) "+errWrongType,
			"ZPOPMAX str 0", "(error) "+errWrongType,
			"ZPOPMIN zset 1 2", "(error) ERR syntax error",
			"ZPOPMIN zset x", "(error) ERR value is not an integer or out of range",
			"DEL zset", n(1),
			"ZPOPMIN zset", "[]",
			"ZPOPMIN zset 1", "[]",
			"ZMPOP 1 zset MIN", "(nil)",
		)
		createZSet(h, "zset", "-1 a 1 b 2 c 3 d 4 e")
		h.script(
			"ZPOPMIN zset", words("a -1"),
			"ZMPOP 1 zset MIN", "["+q("zset")+" [[\"b\" \"1\"]]]",
			"ZPOPMAX zset", words("e 4"),
			"ZMPOP 1 zset MAX", "["+q("zset")+" [[\"d\" \"3\"]]]",
			"ZPOPMIN zset", words("c 2"),
			"EXISTS zset", n(0),
		)
		createZSet(h, "z1", "0 a 1 b 2 c 3 d")
		h.script(
			"ZPOPMIN z1 2", words("a 0 b 1"),
			"ZPOPMAX z1 2", words("d 3 c 2"),
		)
		createZSet(h, "z1", "0 a 1 b 2 c 3 d")
		h.script(
			"ZMPOP 2 nokey z1 MIN COUNT 2", "["+q("z1")+" [[\"a\" \"0\"] [\"b\" \"1\"]]]",
			"ZMPOP 1 z1 MAX COUNT 10", "["+q("z1")+" [[\"d\" \"3\"] [\"c\" \"2\"]]]",
			"EXISTS z1", n(0),
		)
	})
}

func TestZMPopIllegalArguments(t *testing.T) {
	h := newHarness(t)
	h.script(
		"ZMPOP", "(error) ERR wrong number of arguments for 'zmpop' command",
		"ZMPOP 1", "(error) ERR wrong number of arguments for 'zmpop' command",
		"ZMPOP 1 myzset", "(error) ERR wrong number of arguments for 'zmpop' command",
		"ZMPOP 0 myzset MIN", "(error) ERR numkeys should be greater than 0",
		"ZMPOP a myzset MIN", "(error) ERR numkeys should be greater than 0",
		"ZMPOP -1 myzset MAX", "(error) ERR numkeys should be greater than 0",
		"ZMPOP 1 myzset bad_where", "(error) ERR syntax error",
		"ZMPOP 1 myzset MIN bar_arg", "(error) ERR syntax error",
		"ZMPOP 1 myzset MAX MIN", "(error) ERR syntax error",
		"ZMPOP 1 myzset COUNT", "(error) ERR syntax error",
		"ZMPOP 1 myzset MAX COUNT 1 COUNT 2", "(error) ERR syntax error",
		"ZMPOP 2 myzset myzset2 bad_arg", "(error) ERR syntax error",
		"ZMPOP 5 myzset myzset2 MIN", "(error) ERR syntax error",
		"ZMPOP 1 myzset MIN COUNT 0", "(error) ERR count should be greater than 0",
		"ZMPOP 1 myzset MAX COUNT a", "(error) ERR count should be greater than 0",
		"ZMPOP 1 myzset MIN COUNT -1", "(error) ERR count should be greater than 0",
		"ZMPOP 2 myzset myzset2 MAX COUNT -1", "(error) ERR count should be greater than 0",
		"SET foo bar", "OK",
		"ZMPOP 1 foo min", "(error) "+errWrongType,
		"ZMPOP 2 nokey foo max count 200", "(error) "+errWrongType,
	)
}

func TestZRandMember(t *testing.T) {
	for _, c := range []struct{ enc, contents string }{
		{"listpack", "1 a 2 b 3 c 4 d 5 e 6 f 7 g 7 h 9 i 10 j"},
		{"skiplist", "1 a 2 b 3 c 4 d 5 e 6 f 7 g 7 h 9 i 10 " + strings.Repeat("x", 80)},
	} {
		t.Run(c.enc, func(t *testing.T) {
			h := newHarness(t)
			h.ks.Limits.ZSetMaxListpackValue = 10
			createZSet(h, "myzset", c.contents)
			h.expect("OBJECT ENCODING myzset", q(c.enc))
			f := strings.Fields(c.contents)
			scores := map[string]string{}
			for i := 0; i < len(f); i += 2 {
				scores[f[i+1]] = f[i]
			}
			seen := map[string]bool{}
			for range 300 {
				m, _ := unquoteAll(h.do("ZRANDMEMBER", "myzset"))
				seen[m[0]] = true
			}
			if len(seen) != 10 {
				t.Errorf("ZRANDMEMBER returned %d distinct members of 10", len(seen))
			}
			check := func(args string, n int, withScores, distinct bool) {
				t.Helper()
				items, _ := unquoteAll(h.run(args))
				step := 1
				if withScores {
					step = 2
				}
				if len(items) != n*step {
					t.Fatalf("%s: %d items, want %d", args, len(items), n*step)
				}
				got := map[string]bool{}
				for i := 0; i < len(items); i += step {
					s, ok := scores[items[i]]
					if !ok || withScores && items[i+1] != s {
						t.Fatalf("%s: %q is not a member with its score", args, items[i:i+step])
					}
					if distinct && got[items[i]] {
						t.Fatalf("%s: %q twice", args, items[i])
					}
					got[items[i]] = true
				}
			}
			check("ZRANDMEMBER myzset -20", 20, false, false)
			check("ZRANDMEMBER myzset -1001", 1001, false, false)
			check("ZRANDMEMBER myzset -20 withscores", 20, true, false)
			for _, size := range []string{"10", "20"} {
				check("ZRANDMEMBER myzset "+size, 10, false, true)
				check("ZRANDMEMBER myzset "+size+" withscores", 10, true, true)
			}
			for _, size := range []int{1, 2, 8, 9} {
				check("ZRANDMEMBER myzset "+itoa(size), size, false, true)
				check("ZRANDMEMBER myzset "+itoa(size)+" withscores", size, true, true)
			}
			h.script(
				"ZRANDMEMBER myzset 0", "[]",
				"ZRANDMEMBER nonexisting_key 100", "[]",
				"ZRANDMEMBER nonexisting_key", "(nil)",
				"ZRANDMEMBER myzset -9223372036854770000 withscores", "(error) ERR value is out of range",
				"ZRANDMEMBER myzset -9223372036854775808 withscores", "(error) ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
				"ZRANDMEMBER myzset -9223372036854775808", "(error) ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
				"ZRANDMEMBER myzset 1 withscores extra", "(error) ERR syntax error",
				"ZRANDMEMBER myzset 1 nope", "(error) ERR syntax error",
				"ZRANDMEMBER myzset x", "(error) ERR value is not an integer or out of range",
				"SET str v", "OK",
				"ZRANDMEMBER str 0", "(error) "+errWrongType,
			)
			h.w.Proto = 3
			if got := h.run("ZRANDMEMBER myzset 3 withscores"); strings.Count(got, "[") != 4 {
				t.Errorf("RESP3 ZRANDMEMBER WITHSCORES: %s, want 3 pairs", got)
			}
		})
	}
}

// unquoteAll takes apart a flat array reply of bulk strings.
func unquoteAll(reply string) ([]string, bool) {
	reply = strings.TrimSuffix(strings.TrimPrefix(reply, "["), "]")
	var out []string
	for _, f := range strings.Fields(reply) {
		s := strings.Trim(f, "\"")
		out = append(out, s)
	}
	return out, true
}

func TestZScan(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		h.script(
			"ZSCAN nokey 0", "[\"0\" []]",
			"ZADD z 1 a 2.5 b 3 c", n(3),
			"ZSCAN z x", "(error) ERR invalid cursor",
			"ZSCAN z 0 COUNT 0", "(error) ERR syntax error",
			"ZSCAN z 0 COUNT x", "(error) ERR value is not an integer or out of range",
			"ZSCAN z 0 TYPE zset", "(error) ERR syntax error",
			"ZSCAN z 0 MATCH", "(error) ERR syntax error",
			"SET str v", "OK",
			"ZSCAN str 0", "(error) "+errWrongType,
		)
		// Walk the whole set through the cursor: every member once at
		// least, with its score.
		for i := range 200 {
			h.do("ZADD", "big", itoa(i), "m"+itoa(i))
		}
		seen := map[string]string{}
		cursor := "0"
		for {
			reply := h.do("ZSCAN", "big", cursor, "COUNT", "7")
			i := strings.Index(reply, " ")
			cursor = strings.Trim(reply[1:i], "\"")
			items, _ := unquoteAll(reply[i+1 : len(reply)-1])
			for j := 0; j+1 < len(items); j += 2 {
				seen[items[j]] = items[j+1]
			}
			if cursor == "0" {
				break
			}
		}
		if len(seen) != 200 || seen["m7"] != "7" {
			t.Fatalf("ZSCAN saw %d members (m7: %q)", len(seen), seen["m7"])
		}
		h.expect("ZSCAN z 0 MATCH a*", "[\"0\" [\"a\" \"1\"]]")
	})
}

func TestZSetConversionThresholds(t *testing.T) {
	h := newHarness(t)
	h.ks.Limits.ZSetMaxListpackEntries = 4
	h.ks.Limits.ZSetMaxListpackValue = 8
	h.script(
		"ZADD z 1 a 2 b 3 c 4 d", n(4),
		"OBJECT ENCODING z", q("listpack"),
		"ZADD z 5 d", n(0),
		"OBJECT ENCODING z", q("listpack"),
		"ZADD z 5 e", n(1),
		"OBJECT ENCODING z", q("skiplist"),
		"ZREM z a b c d", n(4),
		"OBJECT ENCODING z", q("skiplist"),
		"ZADD v 1 12345678", n(1),
		"OBJECT ENCODING v", q("listpack"),
		"ZADD v 1 123456789", n(1),
		"OBJECT ENCODING v", q("skiplist"),
		"ZADD w 1 123456789", n(1),
		"OBJECT ENCODING w", q("skiplist"),
		"ZINCRBY x 1 123456789", q("1"),
		"OBJECT ENCODING x", q("skiplist"),
		// A store's result is a listpack whenever it fits.
		"ZUNIONSTORE u 1 z", n(1),
		"OBJECT ENCODING u", q("listpack"),
		"ZADD many 1 a 2 b 3 c 4 d 5 e", n(5),
		"ZUNIONSTORE u 1 many", n(5),
		"OBJECT ENCODING u", q("skiplist"),
		"ZINTERSTORE u 2 many many", n(5),
		"OBJECT ENCODING u", q("skiplist"),
		"ZDIFFSTORE u 1 v", n(2),
		"OBJECT ENCODING u", q("skiplist"),
		"ZRANGESTORE u many 0 1", n(2),
		"OBJECT ENCODING u", q("listpack"),
	)
	// CONFIG-driven limits apply as values are next written.
	h.ks.Limits.ZSetMaxListpackEntries = 128
	h.script("ZADD w 2 b", n(1), "OBJECT ENCODING w", q("skiplist"), "ZADD n 1 a", n(1), "OBJECT ENCODING n", q("listpack"))
	// decode picks the form the limits call for.
	lim := DefaultEncodingLimits()
	lim.ZSetMaxListpackEntries = 1
	z, err := decodeZSet([]byte(encodedZSet("1 a 2 b")), &lim)
	if err != nil || z.sk == nil {
		t.Fatalf("a 2-member set decoded with a limit of 1: %v, skiplist %v", err, z != nil && z.sk != nil)
	}
	lim.ZSetMaxListpackEntries = 2
	if z, _ := decodeZSet([]byte(encodedZSet("1 a 2 b")), &lim); z.sk != nil {
		t.Fatal("a 2-member set decoded as a skiplist with a limit of 2")
	}
}

func TestZSetKeyCommands(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		h.script(
			"ZADD z 1 a 2 b 3 c", n(3),
			"TYPE z", "zset",
			"COPY z z2", n(1),
			"ZADD z 4 d", n(1),
			"ZRANGE z2 0 -1 WITHSCORES", words("a 1 b 2 c 3"),
			"RENAME z2 z3", "OK",
			"ZCARD z3", n(3),
			"MOVE z3 1", n(1),
			"EXISTS z3", n(0),
			"EXPIRE z 10", n(1),
			"SCAN 0 TYPE zset", "[\"0\" [\"z\"]]",
			"GET z", "(error) "+errWrongType,
		)
		h.advance(11000)
		h.expect("EXISTS z", n(0))
		h.selectDB(1)
		h.expect("ZRANGE z3 0 -1", words("a b c"))
		before := h.ks.dbs[1].dataBytes
		h.expect("ZREM z3 a b c", n(3))
		if after := h.ks.dbs[1].dataBytes; after >= before {
			t.Errorf("dataBytes %d after deleting the set, %d before", after, before)
		}
	})
}

func TestZSetMemoryIsAccounted(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		d := h.ks.dbs[0]
		base := d.dataBytes
		for i := range 300 {
			h.do("ZADD", "z", itoa(i), "member-"+itoa(i))
		}
		grown := d.dataBytes
		if grown-base < 300*16 {
			t.Errorf("300 members account for %d bytes", grown-base)
		}
		for i := range 300 {
			h.do("ZINCRBY", "z", "1", "member-"+itoa(i))
		}
		for i := range 300 {
			h.do("ZREM", "z", "member-"+itoa(i))
		}
		if d.dataBytes != base {
			t.Errorf("dataBytes %d after removing everything, %d before", d.dataBytes, base)
		}
		if !strings.HasPrefix(h.run("MEMORY USAGE nokey"), "(nil)") {
			t.Error("MEMORY USAGE of a missing key")
		}
	})
}

// Plain sets are inputs of ZUNION, ZINTER, ZDIFF and ZINTERCARD, every
// member with score 1, as in Redis (zset.tcl's "ZUNIONSTORE with a regular
// set and weights", "ZINTERSTORE regression with two sets, intset+hashtable").
func TestZSetOpsTakePlainSets(t *testing.T) {
	h := newHarness(t)
	h.script(
		"SADD seta a b c", n(3),
		"SADD setb 1 2 3", n(3),
		"ZADD zsetb 1 b 2 c 3 d", n(3),
		"ZUNIONSTORE zsetc 2 seta zsetb WEIGHTS 2 3", n(4),
		"ZRANGE zsetc 0 -1 WITHSCORES", "[\"a\" \"2\" \"b\" \"5\" \"c\" \"8\" \"d\" \"9\"]",
		"ZINTER 2 seta zsetb WITHSCORES", "[\"b\" \"2\" \"c\" \"3\"]",
		"ZDIFF 2 seta zsetb", "[\"a\"]",
		"ZINTERCARD 2 seta zsetb", n(2),
		"ZUNION 2 seta setb", "[\"1\" \"2\" \"3\" \"a\" \"b\" \"c\"]",
		"ZINTERSTORE dst 2 seta setb", n(0),
		"SET str x", "OK",
		"ZUNION 2 seta str", "(error) "+errWrongType,
	)
}
