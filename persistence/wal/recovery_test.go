package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/moond-db/moond/persistence/vfs"
)

// threeSegments writes a log of 30 records over at least three segments
// and returns the directory, the LSNs written and the segment paths.
func threeSegments(t *testing.T) (string, []uint64, []string) {
	t.Helper()
	dir := t.TempDir()
	lsns := writeLog(t, SyncWriterOptions{Dir: dir, Shard: 5, NextLSN: 1, SegmentSize: 400}, payloads(30, "record"))
	files := segmentFiles(t, dir)
	if len(files) < 3 {
		t.Fatalf("only %d segments", len(files))
	}
	return dir, lsns, files
}

// tearLastRecord appends the first half of a record to path, as a crash
// in the middle of a write leaves it.
func tearLastRecord(t *testing.T, path string, lsn uint64) int64 {
	t.Helper()
	b := readFile(t, path)
	rec := AppendRecord(nil, lsn, RecordData, []byte("this one never made it whole"))
	writeFile(t, path, append(b, rec[:len(rec)/2]...))
	return int64(len(b))
}

func TestRecoverEmptyOrMissingDirectory(t *testing.T) {
	res, c := recoverDir(t, RecoverOptions{Dir: filepath.Join(t.TempDir(), "nope")})
	if res.NextLSN != 1 || res.Segments != 0 || len(c.recs) != 0 || !res.Tail.IsZero() {
		t.Fatalf("%+v", res)
	}
	res, _ = recoverDir(t, RecoverOptions{Dir: t.TempDir(), Floor: 77, Redo: 5})
	if res.NextLSN != 77 {
		t.Fatalf("next %d, want the floor", res.NextLSN)
	}
}

func TestRecoverReplaysEveryRecordInOrderAcrossSegments(t *testing.T) {
	dir, lsns, files := threeSegments(t)
	res, c := recoverDir(t, RecoverOptions{Dir: dir, Shard: 5})
	if !slices.Equal(c.lsns(), lsns) {
		t.Fatalf("replayed %v, wrote %v", c.lsns(), lsns)
	}
	for i, r := range c.recs {
		if r.Payload != fmt.Sprintf("record-%03d", i) || r.Type != RecordData {
			t.Fatalf("record %d: %+v", i, r)
		}
	}
	// The writer crashed without sealing: recovery sealed the last segment.
	lastLSN := lsns[len(lsns)-1]
	if res.SealedSegment != files[len(files)-1] || res.Truncated != nil {
		t.Fatalf("sealed %q truncated %+v", res.SealedSegment, res.Truncated)
	}
	if res.NextLSN != lastLSN+2 || res.LastLSN != lastLSN+1 || res.Tail.SealLSN != lastLSN+1 {
		t.Fatalf("next %d last %d tail %v", res.NextLSN, res.LastLSN, res.Tail)
	}
	if s := scanFile(t, files[len(files)-1]); s.Stop != StopSealed || s.Seal.Reason != SealRecovery || s.Link() != res.Tail {
		t.Fatalf("last segment after recovery: %+v", s)
	}
}

func TestRecoverAppliesOnlyRecordsAtOrAboveRedo(t *testing.T) {
	dir, lsns, files := threeSegments(t)
	redo := lsns[17]
	res, c := recoverDir(t, RecoverOptions{Dir: dir, Shard: 5, Redo: redo})
	if !slices.Equal(c.lsns(), lsns[17:]) {
		t.Fatalf("replayed %v, want %v", c.lsns(), lsns[17:])
	}
	if res.Scanned >= len(files) || res.Segments != len(files) {
		t.Fatalf("scanned %d of %d segments: those below redo should be skipped", res.Scanned, res.Segments)
	}
	// Redo beyond everything: nothing to apply, LSNs still not reused.
	res, c = recoverDir(t, RecoverOptions{Dir: dir, Shard: 5, Redo: 1000})
	if len(c.recs) != 0 || res.NextLSN != 1000 {
		t.Fatalf("applied %d, next %d", len(c.recs), res.NextLSN)
	}
}

func TestLSNsAreNeverReusedAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	seen := map[uint64]string{}
	next := uint64(1)
	var prev ChainLink
	for round := range 4 {
		res, c := recoverDir(t, RecoverOptions{Dir: dir})
		if res.NextLSN < next {
			t.Fatalf("round %d: NextLSN went back from %d to %d", round, next, res.NextLSN)
		}
		for _, r := range c.recs {
			if p, ok := seen[r.LSN]; ok && p != r.Payload {
				t.Fatalf("round %d: LSN %d reused: %q then %q", round, r.LSN, p, r.Payload)
			}
			seen[r.LSN] = r.Payload
		}
		next, prev = res.NextLSN, res.Tail
		// Append and crash, sometimes mid-record.
		lsns := writeLog(t, SyncWriterOptions{Dir: dir, NextLSN: next, Prev: prev, SegmentSize: 300},
			payloads(7, fmt.Sprintf("round%d", round)))
		if lsns[0] != next {
			t.Fatalf("round %d: writer started at %d, recovery said %d", round, lsns[0], next)
		}
		if round%2 == 1 {
			files := segmentFiles(t, dir)
			tearLastRecord(t, files[len(files)-1], lsns[len(lsns)-1]+1)
		}
	}
	res, c := recoverDir(t, RecoverOptions{Dir: dir})
	if len(c.recs) != 28 || len(seen) != 21 {
		t.Fatalf("final replay %d records, seen %d", len(c.recs), len(seen))
	}
	if !slices.IsSorted(c.lsns()) || res.NextLSN <= c.recs[len(c.recs)-1].LSN {
		t.Fatalf("LSNs %v next %d", c.lsns(), res.NextLSN)
	}
}

func TestFloorRaisesNextLSNAndTheChainStillHolds(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, SyncWriterOptions{Dir: dir, NextLSN: 1}, payloads(3, "a"))
	res, _ := recoverDir(t, RecoverOptions{Dir: dir, Floor: 500})
	if res.NextLSN != 500 {
		t.Fatalf("next %d", res.NextLSN)
	}
	writeLog(t, SyncWriterOptions{Dir: dir, NextLSN: res.NextLSN, Prev: res.Tail}, payloads(2, "b"))
	res, c := recoverDir(t, RecoverOptions{Dir: dir})
	if !slices.Equal(c.lsns(), []uint64{1, 2, 3, 500, 501}) || res.NextLSN != 503 {
		t.Fatalf("replayed %v next %d", c.lsns(), res.NextLSN)
	}
}

// TestReadOnlyRecoveryChangesNothing: a read-only pass (the boot's first
// pass for txns across shards) replays the same records as the recovery
// proper and leaves the torn tail for it to cut and report.
func TestReadOnlyRecoveryChangesNothing(t *testing.T) {
	dir, lsns, files := threeSegments(t)
	last := files[len(files)-1]
	good := tearLastRecord(t, last, lsns[len(lsns)-1]+1)
	size := fileSize(t, last)
	_, c := recoverDir(t, RecoverOptions{Dir: dir, Shard: 5, ReadOnly: true})
	if !slices.Equal(c.lsns(), lsns) || fileSize(t, last) != size {
		t.Fatalf("read-only pass replayed %v, left the segment at %d bytes (was %d)", c.lsns(), fileSize(t, last), size)
	}
	res, c := recoverDir(t, RecoverOptions{Dir: dir, Shard: 5})
	if !slices.Equal(c.lsns(), lsns) || res.Truncated == nil || res.Truncated.Offset != good {
		t.Fatalf("recovery after it: replayed %v, truncation %+v", c.lsns(), res.Truncated)
	}
}

func TestTornTailIsTruncatedAndSealed(t *testing.T) {
	dir, lsns, files := threeSegments(t)
	last := files[len(files)-1]
	good := tearLastRecord(t, last, lsns[len(lsns)-1]+1)
	torn := fileSize(t, last) - good
	res, c := recoverDir(t, RecoverOptions{Dir: dir, Shard: 5})
	if !slices.Equal(c.lsns(), lsns) {
		t.Fatalf("replayed %v", c.lsns())
	}
	tr := res.Truncated
	if tr == nil || tr.Segment != last || tr.Offset != good || tr.Bytes != torn {
		t.Fatalf("truncation %+v, want %s at %d (%d bytes)", tr, last, good, torn)
	}
	s := scanFile(t, last)
	if s.Stop != StopSealed || s.Seal.Truncated != uint64(torn) || fileSize(t, last) != good+sealRecordSize {
		t.Fatalf("after recovery: %+v size %d", s, fileSize(t, last))
	}
}

