package keyspace

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Ported from Redis's tests/unit/type/zset.tcl (7.0). Like Redis's, the
// basics run once per encoding: "listpack" with the default limits,
// "skiplist" with zset-max-listpack-entries and -value at 0.

var (
	posInf = math.Inf(1)
	negInf = math.Inf(-1)
)

var zsetEncodings = []string{"listpack", "skiplist"}

// zsetHarness returns a harness whose new sets take the given encoding.
func zsetHarness(t *testing.T, encoding string) *harness {
	h := newHarness(t)
	if encoding == "skiplist" {
		h.ks.Limits.ZSetMaxListpackEntries = 0
		h.ks.Limits.ZSetMaxListpackValue = 0
	}
	return h
}

// eachZSetEncoding runs f for both encodings as subtests.
func eachZSetEncoding(t *testing.T, f func(t *testing.T, h *harness)) {
	for _, enc := range zsetEncodings {
		t.Run(enc, func(t *testing.T) { f(t, zsetHarness(t, enc)) })
	}
}

// arr shows a flat array of bulk strings as decodeReply does.
func arr(items ...string) string {
	for i, s := range items {
		items[i] = q(s)
	}
	return "[" + strings.Join(items, " ") + "]"
}

// words is arr of a space-separated list.
func words(s string) string { return arr(strings.Fields(s)...) }

func createZSet(h *harness, key string, items string) {
	h.t.Helper()
	h.do("DEL", key)
	f := strings.Fields(items)
	for i := 0; i < len(f); i += 2 {
		h.do("ZADD", key, f[i], f[i+1])
	}
}

func TestZSetCheckEncoding(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		h.expect("ZADD ztmp 10 x", n(1))
		enc := "listpack"
		if h.ks.Limits.ZSetMaxListpackEntries == 0 {
			enc = "skiplist"
		}
		h.expect("OBJECT ENCODING ztmp", q(enc))
		h.expect("TYPE ztmp", "zset")
	})
}

func TestZSetBasicZAddAndScoreUpdate(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		h.script(
			"ZADD ztmp 10 x", n(1), "ZADD ztmp 20 y", n(1), "ZADD ztmp 30 z", n(1),
			"ZRANGE ztmp 0 -1", words("x y z"),
			"ZADD ztmp 1 y", n(0),
			"ZRANGE ztmp 0 -1", words("y x z"),
			"ZADD myzset nan abc", "(error) ERR value is not a valid float",
			"ZINCRBY myzset nan abc", "(error) ERR value is not a valid float",
		)
		h.expectArgs("(error) ERR value is not a valid float", "ZADD", "myzset", "", "abc")
	})
}

func TestZAddOptions(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		h.script(
			"ZADD ztmp xx 10 x 20", "(error) ERR syntax error",
			"ZADD ztmp xx 10 x", n(0),
			"TYPE ztmp", "none",
			"ZADD ztmp 10 x", n(1),
			"ZADD ztmp xx 20 y", n(0),
			"ZCARD ztmp", n(1),
			"ZADD ztmp 10 x 20 y 30 z", n(2),
			"ZADD ztmp xx 5 foo 11 x 21 y 40 zap", n(0),
			"ZCARD ztmp", n(3),
			"ZSCORE ztmp x", q("11"),
			"ZSCORE ztmp y", q("21"),
		)
		createZSet(h, "ztmp", "10 x 20 y 30 z")
		h.script(
			"ZADD ztmp gt ch 5 foo 11 x 21 y 29 z", n(3),
			"ZCARD ztmp", n(4),
			"ZMSCORE ztmp x y z", words("11 21 30"),
		)
		createZSet(h, "ztmp", "10 x 20 y 30 z")
		h.script(
			"ZADD ztmp lt ch 5 foo 11 x 21 y 29 z", n(2),
			"ZMSCORE ztmp x y z", words("10 20 29"),
		)
		createZSet(h, "ztmp", "10 x 20 y 30 z")
		h.script("ZADD ztmp gt xx ch 5 foo 11 x 21 y 29 z", n(2), "ZCARD ztmp", n(3))
		createZSet(h, "ztmp", "10 x 20 y 30 z")
		h.script("ZADD ztmp lt xx ch 5 foo 11 x 21 y 29 z", n(1), "ZMSCORE ztmp x y z", words("10 20 29"))
		h.script(
			"ZADD ztmp xx nx 10 x", "(error) ERR XX and NX options at the same time are not compatible",
			"ZADD ztmp gt nx 10 x", "(error) ERR GT, LT, and/or NX options at the same time are not compatible",
			"ZADD ztmp lt nx 10 x", "(error) ERR GT, LT, and/or NX options at the same time are not compatible",
			"ZADD ztmp lt gt 10 x", "(error) ERR GT, LT, and/or NX options at the same time are not compatible",
			"DEL ztmp", n(1),
			"ZADD ztmp nx 10 x 20 y 30 z", n(3),
			"ZADD ztmp nx 11 x 21 y 100 a 200 b", n(2),
			"ZMSCORE ztmp x y a b", words("10 20 100 200"),
		)
	})
}

