package keyspace

import (
	"strings"
	"testing"
)

// The WATCH tests of Redis 7.0.15's tests/unit/multi.tcl, at the
// keyspace's level: a Watch stands for a client's WATCH of one key, and
// "EXEC aborts" is Touched. MULTI, EXEC, DISCARD and the client's dirty
// flag are the server's; a test of them here checks what the keyspace
// gives the server for them (Unwatch, a fresh Watch).

// watch registers a watch of key in the harness client's database.
func (h *harness) watch(key string) *Watch {
	return h.ks.Watch(h.c.DB, []byte(key))
}

// expectTouched checks what EXEC would decide for w.
func expectTouched(t *testing.T, what string, w *Watch, want bool) {
	t.Helper()
	if got := w.Touched(); got != want {
		t.Errorf("%s: Touched() = %v, want %v", what, got, want)
	}
}

func TestWatchKeyNotModified(t *testing.T) {
	h := newHarness(t)
	var ws []*Watch
	for _, k := range []string{"x", "y", "z", "k"} {
		ws = append(ws, h.watch(k))
	}
	h.script("EXISTS nothing", "(integer) 0", "GET x", "(nil)", "SET other 1", "OK")
	for _, w := range ws {
		expectTouched(t, "watched key not modified", w, false)
	}
}

func TestWatchKeyModifiedOneOfOne(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x 30", "OK")
	w := h.watch("x")
	h.expect("SET x 40", "OK")
	expectTouched(t, "SET of the watched key", w, true)
	if n := h.ks.Watching(); n != 0 {
		t.Errorf("Watching() = %d: a touched watch stays registered", n)
	}
	h.expect("SET x 50", "OK")
	expectTouched(t, "a second SET", w, true)
}

func TestWatchKeyModifiedOneOfFive(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x 30", "OK")
	var ws []*Watch
	for _, k := range []string{"a", "b", "x", "k", "z"} {
		ws = append(ws, h.watch(k))
	}
	h.expect("SET x 40", "OK")
	for i, w := range ws {
		expectTouched(t, string(w.Key()), w, i == 2)
	}
}

// SORT ... STORE with an empty result deletes its destination and touches
// it. moond has no SORT: the other *STORE commands follow the same rule.
func TestWatchStoreEmptyResultDeletesDestination(t *testing.T) {
	for _, cmd := range []string{
		"SINTERSTORE foo emptyset",
		"SDIFFSTORE foo emptyset",
		"ZUNIONSTORE foo 1 emptyzset",
		"ZRANGESTORE foo emptyzset 0 -1",
	} {
		h := newHarness(t)
		h.expect("LPUSH foo bar", "(integer) 1")
		w := h.watch("foo")
		h.expect(cmd, "(integer) 0")
		h.expect("EXISTS foo", "(integer) 0")
		expectTouched(t, cmd, w, true)

		// An empty result over a missing destination writes nothing.
		w2 := h.watch("foo")
		h.expect(cmd, "(integer) 0")
		expectTouched(t, cmd+" over a missing key", w2, false)
	}
}

func TestWatchLazyExpiredKeyFailsExec(t *testing.T) {
	h := newHarness(t)
	h.expect("SET key 1 PX 100", "OK")
	w := h.watch("key")
	expectTouched(t, "before the TTL", w, false)
	h.advance(100)
	expectTouched(t, "at the TTL (not yet past)", w, false)
	h.advance(1)
	// Nothing deleted the key yet: EXEC sees it expired.
	expectTouched(t, "past the TTL, not deleted", w, true)

	// The same when a read deleted it: the deletion touches.
	h2 := newHarness(t)
	h2.expect("SET key 1 PX 100", "OK")
	w2 := h2.watch("key")
	h2.advance(101)
	h2.expect("GET key", "(nil)")
	expectTouched(t, "deleted by a read", w2, true)
}

func TestWatchStaleKeyDoesNotFailExec(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x foo PX 1", "OK")
	h.advance(2)
	w := h.watch("x")
	h.expect("EXISTS nothing", "(integer) 0")
	expectTouched(t, "stale when watched", w, false)
}

