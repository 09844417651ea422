package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/moond-db/moond/persistence/checkpoint/record"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/recovery"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/runtime"
)

// recoverPersisted runs the boot of the shard's persisted state: the
// control file, the manifest, torn-page repair from full-page images, the
// heap's records loaded into the keyspace, then the WAL replayed from the
// redo point under the per-key LSN rule. It returns the WAL's recovery
// result; the caller opens the writer.
func (w *worker) recoverPersisted(walDir string) (*wal.RecoverResult, *recovery.State, []heap.RecordID, error) {
	s := w.srv
	cache := heap.NewCache(max(s.cfg.PageCacheSize/int64(s.nshards), 1<<20))
	var superseded []heap.RecordID
	var readers map[uint32]*heap.File
	defer func() {
		for _, f := range readers {
			f.Close()
		}
	}()
	heapDir := filepath.Join(s.shardDir(w.id), heap.DirName)
	headLSN := func(id heap.RecordID) (uint64, error) {
		if readers == nil {
			readers = make(map[uint32]*heap.File)
		}
		f := readers[id.File]
		if f == nil {
			var err error
			if f, err = heap.OpenFile(vfs.Default, heapDir, id.File); err != nil {
				return 0, err
			}
			readers[id.File] = f
		}
		h, err := f.RecordHead(id)
		return h.KeyLSN, err
	}
	loaded := int64(0)
	st, err := recovery.Open(recovery.Options{
		ShardDir: s.shardDir(w.id),
		Shard:    uint32(w.id),
		Cache:    cache,
		Log:      s.log.With("shard", w.id),
		OnRedo:   func(redo uint64) { w.ks.BeginLoad(redo, headLSN) },
		OnRecord: func(r *heap.ScanRecord) error {
			sup, dup, err := w.ks.LoadRecord(r)
			if err != nil {
				return err
			}
			if dup {
				superseded = append(superseded, sup)
			}
			loaded++
			return nil
		},
	})
	if err != nil {
		w.ks.EndLoad()
		return nil, nil, nil, fmt.Errorf("shard %d: %w", w.id, err)
	}
	if loaded > 0 {
		s.log.Info("heap loaded", "shard", w.id, "keys", loaded, "redo", st.Redo, "files", len(st.Files))
	}
	var out = &w.scratch
	var args [][]byte
	failed := int64(0)
	res, err := wal.Recover(wal.RecoverOptions{
		Dir:     walDir,
		Shard:   uint32(w.id),
		Redo:    st.Redo,
		Floor:   st.Control.CheckpointLSN + 1,
		Salvage: s.cfg.WALSalvage || os.Getenv(wal.SalvageEnv) == "1",
		Apply: func(lsn uint64, typ wal.RecordType, payload []byte) error {
			if typ != wal.RecordData {
				// Full-page images were used by recovery.Open. The
				// database map logged at the redo point is the map
				// replay starts from (absent: the identity).
				if lsn == st.Redo && len(payload) > 0 && payload[0] == record.KindDBMap {
					m, err := record.DecodeDBMap(payload)
					if err == nil {
						err = w.ks.SetDBMap(m)
					}
					if err != nil {
						return fmt.Errorf("record %d: database map: %w", lsn, err)
					}
				}
				return nil
			}
			w.replayedData++
			db, a, err := wal.DecodeCommandInto(args[:0], payload)
			if err != nil {
				return fmt.Errorf("record %d: %w", lsn, err)
			}
			args = a
			if db >= w.ks.NumDBs() {
				return fmt.Errorf("record %d: database %d, but the server has %d (--databases)", lsn, db, w.ks.NumDBs())
			}
			out.Reset()
			w.ks.Replay(lsn, db, args, out)
			if len(out.Buf) > 0 && out.Buf[0] == '-' {
				failed++
				if failed <= 10 {
					s.log.Error("WAL record failed to replay", "shard", w.id, "lsn", lsn, "reply", string(out.Buf))
				}
			}
			return nil
		},
		Progress: func(p wal.Progress) {
			s.log.Info("recovering WAL", "shard", w.id, "segment", p.Segment, "records", p.Records,
				"MB/s", fmt.Sprintf("%.1f", p.MBPerSec()))
		},
	})
	w.ks.EndLoad()
	if err != nil {
		st.Heap.Close()
		return nil, nil, nil, fmt.Errorf("shard %d: WAL recovery: %w", w.id, err)
	}
	w.replayFailures = failed
	w.ckpt = &ckpt{heap: st.Heap, man: st.Manifest, bootSave: st.LastCheckpoint,
		loading: make(map[heap.PageID]bool), readFDs: make(map[uint32]runtime.FD)}
	segs, err := listSegments(walDir)
	if err != nil {
		st.Heap.Close()
		return nil, nil, nil, fmt.Errorf("shard %d: %w", w.id, err)
	}
	w.ckpt.segs = segs
	// The WAL above the redo point that recovery read counts toward
	// --max-wal-size until the next checkpoint publishes.
	w.ckpt.bytesAtPublished = -res.Bytes
	return res, st, superseded, nil
}

// listSegments returns the first LSNs of the WAL segments in dir, ascending.
func listSegments(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list WAL segments: %w", err)
	}
	var firsts []uint64
	for _, e := range ents {
		if lsn, ok := wal.ParseSegmentName(e.Name()); ok {
			firsts = append(firsts, lsn)
		}
	}
	slices.Sort(firsts)
	return firsts, nil
}