func TestTornTailStaysBenignAcrossTwoCrashesInARow(t *testing.T) {
	dir := t.TempDir()
	// First life: write, crash in the middle of a record.
	lsns := writeLog(t, SyncWriterOptions{Dir: dir, NextLSN: 1}, payloads(5, "life1"))
	tearLastRecord(t, segmentFiles(t, dir)[0], 6)
	// Second life: recover (truncate, seal), write into a new segment, and
	// crash in the middle of a record again.
	res, c := recoverDir(t, RecoverOptions{Dir: dir})
	if !slices.Equal(c.lsns(), lsns) || res.Truncated == nil {
		t.Fatalf("first recovery: %v %+v", c.lsns(), res)
	}
	lsns2 := writeLog(t, SyncWriterOptions{Dir: dir, NextLSN: res.NextLSN, Prev: res.Tail}, payloads(4, "life2"))
	files := segmentFiles(t, dir)
	if len(files) != 2 {
		t.Fatalf("segments %v", files)
	}
	tearLastRecord(t, files[1], lsns2[len(lsns2)-1]+1)
	// Third life: the first segment is now in the middle of the chain. Had
	// it not been sealed, its old torn tail would read as a mid-chain tear.
	res, c = recoverDir(t, RecoverOptions{Dir: dir})
	if !slices.Equal(c.lsns(), append(slices.Clone(lsns), lsns2...)) {
		t.Fatalf("second recovery replayed %v", c.lsns())
	}
	if res.Truncated == nil || res.Truncated.Segment != files[1] || len(res.Skipped) != 0 {
		t.Fatalf("second recovery: %+v", res)
	}
}

func TestMidChainTearFailsLoudWithTheOffset(t *testing.T) {
	dir, _, files := threeSegments(t)
	// Damage a payload byte of the third record of the first segment.
	b := readFile(t, files[0])
	s := scanBytes(t, b)
	var offs []int64
	ScanSegment(strings.NewReader(string(b)), int64(len(b)), ScanOptions{Visit: func(_ Record, off int64) error {
		offs = append(offs, off)
		return nil
	}})
	b[offs[2]+RecordHeaderSize] ^= 0xff
	writeFile(t, files[0], b)

	applied := 0
	_, err := Recover(RecoverOptions{Dir: dir, Shard: 5, Apply: func(uint64, RecordType, []byte) error { applied++; return nil }})
	var tear *MidChainTearError
	if !errors.As(err, &tear) {
		t.Fatalf("got %v, want *MidChainTearError", err)
	}
	if tear.Segment != files[0] || tear.Offset != offs[2] || tear.LastLSN != s.Header.FirstLSN+1 || tear.Last || tear.Shard != 5 {
		t.Fatalf("error %+v", tear)
	}
	msg := err.Error()
	for _, want := range []string{files[0], fmt.Sprintf("offset %d", offs[2]), "shard 5", "--wal-salvage", SalvageEnv + "=1"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q: %s", want, msg)
		}
	}
	if !errors.Is(err, ErrValidAfterTear) || !errors.Is(err, ErrChecksum) {
		t.Errorf("error chain: %v", err)
	}
	// Nothing was repaired: the last segment is still unsealed.
	if last := scanFile(t, files[len(files)-1]); last.Stop != StopEOF {
		t.Fatalf("recovery touched the last segment before failing: %v", last.Stop)
	}
}

func TestTornSegmentBeforeTheLastIsAMidChainTear(t *testing.T) {
	// A torn (not sealed) segment with a newer segment after it: the data
	// after its tear was acknowledged history, or the seal would be there.
	dir, _, files := threeSegments(t)
	b := readFile(t, files[1])
	writeFile(t, files[1], b[:len(b)-5]) // cut into the seal
	_, err := Recover(RecoverOptions{Dir: dir, Shard: 5})
	var tear *MidChainTearError
	if !errors.As(err, &tear) || tear.Segment != files[1] || tear.Offset != int64(len(b)-sealRecordSize) {
		t.Fatalf("got %v", err)
	}
}