func TestWatchDeleteStaleKeyDoesNotFailExec(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x foo PX 1", "OK")
	h.advance(2)
	w := h.watch("x")
	h.expect("EXISTS x", "(integer) 0") // lazy expiry deletes it
	expectTouched(t, "stale key deleted by lazy expiry", w, false)
	// From then on it watches a missing key: creating it touches.
	h.expect("SET x bar", "OK")
	expectTouched(t, "the key created after", w, true)
}

func TestWatchActiveExpiryOfStaleKeyDoesNotFailExec(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x foo PX 1", "OK")
	h.advance(2)
	w := h.watch("x")
	if n := h.ks.ActiveExpire(1 << 30); n != 1 {
		t.Fatalf("ActiveExpire deleted %d keys, want 1", n)
	}
	expectTouched(t, "stale key deleted by active expiry", w, false)
}

func TestWatchFlushDBStaleKeyDoesNotFailExec(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x foo PX 1", "OK")
	h.advance(2)
	w := h.watch("x")
	h.expect("FLUSHDB", "OK")
	expectTouched(t, "FLUSHDB of a stale key", w, false)
}

func TestWatchAfterSuccessfulExecKeyNoLongerWatched(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x 30", "OK")
	w := h.watch("x")
	expectTouched(t, "EXEC", w, false)
	h.ks.Unwatch(w) // EXEC unwatches
	h.expect("SET x 40", "OK")
	expectTouched(t, "a write after EXEC", w, false)
	if n := h.ks.Watching(); n != 0 {
		t.Errorf("Watching() = %d after EXEC, want 0", n)
	}
}

func TestWatchAfterFailedExecKeyNoLongerWatched(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x 30", "OK")
	w := h.watch("x")
	h.expect("SET x 40", "OK")
	expectTouched(t, "EXEC", w, true)
	h.ks.Unwatch(w)
	if n := h.ks.Watching(); n != 0 {
		t.Errorf("Watching() = %d after EXEC, want 0", n)
	}
	// The next transaction watches nothing: a write cannot abort it, and
	// a new watch starts clean.
	h.expect("SET x 40", "OK")
	w2 := h.watch("x")
	expectTouched(t, "a new watch", w2, false)
}

func TestWatchUnwatch(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x 30", "OK")
	w := h.watch("x")
	h.expect("SET x 40", "OK")
	h.ks.Unwatch(w)
	h.ks.Unwatch(w) // idempotent
	if n := h.ks.Watching(); n != 0 {
		t.Errorf("Watching() = %d after UNWATCH, want 0", n)
	}
	h.expect("SET x 50", "OK")
	w2 := h.watch("x")
	expectTouched(t, "a watch after UNWATCH", w2, false)
}

func TestWatchFlushAllTouchesWatchedKeys(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x 30", "OK")
	w := h.watch("x")
	h.expect("FLUSHALL", "OK")
	expectTouched(t, "FLUSHALL of the key", w, true)
}

func TestWatchFlushAllDoesNotTouchMissingKeys(t *testing.T) {
	h := newHarness(t)
	h.expect("SET y 1", "OK") // something to flush
	w := h.watch("x")
	h.expect("FLUSHALL", "OK")
	expectTouched(t, "FLUSHALL of a missing key", w, false)
}

func TestWatchFlushDBTouchesWatchedKeys(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x 30", "OK")
	w := h.watch("x")
	h.expect("FLUSHDB", "OK")
	expectTouched(t, "FLUSHDB of the key", w, true)
}

func TestWatchFlushDBDoesNotTouchMissingKeys(t *testing.T) {
	h := newHarness(t)
	h.expect("SET y 1", "OK")
	w := h.watch("x")
	h.expect("FLUSHDB", "OK")
	expectTouched(t, "FLUSHDB of a missing key", w, false)
}

func TestWatchFlushDBOfAnotherDB(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x 30", "OK")
	w := h.watch("x")
	h.selectDB(1)
	h.expect("SET x 30", "OK")
	h.expect("FLUSHDB", "OK")
	expectTouched(t, "FLUSHDB of another database", w, false)
}