func TestZAddIncr(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		h.script(
			"ZADD ztmp 28 x", n(1),
			"ZADD ztmp lt incr 1 x", "(nil)",
			"ZSCORE ztmp x", q("28"),
			"ZADD ztmp gt incr -1 x", "(nil)",
			"ZSCORE ztmp x", q("28"),
			"DEL ztmp", n(1),
			"ZADD ztmp +inf x -inf y", n(2),
			"ZADD ztmp lt incr 1 x", "(nil)",
			"ZADD ztmp gt incr -1 x", "(nil)",
			"ZADD ztmp lt incr -1 x", "(nil)",
			"ZADD ztmp gt incr 1 x", "(nil)",
			"ZADD ztmp lt incr 1 y", "(nil)",
			"ZADD ztmp gt incr 1 y", "(nil)",
			"ZMSCORE ztmp x y", words("inf -inf"),
			"DEL ztmp", n(1),
			"ZADD ztmp 10 x 20 y 30 z", n(3),
			"ZADD ztmp INCR 15 x", q("25"),
			"ZSCORE ztmp x", q("25"),
			"ZADD ztmp INCR 15 x 10 y", "(error) ERR INCR option supports a single increment-element pair",
			"ZADD ztmp nx INCR 1 x", "(nil)",
			"ZADD ztmp xx INCR 1 new", "(nil)",
			"ZADD ztmp INCR 0 x", q("25"),
			"ZADD ztmp 11 x 21 y 30 z", n(0),
			"ZADD ztmp ch 12 x 22 y 30 z", n(2),
			"ZINCRBY myzset +inf abc", q("inf"),
			"ZINCRBY myzset -inf abc", "(error) ERR resulting score is not a number (NaN)",
			"ZSCORE myzset abc", q("inf"),
			"ZINCRBY myzset 10 a 20 b", "(error) ERR wrong number of arguments for 'zincrby' command",
			"DEL ztmp", n(1),
			"ZINCRBY ztmp 1.0 x", q("1"),
			"ZINCRBY ztmp 0.5 x", q("1.5"),
			"ZINCRBY ztmp -2 x", q("-0.5"),
		)
	})
}

func TestZAddVariadic(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		h.script(
			"ZADD myzset 10 a 20 b 30 c", n(3),
			"ZRANGE myzset 0 -1 withscores", words("a 10 b 20 c 30"),
			"ZADD myzset 5 x 20 b 30 c", n(1),
			"ZRANGE myzset 0 -1 withscores", words("x 5 a 10 b 20 c 30"),
			"DEL myzset", n(1),
			"ZADD myzset 10 a 20 b 30.badscore c", "(error) ERR value is not a valid float",
			"EXISTS myzset", n(0),
			"ZADD myzset 10 a 20 b 30 c 40", "(error) ERR syntax error",
		)
	})
}

func TestZCardZRem(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		h.script(
			"ZADD ztmp 10 a 20 b 30 c", n(3),
			"ZCARD ztmp", n(3),
			"ZCARD zdoesntexist", n(0),
			"DEL ztmp", n(1),
			"ZADD ztmp 10 x 20 y", n(2),
			"ZREM ztmp z", n(0),
			"ZREM ztmp y", n(1),
			"ZREM ztmp x", n(1),
			"EXISTS ztmp", n(0),
			"ZADD ztmp 10 a 20 b 30 c", n(3),
			"ZREM ztmp x y a b k", n(2),
			"ZREM ztmp foo bar", n(0),
			"ZREM ztmp c", n(1),
			"EXISTS ztmp", n(0),
			"ZADD ztmp 10 a 20 b 30 c", n(3),
			"ZREM ztmp a b c d e f g", n(3),
			"ZREM nokey a", n(0),
		)
	})
}

