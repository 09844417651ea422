package keyspace

import (
	"strings"
	"testing"
)

// Tests ported from Redis 7.0's tests/unit/type/list.tcl, list-2.tcl and
// list-3.tcl (the blocking commands left out), each run over the list
// representations: "listpack" (small elements, default limit: one flat
// node), "quicklist" (an 8 KiB element, as the tcl's largevalue(quicklist),
// which forces the node form) and "smallnodes" (list-max-listpack-size 2,
// so that every list of more than two elements spans several nodes).

type listVariant struct {
	name  string
	large string
	fill  int64
}

var listVariants = []listVariant{
	{"listpack", "hello", -2},
	{"quicklist", strings.Repeat("x", 8192), -2},
	{"smallnodes", "hello", 2},
}

// eachListVariant runs f in a subtest per representation.
func eachListVariant(t *testing.T, f func(t *testing.T, h *harness, large string)) {
	for _, v := range listVariants {
		t.Run(v.name, func(t *testing.T) {
			h := newHarness(t)
			h.ks.Limits.ListMaxListpackSize = v.fill
			f(t, h, v.large)
		})
	}
}

// listOfKey returns the list under key in the harness's database, or nil.
func (h *harness) listOfKey(key string) *list {
	sl, _ := h.ks.lookup(h.c.DB, []byte(key))
	if sl == nil || sl.v.kind() != KindList {
		return nil
	}
	return listOf(sl)
}

// checkList checks a list's invariants: counts, node limits, no empty
// node, and the memory figure.
func (h *harness) checkList(key string) {
	h.t.Helper()
	l := h.listOfKey(key)
	if l == nil {
		return
	}
	total := 0
	for i := 0; i < l.numNodes(); i++ {
		n := l.node(i)
		c := 0
		for p := int(n.lo); p < len(n.b); c++ {
			_, p = readFwd(n.b, p)
		}
		if c != n.n {
			h.t.Fatalf("%s: node %d counts %d entries, holds %d", key, i, n.n, c)
		}
		if l.quick() && n.n == 0 {
			h.t.Fatalf("%s: empty node %d", key, i)
		}
		total += c
	}
	if total != l.len() {
		h.t.Fatalf("%s: count %d, %d elements", key, l.len(), total)
	}
	mem := l.memory()
	l.recount()
	if mem != l.memory() {
		h.t.Fatalf("%s: mem %d, recounted %d", key, mem, l.memory())
	}
}

func TestListLPos(t *testing.T) {
	eachListVariant(t, func(t *testing.T, h *harness, _ string) {
		h.run("RPUSH mylist a b c 1 2 3 c c")
		h.script(
			"LPOS mylist a", n(0),
			"LPOS mylist c", n(2),
			"LPOS mylist c RANK 1", n(2),
			"LPOS mylist c RANK 2", n(6),
			"LPOS mylist c RANK 4", "(nil)",
			"LPOS mylist c RANK -1", n(7),
			"LPOS mylist c RANK -2", n(6),
			"LPOS mylist c RANK 0", "(error) "+errRankZero,
			"LPOS mylist c RANK -9223372036854775808", "(error) "+errRankRange,
			"LPOS mylist c RANK x", "(error) "+errNotInteger,
			"LPOS mylist c COUNT 0", "[(integer) 2 (integer) 6 (integer) 7]",
			"LPOS mylist c COUNT 1", "[(integer) 2]",
			"LPOS mylist c COUNT 2", "[(integer) 2 (integer) 6]",
			"LPOS mylist c COUNT 100", "[(integer) 2 (integer) 6 (integer) 7]",
			"LPOS mylist c COUNT -1", "(error) "+errCountNegative,
			"LPOS mylist c COUNT 0 RANK 2", "[(integer) 6 (integer) 7]",
			"LPOS mylist c COUNT 2 RANK -1", "[(integer) 7 (integer) 6]",
			"LPOS mylistxxx c COUNT 0 RANK 2", "[]",
			"LPOS mylistxxx c", "(nil)",
			"LPOS mylist x COUNT 2 RANK -1", "[]",
			"LPOS mylist x RANK -1", "(nil)",
			"LPOS mylist a COUNT 0 MAXLEN 1", "[(integer) 0]",
			"LPOS mylist c COUNT 0 MAXLEN 1", "[]",
			"LPOS mylist c COUNT 0 MAXLEN 3", "[(integer) 2]",
			"LPOS mylist c COUNT 0 MAXLEN 3 RANK -1", "[(integer) 7 (integer) 6]",
			"LPOS mylist c COUNT 0 MAXLEN 7 RANK 2", "[(integer) 6]",
			"LPOS mylist c MAXLEN -1", "(error) "+errMaxlenNeg,
			"LPOS mylist c COUNT", "(error) "+errSyntax,
			"LPOS mylist c FOO 1", "(error) "+errSyntax,
		)
		h.run("SET str x")
		h.expect("LPOS str x", "(error) "+errWrongType)
	})
}

