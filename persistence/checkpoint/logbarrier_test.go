package checkpoint

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/checkpoint/record"
	"github.com/moond-db/moond/persistence/control"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/manifest"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/runtime"
)

// The checkpoint over the real WAL writer (appendfsync always): its FPIs
// and checkpoint record are in the log, durable, below the control file's
// checkpoint LSN, and every FPI is a valid image of its page.
func TestCheckpointOverTheRealWALWriterLogsFPIsBeforeTheControlFile(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newEnv(t, kind, envOpts{batchPages: 4})
		walDir := filepath.Join(e.dir, "wal")
		if err := os.MkdirAll(walDir, 0o755); err != nil {
			t.Fatal(err)
		}
		var w *wal.Writer
		var app *wal.Appender
		e.on(func() {
			app = wal.NewAppender(wal.AppenderOptions{NextLSN: 1})
			w = wal.NewWriter(e.loop, e.loop.Backend(), app, walDir, wal.FsyncAlways)
			lb := &LogBarrier{App: app, Writer: w, Loop: e.loop}
			w.OnProgress = lb.Progress
			e.loop.BeforeWait(w.Kick)
			e.wal.next = 0 // unused: the source appends through app below
			e.src.w = nil
			e.m.o.WAL = lb
			for i := range 12 {
				key := []byte{'k', byte('a' + i)}
				lsn, err := app.AppendCommand(0, [][]byte{[]byte("SET"), key, []byte("v")})
				if err != nil {
					t.Error(err)
					return
				}
				e.src.keys[string(key)] = &keyState{val: make([]byte, 1800), lsn: lsn, live: true}
				e.src.dirty = append(e.src.dirty, string(key))
			}
		})
		if err := e.wait(e.save()); err != nil {
			t.Fatal(err)
		}
		c, ok, err := control.Read(vfs.Default, e.dir, 0)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		var durable uint64
		e.on(func() { durable = app.DurableLSN() })
		if durable < c.CheckpointLSN || c.RedoLSN != 13 {
			t.Fatalf("control %+v, durable LSN %d", c, durable)
		}
		ch := make(chan error, 1)
		e.on(func() { w.Close(func(err error) { ch <- err }) })
		select {
		case err := <-ch:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("WAL close hung")
		}
		seg := wal.SegmentPath(walDir, 1)
		f, err := os.Open(seg)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		st, _ := f.Stat()
		fpis, ends := 0, 0
		_, err = wal.ScanSegment(f, st.Size(), wal.ScanOptions{Visit: func(r wal.Record, _ int64) error {
			if r.Type != wal.RecordCheckpoint {
				return nil
			}
			if id, img, err := record.DecodeFPI(r.Payload); err == nil {
				fpis++
				if _, err := heap.CheckPage(img, id.File, id.Page); err != nil {
					t.Errorf("FPI at %d: %v", r.LSN, err)
				}
				if r.LSN >= c.CheckpointLSN {
					t.Errorf("FPI at %d after the checkpoint record %d", r.LSN, c.CheckpointLSN)
				}
				return nil
			}
			if redo, err := record.DecodeEnd(r.Payload); err == nil && redo == c.RedoLSN && r.LSN == c.CheckpointLSN {
				ends++
			}
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		if fpis != 6 || ends != 1 {
			t.Fatalf("%d FPIs (want 6 pages) and %d checkpoint records in the WAL", fpis, ends)
		}
		if _, ok, _ := manifest.Read(vfs.Default, e.dir, 0); !ok {
			t.Fatal("no manifest")
		}
	})
}

// Under everysec/no, a barrier on records that are written but not durable
// forces an fdatasync instead of waiting for the second tick.
func TestLogBarrierForcesASyncWhenThePolicyIsNotAlways(t *testing.T) {
	e := newEnv(t, runtime.KindPool, envOpts{})
	walDir := filepath.Join(e.dir, "wal")
	if err := os.MkdirAll(walDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ch := make(chan error, 1)
	forced := 0
	var lb *LogBarrier
	e.on(func() {
		app := wal.NewAppender(wal.AppenderOptions{NextLSN: 1})
		w := wal.NewWriter(e.loop, e.loop.Backend(), app, walDir, wal.FsyncNo)
		lb = &LogBarrier{App: app, Writer: w, Loop: e.loop, Force: func() {
			forced++
			w.Sync()
		}}
		w.OnProgress = lb.Progress
		e.loop.BeforeWait(w.Kick)
		lsn, _ := lb.Append(wal.RecordCheckpoint, record.AppendEnd(nil, 1))
		lb.Barrier(lsn, func(err error) { ch <- err })
	})
	if err := e.wait(ch); err != nil {
		t.Fatal(err)
	}
	e.on(func() {
		if forced < 1 || lb.App.DurableLSN() < 1 {
			t.Errorf("forced %d syncs, durable LSN %d: the barrier completed without an fdatasync", forced, lb.App.DurableLSN())
		}
	})
}