func TestZRangeBasics(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		createZSet(h, "ztmp", "1 a 2 b 3 c 4 d")
		h.script(
			"ZRANGE ztmp 0 -1", words("a b c d"),
			"ZRANGE ztmp 0 -2", words("a b c"),
			"ZRANGE ztmp 1 -1", words("b c d"),
			"ZRANGE ztmp 1 -2", words("b c"),
			"ZRANGE ztmp -2 -1", words("c d"),
			"ZRANGE ztmp -2 -2", words("c"),
			"ZRANGE ztmp -5 2", words("a b c"),
			"ZRANGE ztmp -5 1", words("a b"),
			"ZRANGE ztmp 5 -1", "[]",
			"ZRANGE ztmp 5 -2", "[]",
			"ZRANGE ztmp 0 5", words("a b c d"),
			"ZRANGE ztmp 1 5", words("b c d"),
			"ZRANGE ztmp 0 -5", "[]",
			"ZRANGE ztmp 1 -5", "[]",
			"ZRANGE ztmp 0 -1 withscores", words("a 1 b 2 c 3 d 4"),
			"ZREVRANGE ztmp 0 -1", words("d c b a"),
			"ZREVRANGE ztmp 0 -2", words("d c b"),
			"ZREVRANGE ztmp 1 -1", words("c b a"),
			"ZREVRANGE ztmp 1 -2", words("c b"),
			"ZREVRANGE ztmp -2 -1", words("b a"),
			"ZREVRANGE ztmp -2 -2", words("b"),
			"ZREVRANGE ztmp -5 2", words("d c b"),
			"ZREVRANGE ztmp -5 1", words("d c"),
			"ZREVRANGE ztmp 5 -1", "[]",
			"ZREVRANGE ztmp 0 5", words("d c b a"),
			"ZREVRANGE ztmp 1 5", words("c b a"),
			"ZREVRANGE ztmp 0 -5", "[]",
			"ZREVRANGE ztmp 0 -1 withscores", words("d 4 c 3 b 2 a 1"),
			"ZRANGE ztmp 0 -1 REV", words("d c b a"),
			"ZRANGE nokey 0 -1", "[]",
			"ZRANGE ztmp a -1", "(error) ERR value is not an integer or out of range",
		)
	})
}

func TestZRankZRevRank(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		h.script(
			"ZADD zranktmp 10 x 20 y 30 z", n(3),
			"ZRANK zranktmp x", n(0),
			"ZRANK zranktmp y", n(1),
			"ZRANK zranktmp z", n(2),
			"ZRANK zranktmp foo", "(nil)",
			"ZREVRANK zranktmp x", n(2),
			"ZREVRANK zranktmp y", n(1),
			"ZREVRANK zranktmp z", n(0),
			"ZREVRANK zranktmp foo", "(nil)",
			"ZREM zranktmp y", n(1),
			"ZRANK zranktmp x", n(0),
			"ZRANK zranktmp z", n(1),
			"ZRANK nokey x", "(nil)",
		)
	})
}

func TestZIncrBy(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		h.script(
			"ZINCRBY zset 1 foo", q("1"),
			"ZRANGE zset 0 -1", words("foo"),
			"ZSCORE zset foo", q("1"),
			"ZINCRBY zset 2 foo", q("3"),
			"ZINCRBY zset 1 bar", q("1"),
			"ZRANGE zset 0 -1", words("bar foo"),
			"ZINCRBY zset 10 bar", q("11"),
			"ZINCRBY zset -5 foo", q("-2"),
			"ZINCRBY zset -5 bar", q("6"),
			"ZRANGE zset 0 -1", words("foo bar"),
			"ZSCORE zset foo", q("-2"),
			"ZSCORE zset bar", q("6"),
		)
	})
}

const defaultZSet = "-inf a 1 b 2 c 3 d 4 e 5 f +inf g"

