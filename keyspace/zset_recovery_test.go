package keyspace

import (
	"testing"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/resp"
)

// zrec is a heap record of a sorted set given as "score member ...".
func zrec(db int, key, items string, keyLSN uint64) heap.Record {
	return heap.Record{Key: hk(db, key), Kind: uint8(KindZSet), KeyLSN: keyLSN, Value: []byte(encodedZSet(items))}
}

// TestZSetRecoveryFromHeapAndWAL boots sorted sets from heap records and
// replays journal records over them through Replay: records at or below a
// key's heap LSN are skipped (their change is in the record), the later
// ones apply on top, deltas included.
func TestZSetRecoveryFromHeapAndWAL(t *testing.T) {
	dir := t.TempDir()
	_, files := writeHeap(t, dir, nil,
		zrec(0, "old", "1 a 2 b", 3),
		zrec(0, "new", "1 a 2 b 3 c", 20),
	)
	ks := NewKeyspace(16, func() int64 { return startClock })
	ks.Limits.ZSetMaxListpackEntries = 2
	bootHeap(t, ks, dir, files, 5)
	for _, r := range []walRecord{
		{6, 0, []string{"ZADD", "old", "5", "c", "0.5", "b"}},
		{7, 0, []string{"ZADD", "new", "9", "a"}}, // in the heap version already
		{8, 0, []string{"ZREM", "old", "a"}},
		{21, 0, []string{"ZREM", "new", "b"}},
		{22, 0, []string{applyName, "PUT", "0", "dst", "3", encodedZSet("7 x"), "0"}},
		{23, 0, []string{"ZADD", "dst", "8", "y"}},
		{24, 0, []string{"ZADD", "gone", "1", "a"}},
		{25, 0, []string{"DEL", "gone"}},
	} {
		var w resp.Writer
		args := make([][]byte, len(r.args))
		for i, a := range r.args {
			args[i] = []byte(a)
		}
		ks.Replay(r.lsn, r.db, args, &w)
		if s, _, err := decodeReply(w.Buf); err != nil || len(s) > 7 && s[:7] == "(error)" {
			t.Fatalf("replaying %q: %s", r.args, w.Buf)
		}
	}
	ks.EndLoad()
	h := &harness{t: t, ks: ks, clock: startClock}
	h.script(
		"ZRANGE old 0 -1 WITHSCORES", words("b 0.5 c 5"),
		"ZRANGE new 0 -1 WITHSCORES", words("a 1 c 3"),
		"OBJECT ENCODING new", q("skiplist"), // 3 members loaded past a limit of 2
		"ZRANGE dst 0 -1 WITHSCORES", words("x 7 y 8"),
		"EXISTS gone", n(0),
	)
}
