package shard

import (
	"fmt"
	"github.com/moond-db/moond/persistence/txnlog"
	"os"
	"path/filepath"
	"time"

	"github.com/moond-db/moond/persistence/checkpoint/record"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/recovery"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/runtime"
)

// The boot of a shard: lock-free (the server holds the directory's lock);
// the recovery off the shard's thread (Boot) or on it (Open), the start of
// the writer and the checkpoints on it. Control file (redo point) → manifest →
// torn-page repair from full-page images at or above redo → the heap's
// records into the keyspace → WAL replay from redo under the per-key LSN
// rule → the WAL writer continues the log → checkpoints start.

// walDir is the shard's WAL directory.
func (s *Shard) walDir() string { return filepath.Join(s.o.Dir, "wal") }

// heapDir is the shard's heap directory.
func (s *Shard) heapDir() string { return filepath.Join(s.o.Dir, heap.DirName) }

// bootState is what the recovery hands to the start of the shard's
// storage: the WAL's recovery result, the recovered state and the heap
// records that newer ones superseded.
type bootState struct {
	res        *wal.RecoverResult
	st         *recovery.State
	superseded []heap.RecordID
	gap        uint64 // the gap record replay stopped at (aof.go), 0 for none
}

// recoverData restores the keyspace from the heap and the WAL (see
// loadPersisted). It reads files synchronously and touches only the
// keyspace and fields nothing else reads before the shard starts, so Boot
// runs it off the loop's thread; the keyspace's clock is the wall clock
// meanwhile (the loop's cached time is for its own thread).
func (s *Shard) recoverData() (*bootState, error) {
	defer s.progress.finish()
	for _, d := range []string{s.walDir(), s.heapDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("shard %d: %w", s.id, err)
		}
	}
	s.progress.size(s.heapDir(), s.walDir())
	loopClock := s.ks.Now
	s.ks.Now = func() int64 { return time.Now().UnixMilli() }
	defer func() { s.ks.Now = loopClock }()
	res, st, superseded, err := s.loadPersisted()
	if err != nil {
		return nil, err
	}
	for _, sk := range res.Skipped {
		s.log.Error("WAL salvage skipped damaged history", "shard", s.id, "skipped", sk.String())
	}
	if res.Truncated != nil {
		s.log.Warn("WAL torn tail truncated (the normal shape of a crash)", "shard", s.id, "truncated", res.Truncated.String())
	}
	if res.Applied > 0 {
		s.log.Info("WAL replayed", "shard", s.id, "records", s.replayedData, "checkpoint_records", res.Applied-s.replayedData, "bytes", res.Bytes,
			"elapsed", res.Elapsed.String(), "next_lsn", res.NextLSN, "redo", st.Redo)
	}
	s.walRecovered = res.Bytes
	return &bootState{res: res, st: st, superseded: superseded, gap: s.replayGap}, nil
}

// start continues the log and starts the checkpoints that bound it, with
// persistence on; it runs on the loop's thread once recoverData returned.
func (s *Shard) start(b *bootState) error {
	policy, err := wal.ParseFsyncPolicy(s.o.AppendFsync)
	if err != nil && (s.o.AppendOnly || s.o.AppendFsync != "") {
		return err
	}
	if s.o.AppendFsync == "" {
		policy = wal.FsyncEverysec // Redis's default, for a later CONFIG SET appendonly yes
	}
	s.cont = logEnd{next: b.res.NextLSN, tail: b.res.Tail}
	s.want = s.o.AppendOnly
	s.loop.BeforeWait(s.kickLog)
	if !s.o.AppendOnly {
		// Kept for CONFIG SET appendonly yes, which starts the
		// checkpoints from it.
		s.policy = policy
		s.offBoot = b
		return nil
	}
	s.policy = policy
	s.openLog()
	s.startCheckpoints(b.st, b.superseded)
	if s.abortLSN, err = s.logAborts(); err != nil {
		return err
	}
	if b.gap != 0 {
		s.gapLSN = b.gap
		s.log.Warn("WAL replay stopped at the gap of an appendonly no → yes whose checkpoint never published; "+
			"replies to writes wait for a checkpoint", "shard", s.id, "gap_lsn", b.gap, "records_not_replayed", s.gapSkipped)
		s.ckpt.mgr.Request(nil)
	}
	return nil
}