func TestListPushPopIndex(t *testing.T) {
	eachListVariant(t, func(t *testing.T, h *harness, large string) {
		h.script(
			"LPUSH l1 aa", n(1),
			"RPUSH l1 bb", n(2),
			"RPUSH l1 cc", n(3),
			"LLEN l1", n(3),
			"LINDEX l1 0", q("aa"),
			"LINDEX l1 1", q("bb"),
			"LINDEX l1 2", q("cc"),
			"LINDEX l1 -1", q("cc"),
			"LINDEX l1 -3", q("aa"),
			"LINDEX l1 3", "(nil)",
			"LINDEX l1 -4", "(nil)",
			"LINDEX l1 x", "(error) "+errNotInteger,
			"LINDEX nokey x", "(nil)",
			"RPOP l1", q("cc"),
			"LPOP l1", q("aa"),
			"OBJECT ENCODING l1", q("quicklist"),
		)
		h.script(
			"RPUSH l2 "+large, n(1),
			"LPUSH l2 b", n(2),
			"LPUSH l2 c", n(3),
			"LINDEX l2 2", q(large),
			"RPOP l2", q(large),
			"LPOP l2", q("c"),
			"LPOP non-existing-list", "(nil)",
		)
		h.script(
			"DEL mylist", n(0),
			"LPUSH mylist a b c d", n(4),
			"RPUSH mylist 0 1 2 3", n(8),
			"LRANGE mylist 0 -1", `["d" "c" "b" "a" "0" "1" "2" "3"]`,
			"DEL mylist", n(1),
			"EXISTS mylist", n(0),
			"LLEN mylist", n(0),
			"SET str x", "OK",
			"LLEN str", "(error) "+errWrongType,
			"LINDEX str 0", "(error) "+errWrongType,
			"LPUSH str a", "(error) "+errWrongType,
			"RPUSH str a", "(error) "+errWrongType,
			"LPUSHX str a", "(error) "+errWrongType,
			"LPOP str", "(error) "+errWrongType,
		)
		h.checkList("l1")
		h.checkList("l2")
	})
}

func TestListPopCount(t *testing.T) {
	eachListVariant(t, func(t *testing.T, h *harness, _ string) {
		h.script(
			"LPUSH listcount aa bb cc dd ee ff gg", n(7),
			"LPOP listcount 1", `["gg"]`,
			"LPOP listcount 2", `["ff" "ee"]`,
			"RPOP listcount 2", `["aa" "bb"]`,
			"RPOP listcount 1", `["cc"]`,
			"RPOP listcount 123", `["dd"]`,
			"EXISTS listcount", n(0),
			"LPOP forbarqaz -123", "(error) "+errMustBePos,
			"LPOP forbarqaz abc", "(error) "+errMustBePos,
			"LPOP key 1 1", "(error) ERR wrong number of arguments for 'lpop' command",
			"RPOP key 1 1", "(error) ERR wrong number of arguments for 'rpop' command",
			"LPUSH listcount zero", n(1),
			"LPOP listcount 0", "[]",
			"RPOP listcount 0", "[]",
			"LPOP non_existing_key", "(nil)",
			"LPOP non_existing_key 0", "(nil)",
			"RPOP non_existing_key 1", "(nil)",
		)
		h.w.Proto = 2
		h.w.Reset()
		h.ks.Exec(&h.c, [][]byte{[]byte("LPOP"), []byte("nokey"), []byte("1")}, &h.w)
		if string(h.w.Buf) != "*-1\r\n" {
			t.Errorf("RESP2 LPOP nokey 1 = %q, want a null array", h.w.Buf)
		}
		h.w.Reset()
		h.ks.Exec(&h.c, [][]byte{[]byte("LPOP"), []byte("nokey")}, &h.w)
		if string(h.w.Buf) != "$-1\r\n" {
			t.Errorf("RESP2 LPOP nokey = %q, want a null bulk", h.w.Buf)
		}
		h.w.Proto = 3
		h.w.Reset()
		h.ks.Exec(&h.c, [][]byte{[]byte("LPOP"), []byte("nokey"), []byte("1")}, &h.w)
		if string(h.w.Buf) != "_\r\n" {
			t.Errorf("RESP3 LPOP nokey 1 = %q, want a null", h.w.Buf)
		}
	})
}

