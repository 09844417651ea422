package wal

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"syscall"
	"testing"
)

// drain takes and completes every queued group, returning them in order
// (copies: the Appender reuses groups after Done).
func drain(t *testing.T, a *Appender) []Group {
	t.Helper()
	var out []Group
	for g := a.Take(); g != nil; g = a.Take() {
		c := *g
		c.Buf = bytes.Clone(g.Buf)
		out = append(out, c)
		a.Done(g, nil)
		a.MarkDurable(c.LastLSN)
	}
	return out
}

// assemble lays groups out into segment images the way a writer would.
func assemble(t *testing.T, groups []Group) map[uint64][]byte {
	t.Helper()
	segs := map[uint64][]byte{}
	for _, g := range groups {
		img, ok := segs[g.Segment.FirstLSN]
		if g.Create != !ok {
			t.Fatalf("group %d..%d: Create=%v, segment exists=%v", g.FirstLSN, g.LastLSN, g.Create, ok)
		}
		if !ok {
			img = g.Segment.Append(nil)
		}
		if int64(len(img)) != g.Offset {
			t.Fatalf("group %d..%d at offset %d, segment has %d bytes", g.FirstLSN, g.LastLSN, g.Offset, len(img))
		}
		segs[g.Segment.FirstLSN] = append(img, g.Buf...)
	}
	return segs
}

func TestAppenderAssignsConsecutiveLSNsIntoOneGroup(t *testing.T) {
	a := NewAppender(AppenderOptions{Shard: 2, NextLSN: 100})
	for i := range 5 {
		lsn, err := a.Append(RecordData, []byte("x"))
		if err != nil || lsn != uint64(100+i) {
			t.Fatalf("append %d: lsn %d err %v", i, lsn, err)
		}
	}
	if lsn, _ := a.AppendCommand(0, [][]byte{[]byte("DEL"), []byte("k")}); lsn != 105 {
		t.Fatalf("command lsn %d", lsn)
	}
	if a.NextLSN() != 106 || a.WrittenLSN() != 99 || a.DurableLSN() != 99 {
		t.Fatalf("next %d written %d durable %d", a.NextLSN(), a.WrittenLSN(), a.DurableLSN())
	}
	g := a.Take()
	if g == nil || !g.Create || g.Offset != SegmentHeaderSize || g.FirstLSN != 100 || g.LastLSN != 105 || g.Records != 6 || g.Sealed {
		t.Fatalf("group %+v", g)
	}
	if g.Segment != (SegmentHeader{Version: FormatVersion, Shard: 2, FirstLSN: 100}) {
		t.Fatalf("segment %+v", g.Segment)
	}
	if a.Unwritten() != len(g.Buf) {
		t.Fatalf("unwritten %d, group %d", a.Unwritten(), len(g.Buf))
	}
}

func TestAppenderHasAtMostOneGroupInFlight(t *testing.T) {
	a := NewAppender(AppenderOptions{NextLSN: 1})
	a.Append(RecordData, []byte("a"))
	g1 := a.Take()
	a.Append(RecordData, []byte("b"))
	a.Append(RecordData, []byte("c"))
	if a.Take() != nil {
		t.Fatal("second group taken while the first is in flight")
	}
	a.Done(g1, nil)
	g2 := a.Take()
	if g2 == nil || g2.FirstLSN != 2 || g2.LastLSN != 3 || g2.Create || g2.Offset != SegmentHeaderSize+markRecordSize+int64(RecordSize(1)) {
		t.Fatalf("second group %+v", g2)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Done for a group not in flight did not panic")
		}
	}()
	a.Done(g1, nil)
}

func TestAppenderRetriesAFailedGroupUnchanged(t *testing.T) {
	a := NewAppender(AppenderOptions{NextLSN: 1})
	a.Append(RecordData, []byte("a"))
	a.Append(RecordData, []byte("b"))
	g := a.Take()
	first := *g
	buf := bytes.Clone(g.Buf)
	a.Append(RecordData, []byte("c")) // lands in the next group meanwhile
	a.Done(g, syscall.ENOSPC)
	if !errors.Is(a.LastError(), syscall.ENOSPC) || a.WrittenLSN() != 0 {
		t.Fatalf("last error %v written %d", a.LastError(), a.WrittenLSN())
	}
	again := a.Take()
	if again.FirstLSN != first.FirstLSN || again.LastLSN != first.LastLSN || again.Offset != first.Offset ||
		again.Create != first.Create || !bytes.Equal(again.Buf, buf) {
		t.Fatalf("retried group %+v differs from %+v", again, first)
	}
	a.Done(again, nil)
	if a.LastError() != nil || a.WrittenLSN() != 2 {
		t.Fatalf("after success: last error %v written %d", a.LastError(), a.WrittenLSN())
	}
	if g3 := a.Take(); g3.FirstLSN != 3 {
		t.Fatalf("next group %+v", g3)
	}
}