func TestZRangeByScoreAndZCount(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		createZSet(h, "zset", defaultZSet)
		h.script(
			"ZRANGEBYSCORE zset -inf 2", words("a b c"),
			"ZRANGEBYSCORE zset 0 3", words("b c d"),
			"ZRANGEBYSCORE zset 3 6", words("d e f"),
			"ZRANGEBYSCORE zset 4 +inf", words("e f g"),
			"ZREVRANGEBYSCORE zset 2 -inf", words("c b a"),
			"ZREVRANGEBYSCORE zset 3 0", words("d c b"),
			"ZREVRANGEBYSCORE zset 6 3", words("f e d"),
			"ZREVRANGEBYSCORE zset +inf 4", words("g f e"),
			"ZCOUNT zset 0 3", n(3),
			"ZRANGEBYSCORE zset (-inf (2", words("b"),
			"ZRANGEBYSCORE zset (0 (3", words("b c"),
			"ZRANGEBYSCORE zset (3 (6", words("e f"),
			"ZRANGEBYSCORE zset (4 (+inf", words("f"),
			"ZREVRANGEBYSCORE zset (2 (-inf", words("b"),
			"ZREVRANGEBYSCORE zset (3 (0", words("c b"),
			"ZREVRANGEBYSCORE zset (6 (3", words("f e"),
			"ZREVRANGEBYSCORE zset (+inf (4", words("f"),
			"ZCOUNT zset (0 (3", n(2),
			"ZREM zset a", n(1),
			"ZREM zset g", n(1),
			"ZRANGEBYSCORE zset 4 2", "[]",
			"ZRANGEBYSCORE zset 6 +inf", "[]",
			"ZRANGEBYSCORE zset -inf -6", "[]",
			"ZREVRANGEBYSCORE zset +inf 6", "[]",
			"ZREVRANGEBYSCORE zset -6 -inf", "[]",
			"ZRANGEBYSCORE zset (4 (2", "[]",
			"ZRANGEBYSCORE zset 2 (2", "[]",
			"ZRANGEBYSCORE zset (2 2", "[]",
			"ZRANGEBYSCORE zset (6 (+inf", "[]",
			"ZRANGEBYSCORE zset (-inf (-6", "[]",
			"ZREVRANGEBYSCORE zset (+inf (6", "[]",
			"ZREVRANGEBYSCORE zset (-6 (-inf", "[]",
			"ZRANGEBYSCORE zset 2.4 2.6", "[]",
			"ZRANGEBYSCORE zset (2.4 2.6", "[]",
			"ZRANGEBYSCORE zset 2.4 (2.6", "[]",
			"ZRANGEBYSCORE zset (2.4 (2.6", "[]",
		)
		createZSet(h, "zset", defaultZSet)
		h.script(
			"ZRANGEBYSCORE zset 0 3 withscores", words("b 1 c 2 d 3"),
			"ZREVRANGEBYSCORE zset 3 0 withscores", words("d 3 c 2 b 1"),
			"ZRANGEBYSCORE zset 0 10 LIMIT 0 2", words("b c"),
			"ZRANGEBYSCORE zset 0 10 LIMIT 2 3", words("d e f"),
			"ZRANGEBYSCORE zset 0 10 LIMIT 2 10", words("d e f"),
			"ZRANGEBYSCORE zset 0 10 LIMIT 20 10", "[]",
			"ZREVRANGEBYSCORE zset 10 0 LIMIT 0 2", words("f e"),
			"ZREVRANGEBYSCORE zset 10 0 LIMIT 2 3", words("d c b"),
			"ZREVRANGEBYSCORE zset 10 0 LIMIT 2 10", words("d c b"),
			"ZREVRANGEBYSCORE zset 10 0 LIMIT 20 10", "[]",
			"ZRANGEBYSCORE zset 2 5 LIMIT 2 3 WITHSCORES", words("e 4 f 5"),
			"ZREVRANGEBYSCORE zset 5 2 LIMIT 2 3 WITHSCORES", words("d 3 c 2"),
			"ZRANGEBYSCORE zset 2 5 LIMIT 12 13 WITHSCORES", "[]",
			"ZRANGEBYSCORE zset 0 10 LIMIT 1 -1", words("c d e f"),
			"ZRANGEBYSCORE zset 0 10 LIMIT -1 2", "[]",
			"ZRANGEBYSCORE fooz str 1", "(error) ERR min or max is not a float",
			"ZRANGEBYSCORE fooz 1 str", "(error) ERR min or max is not a float",
			"ZRANGEBYSCORE fooz 1 NaN", "(error) ERR min or max is not a float",
			"ZCOUNT fooz 1 NaN", "(error) ERR min or max is not a float",
			"ZCOUNT fooz 1 2", n(0),
			"ZRANGE zset 5 0 BYSCORE REV LIMIT 0 2 WITHSCORES", words("f 5 e 4"),
		)
	})
}

const defaultLexZSet = "0 alpha 0 bar 0 cool 0 down 0 elephant 0 foo 0 great 0 hill 0 omega"

func TestZRangeByLexAndZLexCount(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		createZSet(h, "zset", defaultLexZSet)
		h.script(
			"ZRANGEBYLEX zset - [cool", words("alpha bar cool"),
			"ZRANGEBYLEX zset [bar [down", words("bar cool down"),
			"ZRANGEBYLEX zset [g +", words("great hill omega"),
			"ZREVRANGEBYLEX zset [cool -", words("cool bar alpha"),
			"ZREVRANGEBYLEX zset [down [bar", words("down cool bar"),
			"ZREVRANGEBYLEX zset + [d", words("omega hill great foo elephant down"),
			"ZLEXCOUNT zset [ele [h", n(3),
			"ZRANGEBYLEX zset - (cool", words("alpha bar"),
			"ZRANGEBYLEX zset (bar (down", words("cool"),
			"ZRANGEBYLEX zset (great +", words("hill omega"),
			"ZREVRANGEBYLEX zset (cool -", words("bar alpha"),
			"ZREVRANGEBYLEX zset (down (bar", words("cool"),
			"ZREVRANGEBYLEX zset + (great", words("omega hill"),
			"ZLEXCOUNT zset (ele (great", n(2),
			"ZRANGEBYLEX zset (az (b", "[]",
			"ZRANGEBYLEX zset (z +", "[]",
			"ZRANGEBYLEX zset - [aaaa", "[]",
			"ZREVRANGEBYLEX zset [elez [elex", "[]",
			"ZREVRANGEBYLEX zset (hill (omega", "[]",
			"ZLEXCOUNT zset - +", n(9),
			"ZLEXCOUNT zset + -", n(0),
			"ZLEXCOUNT zset + [c", n(0),
			"ZLEXCOUNT zset [c -", n(0),
			"ZLEXCOUNT zset [bar +", n(8),
			"ZLEXCOUNT zset [bar [foo", n(5),
			"ZLEXCOUNT zset [bar (foo", n(4),
			"ZLEXCOUNT zset (bar [foo", n(4),
			"ZLEXCOUNT zset (bar (foo", n(3),
			"ZLEXCOUNT zset - (foo", n(5),
			"ZLEXCOUNT zset (maxstring +", n(1),
			"ZRANGEBYLEX zset - [cool LIMIT 0 2", words("alpha bar"),
			"ZRANGEBYLEX zset - [cool LIMIT 1 2", words("bar cool"),
			"ZRANGEBYLEX zset [bar [down LIMIT 0 0", "[]",
			"ZRANGEBYLEX zset [bar [down LIMIT 2 0", "[]",
			"ZRANGEBYLEX zset [bar [down LIMIT 0 1", words("bar"),
			"ZRANGEBYLEX zset [bar [down LIMIT 1 1", words("cool"),
			"ZRANGEBYLEX zset [bar [down LIMIT 0 100", words("bar cool down"),
			"ZREVRANGEBYLEX zset + [d LIMIT 0 5", words("omega hill great foo elephant"),
			"ZREVRANGEBYLEX zset + [d LIMIT 0 4", words("omega hill great foo"),
			"ZRANGE zset [b [c BYLEX", words("bar"),
		)
		for _, bad := range []string{"foo bar", "[foo bar", "foo [bar", "+x [bar", "-x [bar"} {
			h.expect("ZRANGEBYLEX fooz "+bad, "(error) ERR min or max not valid string range item")
		}
		h.expect("ZLEXCOUNT fooz a b", "(error) ERR min or max not valid string range item")
	})
}

