package keyspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// journaled runs a command line and returns the journal records it wrote,
// each as "db: ARG ARG ...".
func (h *harness) journaled(line string) []string {
	h.t.Helper()
	before := len(h.records)
	h.run(line)
	var out []string
	for _, r := range h.records[before:] {
		out = append(out, fmt.Sprintf("%d: %s", r.db, strings.Join(r.args, " ")))
	}
	return out
}

func TestJournalForms(t *testing.T) {
	h := newHarness(t)
	h.recordJournal()
	c := h.clock
	past := itoa64(c/1000 - 100)
	steps := []struct {
		line string
		want []string
	}{
		{"SET foo bar", []string{"0: SET foo bar"}},
		{"SET foo bar EX 100", []string{"0: SET foo bar PXAT " + itoa64(c+100000)}},
		{"SET foo bar PX 100", []string{"0: SET foo bar PXAT " + itoa64(c+100)}},
		{"SET foo bar EXAT " + itoa64(c/1000+7), []string{"0: SET foo bar PXAT " + itoa64(c+7000)}},
		{"SET foo bar KEEPTTL", []string{"0: SET foo bar KEEPTTL"}},
		{"SET foo bar NX", nil},
		{"SET nokey bar XX", nil},
		{"SET foo bar2 GET", []string{"0: SET foo bar2"}},
		{"SETNX foo x", nil},
		{"SETNX new x", []string{"0: SET new x"}},
		{"SETEX foo 100 bar", []string{"0: SET foo bar PXAT " + itoa64(c+100000)}},
		{"PSETEX foo 100 bar", []string{"0: SET foo bar PXAT " + itoa64(c+100)}},
		{"GETSET foo baz", []string{"0: SET foo baz"}},
		{"GETDEL foo", []string{"0: DEL foo"}},
		{"GETDEL foo", nil},
		{"GETEX new", nil},
		{"GETEX new EX 10", []string{"0: PEXPIREAT new " + itoa64(c+10000)}},
		{"GETEX new PERSIST", []string{"0: PERSIST new"}},
		{"GETEX new PERSIST", nil},
		{"GETEX new EXAT " + past, []string{"0: DEL new"}},
		{"MSET a 1 b 2", []string{"0: MSET a 1 b 2"}},
		{"MSETNX a 1 c 3", nil},
		{"MSETNX c 3 d 4", []string{"0: MSET c 3 d 4"}},
		{"INCR n", []string{"0: SET n 1 KEEPTTL"}},
		{"INCRBY n 10", []string{"0: SET n 11 KEEPTTL"}},
		{"DECR n", []string{"0: SET n 10 KEEPTTL"}},
		{"DECRBY n 20", []string{"0: SET n -10 KEEPTTL"}},
		{"INCR a", []string{"0: SET a 2 KEEPTTL"}},
		{"INCRBYFLOAT f 1.5", []string{"0: SET f 1.5 KEEPTTL"}},
		{"INCRBYFLOAT f abc", nil},
		{"APPEND s ab", []string{"0: SET s ab KEEPTTL"}},
		{"APPEND s cd", []string{"0: APPEND s cd"}},
		{"SETRANGE s 1 X", []string{"0: SETRANGE s 1 X"}},
		{"SETRANGE r 2 X", []string{"0: SET r \x00\x00X KEEPTTL"}},
		{"DEL r", []string{"0: DEL r"}},
		{"DEL a b nokey", []string{"0: DEL a b"}},
		{"DEL nokey", nil},
		{"UNLINK c", []string{"0: DEL c"}},
		{"EXPIRE d 100", []string{"0: PEXPIREAT d " + itoa64(c+100000)}},
		{"EXPIRE d 100 NX", nil},
		{"EXPIRE d 50 GT", nil},
		{"PEXPIREAT d " + itoa64(c+5), []string{"0: PEXPIREAT d " + itoa64(c+5)}},
		{"PERSIST d", []string{"0: PERSIST d"}},
		{"PERSIST d", nil},
		{"EXPIREAT d " + past, []string{"0: DEL d"}},
		{"EXPIRE s -1", []string{"0: DEL s"}},
		{"SET d v", []string{"0: SET d v"}},
		{"RENAME d e", []string{"0: MOOND.APPLY DEL 0 d PUT 0 e 0 v 0"}},
		{"RENAME e e", nil},
		{"RENAMENX e n", nil},
		{"COPY e g", []string{"0: MOOND.APPLY PUT 0 g 0 v 0"}},
		{"COPY e g", nil},
		{"COPY e g DB 2 REPLACE", []string{"0: MOOND.APPLY PUT 2 g 0 v 0"}},
		{"MOVE g 1", []string{"0: MOOND.APPLY DEL 0 g PUT 1 g 0 v 0"}},
		{"MOVE g 1", nil},
		{"SET t 12 PX 500", []string{"0: SET t 12 PXAT " + itoa64(c+500)}},
		{"RENAMENX t u", []string{"0: MOOND.APPLY DEL 0 t PUT 0 u 0 12 " + itoa64(c+500)}},
		{"COPY u u DB 3", []string{"0: MOOND.APPLY PUT 3 u 0 12 " + itoa64(c+500)}},
		{"MOVE u 3", nil},
		{"MOVE u 4", []string{"0: MOOND.APPLY DEL 0 u PUT 4 u 0 12 " + itoa64(c+500)}},
		{"SWAPDB 0 1", []string{"0: SWAPDB 0 1"}},
		{"SWAPDB 3 3", nil},
		{"FLUSHDB", []string{"0: FLUSHDB"}},
		{"FLUSHDB", nil},
		{"SET x 1", []string{"0: SET x 1"}},
		{"FLUSHALL ASYNC", []string{"0: FLUSHALL"}},
		{"FLUSHALL", nil},
		{"GET x", nil},
		{"KEYS *", nil},
	}
	for _, s := range steps {
		if got := h.journaled(s.line); !slices.Equal(got, s.want) {
			t.Errorf("%s: journal %q, want %q", s.line, got, s.want)
		}
	}
}