func TestWatchSwapDBTouchesExistingKeys(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x 30", "OK")
	w := h.watch("x")
	h.expect("SWAPDB 0 1", "OK")
	expectTouched(t, "SWAPDB took the key away", w, true)
}

func TestWatchSwapDBTouchesMissingKeys(t *testing.T) {
	h := newHarness(t)
	h.selectDB(1)
	h.expect("SET x 30", "OK")
	h.selectDB(0)
	w := h.watch("x")
	h.expect("SWAPDB 0 1", "OK")
	expectTouched(t, "SWAPDB brought the key", w, true)
}

func TestWatchSwapDBDoesNotTouchStaleKeys(t *testing.T) {
	h := newHarness(t)
	h.selectDB(1)
	h.expect("SET x foo PX 1", "OK")
	h.advance(2)
	w := h.watch("x")
	h.expect("SWAPDB 0 1", "OK") // stale key replaced with no key
	expectTouched(t, "stale key swapped away", w, false)
}

func TestWatchSwapDBMissingKeyReplacedWithStaleKey(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x foo PX 1", "OK")
	h.advance(2)
	h.selectDB(1)
	w := h.watch("x")
	h.expect("SWAPDB 0 1", "OK") // no key replaced with a stale key
	expectTouched(t, "stale key swapped in", w, false)
	// The watch now watches a stale key: its deletion is no change either.
	h.expect("GET x", "(nil)")
	expectTouched(t, "the stale key swapped in, deleted", w, false)
}

func TestWatchSwapDBStaleKeyReplacedWithStaleKey(t *testing.T) {
	h := newHarness(t)
	h.selectDB(1)
	h.expect("SET x foo PX 1", "OK")
	h.selectDB(0)
	h.expect("SET x bar PX 1", "OK")
	h.advance(2)
	h.selectDB(1)
	w := h.watch("x")
	h.expect("SWAPDB 0 1", "OK")
	expectTouched(t, "stale key replaced by a stale key", w, false)
}

func TestWatchSwapDBStaleKeyReplacedWithLiveKey(t *testing.T) {
	h := newHarness(t)
	h.selectDB(1)
	h.expect("SET x foo PX 1", "OK")
	h.selectDB(0)
	h.expect("SET x bar", "OK")
	h.advance(2)
	h.selectDB(1)
	w := h.watch("x")
	h.expect("SWAPDB 0 1", "OK")
	expectTouched(t, "stale key replaced by a live key", w, true)
}

func TestWatchRemembersTheDB(t *testing.T) {
	h := newHarness(t)
	h.selectDB(5)
	h.expect("SET x 30", "OK")
	w := h.watch("x")
	h.selectDB(1)
	h.expect("SET x 10", "OK")
	expectTouched(t, "the same key in another database", w, false)
	h.selectDB(5)
	h.expect("SET x 10", "OK")
	expectTouched(t, "the key in its database", w, true)
}

// After SWAPDB, a watch follows the logical index, not the data that was
// under it: a write to the key through its index touches it, one through
// the index the data moved to does not.
func TestWatchFollowsTheLogicalIndexAcrossSwapDB(t *testing.T) {
	h := newHarness(t)
	h.selectDB(2)
	h.expect("SET other 1", "OK")
	w := h.watch("x")
	h.expect("SWAPDB 2 3", "OK") // x exists on neither side
	expectTouched(t, "SWAPDB of a key missing on both sides", w, false)
	h.selectDB(3)
	h.expect("SET x 1", "OK")
	expectTouched(t, "a write to the old data", w, false)
	h.selectDB(2)
	h.expect("SET x 1", "OK")
	expectTouched(t, "a write through the watched index", w, true)

	// SetDBMap (recovery) moves the map the same way.
	h2 := newHarness(t)
	m := h2.ks.DBMap()
	m[0], m[1] = 1, 0
	if err := h2.ks.SetDBMap(m); err != nil {
		t.Fatal(err)
	}
	w2 := h2.watch("x")
	h2.selectDB(1)
	h2.expect("SET x 1", "OK")
	expectTouched(t, "after SetDBMap, another index", w2, false)
	h2.selectDB(0)
	h2.expect("SET x 1", "OK")
	expectTouched(t, "after SetDBMap, the watched index", w2, true)
}