func TestListRange(t *testing.T) {
	eachListVariant(t, func(t *testing.T, h *harness, large string) {
		h.run("RPUSH mylist " + large + " 1 2 3 4 5 6 7 8 9")
		h.script(
			"LRANGE mylist 1 -2", `["1" "2" "3" "4" "5" "6" "7" "8"]`,
			"LRANGE mylist -3 -1", `["7" "8" "9"]`,
			"LRANGE mylist 4 4", `["4"]`,
			"LRANGE mylist 6 2", "[]",
			"LRANGE mylist 0 -10", `[`+q(large)+`]`,
			"LRANGE mylist 0 -11", "[]",
			"LRANGE mylist 12 15", "[]",
			"LRANGE nosuchkey 0 1", "[]",
			"LRANGE mylist a 1", "(error) "+errNotInteger,
			"LRANGE nosuchkey a 1", "(error) "+errNotInteger,
		)
		if got := h.run("LRANGE mylist -1000 1000"); got != `[`+q(large)+` "1" "2" "3" "4" "5" "6" "7" "8" "9"]` {
			t.Errorf("LRANGE -1000 1000 = %s", got)
		}
	})
}

func TestListTrim(t *testing.T) {
	eachListVariant(t, func(t *testing.T, h *harness, large string) {
		trim := func(start, end, want string) {
			t.Helper()
			h.run("DEL mylist")
			h.run("RPUSH mylist 1 2 3 4 " + large)
			h.expect("LTRIM mylist "+start+" "+end, "OK")
			h.expect("LRANGE mylist 0 -1", want)
			h.checkList("mylist")
		}
		ql := q(large)
		trim("0", "0", `["1"]`)
		trim("0", "1", `["1" "2"]`)
		trim("0", "2", `["1" "2" "3"]`)
		trim("1", "2", `["2" "3"]`)
		trim("2", "6", `["3" "4" `+ql+`]`)
		trim("1", "6", `["2" "3" "4" `+ql+`]`)
		trim("0", "-1", `["1" "2" "3" "4" `+ql+`]`)
		trim("0", "-2", `["1" "2" "3" "4"]`)
		trim("-2", "-1", `["4" `+ql+`]`)
		trim("-2", "-2", `["4"]`)
		trim("-1000", "1000", `["1" "2" "3" "4" `+ql+`]`)
		trim("0", "-5", `["1"]`)
		trim("0", "-6", "[]")
		trim("3", "1", "[]")
		h.script(
			"EXISTS mylist", n(0),
			"LTRIM nokey 0 1", "OK",
			"LTRIM nokey a 1", "(error) "+errNotInteger,
			"SET str x", "OK",
			"LTRIM str 0 1", "(error) "+errWrongType,
		)
	})
}

func TestListSet(t *testing.T) {
	eachListVariant(t, func(t *testing.T, h *harness, large string) {
		h.run("RPUSH mylist 99 98 " + large)
		h.script(
			"LSET mylist 1 foo", "OK",
			"LSET mylist -1 bar", "OK",
			"LRANGE mylist 0 -1", `["99" "foo" "bar"]`,
			"LSET mylist 10 foo", "(error) "+errIndexRange,
			"LSET mylist -4 foo", "(error) "+errIndexRange,
			"LSET mylist x foo", "(error) "+errNotInteger,
			"LSET nosuchkey 10 foo", "(error) "+errNoSuchKey,
			"SET nolist foobar", "OK",
			"LSET nolist 0 foo", "(error) "+errWrongType,
		)
		h.do("LSET", "mylist", "0", large)
		h.expect("LINDEX mylist 0", q(large))
		h.checkList("mylist")
	})
}