func TestSegmentWithoutSealBeforeTheLastIsAMidChainTear(t *testing.T) {
	dir, _, files := threeSegments(t)
	b := readFile(t, files[1])
	writeFile(t, files[1], b[:len(b)-sealRecordSize]) // clean end, seal gone
	_, err := Recover(RecoverOptions{Dir: dir, Shard: 5})
	var tear *MidChainTearError
	if !errors.As(err, &tear) || tear.Segment != files[1] || !strings.Contains(err.Error(), "without a seal") {
		t.Fatalf("got %v", err)
	}
}

func TestSalvageContinuesAndReportsWhatItSkipped(t *testing.T) {
	dir, lsns, files := threeSegments(t)
	first := scanFile(t, files[0])
	second := scanFile(t, files[1])
	// Cut the first segment in the middle of its third record.
	var offs []int64
	b := readFile(t, files[0])
	ScanSegment(strings.NewReader(string(b)), int64(len(b)), ScanOptions{Visit: func(_ Record, off int64) error {
		offs = append(offs, off)
		return nil
	}})
	writeFile(t, files[0], b[:offs[2]+3])

	res, c := recoverDir(t, RecoverOptions{Dir: dir, Shard: 5, Salvage: true})
	if len(res.Skipped) != 1 {
		t.Fatalf("skipped %+v", res.Skipped)
	}
	sk := res.Skipped[0]
	wantFrom, wantTo := first.Header.FirstLSN+2, second.Header.FirstLSN-1
	if sk.Segment != files[0] || sk.FromOffset != offs[2] || sk.ToOffset != offs[2]+3 || sk.FromLSN != wantFrom || sk.ToLSN != wantTo {
		t.Fatalf("skipped %+v, want LSNs %d..%d", sk, wantFrom, wantTo)
	}
	if !strings.Contains(sk.String(), fmt.Sprintf("LSNs %d..%d lost", wantFrom, wantTo)) {
		t.Errorf("report: %s", sk)
	}
	// Everything else was replayed, in order.
	var want []uint64
	for _, l := range lsns {
		if l < wantFrom || l > wantTo {
			want = append(want, l)
		}
	}
	if !slices.Equal(c.lsns(), want) {
		t.Fatalf("replayed %v, want %v", c.lsns(), want)
	}
	if res.NextLSN != lsns[len(lsns)-1]+2 {
		t.Fatalf("next %d", res.NextLSN)
	}
}

func TestMissingSegmentBreaksTheChain(t *testing.T) {
	dir, lsns, files := threeSegments(t)
	gone := scanFile(t, files[1])
	if err := os.Remove(files[1]); err != nil {
		t.Fatal(err)
	}
	_, err := Recover(RecoverOptions{Dir: dir, Shard: 5})
	var tear *MidChainTearError
	if !errors.As(err, &tear) || tear.Segment != files[2] || tear.Offset != 0 || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("got %v", err)
	}
	res, c := recoverDir(t, RecoverOptions{Dir: dir, Shard: 5, Salvage: true})
	if len(res.Skipped) != 1 || res.Skipped[0].FromLSN != gone.Header.FirstLSN || res.Skipped[0].ToLSN != gone.LastLSN {
		t.Fatalf("skipped %+v, want LSNs %d..%d", res.Skipped, gone.Header.FirstLSN, gone.LastLSN)
	}
	if n := len(lsns) - int(gone.Records-1); len(c.recs) != n {
		t.Fatalf("replayed %d, want %d", len(c.recs), n)
	}
}

