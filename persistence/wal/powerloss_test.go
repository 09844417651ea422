package wal

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/runtime/looptest"
)

// powerLossEnv is the environment variable that sets how many simulated
// power losses TestPowerLossKeepsEveryAcknowledgedWrite runs, shared among
// the backends (powerLossDefault when unset): MOOND_POWERLOSS_CRASHES=100000
// for a long run.
const powerLossEnv = "MOOND_POWERLOSS_CRASHES"

const powerLossDefault = 1000

// scratchDir is a temporary directory on tmpfs when the machine has one:
// the power-loss scenarios fdatasync every group, which a disk makes slow.
func scratchDir(t *testing.T) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "moond-powerloss-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

// powerLossScenario drives one Writer under a power-loss model until a
// random moment, then materializes the crash image.
type powerLossScenario struct {
	policy   FsyncPolicy
	appended map[uint64][]byte // logical record LSN -> payload
	maxLSN   uint64            // highest LSN appended
	acked    uint64            // durable LSN at the crash: acknowledged under always
	image    string            // the crash image's WAL directory
	report   vfs.CrashReport
}

// runPowerLoss runs one scenario on loop with seed and returns it.
func runPowerLoss(t *testing.T, loop *runtime.Loop, base string, n int, seed uint64) *powerLossScenario {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	sc := &powerLossScenario{policy: FsyncAlways, appended: map[uint64][]byte{}}
	if rng.IntN(4) == 0 {
		sc.policy = FsyncEverysec
	}
	root := filepath.Join(base, fmt.Sprintf("run-%d", n))
	dir := filepath.Join(root, "wal")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pl := vfs.NewPowerLoss()
	var w *Writer
	looptest.On(t, loop, func() {
		// The model records what reaches the fault-injection layer, as a
		// disk under the kernel would.
		be := pl.Backend(vfs.NewFaultyBackend(loop, loop.Backend()))
		maxPart := 0
		if rng.IntN(3) == 0 {
			maxPart = 300 // split the larger records into parts
		}
		app := NewAppender(AppenderOptions{SegmentSize: int64(4096 + rng.IntN(3*4096)), NextLSN: 1, MaxRecordPayload: maxPart})
		w = NewWriter(loop, be, app, dir, sc.policy)
	})
	steps := 1 + rng.IntN(8)
	for step := range steps {
		looptest.On(t, loop, func() {
			for range 1 + rng.IntN(4) {
				p := make([]byte, 1+rng.IntN(1500))
				for i := range p {
					p[i] = byte(rng.Uint32())
				}
				lsn, err := w.Appender().Append(RecordData, p)
				if err != nil {
					t.Errorf("append: %v", err)
					return
				}
				sc.appended[lsn], sc.maxLSN = p, lsn
			}
			w.Kick()
			if sc.policy == FsyncEverysec && rng.IntN(2) == 0 {
				w.Sync()
			}
		})
		// Let some of it reach the disk, or crash with it in flight.
		if step < steps-1 && rng.IntN(2) == 0 {
			target := sc.maxLSN
			if !looptest.Until(t, loop, func() bool { return w.Appender().WrittenLSN() >= target }) {
				t.Fatal("writes did not complete")
			}
		}
	}
	sc.image = filepath.Join(base, fmt.Sprintf("image-%d", n))
	looptest.On(t, loop, func() {
		sc.acked = w.Appender().DurableLSN()
		rep, err := pl.Crash(rng, root, sc.image)
		if err != nil {
			t.Errorf("crash: %v", err)
		}
		sc.report = rep
		w.Close(func(error) {}) // the abandoned writer stops its ticker
	})
	sc.image = filepath.Join(sc.image, "wal")
	return sc
}