func TestAppenderRotatesWithSealAndLinksTheNextSegment(t *testing.T) {
	const size = 300
	a := NewAppender(AppenderOptions{Shard: 1, NextLSN: 1, SegmentSize: size})
	var want []uint64
	var groups []Group
	for range 40 {
		lsn, err := a.Append(RecordData, bytes.Repeat([]byte("v"), 20))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, lsn)
		if len(want)%3 == 0 {
			groups = append(groups, drain(t, a)...) // group boundaries inside segments too
		}
	}
	groups = append(groups, drain(t, a)...)
	segs := assemble(t, groups)
	firsts := slices.Sorted(maps.Keys(segs))
	if len(firsts) < 3 {
		t.Fatalf("only %d segments", len(firsts))
	}
	var prev ScanResult
	var got []uint64
	for i, first := range firsts {
		img := segs[first]
		if len(img) > size {
			t.Fatalf("segment %d is %d bytes, bound %d", i, len(img), size)
		}
		res, err := ScanSegment(bytes.NewReader(img), int64(len(img)), ScanOptions{Visit: func(r Record, _ int64) error {
			if r.Type == RecordData {
				got = append(got, r.LSN)
			}
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		last := i == len(firsts)-1
		if (!last && res.Stop != StopSealed) || (last && res.Stop != StopEOF) {
			t.Fatalf("segment %d: %v (%v)", i, res.Stop, res.Reason)
		}
		if i > 0 && (res.Header.Prev != prev.Link() || res.Header.FirstLSN != prev.LastLSN+1) {
			t.Fatalf("segment %d links to %v, previous ends %v", i, res.Header.Prev, prev.Link())
		}
		prev = res
	}
	if !slices.Equal(got, want) {
		t.Fatalf("read back %v, wrote %v", got, want)
	}
}

func TestAppenderGivesAnOversizedRecordItsOwnSegment(t *testing.T) {
	a := NewAppender(AppenderOptions{NextLSN: 1, SegmentSize: MinSegmentSize})
	a.Append(RecordData, []byte("small"))
	a.Append(RecordData, bytes.Repeat([]byte("L"), 1000))
	a.Append(RecordData, []byte("small"))
	groups := drain(t, a)
	var segments []uint64
	for _, g := range groups {
		if g.Create {
			segments = append(segments, g.Segment.FirstLSN)
		}
	}
	// 1: "small", seal 2 | 3: big, seal 4 | 5: "small"
	if len(segments) != 3 || segments[0] != 1 || segments[1] != 3 || segments[2] != 5 {
		t.Fatalf("segments start at %v", segments)
	}
}

func TestAppenderSealOnShutdown(t *testing.T) {
	a := NewAppender(AppenderOptions{NextLSN: 10})
	if ok, _ := a.Seal(SealShutdown); ok {
		t.Fatal("sealed a segment with no record")
	}
	a.Append(RecordData, []byte("x"))
	if ok, err := a.Seal(SealShutdown); !ok || err != nil {
		t.Fatalf("Seal: %v %v", ok, err)
	}
	g := a.Take()
	if !g.Sealed || g.LastLSN != 11 || g.SealCRC != recordCRC(g.Buf) {
		t.Fatalf("group %+v", g)
	}
	a.Done(g, nil)
	if a.NextLSN() != 12 {
		t.Fatalf("next %d", a.NextLSN())
	}
	a.Append(RecordData, []byte("y"))
	g = a.Take()
	want := ChainLink{FirstLSN: 10, SealLSN: 11, SealCRC: g.Segment.Prev.SealCRC}
	if !g.Create || g.Segment.FirstLSN != 12 || g.Segment.Prev != want {
		t.Fatalf("next segment %+v", g.Segment)
	}
}

func TestAppenderDurabilityBookkeeping(t *testing.T) {
	a := NewAppender(AppenderOptions{NextLSN: 1})
	a.Append(RecordData, nil)
	a.Append(RecordData, nil)
	g := a.Take()
	a.Done(g, nil)
	if a.WrittenLSN() != 2 || a.DurableLSN() != 0 {
		t.Fatalf("written %d durable %d", a.WrittenLSN(), a.DurableLSN())
	}
	a.MarkDurable(1)
	a.MarkDurable(2)
	a.MarkDurable(1) // an older fsync completing late changes nothing
	if a.DurableLSN() != 2 {
		t.Fatalf("durable %d", a.DurableLSN())
	}
	defer func() {
		if recover() == nil {
			t.Fatal("MarkDurable beyond written did not panic")
		}
	}()
	a.MarkDurable(3)
}

func TestAppenderPoisonRefusesAppends(t *testing.T) {
	a := NewAppender(AppenderOptions{NextLSN: 1})
	a.Poison(syscall.EIO)
	_, err := a.Append(RecordData, nil)
	if !errors.Is(err, ErrPoisoned) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("got %v", err)
	}
	if _, err := a.AppendCommand(0, [][]byte{[]byte("X")}); !errors.Is(err, ErrPoisoned) {
		t.Fatalf("command: %v", err)
	}
}

func TestAppenderRefusesBadInput(t *testing.T) {
	a := NewAppender(AppenderOptions{NextLSN: 1, MaxRecordPayload: 64})
	if _, err := a.Append(RecordSeal, nil); err == nil {
		t.Fatal("appended a seal")
	}
	// Data records above the limit are split (continuation_test.go); a
	// checkpoint record is never split.
	if _, err := a.Append(RecordCheckpoint, make([]byte, 65)); !errors.Is(err, ErrRecordTooLarge) {
		t.Fatalf("oversized: %v", err)
	}
	if a.NextLSN() != 1 {
		t.Fatal("a refused append used an LSN")
	}
}

func TestAppenderSteadyStateDoesNotAllocate(t *testing.T) {
	a := NewAppender(AppenderOptions{NextLSN: 1, SegmentSize: 1 << 30})
	args := [][]byte{[]byte("SET"), []byte("key:0001"), []byte("value-value-value")}
	cycle := func() {
		for range 16 {
			if _, err := a.AppendCommand(0, args); err != nil {
				t.Fatal(err)
			}
		}
		g := a.Take()
		last := g.LastLSN
		a.Done(g, nil)
		a.MarkDurable(last)
	}
	for range 4 {
		cycle() // warm the spare buffers
	}
	if allocs := testing.AllocsPerRun(100, cycle); allocs != 0 {
		t.Fatalf("%.1f allocations per group of 16", allocs)
	}
}
