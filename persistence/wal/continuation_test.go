package wal

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// splitLog writes, with a record limit of 16 bytes, a small record, a
// command split into many parts, a raw data payload split too, and another
// small record, and returns the directory, the logical records as Recover
// must give them back, and the segment's path.
func splitLog(t *testing.T) (string, []testRec, string) {
	t.Helper()
	dir := t.TempDir()
	w, err := OpenSyncWriter(SyncWriterOptions{Dir: dir, Shard: 2, NextLSN: 1, MaxRecordPayload: 16})
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef-"), 10) // 170 bytes
	cmd := [][]byte{[]byte("MSET"), []byte("{t}a"), big, []byte("{t}b"), big[:100]}
	raw := strings.Repeat("r", 40)
	var want []testRec
	lsn, err := w.Append(RecordData, []byte("before"))
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, testRec{lsn, RecordData, "before"})
	if lsn, err = w.AppendCommand(3, cmd); err != nil {
		t.Fatal(err)
	}
	want = append(want, testRec{lsn, RecordData, string(EncodeCommand(3, cmd))})
	if lsn, err = w.Append(RecordData, []byte(raw)); err != nil {
		t.Fatal(err)
	}
	want = append(want, testRec{lsn, RecordData, raw})
	if lsn, err = w.Append(RecordData, []byte("after")); err != nil {
		t.Fatal(err)
	}
	want = append(want, testRec{lsn, RecordData, "after"})
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	w.closeFile()
	files := segmentFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("%d segments", len(files))
	}
	return dir, want, files[0]
}