func TestWatchExpireTouches(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x foo", "OK")
	w := h.watch("x")
	h.expect("EXPIRE x 10", "(integer) 1")
	expectTouched(t, "EXPIRE", w, true)
}

func TestWatchExpiredKeyTouches(t *testing.T) {
	h := newHarness(t)
	h.expect("SET x foo", "OK")
	h.expect("EXPIRE x 1", "(integer) 1")
	w := h.watch("x")
	h.advance(1001)
	if n := h.ks.ActiveExpire(1 << 30); n != 1 {
		t.Fatalf("ActiveExpire deleted %d keys, want 1", n)
	}
	h.expect("DBSIZE", "(integer) 0")
	expectTouched(t, "deleted by active expiry", w, true)
}

// DISCARD and UNWATCH drop a client's watches and clear its dirty flag:
// the server unwatches and watches anew.
func TestWatchDiscardThenWatchAgain(t *testing.T) {
	h := newHarness(t)
	w := h.watch("x")
	h.expect("SET x 10", "OK")
	expectTouched(t, "before DISCARD", w, true)
	h.ks.Unwatch(w)
	h.expect("INCR x", "(integer) 11")
	if n := h.ks.Watching(); n != 0 {
		t.Errorf("Watching() = %d after DISCARD, want 0", n)
	}
}

func TestWatchFlushAllWhileWatchingSeveralKeys(t *testing.T) {
	h := newHarness(t)
	h.expect("MSET a a b b", "OK")
	wb, wa := h.watch("b"), h.watch("a")
	h.expect("FLUSHALL", "OK")
	expectTouched(t, "b", wb, true)
	expectTouched(t, "a", wa, true)
	h.ks.Unwatch(wb)
	h.ks.Unwatch(wa)
	h.expect("EXISTS nothing", "(integer) 0")
}

// Several watches of one key, dropped in any order, each see the touches
// of the key while registered.
func TestWatchManyWatchersOfOneKey(t *testing.T) {
	h := newHarness(t)
	ws := []*Watch{h.watch("x"), h.watch("x"), h.watch("x")}
	h.ks.Unwatch(ws[1])
	h.expect("SET x 1", "OK")
	expectTouched(t, "first", ws[0], true)
	expectTouched(t, "dropped", ws[1], false)
	expectTouched(t, "third", ws[2], true)
	h.ks.Unwatch(ws[0])
	w := h.watch("x")
	h.ks.Unwatch(ws[2])
	if n := h.ks.Watching(); n != 1 {
		t.Errorf("Watching() = %d, want 1", n)
	}
	h.expect("DEL x", "(integer) 1")
	expectTouched(t, "registered after", w, true)
	h.ks.Unwatch(w)
	if len(h.ks.watch.byDB[0]) != 0 {
		t.Errorf("registry keeps %d keys with no watch", len(h.ks.watch.byDB[0]))
	}
}