// check recovers the crash image and verifies the scenario's promises.
func (sc *powerLossScenario) check(t *testing.T, seed uint64, n int) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d run %d (%v, acked %d, appended %d, crash %+v): %s",
			seed, n, sc.policy, sc.acked, sc.maxLSN, sc.report, fmt.Sprintf(format, args...))
	}
	seen := map[uint64]bool{}
	var last uint64
	apply := func(lsn uint64, typ RecordType, payload []byte) error {
		if typ != RecordData {
			return fmt.Errorf("%v record at LSN %d", typ, lsn)
		}
		want, ok := sc.appended[lsn]
		switch {
		case !ok:
			return fmt.Errorf("LSN %d was never appended", lsn)
		case seen[lsn] || lsn <= last:
			return fmt.Errorf("LSN %d applied again or out of order (after %d)", lsn, last)
		case !bytes.Equal(payload, want):
			return fmt.Errorf("LSN %d holds other bytes than appended", lsn)
		}
		seen[lsn], last = true, lsn
		return nil
	}
	// Recovery writes through the synchronous stack under a model of its
	// own: a second power loss after it must change nothing.
	pl := vfs.NewPowerLoss()
	res, err := Recover(RecoverOptions{FS: pl.FS(vfs.Default), Dir: sc.image, Apply: apply})
	if err != nil {
		fail("recovery refused: %v", err)
	}
	for lsn := uint64(1); lsn <= sc.acked; lsn++ {
		if _, ok := sc.appended[lsn]; ok && !seen[lsn] {
			fail("acknowledged LSN %d lost", lsn)
		}
	}
	if res.NextLSN <= last {
		fail("NextLSN %d not above the last replayed LSN %d", res.NextLSN, last)
	}
	if n := pl.Unsynced(res.SealedSegment); n != 0 {
		fail("recovery left %d bytes of %s unsynced", n, res.SealedSegment)
	}
	// Recovering again finds the same records and nothing to cut.
	again := map[uint64]bool{}
	res2, err := Recover(RecoverOptions{Dir: sc.image, Apply: func(lsn uint64, _ RecordType, _ []byte) error {
		again[lsn] = true
		return nil
	}})
	if err != nil || res2.Truncated != nil || len(again) != len(seen) {
		fail("second recovery: err %v truncated %v, %d records where the first found %d", err, res2.Truncated, len(again), len(seen))
	}
}

// TestPowerLossKeepsEveryAcknowledgedWrite runs random appends through a
// Writer on each backend, crashes at random moments under the power-loss
// model (synced bytes kept, every other written page kept, old, zeroed or
// torn), recovers the image and checks that every record acknowledged under
// appendfsync always is there, nothing never appended appears, nothing is
// applied twice, and recovery never refuses when only unsynced bytes were
// damaged.
func TestPowerLossKeepsEveryAcknowledgedWrite(t *testing.T) {
	crashes := powerLossDefault
	if s := os.Getenv(powerLossEnv); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("%s=%q: want a positive number", powerLossEnv, s)
		}
		crashes = v
	}
	if ok, _, _ := runtime.ProbeUring(); ok {
		crashes = (crashes + 1) / 2 // the other half on the pool backend
	}
	seed := rand.Uint64()
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		loop := runtime.NewLoop(runtime.Config{Backend: kind, CPU: -1})
		if err := loop.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(loop.Stop)
		base := scratchDir(t)
		var damaged, dropped, cut int
		for n := range crashes {
			sc := runPowerLoss(t, loop, base, n, seed)
			sc.check(t, seed, n)
			if sc.report.DamagedAny {
				damaged++
			}
			if sc.report.Torn+sc.report.Zeroed+sc.report.Old > 0 {
				dropped++
			}
			if sc.report.CutBytes > 0 {
				cut++
			}
			os.RemoveAll(filepath.Join(base, fmt.Sprintf("run-%d", n)))
			os.RemoveAll(filepath.Join(base, fmt.Sprintf("image-%d", n)))
		}
		t.Logf("seed %d: %d power losses, %d damaged unsynced bytes (%d pages old, zeroed or torn, %d files cut short)",
			seed, crashes, damaged, dropped, cut)
		if crashes >= 100 && (damaged == 0 || dropped == 0) {
			t.Fatal("no scenario damaged anything: the model is not exercised")
		}
	})
}

