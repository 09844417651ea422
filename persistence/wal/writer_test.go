package wal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/runtime/looptest"
)

// writerEnv is a Writer on a real loop of one backend, over a temp dir.
type writerEnv struct {
	t    *testing.T
	loop *runtime.Loop
	dir  string
	w    *Writer
	be   *faultBackend
}

func forEachKind(t *testing.T, f func(t *testing.T, kind runtime.Kind)) {
	for _, k := range []runtime.Kind{runtime.KindUring, runtime.KindPool} {
		t.Run(k.String(), func(t *testing.T) {
			if k == runtime.KindUring {
				if ok, why, _ := runtime.ProbeUring(); !ok {
					t.Skip(why)
				}
			}
			f(t, k)
		})
	}
}

func newWriterEnv(t *testing.T, kind runtime.Kind, policy FsyncPolicy, segSize int64) *writerEnv {
	t.Helper()
	loop := runtime.NewLoop(runtime.Config{Backend: kind, CPU: -1})
	if err := loop.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(loop.Stop)
	e := &writerEnv{t: t, loop: loop, dir: filepath.Join(t.TempDir(), "wal")}
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e.on(func() {
		e.be = &faultBackend{FaultyBackend: vfs.NewFaultyBackend(loop, loop.Backend())}
		app := NewAppender(AppenderOptions{Shard: 0, SegmentSize: segSize, NextLSN: 1})
		e.w = NewWriter(loop, e.be, app, e.dir, policy)
		loop.BeforeWait(e.w.Kick)
	})
	return e
}

// on runs f on the loop's thread.
func (e *writerEnv) on(f func()) {
	e.t.Helper()
	looptest.On(e.t, e.loop, f)
}

// waitUntil waits until cond, read on the loop's thread, holds.
func (e *writerEnv) waitUntil(what string, cond func() bool) {
	e.t.Helper()
	if !looptest.Until(e.t, e.loop, cond) {
		e.t.Fatalf("timed out waiting for %s", what)
	}
}

func (e *writerEnv) appendN(from, n int) (last uint64) {
	e.on(func() {
		for i := from; i < from+n; i++ {
			lsn, err := e.w.Appender().AppendCommand(0, [][]byte{[]byte("SET"), []byte(fmt.Sprintf("k%d", i)), []byte("v")})
			if err != nil {
				e.t.Errorf("append: %v", err)
				return
			}
			last = lsn
		}
	})
	return last
}

func (e *writerEnv) close() error {
	done := make(chan error, 1)
	e.on(func() { e.w.Close(func(err error) { done <- err }) })
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		e.t.Fatal("Close did not finish")
		return nil
	}
}

// recoverKeys replays the directory and returns the SET keys in LSN order.
func recoverKeys(t *testing.T, dir string) ([]string, *RecoverResult) {
	t.Helper()
	var keys []string
	res, err := Recover(RecoverOptions{Dir: dir, Apply: func(lsn uint64, typ RecordType, p []byte) error {
		db, args, err := DecodeCommand(p)
		if err != nil || db != 0 {
			return fmt.Errorf("record %d: db %d err %v", lsn, db, err)
		}
		keys = append(keys, string(args[1]))
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return keys, res
}

func checkKeys(t *testing.T, keys []string, n int) {
	t.Helper()
	if len(keys) != n {
		t.Fatalf("recovered %d records, want %d", len(keys), n)
	}
	for i, k := range keys {
		if k != fmt.Sprintf("k%d", i) {
			t.Fatalf("record %d is %s: order lost", i, k)
		}
	}
}

func TestWriterCommitsOneIterationAsOneWriteAndFdatasync(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newWriterEnv(t, kind, FsyncAlways, 0)
		last := e.appendN(0, 100) // one message: one iteration
		e.waitUntil("durable", func() bool { return e.w.Appender().DurableLSN() >= last })
		var st WriterStats
		e.on(func() { st = e.w.Stats() })
		if st.Groups != 1 || st.Datasyncs != 1 || st.Records != 100 {
			t.Fatalf("stats %+v: want the 100 records in 1 group with 1 fdatasync", st)
		}
		// The group-commit size (100 records: the bucket up to 128) and
		// the fdatasync latency histograms saw that group.
		if st.GroupRecords.Count() != 1 || st.GroupRecords.Counts[7] != 1 || st.GroupRecords.Sum != 100 {
			t.Fatalf("group size histogram %+v: want one group of 100 in the ≤128 bucket", st.GroupRecords)
		}
		if st.SyncSeconds.Count() != 1 || st.SyncSeconds.Sum <= 0 {
			t.Fatalf("fdatasync histogram %+v: want one positive observation", st.SyncSeconds)
		}
		if err := e.close(); err != nil {
			t.Fatal(err)
		}
		keys, res := recoverKeys(t, e.dir)
		checkKeys(t, keys, 100)
		if res.Truncated != nil {
			t.Fatalf("clean close left a torn tail: %+v", res.Truncated)
		}
	})
}

func TestWriterEverysecMakesWritesDurableWithinTheSecond(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newWriterEnv(t, kind, FsyncEverysec, 0)
		last := e.appendN(0, 10)
		e.waitUntil("written", func() bool { return e.w.Appender().WrittenLSN() >= last })
		var st WriterStats
		e.on(func() { st = e.w.Stats() })
		if st.Datasyncs != 0 {
			t.Fatalf("everysec fdatasynced on the write path: %+v", st)
		}
		e.waitUntil("durable by the once-a-second sync", func() bool { return e.w.Appender().DurableLSN() >= last })
	})
}