// openLog opens the WAL writer where the log stands (s.cont): after the
// boot's recovery, or after the segment a CONFIG SET appendonly no sealed.
func (s *Shard) openLog() {
	app := wal.NewAppender(wal.AppenderOptions{Shard: uint32(s.id), SegmentSize: s.o.WALSegmentSize, NextLSN: s.cont.next, Prev: s.cont.tail,
		MaxRecordPayload: s.o.WALRecordLimit})
	s.wal = wal.NewWriter(s.loop, s.be, app, s.walDir(), s.policy)
	s.wal.OnProgress = s.walProgress
	if on := s.o.OnLatency; on != nil {
		s.wal.OnSync = func(took time.Duration) { on("wal-fsync", took) }
	}
	c := s.ckpt
	s.wal.OnSegment = func(first uint64) { c.segs = append(c.segs, first) }
}

// loadPersisted loads the heap into the keyspace, then replays the WAL from
// the redo point. It returns the WAL's recovery result, the recovered
// state and the heap records that newer ones superseded (freed once a
// checkpoint covers them); the caller opens the writer.
func (s *Shard) loadPersisted() (*wal.RecoverResult, *recovery.State, []heap.RecordID, error) {
	cache := heap.NewCache(max(s.o.PageCacheSize, 1<<20))
	heads := recordHeads{dir: s.heapDir()}
	defer heads.close()
	loaded := int64(0)
	salvage := s.o.WALSalvage || os.Getenv(wal.SalvageEnv) == "1"
	st, err := recovery.Open(recovery.Options{
		Salvage:  salvage,
		ShardDir: s.o.Dir,
		Shard:    uint32(s.id),
		Cache:    cache,
		Log:      s.log, // recovery names the shard in its lines
		OnRedo: func(redo uint64, keys []uint64) {
			s.ks.SetColdLoad(s.o.ColdLoadAbove)
			s.ks.BeginLoad(redo, heads.keyLSN)
			s.ks.Reserve(keys)
		},
		OnRecord: func(r *heap.ScanRecord) error {
			if err := s.ks.QueueRecord(r); err != nil {
				return err
			}
			loaded++
			s.progress.heapRecord(r.ID)
			return nil
		},
	})
	if ferr := s.ks.FlushLoad(); err == nil && ferr != nil {
		err = ferr
	}
	if err == nil {
		err = s.ks.EndHeap()
	}
	superseded := s.ks.Superseded()
	if err != nil {
		s.ks.EndLoad()
		return nil, nil, nil, fmt.Errorf("shard %d: %w", s.id, err)
	}
	s.progress.heapLoaded()
	if loaded > 0 {
		s.log.Info("heap loaded", "shard", s.id, "keys", loaded, "redo", st.Redo, "files", len(st.Files))
	}
	if s.o.BootHold != nil {
		s.o.BootHold()
	}
	s.ks.Cold = heapReader{st.Heap} // the replay may need cold values (cold.go)
	s.decideTxns()
	nextLog := int64(wal.DefaultProgressEvery)
	res, err := wal.Recover(wal.RecoverOptions{
		Dir:     s.walDir(),
		Shard:   uint32(s.id),
		Redo:    st.Redo,
		Floor:   st.Control.CheckpointLSN + 1,
		Salvage: salvage,
		Apply:   s.replayer(st.Redo),
		Progress: func(p wal.Progress) {
			s.progress.walScanned(p.Bytes)
			if p.Bytes < nextLog && !p.Done {
				return
			}
			nextLog = p.Bytes + wal.DefaultProgressEvery
			s.log.Info("recovering WAL", "shard", s.id, "segment", p.Segment, "records", p.Records,
				"MB/s", fmt.Sprintf("%.1f", p.MBPerSec()))
		},
		ProgressEvery: loadProgressEvery,
	})
	s.ks.EndLoad()
	if err != nil {
		st.Heap.Close()
		return nil, nil, nil, fmt.Errorf("shard %d: WAL recovery: %w", s.id, err)
	}
	s.ks.Cold = s // cold values are read from this heap (cold.go)
	s.ckpt = &ckpt{heap: st.Heap, man: st.Manifest, bootSave: st.LastCheckpoint,
		loading: make(map[heap.PageID][]func(error)),
		opening: make(map[uint32][]func(runtime.FD, error)), readFDs: make(map[uint32]runtime.FD)}
	segs, err := wal.ListSegments(vfs.Default, s.walDir())
	if err != nil {
		st.Heap.Close()
		return nil, nil, nil, fmt.Errorf("shard %d: %w", s.id, err)
	}
	s.ckpt.segs = segs
	// The WAL above the redo point that recovery read counts toward
	// --max-wal-size until the next checkpoint publishes.
	s.ckpt.bytesAtPublished = -res.Bytes
	return res, st, superseded, nil
}