func TestZRemRangeByScoreRankLex(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		byScore := []struct{ min, max, rem, left string }{
			{"2", "4", "3", "a e"}, {"-10", "1", "1", "b c d e"}, {"5", "10", "1", "a b c d"},
			{"4", "2", "0", "a b c d e"}, {"-inf", "3", "3", "d e"}, {"3", "+inf", "3", "a b"},
			{"-inf", "+inf", "5", ""}, {"(1", "5", "4", "a"}, {"(2", "5", "3", "a b"},
			{"1", "(5", "4", "e"}, {"1", "(4", "3", "d e"}, {"(1", "(5", "3", "a e"},
		}
		for _, c := range byScore {
			createZSet(h, "zset", "1 a 2 b 3 c 4 d 5 e")
			h.expectArgs(n(atoi(c.rem)), "ZREMRANGEBYSCORE", "zset", c.min, c.max)
			h.expect("ZRANGE zset 0 -1", words(c.left))
		}
		createZSet(h, "zset", "1 a 2 b 3 c 4 d 5 e")
		h.script("ZREMRANGEBYSCORE zset 1 5", n(5), "EXISTS zset", n(0),
			"ZREMRANGEBYSCORE fooz str 1", "(error) ERR min or max is not a float",
			"ZREMRANGEBYSCORE fooz 1 NaN", "(error) ERR min or max is not a float")
		byRank := []struct{ min, max, rem, left string }{
			{"1", "3", "3", "a e"}, {"-10", "0", "1", "b c d e"}, {"10", "-1", "0", "a b c d e"},
			{"0", "-10", "0", "a b c d e"}, {"0", "10", "5", ""},
		}
		for _, c := range byRank {
			createZSet(h, "zset", "1 a 2 b 3 c 4 d 5 e")
			h.expectArgs(n(atoi(c.rem)), "ZREMRANGEBYRANK", "zset", c.min, c.max)
			h.expect("ZRANGE zset 0 -1", words(c.left))
		}
		createZSet(h, "zset", defaultLexZSet)
		h.script(
			"ZREMRANGEBYLEX zset [bar (down", n(2),
			"ZRANGE zset 0 -1", words("alpha down elephant foo great hill omega"),
			"ZREMRANGEBYLEX zset - +", n(7),
			"EXISTS zset", n(0),
			"ZREMRANGEBYLEX zset x +", "(error) ERR min or max not valid string range item",
			"SET str v", "OK",
			"ZREMRANGEBYRANK str 0 1", "(error) "+errWrongType[0:],
		)
	})
}

func atoi(s string) int64 {
	v, _ := strconv.ParseInt(s, 10, 64)
	return v
}