func TestListRem(t *testing.T) {
	eachListVariant(t, func(t *testing.T, h *harness, large string) {
		h.run("RPUSH mylist " + large + " foo bar foobar foobared zap bar test foo")
		h.script(
			"LREM mylist 0 bar", n(2),
			"LRANGE mylist 1 -1", `["foo" "foobar" "foobared" "zap" "test" "foo"]`,
			"LREM mylist 1 foo", n(1),
			"LRANGE mylist 1 -1", `["foobar" "foobared" "zap" "test" "foo"]`,
			"LREM mylist 1 nosuchelement", n(0),
			"LREM nokey 1 x", n(0),
			"LREM mylist x foo", "(error) "+errNotInteger,
		)
		h.checkList("mylist")
		h.run("DEL mylist")
		h.run("RPUSH mylist foo bar foobar foobared zap bar test foo foo")
		h.script(
			"LREM mylist -1 bar", n(1),
			"LRANGE mylist 0 -1", `["foo" "bar" "foobar" "foobared" "zap" "test" "foo" "foo"]`,
			"LREM mylist -2 foo", n(2),
			"LRANGE mylist 0 -1", `["foo" "bar" "foobar" "foobared" "zap" "test"]`,
		)
		h.run("DEL myotherlist")
		h.run("LPUSH myotherlist 1 2 3")
		h.script(
			"LREM myotherlist 1 2", n(1),
			"LLEN myotherlist", n(2),
			"LREM myotherlist 0 1", n(1),
			"LREM myotherlist -9223372036854775808 3", n(1),
			"EXISTS myotherlist", n(0),
		)
		h.checkList("mylist")
	})
}

func TestListInsertAndPushX(t *testing.T) {
	eachListVariant(t, func(t *testing.T, h *harness, large string) {
		h.script(
			"LPUSHX xlist a", n(0),
			"LLEN xlist", n(0),
			"RPUSHX xlist a", n(0),
			"LLEN xlist", n(0),
		)
		h.run("RPUSH xlist " + large + " c")
		h.script(
			"RPUSHX xlist d", n(3),
			"LPUSHX xlist a", n(4),
			"RPUSHX xlist 42 x", n(6),
			"LPUSHX xlist y3 y2 y1", n(9),
		)
		h.expect("LRANGE xlist 0 -1", `["y1" "y2" "y3" "a" `+q(large)+` "c" "d" "42" "x"]`)
		h.checkList("xlist")
		h.run("DEL xlist")
		h.run("RPUSH xlist a b c d")
		h.script(
			"LINSERT xlist before c zz", n(5),
			"LRANGE xlist 0 10", `["a" "b" "zz" "c" "d"]`,
			"LINSERT xlist after c yy", n(6),
			"LRANGE xlist 0 10", `["a" "b" "zz" "c" "yy" "d"]`,
			"LINSERT xlist after d dd", n(7),
			"LINSERT xlist after bad ddd", n(-1),
			"LRANGE xlist 0 10", `["a" "b" "zz" "c" "yy" "d" "dd"]`,
			"LINSERT xlist before a aa", n(8),
			"LINSERT xlist before bad aaa", n(-1),
			"LRANGE xlist 0 10", `["aa" "a" "b" "zz" "c" "yy" "d" "dd"]`,
			"LINSERT xlist before aa 42", n(9),
			"LRANGE xlist 0 0", `["42"]`,
			"LINSERT xlist aft3r aa 42", "(error) "+errSyntax,
			"LINSERT nokey before a b", n(0),
			"LINSERT nokey bad a b", "(error) "+errSyntax,
			"SET k1 v1", "OK",
			"LINSERT k1 after 0 0", "(error) "+errWrongType,
		)
		h.do("LINSERT", "xlist", "after", "yy", large)
		h.expect("LINDEX xlist 7", q(large))
		h.checkList("xlist")
	})
}

