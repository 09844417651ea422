package keyspace

import (
	"strings"
	"testing"
)

// tryBlock runs a blocking command line and reports whether it would block
// (it then replied nothing) or its reply.
func (h *harness) tryBlock(line string) (blocked bool, reply string) {
	h.t.Helper()
	h.c.WouldBlock = false
	args := strings.Fields(line)
	bargs := make([][]byte, len(args))
	for i, a := range args {
		bargs[i] = []byte(a)
	}
	h.w.Reset()
	h.ks.Exec(&h.c, bargs, &h.w)
	if h.c.WouldBlock {
		if len(h.w.Buf) != 0 {
			h.t.Fatalf("%s: would block but replied %q", line, h.w.Buf)
		}
		h.c.WouldBlock = false
		return true, ""
	}
	s, rest, err := decodeReply(h.w.Buf)
	if err != nil || len(rest) != 0 {
		h.t.Fatalf("%s: bad reply %q (%v)", line, h.w.Buf, err)
	}
	return false, s
}

func (h *harness) expectBlocks(line string) {
	h.t.Helper()
	if blocked, reply := h.tryBlock(line); !blocked {
		h.t.Fatalf("%s: replied %s, want it to block", line, reply)
	}
}

func (h *harness) expectServed(line, want string) {
	h.t.Helper()
	blocked, reply := h.tryBlock(line)
	if blocked || reply != want {
		h.t.Fatalf("%s: blocked=%v reply %s, want %s", line, blocked, reply, want)
	}
}

func TestBlockingPopsServeAKeyWithData(t *testing.T) {
	h := newHarness(t)
	h.run("RPUSH blist a b c d")
	h.expectServed("BLPOP blist 1", `["blist" "a"]`)
	h.expectServed("BRPOP blist 1", `["blist" "d"]`)
	// The first key with data is served, in argument order.
	h.run("RPUSH l2 x y")
	h.expectServed("BLPOP missing l2 blist 0", `["l2" "x"]`)
	h.expectServed("BRPOP blist l2 0", `["blist" "c"]`)
	h.expectServed("BLMPOP 0 2 missing l2 LEFT COUNT 5", `["l2" ["y"]]`)
	h.expect("EXISTS l2", "(integer) 0")
	h.run("RPUSH src 1 2 3")
	h.expectServed("BLMOVE src dst RIGHT LEFT 0", `"3"`)
	h.expectServed("BRPOPLPUSH src dst 0", `"2"`)
	h.expect("LRANGE dst 0 -1", `["2" "3"]`)

	h.run("ZADD z 1 a 2 b 3 c")
	h.expectServed("BZPOPMIN missing z 0", `["z" "a" "1"]`)
	h.expectServed("BZPOPMAX z 0", `["z" "c" "3"]`)
	h.expectServed("BZMPOP 0 1 z MIN COUNT 3", `["z" [["b" "2"]]]`)
	h.expect("EXISTS z", "(integer) 0")
}

func TestBlockingPopsWaitWithoutData(t *testing.T) {
	h := newHarness(t)
	for _, line := range []string{
		"BLPOP a b 0", "BRPOP a 1.5", "BLMOVE a b LEFT RIGHT 0", "BRPOPLPUSH a b 0",
		"BLMPOP 0 2 a b LEFT", "BZPOPMIN a 0", "BZPOPMAX a b 0.01", "BZMPOP 0 1 a MAX COUNT 2",
	} {
		h.expectBlocks(line)
	}
	// Nothing was written or created.
	h.expect("DBSIZE", "(integer) 0")
}

func TestBlockingPopsWrongType(t *testing.T) {
	h := newHarness(t)
	h.run("SET s x")
	h.run("RPUSH l a")
	h.run("ZADD z 1 m")
	h.expect("BLPOP missing s l 0", "(error) WRONGTYPE Operation against a key holding the wrong kind of value")
	h.expectServed("BLPOP l s 0", `["l" "a"]`)
	h.expect("BZPOPMIN s 0", "(error) WRONGTYPE Operation against a key holding the wrong kind of value")
	h.run("RPUSH l a")
	h.expect("BZPOPMIN l z 0", "(error) WRONGTYPE Operation against a key holding the wrong kind of value")
	h.expect("BRPOPLPUSH s d 0", "(error) WRONGTYPE Operation against a key holding the wrong kind of value")
	// A destination of another kind: WRONGTYPE, and the element stays.
	h.expect("BLMOVE l s LEFT LEFT 0", "(error) WRONGTYPE Operation against a key holding the wrong kind of value")
	h.expect("LRANGE l 0 -1", `["a"]`)

	// Served again for a written key, a key of another kind is not ready:
	// the client waits on (Redis 7.0 serves only keys of the kind waited for).
	h.c.Serving = true
	h.expectBlocks("BLPOP s 0")
	h.expectBlocks("BZPOPMIN l 0")
	h.expect("BLMOVE l s LEFT LEFT 0", "(error) WRONGTYPE Operation against a key holding the wrong kind of value")
}

func TestBlockingPopsWithNoBlockReplyAsOnTimeout(t *testing.T) {
	h := newHarness(t)
	h.c.NoBlock = true
	h.expect("BLPOP a b 0", "(nil)")
	h.expect("BLMOVE a b LEFT RIGHT 0", "(nil)")
	h.expect("BZMPOP 1 1 a MIN", "(nil)")
}

