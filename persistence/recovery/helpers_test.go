package recovery

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/checkpoint/record"
	"github.com/moond-db/moond/persistence/control"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/manifest"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/persistence/wal"
)

const testShard = 3

// shard is a shard directory under construction, on the real file system.
type shard struct {
	t       *testing.T
	dir     string
	walDir  string
	heapDir string
	salvage bool // Options.Salvage of open
}

func newShard(t *testing.T) *shard {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "shard-003")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &shard{t: t, dir: dir, walDir: filepath.Join(dir, wal.DirName), heapDir: filepath.Join(dir, heap.DirName)}
}

// keyRecord is a heap record the tests place: key, value and key LSN.
type keyRecord struct {
	key, value string
	lsn        uint64
}

func rec(key string, lsn uint64) keyRecord {
	return keyRecord{key: key, value: "value-of-" + key, lsn: lsn}
}

// insert places recs in the heap made of m's live files (ids from m),
// writes every dirty page and fsyncs, and returns where each key went. The
// manifest is not written.
func (s *shard) insert(m *manifest.Manifest, maxFileSize int64, recs ...keyRecord) map[string]heap.RecordID {
	s.t.Helper()
	h, err := heap.Open(heap.Options{Dir: s.heapDir, Files: m.Live(), Cache: heap.NewCache(1 << 22),
		MaxFileSize: maxFileSize, FileIDs: m, ReadMisses: true})
	if err != nil {
		s.t.Fatalf("heap.Open: %v", err)
	}
	defer h.Close()
	ids := make(map[string]heap.RecordID)
	for _, r := range recs {
		id, err := h.Insert(heap.Record{Key: []byte(r.key), Value: []byte(r.value), KeyLSN: r.lsn})
		if err != nil {
			s.t.Fatalf("insert %q: %v", r.key, err)
		}
		ids[r.key] = id
	}
	if _, err := h.WriteDirtySync(); err != nil {
		s.t.Fatalf("WriteDirtySync: %v", err)
	}
	return ids
}

func (s *shard) writeManifest(m *manifest.Manifest) {
	s.t.Helper()
	if err := m.Write(vfs.Default, s.dir); err != nil {
		s.t.Fatalf("manifest.Write: %v", err)
	}
}

var checkpointTime = time.UnixMilli(1_700_000_000_123)

func (s *shard) writeControl(redo, ckpt uint64, nextFileID uint32) control.Control {
	s.t.Helper()
	c := control.Control{Shard: testShard, RedoLSN: redo, CheckpointLSN: ckpt, Time: checkpointTime, NextFileID: nextFileID}
	if err := control.Write(vfs.Default, s.dir, c); err != nil {
		s.t.Fatalf("control.Write: %v", err)
	}
	return c
}

// image returns the bytes of page no of heap file id as they are on disk.
func (s *shard) image(id, no uint32) []byte {
	s.t.Helper()
	b, err := os.ReadFile(heap.FilePath(s.heapDir, id))
	if err != nil {
		s.t.Fatal(err)
	}
	off := heap.PageOffset(no)
	if int64(len(b)) < off+heap.PageSize {
		s.t.Fatalf("%s has no page %d", heap.FileName(id), no)
	}
	return bytes.Clone(b[off : off+heap.PageSize])
}

// tear overwrites bytes in the middle of page no of heap file id: what a
// write torn between sectors leaves (part new, part old).
func (s *shard) tear(id, no uint32) {
	s.t.Helper()
	f, err := os.OpenFile(heap.FilePath(s.heapDir, id), os.O_RDWR, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	defer f.Close()
	junk := bytes.Repeat([]byte{0xA5}, 512)
	if _, err := f.WriteAt(junk, heap.PageOffset(no)+2048); err != nil {
		s.t.Fatal(err)
	}
	if _, err := heap.CheckPage(s.image(id, no), id, no); !errors.Is(err, heap.ErrChecksum) {
		s.t.Fatalf("torn page %d of %s: CheckPage = %v, want a checksum mismatch", no, heap.FileName(id), err)
	}
}

func (s *shard) exists(path string) bool {
	s.t.Helper()
	_, err := os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.t.Fatal(err)
	}
	return err == nil
}

// walWriter appends records to the shard's WAL.
type walWriter struct {
	t *testing.T
	w *wal.SyncWriter
}

// openWAL starts a log at LSN next. segmentSize 0 is the default; a small
// one puts every full-page image in a segment of its own.
func (s *shard) openWAL(next uint64, segmentSize int64) *walWriter {
	s.t.Helper()
	w, err := wal.OpenSyncWriter(wal.SyncWriterOptions{Dir: s.walDir, Shard: testShard, NextLSN: next, SegmentSize: segmentSize})
	if err != nil {
		s.t.Fatalf("OpenSyncWriter: %v", err)
	}
	return &walWriter{t: s.t, w: w}
}