func TestListMove(t *testing.T) {
	sides := []string{"LEFT", "RIGHT"}
	eachListVariant(t, func(t *testing.T, h *harness, large string) {
		for _, from := range sides {
			for _, to := range sides {
				h.run("DEL mylist target")
				h.run("RPUSH mylist a " + large + " c d")
				got := h.run("LMOVE mylist target " + from + " " + to)
				want, rest := q("d"), `["a" `+q(large)+` "c"]`
				if from == "LEFT" {
					want, rest = q("a"), `[`+q(large)+` "c" "d"]`
				}
				if got != want {
					t.Errorf("LMOVE %s %s = %s, want %s", from, to, got, want)
				}
				h.expect("LRANGE mylist 0 -1", rest)
				h.expect("LRANGE target 0 -1", "["+want+"]")
				h.run("RPUSH target x")
				h.run("LMOVE mylist target " + from + " " + to)
				if h.run("LLEN target") != n(3) {
					t.Errorf("LMOVE onto an existing list")
				}
				// The same list as source and destination.
				h.run("DEL mylist")
				h.run("RPUSH mylist a " + large + " c d")
				h.run("LMOVE mylist mylist " + from + " " + to)
				h.checkList("mylist")
				h.expect("LLEN mylist", n(4))
			}
		}
		h.run("DEL mylist")
		h.run("RPUSH mylist a b c d")
		h.script(
			"RPOPLPUSH mylist mylist", q("d"),
			"LRANGE mylist 0 -1", `["d" "a" "b" "c"]`,
			"RPOPLPUSH mylist newlist", q("c"),
			"LRANGE newlist 0 -1", `["c"]`,
			"RPOPLPUSH nosrc dst", "(nil)",
			"EXISTS nosrc dst", n(0),
			"LMOVE nosrc dst LEFT RIGHT", "(nil)",
			"LMOVE mylist dst UP LEFT", "(error) "+errSyntax,
			"LMOVE mylist dst LEFT DOWN", "(error) "+errSyntax,
			"SET str x", "OK",
			"RPOPLPUSH str dst", "(error) "+errWrongType,
			"RPOPLPUSH mylist str", "(error) "+errWrongType,
			"TYPE str", "string",
			"LRANGE mylist 0 -1", `["d" "a" "b"]`,
		)
		// A one-element list moved onto itself keeps its TTL.
		h.run("DEL one")
		h.run("RPUSH one x")
		h.run("EXPIRE one 100")
		h.expect("LMOVE one one LEFT RIGHT", q("x"))
		h.expect("TTL one", n(100))
		// A source emptied by the move goes.
		h.run("DEL src")
		h.run("RPUSH src only")
		h.expect("LMOVE src dst2 RIGHT LEFT", q("only"))
		h.expect("EXISTS src", n(0))
	})
}

func TestListMPop(t *testing.T) {
	eachListVariant(t, func(t *testing.T, h *harness, large string) {
		arity := "(error) ERR wrong number of arguments for 'lmpop' command"
		h.script(
			"LMPOP", arity,
			"LMPOP 1", arity,
			"LMPOP 1 mylist", arity,
			"LMPOP 0 mylist LEFT", "(error) "+errNumkeys,
			"LMPOP a mylist LEFT", "(error) "+errNumkeys,
			"LMPOP -1 mylist RIGHT", "(error) "+errNumkeys,
			"LMPOP 1 mylist bad_where", "(error) "+errSyntax,
			"LMPOP 1 mylist LEFT bar_arg", "(error) "+errSyntax,
			"LMPOP 1 mylist RIGHT LEFT", "(error) "+errSyntax,
			"LMPOP 1 mylist COUNT", "(error) "+errSyntax,
			"LMPOP 1 mylist LEFT COUNT 1 COUNT 2", "(error) "+errSyntax,
			"LMPOP 2 mylist mylist2 bad_arg", "(error) "+errSyntax,
			"LMPOP 9223372036854775807 mylist LEFT", "(error) "+errSyntax,
			"LMPOP 1 mylist LEFT COUNT 0", "(error) "+errCountAbove,
			"LMPOP 1 mylist RIGHT COUNT a", "(error) "+errCountAbove,
			"LMPOP 1 mylist LEFT COUNT -1", "(error) "+errCountAbove,
			"LMPOP 2 mylist mylist2 RIGHT COUNT -1", "(error) "+errCountAbove,
		)
		h.run("RPUSH mylist a b " + large + " d e f")
		h.script(
			"LMPOP 2 nokey mylist LEFT", `["mylist" ["a"]]`,
			"LMPOP 1 mylist RIGHT", `["mylist" ["f"]]`,
			"LMPOP 1 mylist RIGHT COUNT 2", `["mylist" ["e" "d"]]`,
			"LMPOP 2 nokey1 nokey2 LEFT", "(nil)",
		)
		h.expect("LMPOP 1 mylist LEFT COUNT 10", `["mylist" ["b" `+q(large)+`]]`)
		h.expect("EXISTS mylist", n(0))
		h.run("RPUSH l1 a b c")
		h.run("RPUSH l2 d e f")
		h.run("SET str x")
		h.script(
			"LMPOP 2 l1 l2 right count 1", `["l1" ["c"]]`,
			"LMPOP 2 l2 l1 left count 5", `["l2" ["d" "e" "f"]]`,
			"LMPOP 2 str l1 LEFT", "(error) "+errWrongType,
			"LMPOP 2 nokey str LEFT", "(error) "+errWrongType,
			"LMPOP 2 l1 str LEFT", `["l1" ["a"]]`,
		)
	})
}