func TestBlockingPopsCheckArguments(t *testing.T) {
	h := newHarness(t)
	h.script(
		"BLPOP a -1", "(error) ERR timeout is negative",
		"BLPOP a x", "(error) ERR timeout is not a float or out of range",
		"BRPOP a nan", "(error) ERR timeout is not a float or out of range",
		"BZPOPMIN a -0.5", "(error) ERR timeout is negative",
		"BLMOVE a b UP LEFT 0", "(error) ERR syntax error",
		"BLMOVE a b LEFT RIGHT -1", "(error) ERR timeout is negative",
		"BLMPOP 0 0 a LEFT", "(error) ERR numkeys should be greater than 0",
		"BLMPOP 0 1 a MIDDLE", "(error) ERR syntax error",
		"BLMPOP 0 1 a LEFT COUNT 0", "(error) ERR count should be greater than 0",
		"BLMPOP -1 1 a LEFT", "(error) ERR timeout is negative",
		"BLMPOP -1 0 a LEFT", "(error) ERR numkeys should be greater than 0",
		"BZMPOP abc 1 a MIN COUNT 0", "(error) ERR count should be greater than 0",
		"BZMPOP abc 1 a MIN", "(error) ERR timeout is not a float or out of range",
		"BZMPOP 0 1 a LEFT", "(error) ERR syntax error",
		"BZMPOP 0 1 a MIN COUNT -1", "(error) ERR count should be greater than 0",
		"BLPOP a", "(error) ERR wrong number of arguments for 'blpop' command",
	)
}

func TestParseBlockTimeout(t *testing.T) {
	for _, tc := range []struct {
		in  string
		ms  int64
		msg string
	}{
		{"0", 0, ""},
		{"1", 1000, ""},
		{"0.1", 100, ""},
		{"0.0001", 1, ""},  // rounded up, as Redis 7.0's ceill
		{"0.001", 1, ""},   // 0.99999... ms as a long double
		{"1e-20", 1, ""},   // the smallest wait there is
		{"-0.0001", 0, ""}, // -0.1 ms rounds up to 0: for ever
		{"-0.001", 0, ""},
		{"1e3", 1_000_000, ""},
		{"0x10", 16000, ""},
		{"-1", 0, errTimeoutNeg},
		{"-0.5", 0, errTimeoutNeg},
		{"inf", 0, errTimeoutNeg},
		{"1e300", 0, errTimeoutNeg},
		// Redis 7.0 takes a deadline that overflows (7.2 refuses it).
		{"9223372036854775", 9223372036854775000, ""},
		{"9223372036854775.5", 9223372036854775500, ""},
		{"9223372036854775.9", 0, errTimeoutNeg},
		{"9223372036854776", 0, errTimeoutNeg},
		{" 1", 0, errTimeoutFloat},
		{"", 0, errTimeoutFloat},
	} {
		ms, msg := ParseBlockTimeout([]byte(tc.in))
		if ms != tc.ms || msg != tc.msg {
			t.Errorf("ParseBlockTimeout(%q) = %d, %q; want %d, %q", tc.in, ms, msg, tc.ms, tc.msg)
		}
	}
}

// Each blocking command journals the non-blocking pop that happened, so
// that replay never meets a blocking command.
func TestBlockingPopsJournalThePop(t *testing.T) {
	h := newHarness(t)
	h.recordJournal()
	h.run("RPUSH l a b")
	h.run("ZADD z 1 m 2 n")
	h.records = nil
	h.tryBlock("BLPOP l 0")
	h.tryBlock("BLMOVE l d LEFT LEFT 0")
	h.tryBlock("BZPOPMAX z 0")
	h.tryBlock("BLPOP none 0")
	var got []string
	for _, r := range h.records {
		got = append(got, strings.Join(r.args, " "))
	}
	want := []string{
		"LPOP l 1",
		"MOOND.APPLY DEL 0 l CMD 0 3 LPUSH d b",
		"ZREM z n",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("journal:\n got %q\nwant %q", got, want)
	}
}

// ServeArgs names the served key alone, with a zero timeout, appended to
// the slice it is given (the server reuses one), args unchanged.
func TestBlockSpecServeArgs(t *testing.T) {
	for _, tc := range []struct {
		line string
		pos  int
		want string
	}{
		{"BLPOP a b c 5", 2, "BLPOP b 0"},
		{"BZPOPMAX a b 5", 1, "BZPOPMAX a 0"},
		{"BLMOVE a b LEFT RIGHT 5", 1, "BLMOVE a b LEFT RIGHT 0"},
		{"BRPOPLPUSH a b 5", 1, "BRPOPLPUSH a b 0"},
		{"BLMPOP 5 3 a b c RIGHT COUNT 2", 4, "BLMPOP 0 1 b RIGHT COUNT 2"},
		{"BZMPOP 5 2 a b MIN", 4, "BZMPOP 0 1 b MIN"},
	} {
		args := strings.Fields(tc.line)
		bargs := make([][]byte, len(args))
		for i, a := range args {
			bargs[i] = []byte(a)
		}
		spec := Lookup(bargs[0])
		reused := make([][]byte, 1, 8)
		out := spec.Block.ServeArgs(bargs, tc.pos, reused[:0])
		if &out[0] != &reused[:1][0] {
			t.Errorf("%s: ServeArgs did not append to the slice given", tc.line)
		}
		var s []string
		for _, a := range out {
			s = append(s, string(a))
		}
		if got := strings.Join(s, " "); got != tc.want {
			t.Errorf("%s at %d: %s, want %s", tc.line, tc.pos, got, tc.want)
		}
		if string(spec.Block.Timeout(bargs)) != "5" {
			t.Errorf("%s: timeout %s", tc.line, spec.Block.Timeout(bargs))
		}
	}
}