func TestZRangeInvalidSyntax(t *testing.T) {
	h := newHarness(t)
	h.script(
		"ZADD z1 1 a 2 b 3 c 4 d", n(4),
		"ZRANGE z1 0 -1 limit 1 2", "(error) ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
		"ZRANGE z1 0 -1 BYLEX WITHSCORES", "(error) ERR syntax error, WITHSCORES not supported in combination with BYLEX",
		"ZREVRANGE z1 0 -1 BYSCORE", "(error) ERR syntax error",
		"ZRANGEBYSCORE z1 0 -1 REV", "(error) ERR syntax error",
		"ZRANGE z1 0 -1 BYSCORE BYLEX", "(error) ERR syntax error",
		"ZRANGE z1 0 -1 REV REV", "(error) ERR syntax error",
		"ZRANGE z1 0 -1 LIMIT 1", "(error) ERR syntax error",
		"ZRANGE z1 0 1 BYSCORE LIMIT x 1", "(error) ERR value is not an integer or out of range",
		"ZRANGESTORE z2 z1 0 -1 limit 1 2", "(error) ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
		"ZRANGESTORE z2 z1 0 -1 WITHSCORES", "(error) ERR syntax error",
		"SET foo bar", "OK",
		"ZRANGE foo 0 -1", "(error) "+errWrongType,
		"ZSCORE foo a", "(error) "+errWrongType,
		"ZADD foo 1 a", "(error) "+errWrongType,
	)
}

func TestZRangeStore(t *testing.T) {
	h := newHarness(t)
	h.script(
		"ZADD z1 1 a 2 b 3 c 4 d", n(4),
		"ZRANGESTORE z2 z1 0 -1", n(4),
		"ZRANGE z2 0 -1 withscores", words("a 1 b 2 c 3 d 4"),
		"ZRANGESTORE z2 z1 1 2", n(2),
		"ZRANGE z2 0 -1 withscores", words("b 2 c 3"),
		"ZRANGESTORE z2 z1 [b [c BYLEX", n(2),
		"ZRANGE z2 0 -1 withscores", words("b 2 c 3"),
		"ZRANGESTORE z2 z1 1 2 BYSCORE", n(2),
		"ZRANGE z2 0 -1 withscores", words("a 1 b 2"),
		"ZRANGESTORE z2 z1 0 5 BYSCORE LIMIT 0 2", n(2),
		"ZRANGE z2 0 -1 withscores", words("a 1 b 2"),
		"ZRANGESTORE z2 z1 5 0 BYSCORE REV LIMIT 0 2", n(2),
		"ZRANGE z2 0 -1 withscores", words("c 3 d 4"),
		"ZRANGE z1 5 0 BYSCORE REV LIMIT 0 2 WITHSCORES", words("d 4 c 3"),
		"ZRANGESTORE z2 missing 0 -1", n(0),
		"EXISTS z2", n(0),
		"ZADD z2 1 a", n(1),
		"SET foo bar", "OK",
		"ZRANGESTORE z2 foo 0 -1", "(error) "+errWrongType,
		"ZRANGE z2 0 -1", words("a"),
		"ZRANGESTORE z2 z1 5 6", n(0),
		"EXISTS z2", n(0),
		"ZRANGESTORE z2 z1 [f [g BYLEX", n(0),
		"ZRANGESTORE z2 z1 5 6 BYSCORE", n(0),
		"ZRANGESTORE foo z1 0 0", n(1),
		"TYPE foo", "zset",
	)
	// The result takes the listpack form whenever it fits (#10767).
	h.ks.Limits.ZSetMaxListpackEntries = 0
	h.script("DEL z1 z2", n(1), "ZADD z1 1 a", n(1), "ZRANGESTORE z2 z1 0 -1", n(1), "OBJECT ENCODING z2", q("skiplist"))
	h.ks.Limits.ZSetMaxListpackEntries = 1
	h.script(
		"DEL z1 z2 z3", n(2), "ZADD z1 1 a 2 b", n(2),
		"OBJECT ENCODING z1", q("skiplist"),
		"ZRANGESTORE z2 z1 0 0", n(1), "OBJECT ENCODING z2", q("listpack"),
		"ZRANGESTORE z3 z1 0 1", n(2), "OBJECT ENCODING z3", q("skiplist"),
	)
}

func TestZSetRESP3Replies(t *testing.T) {
	h := newHarness(t)
	h.w.Proto = 3
	h.script(
		"ZADD z 1 a 2 b 3 c 4 d", n(4),
		"ZRANGE z 0 -1 withscores", "[[\"a\" (double) 1] [\"b\" (double) 2] [\"c\" (double) 3] [\"d\" (double) 4]]",
		"ZSCORE z a", "(double) 1",
		"ZMSCORE z a x", "[(double) 1 (nil)]",
		"ZINCRBY z 0.5 a", "(double) 1.5",
		"ZPOPMIN z", "[\"a\" (double) 1.5]",
		"ZPOPMIN z 1", "[[\"b\" (double) 2]]",
		"ZPOPMAX z 0", "[]",
		"ZMPOP 1 z MAX", "[\"z\" [[\"d\" (double) 4]]]",
		"ZMPOP 1 nokey MAX", "(nil)",
		"ZADD z1 1 a 2 b", n(2),
		"ZADD z2 1 b 2 c", n(2),
		"ZINTER 2 z1 z2 withscores", "[[\"b\" (double) 3]]",
	)
}