func TestListMovableKeys(t *testing.T) {
	spec := Lookup([]byte("lmpop"))
	cases := []struct {
		args string
		want []int
	}{
		{"LMPOP 2 a b LEFT", []int{2, 3}},
		{"LMPOP 3 a b", []int{2, 3}},
		{"LMPOP 0 a LEFT", nil},
		{"LMPOP x a LEFT", nil},
		{"LMPOP", nil},
	}
	for _, c := range cases {
		var args [][]byte
		for _, f := range strings.Fields(c.args) {
			args = append(args, []byte(f))
		}
		got := spec.MovableKeys(args, nil)
		if len(got) != len(c.want) {
			t.Errorf("%s: keys %v, want %v", c.args, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: keys %v, want %v", c.args, got, c.want)
			}
		}
	}
}

// TestListKeyCommands checks the key-level commands on lists: TYPE, COPY
// (a deep copy), RENAME, MOVE, expiry, SCAN TYPE, MEMORY USAGE, and their
// journal records replaying into the same lists.
func TestListKeyCommands(t *testing.T) {
	eachListVariant(t, func(t *testing.T, h *harness, large string) {
		h.recordJournal()
		h.run("RPUSH l a b c " + large)
		h.script(
			"TYPE l", "list",
			"COPY l c", n(1),
			"LPUSH c z", n(5),
			"LLEN l", n(4),
			"RENAME c r", "OK",
			"LINDEX r 0", q("z"),
			"MOVE r 1", n(1),
			"EXPIRE l 100", n(1),
			"TTL l", n(100),
			"SCAN 0 TYPE list", `["0" ["l"]]`,
			"SCAN 0 TYPE string", `["0" []]`,
		)
		if got := h.run("MEMORY USAGE l"); !strings.HasPrefix(got, "(integer) ") || got == n(0) {
			t.Errorf("MEMORY USAGE l = %s", got)
		}
		h.selectDB(1)
		h.expect("LRANGE r 0 -1", `["z" "a" "b" "c" `+q(large)+`]`)
		h.checkList("r")
		dst := newHarness(t)
		dst.ks.Loading = true
		for _, r := range h.records {
			dst.selectDB(r.db)
			if got := dst.do(r.args...); strings.HasPrefix(got, "(error)") {
				t.Fatalf("replaying %q: %s", r.args, got)
			}
		}
		dst.ks.Loading = false
		dst.selectDB(1)
		dst.expect("LRANGE r 0 -1", `["z" "a" "b" "c" `+q(large)+`]`)
		dst.selectDB(0)
		dst.expect("LRANGE l 0 -1", `["a" "b" "c" `+q(large)+`]`)
	})
}

// TestListQuicklistRegression3343 is list-3.tcl's "Regression for
// quicklist #3343 bug": large elements set and inserted around node
// boundaries, under each node limit.
func TestListQuicklistRegression3343(t *testing.T) {
	for _, fill := range []int64{-5, -4, -3, -2, -1, 1, 2, 5} {
		h := newHarness(t)
		h.ks.Limits.ListMaxListpackSize = fill
		x := func(n int, tail string) string { return strings.Repeat("x", n) + tail }
		h.do("LPUSH", "mylist", "401")
		h.do("LPUSH", "mylist", "392")
		h.do("RPUSH", "mylist", x(5105, "799"))
		h.do("LSET", "mylist", "-1", x(1014, "702"))
		h.do("LPOP", "mylist")
		h.do("LSET", "mylist", "-1", x(4149, "852"))
		h.do("LINSERT", "mylist", "before", "401", x(9927, "12"))
		want := "[" + q(x(9927, "12")) + ` "401" ` + q(x(4149, "852")) + "]"
		if got := h.run("LRANGE mylist 0 -1"); got != want {
			t.Errorf("fill %d: LRANGE = %.80s...", fill, got)
		}
		h.checkList("mylist")
		checkNodeLimits(t, h.listOfKey("mylist"), limitOf(fill))
	}
}
