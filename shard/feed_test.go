package shard

import (
	"fmt"
	"slices"
	"testing"

	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/runtime/looptest"
)

// recordingFeed keeps what a shard feeds, as "db:CMD args" lines, a part
// as "part <txid> <shards>: lines".
type recordingFeed struct{ got []string }

func (f *recordingFeed) Record(db int, args [][]byte) { f.got = append(f.got, line(db, args)) }

func (f *recordingFeed) Part(txid uint64, shards []int, dbs []int, recs [][][]byte) {
	var lines []string
	for i, r := range recs {
		lines = append(lines, line(dbs[i], r))
	}
	f.got = append(f.got, fmt.Sprintf("part %d %v: %v", txid, shards, lines))
}

func line(db int, args [][]byte) string { return fmt.Sprintf("%d:%q", db, args) }

// TestFeedPartsCarryTheirTxn: a part is fed at its END with its txid and
// the shards its END names, also when it wrote nothing (the assembler
// waits for every named shard's part), and SkipPart feeds the records a
// part kept when its END is never logged.
func TestFeedPartsCarryTheirTxn(t *testing.T) {
	o := testOptions(t.TempDir(), "always") // before the loop: removed after it stopped
	l := startLoop(t, runtime.KindPool)
	s := open(t, l, o)
	f := &recordingFeed{}
	s.SetFeed(f)
	exec(t, l, s, "SET", "a", "0")
	looptest.On(t, l, func() { s.OpenPart(5) })
	exec(t, l, s, "SET", "a", "1")
	looptest.On(t, l, func() {
		if _, err := s.EndPart(5, 0, []int{0, 2}); err != nil {
			t.Error(err)
		}
		s.OpenPart(6)
		if _, err := s.EndPart(6, 0, []int{0, 1}); err != nil { // wrote nothing
			t.Error(err)
		}
		s.OpenPart(7)
	})
	exec(t, l, s, "SET", "b", "1")
	looptest.On(t, l, func() { s.SkipPart(7, []int{0, 3}) })
	want := []string{
		`0:["SET" "a" "0"]`,
		`part 5 [0 2]: [0:["SET" "a" "1"]]`,
		`part 6 [0 1]: []`,
		`part 7 [0 3]: [0:["SET" "b" "1"]]`,
	}
	if !slices.Equal(f.got, want) {
		t.Fatalf("fed\n%q\nwant\n%q", f.got, want)
	}
}