func TestJournalRecordsExpirations(t *testing.T) {
	h := newHarness(t)
	h.recordJournal()
	h.selectDB(3)
	h.script("SET x v PX 10", "OK", "SET y v PX 10", "OK", "SET z v PX 10", "OK")
	h.advance(20)
	h.selectDB(0)
	if got := h.journaled("GET x"); got != nil {
		t.Errorf("GET in another db journaled %q", got)
	}
	h.selectDB(3)
	if got, want := h.journaled("GET x"), []string{"3: DEL x"}; !slices.Equal(got, want) {
		t.Errorf("lazy expiry journaled %q, want %q", got, want)
	}
	// DEL of an expired key: the expiry is journaled, the DEL is not.
	if got, want := h.journaled("DEL y"), []string{"3: DEL y"}; !slices.Equal(got, want) {
		t.Errorf("DEL of an expired key journaled %q, want %q", got, want)
	}
	before := len(h.records)
	h.ks.ActiveExpire(time.Second)
	if got := h.records[before:]; len(got) != 1 || got[0].db != 3 || strings.Join(got[0].args, " ") != "DEL z" {
		t.Errorf("active expiry journaled %+v", got)
	}
}

func TestJournalIsNotWrittenWhileLoading(t *testing.T) {
	h := newHarness(t)
	h.recordJournal()
	h.ks.Loading = true
	h.script("SET a 1", "OK", "INCR a", n(2), "DEL a", n(1))
	if len(h.records) != 0 {
		t.Errorf("loading journaled %d records", len(h.records))
	}
}

// TestJournalReplayRebuildsTheSameData runs a long random sequence of
// commands against one keyspace, replays its journal into an empty one
// later (with Loading set, the clock moved on), and compares the two key by
// key: same keys, same values, same expiry times.
func TestJournalReplayRebuildsTheSameData(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			src := newHarness(t)
			src.recordJournal()
			rng := rand.New(rand.NewPCG(seed, seed*7919))
			for range 20000 {
				runRandomCommand(src, rng)
			}

			dst := newHarness(t)
			dst.clock = src.clock + 3600_000 // replay an hour later
			dst.ks.Loading = true
			for _, r := range src.records {
				dst.selectDB(r.db)
				if got := dst.do(r.args...); strings.HasPrefix(got, "(error)") {
					t.Fatalf("replaying %q: %s", r.args, got)
				}
			}
			dst.ks.Loading = false
			dst.clock = src.clock
			compareKeyspaces(t, src.ks, dst.ks, src.clock)
		})
	}
}

