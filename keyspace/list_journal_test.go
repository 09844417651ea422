package keyspace

import (
	"slices"
	"strings"
	"testing"
)

// TestListJournalForms checks the record every list write journals (see
// cmd_list.go), and that writes that changed nothing journal none.
func TestListJournalForms(t *testing.T) {
	h := newHarness(t)
	h.recordJournal()
	h.selectDB(2)
	steps := []struct {
		line string
		want []string
	}{
		{"LPUSH l a b", []string{"2: LPUSH l a b"}},
		{"RPUSH l c", []string{"2: RPUSH l c"}},
		{"LPUSHX nokey a", nil},
		{"RPUSHX l d e", []string{"2: RPUSH l d e"}},
		{"LPUSHX l z", []string{"2: LPUSH l z"}},
		{"LPOP l", []string{"2: LPOP l 1"}},
		{"RPOP l 2", []string{"2: RPOP l 2"}},
		{"LPOP l 0", nil},
		{"LPOP nokey", nil},
		{"LSET l 0 x", []string{"2: LSET l 0 x"}},
		{"LSET l 9 x", nil},
		{"LINSERT l BEFORE x w", []string{"2: LINSERT l BEFORE x w"}},
		{"LINSERT l BEFORE nope w", nil},
		{"LREM l 0 nope", nil},
		{"LREM l 1 w", []string{"2: LREM l 1 w"}},
		{"LTRIM l 0 -1", nil},
		{"LTRIM l 0 0", []string{"2: LTRIM l 0 0"}},
		{"LRANGE l 0 -1", nil},
		{"LREM l 0 x", []string{"2: DEL l"}},
		{"RPUSH l a b c", []string{"2: RPUSH l a b c"}},
		{"LTRIM l 5 6", []string{"2: DEL l"}},
		{"RPUSH l a b c", []string{"2: RPUSH l a b c"}},
		{"RPOP l 5", []string{"2: DEL l"}},
		{"RPUSH l a b c", []string{"2: RPUSH l a b c"}},
		{"LMOVE l m LEFT RIGHT", []string{"2: MOOND.APPLY CMD 2 3 LPOP l 1 CMD 2 3 RPUSH m a"}},
		{"RPOPLPUSH l m", []string{"2: MOOND.APPLY CMD 2 3 RPOP l 1 CMD 2 3 LPUSH m c"}},
		{"LMOVE l l RIGHT LEFT", []string{"2: LMOVE l l RIGHT LEFT"}},
		{"LMOVE l m RIGHT LEFT", []string{"2: MOOND.APPLY DEL 2 l CMD 2 3 LPUSH m b"}},
		{"LMOVE l m RIGHT LEFT", nil},
		{"LMPOP 2 l m RIGHT COUNT 2", []string{"2: RPOP m 2"}},
		{"LMPOP 2 l m RIGHT COUNT 2", []string{"2: DEL m"}},
		{"LMPOP 2 l m RIGHT COUNT 2", nil},
	}
	for _, s := range steps {
		if got := h.journaled(s.line); !slices.Equal(got, s.want) {
			t.Errorf("%s journaled %q, want %q", s.line, got, s.want)
		}
	}
}

// TestListJournalReplays checks that replaying the journal of list writes
// through Replay (with a heap that holds none of the keys) rebuilds the
// same lists, and that a record at or below a key's heap LSN is skipped.
func TestListJournalReplays(t *testing.T) {
	src := newHarness(t)
	src.recordJournal()
	for _, line := range []string{
		"RPUSH a 1 2 3 4 5 6", "LPUSH b x y", "LMOVE a b LEFT RIGHT", "RPOPLPUSH b b",
		"LSET a 0 first", "LINSERT a AFTER 4 four", "LREM a -1 6", "LTRIM a 0 3",
		"LMPOP 2 b a LEFT COUNT 2", "LMOVE b c RIGHT LEFT", "RPOP a", "LPUSHX c q",
	} {
		src.run(line)
	}
	dst := newHarness(t)
	for i, r := range src.records {
		args := make([][]byte, len(r.args))
		for j, a := range r.args {
			args[j] = []byte(a)
		}
		dst.w.Reset()
		dst.ks.Replay(uint64(i+1), r.db, args, &dst.w)
		if got, _, _ := decodeReply(dst.w.Buf); strings.HasPrefix(got, "(error)") {
			t.Fatalf("replaying %q: %s", r.args, got)
		}
	}
	for _, k := range []string{"a", "b", "c"} {
		want := src.run("LRANGE " + k + " 0 -1")
		if got := dst.run("LRANGE " + k + " 0 -1"); got != want {
			t.Errorf("replayed %s = %s, want %s", k, got, want)
		}
	}
}

// TestListReplayOverAFuzzyHeap checks the per-key rule for list records:
// a list the heap holds as of LSN 10 skips the records up to 10 and takes
// those above, a MOOND.APPLY of LMOVE included.
func TestListReplayOverAFuzzyHeap(t *testing.T) {
	dir := t.TempDir()
	enc := newHarness(t)
	enc.run("RPUSH l x y")
	r := rec(0, "a", "", 10, 0)
	r.Kind, r.Value = uint8(KindList), enc.listOfKey("l").encode(nil)
	_, files := writeHeap(t, dir, nil, r)
	ks := NewKeyspace(16, func() int64 { return startClock })
	bootHeap(t, ks, dir, files, 5)
	replay(t, ks,
		walRecord{8, 0, []string{"RPUSH", "a", "z"}},
		walRecord{9, 0, []string{"LPUSH", "b", "q"}},
		walRecord{10, 0, []string{"LPOP", "a", "1"}},
		walRecord{11, 0, []string{"RPUSH", "a", "w"}},
		walRecord{12, 0, []string{applyName, "CMD", "0", "3", "RPOP", "a", "1", "CMD", "0", "3", "LPUSH", "m", "w"}},
		walRecord{13, 0, []string{"LMOVE", "b", "b", "LEFT", "RIGHT"}},
	)
	ks.EndLoad()
	h := &harness{t: t, ks: ks, clock: startClock}
	h.expect("LRANGE a 0 -1", `["x" "y"]`)
	h.expect("LRANGE b 0 -1", `["q"]`)
	h.expect("LRANGE m 0 -1", `["w"]`)
}