func TestZSetSorted(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		r := rand.New(rand.NewPCG(1, 2))
		for test := range 2 {
			h.do("DEL", "myzset")
			aux := map[string]float64{}
			for i := range 128 {
				score := r.Float64()
				if test == 1 {
					score = float64(r.IntN(10))
				}
				k := itoa(i)
				aux[k] = score
				h.do("ZADD", "myzset", formatTestScore(score), k)
				if r.Float64() < 0.2 {
					j := itoa(r.IntN(1000))
					score = r.Float64()
					aux[j] = score
					h.do("ZADD", "myzset", formatTestScore(score), j)
				}
			}
			want := sortedMembers(aux)
			h.expectArgs(arr(want...), "ZRANGE", "myzset", "0", "-1")
		}
	})
}

func formatTestScore(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// sortedMembers lists a model's members in (score, member) order.
func sortedMembers(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		switch {
		case m[a] < m[b]:
			return -1
		case m[a] > m[b]:
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys
}

func TestZSetRankStress(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		r := rand.New(rand.NewPCG(3, 4))
		for k := range 2000 {
			i := itoa(k % 100)
			if r.Float64() < .2 {
				h.do("ZREM", "myzset", i)
			} else {
				h.do("ZADD", "myzset", formatTestScore(r.Float64()), i)
			}
			card := atoi(strings.TrimPrefix(h.do("ZCARD", "myzset"), "(integer) "))
			if card == 0 {
				continue
			}
			index := itoa(r.IntN(int(card)))
			ele := h.do("ZRANGE", "myzset", index, index)
			ele = strings.Trim(ele, "[]")
			m, _ := strconv.Unquote(ele)
			if got := h.do("ZRANK", "myzset", m); got != "(integer) "+index {
				t.Fatalf("rank of %q is %s, want %s", m, got, index)
			}
		}
		l1 := h.do("ZRANGE", "myzset", "0", "-1")
		l2 := strings.Fields(strings.Trim(h.do("ZREVRANGE", "myzset", "0", "-1"), "[]"))
		slices.Reverse(l2)
		if l1 != "["+strings.Join(l2, " ")+"]" {
			t.Fatalf("ZRANGE and ZREVRANGE disagree")
		}
	})
}

func TestZMScore(t *testing.T) {
	h := newHarness(t)
	h.script(
		"ZADD zmscoretest 10 x 20 y", n(2),
		"ZMSCORE zmscoretest x y", words("10 20"),
		"ZMSCORE zmscoretest x", words("10"),
		"ZMSCORE zmscoretest x nope", "[\"10\" (nil)]",
		"ZMSCORE nokey x y", "[(nil) (nil)]",
		"ZMSCORE zmscoretest", "(error) ERR wrong number of arguments for 'zmscore' command",
	)
}

func TestZSetScoreFormatting(t *testing.T) {
	h := newHarness(t)
	h.script(
		"ZADD z 0.1 a 1e300 b -0 c 3.0 d 1.5e-7 e 0x10 f", n(6),
		"ZMSCORE z a b c d e f", words("0.1 1e+300 -0 3 1.5e-7 16"),
		"ZADD z 1e400 g", "(error) ERR value is not a valid float",
		"ZADD z 1e-400 g", "(error) ERR value is not a valid float",
		"ZADD z inf g -Infinity h", n(2),
		"ZMSCORE z g h", words("inf -inf"),
		"ZCOUNT z -inf +inf", n(8),
		"ZCOUNT z (-inf (+inf", n(6),
	)
	h.expectArgs(n(2), "ZCOUNT", "z", "", "(0.1")
	h.expectArgs("(error) ERR value is not a valid float", "ZADD", "z", " 1", "g")
}

func TestZSetNumericMembers(t *testing.T) {
	eachZSetEncoding(t, func(t *testing.T, h *harness) {
		h.script(
			"ZADD zsetd 1 1 2 2 3 3", n(3),
			"ZADD zsetf 1 1 3 3 4 4", n(3),
			"ZUNION 2 zsetd zsetf withscores", words("1 2 2 2 4 4 3 6"),
			"ZINTER 2 zsetd zsetf withscores", words("1 2 3 6"),
			"ZINTERCARD 2 zsetd zsetf", n(2),
			"ZINTERCARD 2 zsetd zsetf limit 0", n(2),
			"ZDIFF 2 zsetd zsetf withscores", words("2 2"),
		)
	})
}

func TestZSetSkiplistOrderWhenElementsMove(t *testing.T) {
	h := zsetHarness(t, "skiplist")
	r := rand.New(rand.NewPCG(5, 6))
	for range 10 {
		h.do("DEL", "zset")
		model := map[string]float64{}
		for range 1000 {
			s, m := r.IntN(50), "ele-"+itoa(r.IntN(10))
			model[m] = float64(s)
			h.do("ZADD", "zset", itoa(s), m)
		}
		h.expectArgs(arr(sortedMembers(model)...), "ZRANGE", "zset", "0", "-1")
	}
}