func TestWriterRotatesSegmentsAndRecoveryReadsThemAll(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newWriterEnv(t, kind, FsyncAlways, 1024)
		n := 0
		for i := 0; i < 20; i++ {
			last := e.appendN(n, 10)
			n += 10
			e.waitUntil("durable", func() bool { return e.w.Appender().DurableLSN() >= last })
		}
		if err := e.close(); err != nil {
			t.Fatal(err)
		}
		keys, res := recoverKeys(t, e.dir)
		checkKeys(t, keys, n)
		if res.Segments < 5 {
			t.Fatalf("%d segments for %d records of 1 KiB segments: no rotation", res.Segments, n)
		}
	})
}

func TestWriterRetriesAFailedWriteAndReportsIt(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newWriterEnv(t, kind, FsyncAlways, 0)
		e.be.Add(failWrites(2))
		first := e.appendN(0, 5)
		e.waitUntil("the failure reported", func() bool { return e.w.Appender().LastError() != nil })
		var lastErr error
		e.on(func() { lastErr = e.w.Appender().LastError() })
		if !errors.Is(lastErr, syscall.ENOSPC) {
			t.Fatalf("LastError = %v, want ENOSPC", lastErr)
		}
		last := e.appendN(5, 5)
		e.waitUntil("durable after the retries", func() bool { return e.w.Appender().DurableLSN() >= last })
		e.on(func() { lastErr = e.w.Appender().LastError() })
		if lastErr != nil || first >= last {
			t.Fatalf("after a good write LastError = %v", lastErr)
		}
		e.close()
		keys, _ := recoverKeys(t, e.dir)
		checkKeys(t, keys, 10)
	})
}

func TestWriterFdatasyncErrorPoisonsTheLog(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newWriterEnv(t, kind, FsyncAlways, 0)
		e.be.Add(failSyncs(1))
		last := e.appendN(0, 3)
		e.waitUntil("poisoned", func() bool { return e.w.Appender().Poisoned() != nil })
		var durable uint64
		var err error
		e.on(func() {
			durable = e.w.Appender().DurableLSN()
			_, err = e.w.Appender().AppendCommand(0, [][]byte{[]byte("SET"), []byte("x"), []byte("y")})
		})
		if durable >= last {
			t.Fatalf("durable LSN %d covers records whose fdatasync failed", durable)
		}
		if !errors.Is(err, ErrPoisoned) {
			t.Fatalf("append after a failed fdatasync: %v, want ErrPoisoned", err)
		}
	})
}

// TestSyncInFlightAcrossARotationClosesOnlyTheSealedSegment: an fdatasync
// that Sync started (the checkpoint's WAL barrier) is still in flight when
// the segment is sealed and the next one created; when it returns, the
// sealed segment is closed, not the new one, and writing goes on.
func TestSyncInFlightAcrossARotationClosesOnlyTheSealedSegment(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newWriterEnv(t, kind, FsyncNo, 4096)
		last := e.appendN(0, 5)
		e.waitUntil("written", func() bool { return e.w.Appender().WrittenLSN() >= last })
		// Hold the one fdatasync Sync starts; the seals' go through.
		gate := make(chan struct{})
		e.be.Add(vfs.Rule{Op: vfs.OpDatasync, Fault: vfs.FaultHang, Gate: gate, Count: 1})
		e.on(e.w.Sync)
		// Enough records to seal the segment and open the next ones.
		last = e.appendN(5, 200)
		e.waitUntil("written past the rotation", func() bool { return e.w.Appender().WrittenLSN() >= last })
		var segs int64
		e.on(func() { segs = e.w.Stats().Segments })
		close(gate)
		if segs < 2 {
			t.Fatalf("only %d segments: no rotation while the fdatasync was held", segs)
		}
		e.waitUntil("the held fdatasync returned", func() bool { return !e.w.Busy() })
		last = e.appendN(205, 50)
		e.waitUntil("written after the rotation", func() bool { return e.w.Appender().WrittenLSN() >= last })
		if err := e.close(); err != nil {
			t.Fatal(err)
		}
		keys, _ := recoverKeys(t, e.dir)
		checkKeys(t, keys, 255)
	})
}