// data appends n data records and returns the LSN of the last.
func (w *walWriter) data(n int) uint64 {
	w.t.Helper()
	var lsn uint64
	for range n {
		var err error
		lsn, err = w.w.AppendCommand(0, [][]byte{[]byte("SET"), []byte("k"), []byte("v")})
		if err != nil {
			w.t.Fatal(err)
		}
	}
	w.commit()
	return lsn
}

// fpi appends the full-page image of page no of file id (the valid bytes
// img) and returns its LSN.
func (w *walWriter) fpi(id, no uint32, img []byte) uint64 {
	w.t.Helper()
	var p heap.Page
	if err := p.Decode(img, id, no); err != nil {
		w.t.Fatalf("image of page %d of %s: %v", no, heap.FileName(id), err)
	}
	return w.raw(record.AppendFPI(nil, &p))
}

// rawFPI appends a full-page image record naming page no of file id with
// img as it is, valid or not.
func (w *walWriter) rawFPI(id, no uint32, img []byte) uint64 {
	w.t.Helper()
	p := []byte{record.KindFPI}
	p = binary.LittleEndian.AppendUint32(p, id)
	p = binary.LittleEndian.AppendUint32(p, no)
	return w.raw(append(p, img...))
}

func (w *walWriter) raw(payload []byte) uint64 {
	w.t.Helper()
	lsn, err := w.w.Append(wal.RecordCheckpoint, payload)
	if err != nil {
		w.t.Fatal(err)
	}
	w.commit()
	return lsn
}

func (w *walWriter) commit() {
	w.t.Helper()
	if _, err := w.w.Commit(); err != nil {
		w.t.Fatal(err)
	}
}

// close seals the log, as a clean shutdown does.
func (w *walWriter) close() {
	w.t.Helper()
	if err := w.w.Close(); err != nil {
		w.t.Fatal(err)
	}
}

// walFiles returns the content of every file in the WAL directory.
func (s *shard) walFiles() map[string][]byte {
	s.t.Helper()
	names, err := os.ReadDir(s.walDir)
	if err != nil {
		s.t.Fatal(err)
	}
	out := make(map[string][]byte)
	for _, e := range names {
		b, err := os.ReadFile(filepath.Join(s.walDir, e.Name()))
		if err != nil {
			s.t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func (s *shard) segments() []string {
	s.t.Helper()
	names, err := os.ReadDir(s.walDir)
	if err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, e := range names {
		if _, ok := wal.ParseSegmentName(e.Name()); ok {
			out = append(out, filepath.Join(s.walDir, e.Name()))
		}
	}
	slices.Sort(out)
	return out
}

// opened is the outcome of an Open: the state and the keys OnRecord saw.
type opened struct {
	st  *State
	ix  *heap.Index
	err error
}

func (s *shard) open(fsys vfs.FS) opened {
	s.t.Helper()
	ix := heap.NewIndex()
	st, err := Open(Options{FS: fsys, ShardDir: s.dir, Shard: testShard, Cache: heap.NewCache(1 << 22), OnRecord: ix.Add, Salvage: s.salvage})
	if err == nil {
		s.t.Cleanup(func() { st.Heap.Close() })
	}
	return opened{st: st, ix: ix, err: err}
}

// mustOpen opens the shard and fails the test on error.
func (s *shard) mustOpen() (*State, *heap.Index) {
	s.t.Helper()
	o := s.open(nil)
	if o.err != nil {
		s.t.Fatalf("Open: %v", o.err)
	}
	return o.st, o.ix
}

// keys returns the keys an index holds, sorted.
func keys(ix *heap.Index) []string {
	var out []string
	for k := range ix.Keys {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// wantErr fails unless err matches target and its text holds every want.
func wantErr(t *testing.T, err, target error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("Open succeeded, want an error (%v)", target)
	}
	if target != nil && !errors.Is(err, target) {
		t.Fatalf("Open: %v\nwant errors.Is %v", err, target)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("Open: %v\nwant it to mention %q", err, w)
		}
	}
}

// readManifest reads the manifest on disk.
func (s *shard) readManifest() *manifest.Manifest {
	s.t.Helper()
	m, ok, err := manifest.Read(vfs.Default, s.dir, testShard)
	if err != nil || !ok {
		s.t.Fatalf("manifest.Read: present %v, %v", ok, err)
	}
	return m
}