// TestPowerLossDamageToSyncedBytesFailsLoud damages a byte that a completed
// fdatasync covered, in the last segment, before a group whose sync mark
// says so: recovery must refuse, as for any lost acknowledged write.
func TestPowerLossDamageToSyncedBytesFailsLoud(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newWriterEnv(t, kind, FsyncAlways, 0)
		e.appendN(0, 3)
		e.waitUntil("first group durable", func() bool { return e.w.Appender().DurableLSN() == 3 })
		e.appendN(3, 3)
		e.waitUntil("second group durable", func() bool { return e.w.Appender().DurableLSN() == 6 })
		files := segmentFiles(t, e.dir)
		if len(files) != 1 {
			t.Fatalf("segments %v", files)
		}
		b := readFile(t, files[0])
		s := scanBytes(t, b)
		if s.Stop != StopEOF || s.Durable <= SegmentHeaderSize {
			t.Fatalf("scan before the damage: %+v", s)
		}
		// A byte of the first group, which the second group's mark claims.
		b[SegmentHeaderSize+markRecordSize+5] ^= 0x40
		writeFile(t, files[0], b)
		_, err := Recover(RecoverOptions{Dir: e.dir})
		var tear *MidChainTearError
		if !errors.As(err, &tear) || !tear.Last || !errors.Is(err, ErrDurableDamaged) {
			t.Fatalf("got %v, want a MidChainTearError for durable bytes", err)
		}
	})
}

// v1SegmentBytes builds a segment as format 1 wrote it: no sync marks.
func v1SegmentBytes(payloads []string) ([]byte, []int64) {
	b := SegmentHeader{Version: 1, FirstLSN: 1}.Append(nil)
	var offs []int64
	for i, p := range payloads {
		offs = append(offs, int64(len(b)))
		b = AppendRecord(b, uint64(i+1), RecordData, []byte(p))
	}
	return b, offs
}

// TestFormat1SegmentStillBootsAndKeepsItsRule: a last segment written by
// the previous format (no sync marks) still recovers, its torn tail is cut,
// and damage followed by valid records is still refused, since without
// marks nothing tells unsynced bytes from durable ones.
func TestFormat1SegmentStillBootsAndKeepsItsRule(t *testing.T) {
	dir := t.TempDir()
	b, _ := v1SegmentBytes(payloads(4, "v1"))
	writeFile(t, SegmentPath(dir, 1), append(b, 1, 2, 3)) // a torn tail
	res, c := recoverDir(t, RecoverOptions{Dir: dir})
	if len(c.recs) != 4 || res.Truncated == nil || res.Truncated.Bytes != 3 || res.NextLSN != 6 {
		t.Fatalf("recovered %v, result %+v, truncated %+v", c.lsns(), res, res.Truncated)
	}
	// The writer goes on in a format-2 segment linked to the sealed one.
	lsns := writeLog(t, SyncWriterOptions{Dir: dir, NextLSN: res.NextLSN, Prev: res.Tail}, []string{"v2"})
	_, c = recoverDir(t, RecoverOptions{Dir: dir})
	if len(c.recs) != 5 || c.recs[4].LSN != lsns[0] {
		t.Fatalf("after a format-2 segment: %v", c.lsns())
	}

	dir = t.TempDir()
	b, offs := v1SegmentBytes(payloads(4, "v1"))
	b[offs[1]+5] ^= 1
	writeFile(t, SegmentPath(dir, 1), b)
	_, err := Recover(RecoverOptions{Dir: dir})
	var tear *MidChainTearError
	if !errors.As(err, &tear) || !errors.Is(err, ErrValidAfterTear) {
		t.Fatalf("got %v, want a refusal", err)
	}
}