// records lists the physical records of a segment file.
func records(t *testing.T, path string) (recs []Record, offs []int64) {
	t.Helper()
	b := readFile(t, path)
	res, err := ScanSegment(bytes.NewReader(b), int64(len(b)), ScanOptions{Visit: func(rec Record, off int64) error {
		rec.Payload = slices.Clone(rec.Payload)
		recs = append(recs, rec)
		offs = append(offs, off)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopEOF && res.Stop != StopSealed {
		t.Fatalf("scan: %v %v", res.Stop, res.Reason)
	}
	return recs, offs
}

func TestSplitRecordRoundTripsThroughWriteScanAndReplay(t *testing.T) {
	dir, want, path := splitLog(t)

	// On disk: every record within the limit, the parts of a logical
	// record consecutive, typed part but for the last, which has the
	// logical record's LSN.
	recs, _ := records(t, path)
	cmdParts := (len(want[1].Payload) + 15) / 16
	if got := len(recs); got != 1+cmdParts+3+1 {
		t.Fatalf("%d records on disk, want %d", got, 1+cmdParts+3+1)
	}
	var joined []byte
	for i, r := range recs[1 : 1+cmdParts] {
		if len(r.Payload) > 16 {
			t.Fatalf("part %d holds %d bytes, over the limit", i, len(r.Payload))
		}
		typ := RecordPart
		if i == cmdParts-1 {
			typ = RecordData
		}
		if r.Type != typ || r.LSN != uint64(2+i) {
			t.Fatalf("part %d: type %v LSN %d", i, r.Type, r.LSN)
		}
		joined = append(joined, r.Payload...)
	}
	if string(joined) != want[1].Payload || want[1].LSN != uint64(1+cmdParts) {
		t.Fatalf("the parts do not join into the command at the last part's LSN %d", want[1].LSN)
	}

	// Replay: the logical records, whole, at their last part's LSN.
	res, c := recoverDir(t, RecoverOptions{Dir: dir, Shard: 2})
	if !slices.Equal(c.recs, want) {
		t.Fatalf("replayed %+v\nwant %+v", c.recs, want)
	}
	db, args, err := DecodeCommand([]byte(c.recs[1].Payload))
	if err != nil || db != 3 || len(args) != 5 || len(args[2]) != 170 {
		t.Fatalf("decoded db %d, %d args: %v", db, len(args), err)
	}
	if res.NextLSN != want[3].LSN+2 { // the records and recovery's seal
		t.Fatalf("next LSN %d", res.NextLSN)
	}
}

func TestSplitRecordOfMoreThanMaxPayloadRoundTrips(t *testing.T) {
	if os.Getenv("MOOND_LONG_TESTS") != "1" {
		t.Skip("allocates about 2 GiB: make test-long runs it (MOOND_LONG_TESTS=1), without -race")
	}
	a := NewAppender(AppenderOptions{NextLSN: 1, SegmentSize: 1 << 20})
	big := make([]byte, MaxPayload+1)
	big[0], big[len(big)-1] = 'x', 'y'
	lsn, err := a.AppendCommand(0, [][]byte{[]byte("SET"), []byte("k"), big})
	if err != nil {
		t.Fatalf("a command over MaxPayload: %v", err)
	}
	g := a.Take()
	if lsn != 2 || g.FirstLSN != 1 || g.LastLSN != 2 || g.Records != 2 {
		t.Fatalf("LSN %d, group %d..%d of %d records", lsn, g.FirstLSN, g.LastLSN, g.Records)
	}
	seg := append(g.Segment.Append(nil), g.Buf...)
	big = nil
	g.Buf = nil
	var j Joiner
	var got [][]byte
	res, err := ScanSegment(bytes.NewReader(seg), int64(len(seg)), ScanOptions{Visit: func(rec Record, off int64) error {
		rec, whole, err := j.Add(rec)
		if whole {
			_, args, derr := DecodeCommand(rec.Payload)
			if derr != nil {
				return derr
			}
			got = args
		}
		return err
	}})
	if err != nil || res.Stop != StopEOF || res.LastLSN != 2 {
		t.Fatalf("scan: %v, %v %v", err, res.Stop, res.Reason)
	}
	if len(got) != 3 || len(got[2]) != MaxPayload+1 || got[2][0] != 'x' || got[2][MaxPayload] != 'y' {
		t.Fatal("the value did not come back whole")
	}
}

func TestTornSplitRecordIsDroppedWhole(t *testing.T) {
	_, want, path := splitLog(t)
	_, offs := records(t, path)
	orig := readFile(t, path)
	cuts := map[string]int64{
		"inside the second part":   offs[2] + 7,
		"after the first part":     offs[2],
		"inside the last part":     offs[1+(len(want[1].Payload)+15)/16-1] + 3,
		"after the next-last part": offs[1+(len(want[1].Payload)+15)/16-1],
	}
	for name, cut := range cuts {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			seg := dir + "/" + SegmentName(1)
			writeFile(t, seg, orig[:cut])
			res, c := recoverDir(t, RecoverOptions{Dir: dir, Shard: 2})
			if !slices.Equal(c.recs, want[:1]) {
				t.Fatalf("replayed %+v, want only the record before the split one", c.recs)
			}
			// The recovery seal lands after the surviving parts (or in
			// place of the torn one); a second recovery reads the same and
			// a writer continues above every LSN the parts used.
			res2, c2 := recoverDir(t, RecoverOptions{Dir: dir, Shard: 2})
			if !slices.Equal(c2.recs, want[:1]) || res2.NextLSN < res.NextLSN {
				t.Fatalf("second recovery: %+v, next %d after %d", c2.recs, res2.NextLSN, res.NextLSN)
			}
		})
	}
}

func TestPartFollowedByACheckpointRecordIsCorrupt(t *testing.T) {
	b := SegmentHeader{Version: FormatVersion, Shard: 1, FirstLSN: 1}.Append(nil)
	b = AppendRecord(b, 1, RecordPart, []byte("half"))
	b = AppendRecord(b, 2, RecordCheckpoint, []byte("ckpt"))
	res := scanBytes(t, b)
	if res.Stop != StopCorrupt || !errors.Is(res.Reason, ErrPartOrder) {
		t.Fatalf("%v: %v", res.Stop, res.Reason)
	}
}

func TestSplitKeepsItsPartsInOneSegment(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenSyncWriter(SyncWriterOptions{Dir: dir, NextLSN: 1, SegmentSize: 300, MaxRecordPayload: 16})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := w.Append(RecordData, []byte(strings.Repeat("p", 100))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	w.closeFile()
	for _, f := range segmentFiles(t, dir) {
		recs, _ := records(t, f)
		last := recs[len(recs)-1]
		if last.Type == RecordSeal && len(recs) > 1 && recs[len(recs)-2].Type == RecordPart {
			t.Fatalf("%s: a seal splits a record's parts", f)
		}
	}
	_, c := recoverDir(t, RecoverOptions{Dir: dir})
	if len(c.recs) != 5 {
		t.Fatalf("replayed %d records", len(c.recs))
	}
}
