package wal

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/moond-db/moond/persistence/vfs"
)

// SyncWriterOptions configures a SyncWriter.
type SyncWriterOptions struct {
	FS  vfs.FS // vfs.Default when nil
	Dir string // the shard's WAL directory, <shard dir>/wal
	// Shard, SegmentSize, NextLSN, Prev and MaxRecordPayload are as in
	// AppenderOptions.
	Shard            uint32
	SegmentSize      int64
	NextLSN          uint64
	Prev             ChainLink
	MaxRecordPayload int
}

// SyncWriter is the synchronous reference writer: it buffers records in an
// Appender and, on Commit, writes every queued group and fdatasyncs it, in
// the calling goroutine (appendfsync always, one group per Commit). It
// rotates segments as the Appender lays them out: the sealed segment is
// fdatasynced and closed, the next one is created atomically and its
// directory entry fsynced.
//
// It is what tests and tools use, and the behaviour the shard's
// asynchronous writer (the same Appender, its I/O on the ring) must match.
//
// Failure classes: a failed write (ENOSPC, EIO, short write) leaves the
// group queued; Commit returns the error and the next Commit writes the
// same bytes at the same offset again. A failed fsync, fdatasync or
// directory fsync poisons the writer for good: every later call fails with
// an error wrapping ErrPoisoned (fsyncgate).
//
// Not safe for concurrent use.
type SyncWriter struct {
	fs  vfs.FS
	dir string
	app *Appender

	f        vfs.File // open segment, nil when none
	segFirst uint64   // first LSN of the segment f is
	segPath  string   // its path

	stats WriterStats
}

// WriterStats counts what a SyncWriter or a Writer did.
type WriterStats struct {
	Groups      int64 // groups written
	Records     int64 // records written (seals included)
	Bytes       int64 // record bytes written
	Datasyncs   int64 // fdatasyncs of segment files
	Segments    int64 // segments created
	WriteErrors int64 // failed group writes (retried)
	// GroupRecords is the group-commit size: records per group written,
	// in GroupRecordBounds buckets.
	GroupRecords Histogram
	// SyncSeconds is the fdatasync latency, in SyncSecondsBounds buckets:
	// from submission to completion, which for an fdatasync chained with
	// other operations (the group's write under appendfsync always and
	// for seals, the data-file writes after it) includes them.
	SyncSeconds Histogram
}

// OpenSyncWriter prepares a writer that continues the log in o.Dir from
// o.NextLSN. It creates the directory (and makes its entry durable) if
// needed; segment files are created lazily, with the first group that needs
// one.
func OpenSyncWriter(o SyncWriterOptions) (*SyncWriter, error) {
	fs := o.FS
	if fs == nil {
		fs = vfs.Default
	}
	if o.Dir == "" {
		return nil, errors.New("wal: SyncWriter without a directory")
	}
	if _, err := fs.Stat(o.Dir); err != nil {
		if err := fs.MkdirAll(o.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("wal: create WAL directory: %w", err)
		}
		if err := vfs.SyncDir(fs, filepath.Dir(o.Dir)); err != nil {
			return nil, err
		}
	}
	app := NewAppender(AppenderOptions{Shard: o.Shard, SegmentSize: o.SegmentSize, NextLSN: o.NextLSN, Prev: o.Prev,
		MaxRecordPayload: o.MaxRecordPayload})
	return &SyncWriter{fs: fs, dir: o.Dir, app: app}, nil
}

// Append buffers a record and returns its LSN; nothing is written until
// Commit.
func (w *SyncWriter) Append(typ RecordType, payload []byte) (uint64, error) {
	return w.app.Append(typ, payload)
}

// AppendCommand buffers a data record holding the command.
func (w *SyncWriter) AppendCommand(db int, args [][]byte) (uint64, error) {
	return w.app.AppendCommand(db, args)
}

// NextLSN is the LSN of the next record.
func (w *SyncWriter) NextLSN() uint64 { return w.app.NextLSN() }

// DurableLSN is the LSN through which everything is durable.
func (w *SyncWriter) DurableLSN() uint64 { return w.app.DurableLSN() }

// Stats returns the writer's counters.
func (w *SyncWriter) Stats() WriterStats { return w.stats }

// Commit writes and fdatasyncs every buffered record and returns the
// durable LSN.
func (w *SyncWriter) Commit() (uint64, error) {
	if err := w.app.Poisoned(); err != nil {
		return w.app.DurableLSN(), w.app.poisonedErr()
	}
	for g := w.app.Take(); g != nil; g = w.app.Take() {
		if err := w.writeGroup(g); err != nil {
			w.app.Done(g, err)
			if vfs.IsSyncFailure(err) {
				w.app.Poison(err)
				w.closeFile()
				return w.app.DurableLSN(), w.app.poisonedErr()
			}
			return w.app.DurableLSN(), err
		}
		last := g.LastLSN // g belongs to the Appender again after Done
		w.app.Done(g, nil)
		w.app.MarkDurable(last)
	}
	return w.app.DurableLSN(), nil
}

func (w *SyncWriter) writeGroup(g *Group) error {
	if g.Create && (w.f == nil || w.segFirst != g.Segment.FirstLSN) {
		w.closeFile()
		f, err := CreateSegment(w.fs, w.dir, g.Segment)
		if err != nil {
			return err
		}
		w.f, w.segFirst, w.segPath = f, g.Segment.FirstLSN, SegmentPath(w.dir, g.Segment.FirstLSN)
		w.stats.Segments++
	}
	if w.f == nil || w.segFirst != g.Segment.FirstLSN {
		panic(fmt.Sprintf("wal: group for segment %d, open segment %d", g.Segment.FirstLSN, w.segFirst))
	}
	path := w.segPath
	if _, err := w.f.WriteAt(g.Buf, g.Offset); err != nil {
		return fmt.Errorf("wal: write LSN %d..%d to %s at offset %d: %w", g.FirstLSN, g.LastLSN, path, g.Offset, err)
	}
	syncStart := time.Now()
	if err := w.f.Datasync(); err != nil {
		return &vfs.SyncError{Err: fmt.Errorf("wal: fdatasync %s after LSN %d: %w", path, g.LastLSN, err)}
	}
	w.stats.SyncSeconds.observeSync(syncStart)
	w.stats.GroupRecords.Observe(&GroupRecordBounds, float64(g.Records))
	w.stats.Groups++
	w.stats.Records += int64(g.Records)
	w.stats.Bytes += int64(len(g.Buf))
	w.stats.Datasyncs++
	if g.Sealed {
		// The segment is durable and complete; a failing close cannot undo
		// that, and the group must not be written again.
		w.closeFile()
	}
	return nil
}

func (w *SyncWriter) closeFile() {
	if w.f != nil {
		_ = w.f.Close()
		w.f = nil
	}
}

// Close commits what is buffered, seals the current segment (a clean
// shutdown) and closes it.
func (w *SyncWriter) Close() error {
	if err := w.app.Poisoned(); err != nil {
		w.closeFile()
		return w.app.poisonedErr()
	}
	if _, err := w.app.Seal(SealShutdown); err != nil {
		return err
	}
	_, err := w.Commit()
	w.closeFile()
	return err
}
