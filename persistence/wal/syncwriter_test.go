package wal

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/moond-db/moond/persistence/vfs"
)

func TestSyncWriterWritesWhatRecoveryReads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shard-000", DirName)
	w, err := OpenSyncWriter(SyncWriterOptions{Dir: dir, Shard: 0, NextLSN: 1, SegmentSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	var want []testRec
	for i := range 50 {
		args := [][]byte{[]byte("SET"), fmt.Appendf(nil, "k%d", i), []byte("value")}
		lsn, err := w.AppendCommand(0, args)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, testRec{lsn, RecordData, string(EncodeCommand(0, args))})
		if i%7 == 0 {
			if d, err := w.Commit(); err != nil || d != lsn {
				t.Fatalf("Commit: durable %d err %v, want %d", d, err, lsn)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if st.Segments < 3 || st.Datasyncs != st.Groups {
		t.Fatalf("stats %+v", st)
	}
	res, c := recoverDir(t, RecoverOptions{Dir: dir, Redo: 1})
	if !slices.Equal(c.recs, want) {
		t.Fatalf("recovered %d records, wrote %d", len(c.recs), len(want))
	}
	if res.Truncated != nil || res.SealedSegment != "" || len(res.Skipped) != 0 {
		t.Fatalf("a clean log needed repair: %+v", res)
	}
	if int64(res.Segments) != st.Segments || res.NextLSN != w.NextLSN() {
		t.Fatalf("segments %d (wrote %d), next LSN %d (writer %d)", res.Segments, st.Segments, res.NextLSN, w.NextLSN())
	}
}

func TestSyncWriterRetriesAfterENOSPC(t *testing.T) {
	dir := t.TempDir()
	ff := vfs.NewFaulty(vfs.Default)
	w, err := OpenSyncWriter(SyncWriterOptions{FS: ff, Dir: dir, NextLSN: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Append(RecordData, []byte("a"))
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	ff.Add(vfs.Rule{Op: vfs.OpWrite, Path: "wal-*.log", Fault: vfs.FaultError, Err: syscall.ENOSPC, Count: 1})
	w.Append(RecordData, []byte("b"))
	durable, err := w.Commit()
	if !errors.Is(err, syscall.ENOSPC) || durable != 1 {
		t.Fatalf("Commit: durable %d err %v, want 1, ENOSPC", durable, err)
	}
	if errors.Is(err, ErrPoisoned) {
		t.Fatal("a failed write poisoned the log")
	}
	w.Append(RecordData, []byte("c"))
	if durable, err := w.Commit(); err != nil || durable != 3 {
		t.Fatalf("retry: durable %d err %v", durable, err)
	}
	w.closeFile()
	_, c := recoverDir(t, RecoverOptions{Dir: dir})
	if !slices.Equal(c.lsns(), []uint64{1, 2, 3}) || c.recs[1].Payload != "b" {
		t.Fatalf("recovered %+v", c.recs)
	}
}

func TestSyncWriterRewritesAfterShortWrite(t *testing.T) {
	dir := t.TempDir()
	ff := vfs.NewFaulty(vfs.Default)
	ff.Add(vfs.Rule{Op: vfs.OpWrite, Path: "wal-*.log", Fault: vfs.FaultShortWrite, N: 5, Count: 1})
	w, _ := OpenSyncWriter(SyncWriterOptions{FS: ff, Dir: dir, NextLSN: 1})
	w.Append(RecordData, []byte("hello"))
	w.Append(RecordData, []byte("world"))
	if _, err := w.Commit(); !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("Commit: %v", err)
	}
	if d, err := w.Commit(); err != nil || d != 2 {
		t.Fatalf("retry: %d %v", d, err)
	}
	w.closeFile()
	if _, c := recoverDir(t, RecoverOptions{Dir: dir}); !slices.Equal(c.lsns(), []uint64{1, 2}) {
		t.Fatalf("recovered %+v", c.recs)
	}
}

func TestSyncWriterFsyncFailurePoisonsForGood(t *testing.T) {
	dir := t.TempDir()
	ff := vfs.NewFaulty(vfs.Default)
	w, _ := OpenSyncWriter(SyncWriterOptions{FS: ff, Dir: dir, NextLSN: 1})
	w.Append(RecordData, []byte("a"))
	w.Commit()
	id := ff.Add(vfs.EIOOnSync("wal-*.log"))
	w.Append(RecordData, []byte("b"))
	durable, err := w.Commit()
	if !errors.Is(err, ErrPoisoned) || !errors.Is(err, syscall.EIO) || durable != 1 {
		t.Fatalf("Commit: durable %d err %v", durable, err)
	}
	ff.Delete(id) // the disk "recovers": no later fsync may be trusted anyway
	if _, err := w.Append(RecordData, []byte("c")); !errors.Is(err, ErrPoisoned) {
		t.Fatalf("Append after poison: %v", err)
	}
	if _, err := w.Commit(); !errors.Is(err, ErrPoisoned) {
		t.Fatalf("Commit after poison: %v", err)
	}
	if err := w.Close(); !errors.Is(err, ErrPoisoned) {
		t.Fatalf("Close after poison: %v", err)
	}
	if w.DurableLSN() != 1 {
		t.Fatalf("durable %d", w.DurableLSN())
	}
}

func TestSyncWriterHungFsyncBlocksTheCaller(t *testing.T) {
	dir := t.TempDir()
	ff := vfs.NewFaulty(vfs.Default)
	gate := make(chan struct{})
	entered := make(chan string, 1)
	r := vfs.HangSync("wal-*.log", gate)
	r.Op = vfs.OpDatasync
	r.Entered = entered
	ff.Add(r)
	w, _ := OpenSyncWriter(SyncWriterOptions{FS: ff, Dir: dir, NextLSN: 1})
	w.Append(RecordData, []byte("a"))
	type result struct {
		durable uint64
		err     error
	}
	done := make(chan result, 1)
	go func() {
		d, err := w.Commit()
		done <- result{d, err}
	}()
	<-entered
	select {
	case r := <-done:
		t.Fatalf("Commit returned %+v while its fdatasync hangs", r)
	default:
	}
	close(gate)
	if r := <-done; r.err != nil || r.durable != 1 {
		t.Fatalf("after release: %+v", r)
	}
}

func TestSyncWriterRotationFsyncsTheDirectory(t *testing.T) {
	dir := t.TempDir()
	ff := vfs.NewFaulty(vfs.Default)
	w, _ := OpenSyncWriter(SyncWriterOptions{FS: ff, Dir: dir, NextLSN: 1, SegmentSize: MinSegmentSize})
	w.Append(RecordData, []byte("first segment"))
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	id := ff.Add(vfs.Rule{Op: vfs.OpSync, Path: dir, Fault: vfs.FaultError, Err: syscall.EIO})
	w.Append(RecordData, []byte("second segment"))
	_, err := w.Commit()
	if ff.Hits(id) != 1 || !errors.Is(err, ErrPoisoned) {
		t.Fatalf("directory fsync hits %d, err %v", ff.Hits(id), err)
	}
}

func TestSyncWriterTornWriteThenRecover(t *testing.T) {
	dir := t.TempDir()
	ff := vfs.NewFaulty(vfs.Default)
	w, _ := OpenSyncWriter(SyncWriterOptions{FS: ff, Dir: dir, NextLSN: 1})
	for i := range 3 {
		w.Append(RecordData, fmt.Appendf(nil, "committed-%d", i))
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	ff.Add(vfs.TornWrite("wal-*.log", markRecordSize+30))
	w.Append(RecordData, []byte("lost-1"))
	w.Append(RecordData, []byte("lost-2"))
	if _, err := w.Commit(); !errors.Is(err, vfs.ErrCrashed) {
		t.Fatalf("Commit: %v", err)
	}
	w.closeFile()
	// Restart on the same files. The 30 bytes after the group's sync mark
	// that reached the file hold all of LSN 4 (23 bytes) and 7 bytes of
	// LSN 5: LSN 4 is there (never
	// acknowledged, but whole), LSN 5 is a torn tail.
	res, c := recoverDir(t, RecoverOptions{Dir: dir})
	if !slices.Equal(c.lsns(), []uint64{1, 2, 3, 4}) {
		t.Fatalf("recovered %v", c.lsns())
	}
	if res.Truncated == nil || res.Truncated.Bytes != 7 || res.NextLSN != 6 {
		t.Fatalf("result %+v truncated %+v", res, res.Truncated)
	}
}

func TestSyncWriterCloseSealsTheSegment(t *testing.T) {
	dir := t.TempDir()
	w, _ := OpenSyncWriter(SyncWriterOptions{Dir: dir, NextLSN: 1})
	w.Append(RecordData, []byte("x"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := segmentFiles(t, dir)
	res := scanFile(t, files[0])
	if len(files) != 1 || res.Stop != StopSealed || res.Seal.Reason != SealShutdown {
		t.Fatalf("files %v scan %+v", files, res)
	}
	rec, _ := recoverDir(t, RecoverOptions{Dir: dir})
	if rec.SealedSegment != "" || rec.Tail != res.Link() || rec.NextLSN != 3 {
		t.Fatalf("recovery %+v", rec)
	}
}

func TestSyncWriterRetriesAFailedSegmentCreation(t *testing.T) {
	dir := t.TempDir()
	ff := vfs.NewFaulty(vfs.Default)
	ff.Add(vfs.Rule{Op: vfs.OpWrite, Path: "*.tmp", Fault: vfs.FaultError, Err: syscall.ENOSPC, Count: 1})
	w, _ := OpenSyncWriter(SyncWriterOptions{FS: ff, Dir: dir, NextLSN: 1})
	w.Append(RecordData, []byte("a"))
	if _, err := w.Commit(); !errors.Is(err, syscall.ENOSPC) || errors.Is(err, ErrPoisoned) {
		t.Fatalf("Commit: %v", err)
	}
	if files := segmentFiles(t, dir); len(files) != 0 {
		t.Fatalf("a failed creation left %v", files)
	}
	if d, err := w.Commit(); err != nil || d != 1 {
		t.Fatalf("retry: %d %v", d, err)
	}
	w.closeFile()
	if _, c := recoverDir(t, RecoverOptions{Dir: dir}); !slices.Equal(c.lsns(), []uint64{1}) {
		t.Fatalf("recovered %v", c.lsns())
	}
}

func TestCrashBetweenSealAndNextSegment(t *testing.T) {
	dir := t.TempDir()
	ff := vfs.NewFaulty(vfs.Default)
	// The second segment's creation fails: the first is sealed and synced,
	// the next one never appears. That is a clean state, not damage.
	ff.Add(vfs.Rule{Op: vfs.OpCreate, Path: "*.tmp", Fault: vfs.FaultError, Err: syscall.EIO, Skip: 1})
	w, _ := OpenSyncWriter(SyncWriterOptions{FS: ff, Dir: dir, NextLSN: 1, SegmentSize: MinSegmentSize + 20})
	w.Append(RecordData, []byte("one"))
	w.Append(RecordData, []byte("two")) // rotates: "one", seal | "two"
	if _, err := w.Commit(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Commit: %v", err)
	}
	w.closeFile()
	first := scanFile(t, SegmentPath(dir, 1))
	if first.Stop != StopSealed || len(segmentFiles(t, dir)) != 1 {
		t.Fatalf("first segment %+v", first)
	}
	res, c := recoverDir(t, RecoverOptions{Dir: dir})
	if !slices.Equal(c.lsns(), []uint64{1}) || res.SealedSegment != "" || res.Tail != first.Link() || res.NextLSN != 3 {
		t.Fatalf("recovery %+v replayed %v", res, c.lsns())
	}
	writeLog(t, SyncWriterOptions{Dir: dir, NextLSN: res.NextLSN, Prev: res.Tail}, []string{"three"})
	if _, c := recoverDir(t, RecoverOptions{Dir: dir}); !slices.Equal(c.lsns(), []uint64{1, 3}) {
		t.Fatalf("after restart replayed %v", c.lsns())
	}
}