// Redis signals a watched key from each command's own call sites
// (signalModifiedKey): mostly on an effective change, but a few commands
// signal without one, and a few changes of representation do not signal.
func TestWatchCommandCallSites(t *testing.T) {
	cases := []struct {
		setup   []string // run before the watch
		cmd     string
		touched bool
	}{
		{[]string{"SET k v"}, "SET k v", true}, // same value: SET signals
		{nil, "DEL k", false},
		{[]string{"SET k v"}, "DEL k", true},
		{[]string{"SET k v"}, "EXPIRE k 100 NX", true},
		{[]string{"SET k v EX 100"}, "EXPIRE k 100 NX", false},
		{[]string{"SET k v EX 100"}, "EXPIRE k 100", true}, // the same TTL
		{[]string{"SET k v"}, "PERSIST k", false},
		{[]string{"SET k v EX 100"}, "PERSIST k", true},
		{[]string{"SET k v"}, "APPEND k x", true},
		{[]string{"SET k v"}, "INCRBY n 0", false}, // another key
		{[]string{"SET k 1"}, "INCRBY k 0", true},
		{[]string{"SET k v"}, "GET k", false},
		{[]string{"SET k v"}, "SETNX k w", false},
		{[]string{"SET k v"}, "SET k w XX", true},
		{nil, "SET k w XX", false},
		{[]string{"SET k v"}, "GETEX k PERSIST", false},
		{[]string{"SET k v EX 100"}, "GETEX k PERSIST", true},
		{[]string{"SET k v"}, "RENAME k k", false},
		{[]string{"SET k v"}, "RENAME k j", true},
		{[]string{"SET j v"}, "RENAME j k", true},
		{[]string{"SET j v"}, "COPY j k", true},
		{[]string{"SET k v"}, "COPY k j", false},
		{[]string{"SET k v"}, "MOVE k 1", true},
		{[]string{"SELECT 1", "SET k v", "SELECT 0"}, "MOVE k 1", false},
		{[]string{"SET k 1"}, "SETBIT k 2 1", false}, // '1' is 0x31: bit 2 is set
		{[]string{"SET k 1"}, "SETBIT k 0 1", true},
		{[]string{"SET k v"}, "SETRANGE k 0 x", true},
		{[]string{"HSET k f v"}, "HSET k f v", true}, // HSET signals always
		{[]string{"HSET k f v"}, "HSETNX k f w", false},
		{[]string{"HSET k f v"}, "HDEL k g", false},
		{[]string{"HSET k f v g w"}, "HDEL k g", true},
		{[]string{"HSET k f 1"}, "HINCRBY k f 0", true},
		{[]string{"RPUSH k a b"}, "LTRIM k 0 -1", true}, // LTRIM signals always
		{[]string{"RPUSH k a b"}, "LTRIM k 0 0", true},
		{[]string{"RPUSH k a b"}, "LREM k 0 c", false},
		{[]string{"RPUSH k a b"}, "LINSERT k BEFORE c x", false},
		{[]string{"RPUSH k a b"}, "LSET k 0 a", true},
		{[]string{"RPUSH k a b"}, "LPUSHX j a", false},
		{[]string{"SADD k a"}, "SADD k a", false},
		{[]string{"SADD k a"}, "SADD k b", true},
		{[]string{"SADD k a"}, "SREM k b", false},
		{[]string{"SADD k a b"}, "SREM k b", true},
		{[]string{"SADD k a", "SADD j a"}, "SMOVE j k a", true}, // dst signalled anyway
		{[]string{"SADD k a"}, "SMOVE k k a", false},
		{[]string{"SADD k a"}, "SMOVE j k a", false},
		{[]string{"ZADD k 1 a"}, "ZADD k 1 a", false},
		{[]string{"ZADD k 1 a"}, "ZADD k 2 a", true},
		{[]string{"ZADD k 1 a"}, "ZADD k NX 2 a", false},
		{[]string{"ZADD k 1 a"}, "ZINCRBY k 0 a", false},
		{[]string{"ZADD k 1 a"}, "ZINCRBY k 1 a", true},
		{[]string{"ZADD k 1 a"}, "ZREM k b", false},
		{[]string{"ZADD k 1 a 2 b"}, "ZREM k b", true},
		{[]string{"ZADD k 1 a 2 b"}, "ZREMRANGEBYSCORE k 5 6", false},
		{[]string{"PFADD k a"}, "PFADD k a", false},
		{[]string{"PFADD k a"}, "PFADD k b", true},
		{[]string{"PFADD k a"}, "PFCOUNT k", true}, // the cache is written
		{[]string{"PFADD k a", "PFCOUNT k"}, "PFCOUNT k", false},
		{[]string{"PFADD j a"}, "PFMERGE k j", true},
		{[]string{"PFADD k a"}, "PFMERGE k", true},             // PFMERGE writes always
		{[]string{"SET k v"}, "BITFIELD k SET u8 0 118", true}, // the same byte: BITFIELD signals
		{[]string{"SET k v"}, "BITFIELD k GET u8 0", false},
		{[]string{"SET j v"}, "BITOP OR k j", true},
		{[]string{"SET k v"}, "BITOP OR k missing", true}, // empty result: deleted
		{nil, "BITOP OR k missing", false},
		{[]string{"SET k v"}, "GETDEL k", true},
		{[]string{"SET k v"}, "GETSET k v", true},
		{[]string{"SET k v"}, "SETEX k 10 v", true},
		{[]string{"SET k v"}, "MSET k v", true},
		{[]string{"SET k v"}, "MSETNX k w j w", false},
		{[]string{"SET k v"}, "EXPIREAT k 1", true}, // in the past: deleted
		{[]string{"SET k v EX 100"}, "EXPIRE k 10 GT", false},
		{[]string{"SET k v EX 100"}, "EXPIRE k 1000 GT", true},
		{[]string{"SET j v", "SET k v"}, "RENAMENX j k", false},
		{[]string{"SELECT 1", "SET k v", "SELECT 0"}, "COPY k k DB 1 REPLACE", false},
		{[]string{"SET k v"}, "COPY k k DB 1", false}, // the copy is in another database
		{[]string{"HSET k f 1"}, "HINCRBYFLOAT k f 0", true},
		{[]string{"HSET k f 1"}, "HSETNX k g 1", true},
		{[]string{"RPUSH k a"}, "LMOVE k k LEFT RIGHT", true}, // rotation of one element
		{[]string{"RPUSH k a b"}, "RPOPLPUSH k k", true},
		{[]string{"RPUSH k a b"}, "LPOP k", true},
		{[]string{"RPUSH k a"}, "LPOP k", true},
		{[]string{"RPUSH k a b"}, "LPUSHX k c", true},
		{[]string{"RPUSH k a b"}, "LINSERT k BEFORE a x", true},
		{[]string{"RPUSH k a b"}, "LRANGE k 0 -1", false},
		{[]string{"RPUSH j a"}, "LMPOP 2 j k LEFT", false},
		{[]string{"RPUSH k a"}, "LMPOP 2 j k LEFT", true},
		{[]string{"SADD k a b"}, "SPOP k", true},
		{[]string{"SADD k a b"}, "SRANDMEMBER k", false},
		{[]string{"SADD k a", "SADD j a"}, "SINTERSTORE k j", true}, // the same set: a write all the same
		{[]string{"SADD j a"}, "SINTERCARD 1 j", false},
		{[]string{"ZADD k 1 a 2 b"}, "ZPOPMIN k", true},
		{[]string{"ZADD k 1 a 2 b"}, "ZREMRANGEBYRANK k 0 0", true},
		{[]string{"ZADD j 1 a"}, "ZRANGESTORE k j 0 -1", true},
		{[]string{"ZADD k 1 a"}, "ZMPOP 1 k MIN", true},
		{[]string{"RPUSH k a b"}, "LPOP k 0", false},
		{[]string{"SADD k a b"}, "SPOP k 0", false},
		{[]string{"ZADD k 1 a"}, "ZPOPMIN k 0", false},
		{[]string{"SET k v EX 100"}, "GETEX k", false},
		{[]string{"SET k 1"}, "INCRBYFLOAT k 0", true},
		{[]string{"PFADD k a"}, "PFDEBUG TODENSE k", false}, // an encoding change only
	}
	for _, tc := range cases {
		h := newHarness(t)
		for _, line := range tc.setup {
			if strings.HasPrefix(line, "SELECT ") {
				h.selectDB(int(line[len(line)-1] - '0'))
				continue
			}
			if r := h.run(line); strings.HasPrefix(r, "(error)") {
				t.Fatalf("%s: %s", line, r)
			}
		}
		w := h.watch("k")
		if r := h.run(tc.cmd); strings.HasPrefix(r, "(error)") {
			t.Fatalf("%s: %s", tc.cmd, r)
		}
		expectTouched(t, strings.Join(append(tc.setup, tc.cmd), "; "), w, tc.touched)
	}
}