var randomKeys = []string{"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "{a}", ""}

// runRandomCommand runs a random command: every journaled form, SWAPDB
// and the flushes included, over three databases and a few keys.
func runRandomCommand(h *harness, rng *rand.Rand) {
	key := func() string { return randomKeys[rng.IntN(len(randomKeys))] }
	val := func() string {
		switch rng.IntN(4) {
		case 0:
			return itoa(rng.IntN(2000) - 1000)
		case 1:
			return fmt.Sprintf("%d.%d", rng.IntN(100), rng.IntN(100))
		case 2:
			return strings.Repeat("x", rng.IntN(60))
		}
		return string(randBytes(rng, rng.IntN(8)))
	}
	ttl := func() string { return itoa(rng.IntN(5000) - 100) }
	abs := func(unit int64) string { return itoa64((h.clock + int64(rng.IntN(8000)-2000)) / unit) }
	expireOpt := func() []string {
		switch rng.IntN(8) {
		case 0:
			return []string{"EX", itoa(1 + rng.IntN(5))}
		case 1:
			return []string{"PX", itoa(1 + rng.IntN(5000))}
		case 2:
			return []string{"EXAT", abs(1000)}
		case 3:
			return []string{"PXAT", abs(1)}
		case 4:
			return []string{"KEEPTTL"}
		}
		return nil
	}
	cond := func(opts ...string) []string {
		if i := rng.IntN(len(opts) + 2); i < len(opts) {
			return []string{opts[i]}
		}
		return nil
	}

	var args []string
	switch rng.IntN(34) {
	case 0, 1:
		args = append([]string{"SET", key(), val()}, expireOpt()...)
		args = append(args, cond("NX", "XX", "GET")...)
	case 2:
		args = []string{"SETNX", key(), val()}
	case 3:
		args = []string{"SETEX", key(), itoa(1 + rng.IntN(5)), val()}
	case 4:
		args = []string{"PSETEX", key(), itoa(1 + rng.IntN(5000)), val()}
	case 5:
		args = []string{"GETSET", key(), val()}
	case 6:
		args = []string{"GETDEL", key()}
	case 7:
		args = append([]string{"GETEX", key()}, cond("PERSIST")...)
		if len(args) == 2 {
			if o := expireOpt(); len(o) == 2 {
				args = append(args, o...)
			}
		}
	case 8:
		args = []string{"MSET", key(), val(), key(), val()}
	case 9:
		args = []string{"MSETNX", key(), val(), key(), val()}
	case 10:
		args = []string{"APPEND", key(), val()}
	case 11:
		args = []string{"SETRANGE", key(), itoa(rng.IntN(20)), val()}
	case 12:
		args = []string{"INCR", key()}
	case 13:
		args = []string{"DECRBY", key(), itoa(rng.IntN(100))}
	case 14:
		args = []string{"INCRBYFLOAT", key(), fmt.Sprintf("%d.%d", rng.IntN(10)-5, rng.IntN(1000))}
	case 15:
		args = []string{"DEL", key(), key()}
	case 16:
		args = []string{"UNLINK", key()}
	case 17:
		args = []string{"RENAME", key(), key()}
	case 18:
		args = []string{"RENAMENX", key(), key()}
	case 19:
		args = append([]string{"COPY", key(), key(), "DB", itoa(rng.IntN(3))}, cond("REPLACE")...)
	case 20:
		args = []string{"MOVE", key(), itoa(rng.IntN(3))}
	case 21:
		args = append([]string{"EXPIRE", key(), ttl()}, cond("NX", "XX", "GT", "LT")...)
	case 22:
		args = append([]string{"PEXPIRE", key(), itoa(rng.IntN(8000) - 500)}, cond("GT", "LT")...)
	case 23:
		args = []string{"EXPIREAT", key(), abs(1000)}
	case 24:
		args = []string{"PEXPIREAT", key(), abs(1)}
	case 25:
		args = []string{"PERSIST", key()}
	case 26:
		args = []string{"GET", key()}
	case 27:
		args = []string{"MGET", key(), key()}
	case 28:
		args = []string{"SCAN", "0", "COUNT", "100"}
	case 29:
		args = []string{"RANDOMKEY"}
	case 30:
		h.selectDB(rng.IntN(3))
		return
	case 31:
		h.advance(int64(rng.IntN(1500)))
		return
	case 32:
		h.ks.ActiveExpire(time.Second)
		return
	case 33:
		switch rng.IntN(10) {
		case 0:
			args = []string{"FLUSHDB"}
		case 1:
			args = []string{"FLUSHALL"}
		case 2, 3, 4:
			args = []string{"SWAPDB", itoa(rng.IntN(3)), itoa(rng.IntN(3))}
		default:
			args = []string{"TTL", key()}
		}
	}
	h.do(args...)
}

// compareKeyspaces checks that a and b hold the same live keys, values and
// expiry times at time now.
func compareKeyspaces(t *testing.T, a, b *Keyspace, now int64) {
	t.Helper()
	da, db := dumpKeyspace(a, now), dumpKeyspace(b, now)
	if len(da) == 0 {
		t.Fatal("the random run left no keys: the test checks nothing")
	}
	for k, v := range da {
		if db[k] != v {
			t.Errorf("key %q: %s, replayed %s", k, v, db[k])
		}
	}
	for k, v := range db {
		if _, ok := da[k]; !ok {
			t.Errorf("key %q: only in the replay (%s)", k, v)
		}
	}
}

// dumpKeyspace lists the keys not expired at now as "db/key" -> "value
// @expiry".
func dumpKeyspace(ks *Keyspace, now int64) map[string]string {
	out := map[string]string{}
	for i, d := range ks.dbs {
		d.keys.each(func(sl *slot[entry]) {
			when := ks.expiryOf(d, d.keys.hash(sl.keyBytes()), sl)
			if when != -1 && now > when {
				return
			}
			v := "?"
			if sl.v.kind() == KindString {
				v = fmt.Sprintf("%q", sl.v.appendTo(nil))
			}
			out[fmt.Sprintf("%d/%q", i, sl.key())] = fmt.Sprintf("%s @%d", v, when)
		})
	}
	return out
}

// TestAppendToALargeValueJournalsOnlyTheDelta: repeated APPENDs and
// SETRANGEs on a value of a megabyte log what the client sent, not the
// value each time (which would make the log grow with the square of the
// value), and the journal still replays into the same value and TTL.
func TestAppendToALargeValueJournalsOnlyTheDelta(t *testing.T) {
	h := newHarness(t)
	h.recordJournal()
	big := strings.Repeat("v", 1<<20)
	h.do("SET", "big", big, "PX", "100000")
	before := len(h.records)
	for i := range 64 {
		h.do("APPEND", "big", fmt.Sprintf("+%03d+", i))
		h.do("SETRANGE", "big", itoa(i*1000), "RR")
	}
	logged := 0
	for _, r := range h.records[before:] {
		for _, a := range r.args {
			logged += len(a)
		}
	}
	if len(h.records)-before != 128 || logged > 128*32 {
		t.Fatalf("128 updates of a %d-byte value journaled %d records, %d bytes", len(big), len(h.records)-before, logged)
	}

	dst := newHarness(t)
	dst.ks.Loading = true
	for _, r := range h.records {
		dst.selectDB(r.db)
		if got := dst.do(r.args...); strings.HasPrefix(got, "(error)") {
			t.Fatalf("replaying %q: %s", r.args, got)
		}
	}
	dst.ks.Loading = false
	compareKeyspaces(t, h.ks, dst.ks, h.clock)
}

// TestReplayOfADeltaIsNotLimitedByProtoMaxBulkLen: a string accepted
// before a restart comes back whole even if proto-max-bulk-len was lowered
// since, as Redis loads its AOF without the check.
func TestReplayOfADeltaIsNotLimitedByProtoMaxBulkLen(t *testing.T) {
	h := newHarness(t)
	h.ks.MaxBulkLen = 4
	h.ks.Loading = true
	h.script("SET s abc", "OK", "APPEND s def", n(6), "SETRANGE s 8 xy", n(10))
	h.ks.Loading = false
	h.script("APPEND s z", "(error) ERR string exceeds maximum allowed size (proto-max-bulk-len)")
}