func TestReplacedSegmentBreaksTheChain(t *testing.T) {
	// A segment with the right name and LSNs but a different seal (say, from
	// another copy of the data directory) does not link.
	dir, _, files := threeSegments(t)
	s := scanFile(t, files[1])
	var ps []string
	for i := range s.Records - 1 {
		ps = append(ps, fmt.Sprintf("other-%d", i))
	}
	img, _ := segmentBytes(5, s.Header.FirstLSN, s.Header.Prev, ps, true)
	writeFile(t, files[1], img)
	_, err := Recover(RecoverOptions{Dir: dir, Shard: 5})
	var tear *MidChainTearError
	if !errors.As(err, &tear) || tear.Segment != files[2] {
		t.Fatalf("got %v", err)
	}
}

func TestRedoPointInsideRemovedHistoryFails(t *testing.T) {
	dir, _, files := threeSegments(t)
	second := scanFile(t, files[1])
	os.Remove(files[0])
	// Recycling the first segment is fine once redo is past it...
	if _, err := Recover(RecoverOptions{Dir: dir, Shard: 5, Redo: second.Header.FirstLSN}); err != nil {
		t.Fatalf("redo at the oldest segment: %v", err)
	}
	// ...but not while redo still needs it.
	_, err := Recover(RecoverOptions{Dir: dir, Shard: 5, Redo: 2})
	var tear *MidChainTearError
	if !errors.As(err, &tear) || !strings.Contains(err.Error(), "redo point is LSN 2") {
		t.Fatalf("got %v", err)
	}
}

func TestCorruptLastSegmentRefusesAndSalvageKeepsTheBytes(t *testing.T) {
	dir, lsns, files := threeSegments(t)
	last := files[len(files)-1]
	b := readFile(t, last)
	var offs []int64
	ScanSegment(strings.NewReader(string(b)), int64(len(b)), ScanOptions{Visit: func(_ Record, off int64) error {
		offs = append(offs, off)
		return nil
	}})
	b[offs[0]+RecordHeaderSize] ^= 1 // first record bad, the others fine
	writeFile(t, last, b)
	_, err := Recover(RecoverOptions{Dir: dir, Shard: 5})
	var tear *MidChainTearError
	if !errors.As(err, &tear) || !tear.Last || tear.Offset != offs[0] {
		t.Fatalf("got %v", err)
	}

	res, c := recoverDir(t, RecoverOptions{Dir: dir, Shard: 5, Salvage: true})
	sk := res.Skipped
	lastLSN := lsns[len(lsns)-1]
	if len(sk) != 1 || sk[0].FromOffset != offs[0] || sk[0].ToOffset != int64(len(b)) || sk[0].ToLSN != lastLSN || sk[0].SavedAs == "" {
		t.Fatalf("skipped %+v", sk)
	}
	if saved := readFile(t, sk[0].SavedAs); string(saved) != string(b[offs[0]:]) {
		t.Fatal("saved bytes differ from the ones cut off")
	}
	if res.NextLSN <= lastLSN || c.recs[len(c.recs)-1].LSN >= sk[0].FromLSN {
		t.Fatalf("next %d, last replayed %d", res.NextLSN, c.recs[len(c.recs)-1].LSN)
	}
	// Salvage left a log that recovers cleanly without it.
	if _, err := Recover(RecoverOptions{Dir: dir, Shard: 5}); err != nil {
		t.Fatalf("after salvage: %v", err)
	}
}

func TestBadHeaderInTheLastSegment(t *testing.T) {
	dir, lsns, files := threeSegments(t)
	last := files[len(files)-1]
	b := readFile(t, last)
	b[3] ^= 1
	writeFile(t, last, b)
	_, err := Recover(RecoverOptions{Dir: dir, Shard: 5})
	var tear *MidChainTearError
	if !errors.As(err, &tear) || !errors.Is(err, ErrBadMagic) || tear.Offset != 0 {
		t.Fatalf("got %v", err)
	}
	res, _ := recoverDir(t, RecoverOptions{Dir: dir, Shard: 5, Salvage: true})
	if len(res.Skipped) != 1 || res.Skipped[0].SavedAs != last+".damaged" {
		t.Fatalf("skipped %+v", res.Skipped)
	}
	prev := scanFile(t, files[len(files)-2])
	if res.Tail != prev.Link() || res.NextLSN != lsns[len(lsns)-1]+1 {
		t.Fatalf("tail %v (want %v), next %d", res.Tail, prev.Link(), res.NextLSN)
	}
	if _, err := Recover(RecoverOptions{Dir: dir, Shard: 5}); err != nil {
		t.Fatalf("after salvage: %v", err)
	}
}