func TestZSetDoubleParsing(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1", 1, true}, {"-1.5", -1.5, true}, {"+2", 2, true}, {"1e3", 1000, true},
		{"0x1p-2", 0.25, true}, {"0X10", 16, true}, {".5", 0.5, true}, {"5.", 5, true},
		{"inf", posInf, true}, {"-INF", negInf, true}, {"+infinity", posInf, true},
		{"nan", 0, false}, {"", 0, false}, {" 1", 0, false}, {"1 ", 0, false},
		{"1e400", 0, false}, {"1e-400", 0, false}, {"0e-400", 0, true}, {"abc", 0, false},
		{"1_0", 0, false}, {"0x", 0, false}, {"e5", 0, false}, {"4.9e-324", 4.9e-324, true},
	} {
		got, ok := parseScore([]byte(c.in))
		if ok != c.ok || ok && got != c.want {
			t.Errorf("parseScore(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		in string
		ok bool
	}{{"", true}, {"(", true}, {" 1", true}, {"(1e400", true}, {"nan", false}, {"((1", false}, {"1 ", false}} {
		if _, _, ok := parseRangeBound([]byte(c.in)); ok != c.ok {
			t.Errorf("parseRangeBound(%q) ok = %v, want %v", c.in, ok, c.ok)
		}
	}
}

func TestZSetCommandTable(t *testing.T) {
	for _, name := range []string{"zadd", "zunionstore", "zmpop", "zintercard", "zrangestore", "zscan"} {
		if Lookup([]byte(name)) == nil {
			t.Fatalf("%s missing", name)
		}
	}
	s := Lookup([]byte("zunionstore"))
	if got := s.MovableKeys([][]byte{[]byte("zunionstore"), []byte("d"), []byte("2"), []byte("a"), []byte("b"), []byte("WEIGHTS"), []byte("1"), []byte("2")}, nil); !slices.Equal(got, []int{1, 3, 4}) {
		t.Errorf("zunionstore keys %v", got)
	}
	s = Lookup([]byte("zmpop"))
	if got := s.MovableKeys([][]byte{[]byte("zmpop"), []byte("2"), []byte("a"), []byte("b"), []byte("MIN")}, nil); !slices.Equal(got, []int{2, 3}) {
		t.Errorf("zmpop keys %v", got)
	}
	if got := s.MovableKeys([][]byte{[]byte("zmpop"), []byte("9"), []byte("a")}, nil); !slices.Equal(got, []int{2}) {
		t.Errorf("zmpop short keys %v", got)
	}
	if got := s.MovableKeys([][]byte{[]byte("zmpop"), []byte("x")}, nil); len(got) != 0 {
		t.Errorf("zmpop bad numkeys keys %v", got)
	}
}

// TestZSkiplistFoundNodeNeverOutlivesItsMember: the node that find keeps
// for the next update is forgotten when its member is removed, so that a
// lookup after ZREM (or a pop) finds nothing and a re-added member is
// updated in its new node.
func TestZSkiplistFoundNodeNeverOutlivesItsMember(t *testing.T) {
	sk := newZSkiplist()
	for i := range 200 {
		sk.insert("m"+itoa(i), float64(i))
	}
	if s, ok := sk.score([]byte("m7")); !ok || s != 7 {
		t.Fatalf("score(m7) = %v, %v", s, ok)
	}
	sk.remove([]byte("m7"))
	if _, ok := sk.score([]byte("m7")); ok {
		t.Fatal("m7 found after its removal")
	}
	sk.insert("m7", 500)
	if s, ok := sk.score([]byte("m7")); !ok || s != 500 {
		t.Fatalf("score(m7) after re-adding = %v, %v", s, ok)
	}
	sk.update([]byte("m7"), 500, -1)
	if r, ok := sk.rank([]byte("m7")); !ok || r != 0 || sk.nodeAt(0).member != "m7" || sk.length != 200 {
		t.Fatalf("after the update m7 has rank %d (%v), the first member is %q, length %d", r, ok, sk.nodeAt(0).member, sk.length)
	}
}

// parseScore's fast path for small integers gives strtod's result.
func TestSmallIntScoresParseAsStrtod(t *testing.T) {
	for _, in := range []string{"0", "-0", "7", "-7", "007", "-000", "123456789012345", "-999999999999999",
		"1234567890123456", "1.5", "1e3", "+3", "-", "", "12a", "inf", "-inf"} {
		b := []byte(in)
		fast, okFast := smallIntScore(b)
		if !okFast {
			continue
		}
		f, erange, ok := strtod(b)
		if !ok || erange || f != fast || math.Signbit(f) != math.Signbit(fast) {
			t.Errorf("%q: fast %v, strtod %v (ok %v)", in, fast, f, ok)
		}
	}
	if _, ok := smallIntScore([]byte("1234567890123456")); ok {
		t.Error("16 digits took the fast path")
	}
}