// replayer returns the function that applies one WAL record above redo to
// the keyspace. Data records run through the keyspace's Replay (which
// applies a record to a key only when it is newer than the key's heap
// version); of the checkpoint's records, the database map logged at the
// redo point is the map replay starts from (absent: the identity), and
// full-page images were used by recovery.Open already.
func (s *Shard) replayer(redo uint64) func(lsn uint64, typ wal.RecordType, payload []byte) error {
	var out resp.Writer
	var args [][]byte
	apply := func(lsn uint64, payload []byte) error {
		s.replayedData++
		db, a, err := wal.DecodeCommandInto(args[:0], payload)
		if err != nil {
			return fmt.Errorf("record %d: %w", lsn, err)
		}
		args = a
		if db >= s.ks.NumDBs() {
			return fmt.Errorf("record %d: database %d, but the server has %d (--databases)", lsn, db, s.ks.NumDBs())
		}
		out.Reset()
		s.ks.Replay(lsn, db, args, &out)
		if len(out.Buf) > 0 && out.Buf[0] == '-' {
			s.replayFailures++
			if s.replayFailures <= 10 {
				s.log.Error("WAL record failed to replay", "shard", s.id, "lsn", lsn, "reply", string(out.Buf))
			}
		}
		return nil
	}
	return func(lsn uint64, typ wal.RecordType, payload []byte) error {
		if s.replayGap != 0 {
			s.gapSkipped++
			return nil
		}
		if typ != wal.RecordData {
			if record.IsGap(payload) {
				// Above redo (replay starts there): the checkpoint that
				// would have made the records after it valid never
				// published (aof.go).
				s.replayGap = lsn
				return nil
			}
			if lsn == redo && len(payload) > 0 {
				return s.replayRedoRecord(lsn, payload)
			}
			return nil
		}
		if txnlog.IsEncodedMarker(payload) {
			_, a, err := wal.DecodeCommandInto(args[:0], payload)
			if err != nil {
				return fmt.Errorf("record %d: %w", lsn, err)
			}
			args = a
			return s.replayMarker(lsn, args, apply)
		}
		if s.replaySkips(lsn, payload) {
			return nil
		}
		return apply(lsn, payload)
	}
}

// replayRedoRecord applies the record at the redo point: the database map
// replay starts from (absent: the identity) and the txn mark.
func (s *Shard) replayRedoRecord(lsn uint64, payload []byte) error {
	var m []int
	var err error
	switch payload[0] {
	case record.KindDBMap:
		m, err = record.DecodeDBMap(payload)
	case record.KindRedo:
		var mark uint64
		mark, m, err = record.DecodeRedo(payload)
		s.txn.mark = max(s.txn.mark, mark)
	default:
		return nil
	}
	if err == nil && m != nil {
		err = s.ks.SetDBMap(m)
	}
	if err != nil {
		return fmt.Errorf("record %d: database map: %w", lsn, err)
	}
	return nil
}

// recordHeads reads the heads of heap records during the load, through
// read-only handles opened on first use.
type recordHeads struct {
	dir     string
	readers map[uint32]*heap.File
}

// keyLSN is the key LSN of the heap record id.
func (r *recordHeads) keyLSN(id heap.RecordID) (uint64, error) {
	if r.readers == nil {
		r.readers = make(map[uint32]*heap.File)
	}
	f := r.readers[id.File]
	if f == nil {
		var err error
		if f, err = heap.OpenFile(vfs.Default, r.dir, id.File); err != nil {
			return 0, err
		}
		r.readers[id.File] = f
	}
	h, err := f.RecordHead(id)
	return h.KeyLSN, err
}

func (r *recordHeads) close() {
	for _, f := range r.readers {
		f.Close()
	}
}