// faultBackend is the writer's backend in tests: a vfs.FaultyBackend, whose
// rules inject the failures, that also records the step kinds of every
// chain it is asked for.
type faultBackend struct {
	*vfs.FaultyBackend
	chains [][]runtime.OpKind
}

func (f *faultBackend) Chain(ops []runtime.Op, cb func([]runtime.Result)) {
	kinds := make([]runtime.OpKind, len(ops))
	for i, op := range ops {
		kinds[i] = op.Kind
	}
	f.chains = append(f.chains, kinds)
	f.FaultyBackend.Chain(ops, cb)
}

// segmentGlob matches the WAL's segment files, not their temporary
// copies: group writes and their fdatasyncs, not segment creation.
const segmentGlob = segmentPrefix + "*" + segmentSuffix

// failWrites fails the next n writes to a segment with ENOSPC.
func failWrites(n int) vfs.Rule {
	return vfs.Rule{Op: vfs.OpWrite, Path: segmentGlob, Fault: vfs.FaultError, Err: syscall.ENOSPC, Count: n}
}

// failSyncs fails the next n fdatasyncs of a segment with EIO.
func failSyncs(n int) vfs.Rule {
	return vfs.Rule{Op: vfs.OpDatasync, Path: segmentGlob, Fault: vfs.FaultError, Err: syscall.EIO, Count: n}
}

// BenchmarkWriterAlways measures group commit through the async Writer on
// each backend under appendfsync always: each op is one group of N SET
// records (write + fdatasync as one chain), the next group appended as soon
// as the previous one is durable, all on the loop's thread, as a shard does.
func BenchmarkWriterAlways(b *testing.B) {
	for _, kind := range []runtime.Kind{runtime.KindUring, runtime.KindPool} {
		for _, n := range []int{1, 16, 128} {
			b.Run(fmt.Sprintf("%s/records=%d", kind, n), func(b *testing.B) {
				if kind == runtime.KindUring {
					if ok, why, _ := runtime.ProbeUring(); !ok {
						b.Skip(why)
					}
				}
				benchWriter(b, kind, n)
			})
		}
	}
}

func benchWriter(b *testing.B, kind runtime.Kind, n int) {
	loop := runtime.NewLoop(runtime.Config{Backend: kind, CPU: -1})
	if err := loop.Start(); err != nil {
		b.Fatal(err)
	}
	defer loop.Stop()
	dir := filepath.Join(b.TempDir(), "wal")
	os.MkdirAll(dir, 0o755)
	args := [][]byte{[]byte("SET"), []byte("key:000000000001"), bytes.Repeat([]byte("v"), 64)}
	recSize := RecordSize(CommandSize(0, args))
	done := make(chan error, 1)
	var w *Writer
	left := b.N
	var target uint64
	next := func() {
		for i := 0; i < n; i++ {
			lsn, err := w.Appender().AppendCommand(0, args)
			if err != nil {
				done <- err
				return
			}
			target = lsn
		}
	}
	b.ResetTimer()
	loop.Post(func() {
		app := NewAppender(AppenderOptions{NextLSN: 1})
		w = NewWriter(loop, loop.Backend(), app, dir, FsyncAlways)
		loop.BeforeWait(w.Kick)
		w.OnProgress = func() {
			if w.Appender().Poisoned() != nil {
				done <- w.Appender().Poisoned()
				return
			}
			if w.Appender().DurableLSN() < target {
				return
			}
			if left--; left == 0 {
				done <- nil
				return
			}
			next()
		}
		next()
	})
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N*n)/secs, "records/s")
	b.ReportMetric(float64(b.N)/secs, "fsyncs/s")
	b.ReportMetric(float64(b.N*n*recSize)/secs/1e6, "MB/s")
}