func TestSegmentOfAnotherShardIsRefused(t *testing.T) {
	dir, _, _ := threeSegments(t)
	_, err := Recover(RecoverOptions{Dir: dir, Shard: 6})
	if !errors.Is(err, ErrBadHeader) || !strings.Contains(err.Error(), "shard 5") {
		t.Fatalf("got %v", err)
	}
}

func TestNewerFormatVersionIsNotSalvaged(t *testing.T) {
	dir := t.TempDir()
	h := SegmentHeader{Version: FormatVersion + 1, FirstLSN: 1}.Append(nil)
	writeFile(t, SegmentPath(dir, 1), h)
	_, err := Recover(RecoverOptions{Dir: dir, Salvage: true})
	if !errors.Is(err, ErrVersion) {
		t.Fatalf("got %v", err)
	}
}

func TestRecoverRemovesHalfCreatedSegments(t *testing.T) {
	dir, _, files := threeSegments(t)
	tmp := files[len(files)-1] + ".tmp"
	writeFile(t, tmp, []byte("half"))
	res, _ := recoverDir(t, RecoverOptions{Dir: dir, Shard: 5})
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) || len(res.RemovedTemp) != 1 {
		t.Fatalf("temp file still there (%v), removed %v", err, res.RemovedTemp)
	}
}

func TestRecoveryReportsProgress(t *testing.T) {
	dir, _, files := threeSegments(t)
	var reports []Progress
	res, _ := recoverDir(t, RecoverOptions{Dir: dir, Shard: 5, ProgressEvery: 200, Progress: func(p Progress) {
		reports = append(reports, p)
	}})
	if len(reports) < 3 {
		t.Fatalf("%d reports", len(reports))
	}
	for i := 1; i < len(reports); i++ {
		if reports[i].Bytes < reports[i-1].Bytes || reports[i].Records < reports[i-1].Records {
			t.Fatalf("progress went back: %+v then %+v", reports[i-1], reports[i])
		}
	}
	final := reports[len(reports)-1]
	if !final.Done || final.Bytes != res.Bytes || final.Records != res.Records || final.SegmentsTotal != len(files) {
		t.Fatalf("final %+v, result %+v", final, res)
	}
	if final.MBPerSec() < 0 {
		t.Fatal("negative rate")
	}
}

func TestApplyErrorStopsRecoveryAndRepairsNothing(t *testing.T) {
	dir, lsns, files := threeSegments(t)
	last := files[len(files)-1]
	tearLastRecord(t, last, lsns[len(lsns)-1]+1)
	size := fileSize(t, last)
	boom := errors.New("boom")
	_, err := Recover(RecoverOptions{Dir: dir, Shard: 5, Apply: func(lsn uint64, _ RecordType, _ []byte) error {
		if lsn == lsns[len(lsns)-1] {
			return boom
		}
		return nil
	}})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	if fileSize(t, last) != size {
		t.Fatal("torn tail cut although recovery failed")
	}
}

func TestFailedFsyncWhileSealingFailsRecovery(t *testing.T) {
	dir, lsns, files := threeSegments(t)
	tearLastRecord(t, files[len(files)-1], lsns[len(lsns)-1]+1)
	ff := vfs.NewFaulty(vfs.Default)
	ff.Add(vfs.EIOOnSync(filepath.Base(files[len(files)-1])))
	_, err := Recover(RecoverOptions{FS: ff, Dir: dir, Shard: 5})
	if !errors.Is(err, syscall.EIO) || !vfs.IsSyncFailure(err) {
		t.Fatalf("got %v", err)
	}
}

func TestVanishedSegmentFailsRecovery(t *testing.T) {
	dir, _, files := threeSegments(t)
	ff := vfs.NewFaulty(vfs.Default)
	ff.Add(vfs.Vanished(filepath.Base(files[1])))
	_, err := Recover(RecoverOptions{FS: ff, Dir: dir, Shard: 5})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), files[1]) {
		t.Fatalf("got %v", err)
	}
}
