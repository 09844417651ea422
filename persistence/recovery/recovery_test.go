package recovery

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/moond-db/moond/persistence/control"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/manifest"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/persistence/wal"
)

// big is a record whose value fills most of a page, so that each takes a
// page of its own.
func big(key string, lsn uint64) keyRecord {
	return keyRecord{key: key, value: strings.Repeat(key, 2500/len(key)), lsn: lsn}
}

func TestFreshDirectory(t *testing.T) {
	s := newShard(t)
	if err := os.Remove(s.dir); err != nil { // not even the directory
		t.Fatal(err)
	}
	st, ix := s.mustOpen()
	if !st.Fresh || st.Redo != 1 || st.Control != control.Fresh(testShard) {
		t.Fatalf("fresh shard: Fresh %v, Redo %d, Control %+v", st.Fresh, st.Redo, st.Control)
	}
	if !st.LastCheckpoint.IsZero() || len(st.Files) != 0 || len(ix.Keys) != 0 || st.Heap == nil {
		t.Fatalf("fresh shard: LastCheckpoint %v, Files %v, keys %v, heap %v", st.LastCheckpoint, st.Files, keys(ix), st.Heap)
	}
	if st.Manifest.NextID() != 1 || st.Manifest.Shard() != testShard {
		t.Fatalf("fresh manifest: next %d, shard %d", st.Manifest.NextID(), st.Manifest.Shard())
	}
	if s.exists(manifest.Path(s.dir)) || s.exists(control.Path(s.dir)) {
		t.Fatal("Open of a fresh shard wrote a manifest or a control file")
	}
	// The heap allocates its first file from the manifest.
	id, err := st.Heap.Insert(heap.Record{Key: []byte("k"), Value: []byte("v"), KeyLSN: 1})
	if err != nil || id.File != 1 || !st.Manifest.IsLive(1) {
		t.Fatalf("first insert: %v, %v; manifest lists file 1 live: %v", id, err, st.Manifest.IsLive(1))
	}
}

func TestRoundTrip(t *testing.T) {
	s := newShard(t)
	m := manifest.New(testShard)
	large := keyRecord{key: "large", value: strings.Repeat("0123456789", 1500), lsn: 4}
	ids := s.insert(m, 0, rec("a", 1), rec("b", 2), rec("c", 3), large)
	s.writeManifest(m)
	w := s.openWAL(1, 0)
	w.data(12)
	w.close()
	c := s.writeControl(8, 11, uint32(m.NextID()))

	var value []byte
	ix := heap.NewIndex()
	var redoSeen uint64
	st, err := Open(Options{ShardDir: s.dir, Shard: testShard, Cache: heap.NewCache(1 << 22), OnRedo: func(r uint64, _ []uint64) { redoSeen = r }, OnRecord: func(r *heap.ScanRecord) error {
		if redoSeen != 8 {
			t.Fatalf("a record reached OnRecord before OnRedo told the redo point (saw %d)", redoSeen)
		}
		if k, _ := r.Key(); string(k) == "large" {
			var err error
			if value, err = r.AppendValue(nil); err != nil {
				return err
			}
		}
		return ix.Add(r)
	}})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer st.Heap.Close()
	if st.Fresh || st.Redo != 8 || st.Control != c || !st.LastCheckpoint.Equal(checkpointTime) {
		t.Fatalf("state: Fresh %v, Redo %d, Control %+v, LastCheckpoint %v", st.Fresh, st.Redo, st.Control, st.LastCheckpoint)
	}
	if got, want := keys(ix), []string{"a", "b", "c", "large"}; !slices.Equal(got, want) {
		t.Fatalf("loaded keys %v, want %v", got, want)
	}
	if string(value) != large.value {
		t.Fatalf("value of the overflowing record: %d bytes, want %d", len(value), len(large.value))
	}
	for k, id := range ids {
		if ix.Keys[k].ID != id {
			t.Fatalf("key %q at %v, want %v", k, ix.Keys[k].ID, id)
		}
	}
	if !slices.Equal(st.Files, m.Live()) || len(st.Files) == 0 {
		t.Fatalf("Files %v, want %v", st.Files, m.Live())
	}
	if len(st.Repaired)+len(st.Swept)+len(st.Unlinked) != 0 {
		t.Fatalf("nothing to do, but Repaired %v, Swept %v, Unlinked %v", st.Repaired, st.Swept, st.Unlinked)
	}
	// The heap serves: a page that is not cached is not read synchronously.
	if _, err := st.Heap.Head(ids["a"]); !errors.Is(err, heap.ErrNotResident) {
		t.Fatalf("Head of a page that is not cached: %v, want ErrNotResident", err)
	}
	if got := st.Heap.Stats().LiveRecords; got != 4 {
		t.Fatalf("heap holds %d live records, want 4", got)
	}
}

// tornShard builds a heap of two pages in file 1 ("a" in page 0, "b" in
// page 1), the manifest and a control file with redo 5, and returns the
// images of both pages.
func tornShard(t *testing.T) (*shard, [2][]byte) {
	s := newShard(t)
	m := manifest.New(testShard)
	ids := s.insert(m, 0, big("a", 1), big("b", 2))
	if ids["a"].File != 1 || ids["a"].Page != 0 || ids["b"].File != 1 || ids["b"].Page != 1 {
		t.Fatalf("placement %v: the test needs a and b in pages 0 and 1 of file 1", ids)
	}
	s.writeManifest(m)
	s.writeControl(5, 0, uint32(m.NextID()))
	return s, [2][]byte{s.image(1, 0), s.image(1, 1)}
}

func TestTornPageRepairedFromImage(t *testing.T) {
	s, img := tornShard(t)
	w := s.openWAL(1, 0)
	w.data(5)
	if lsn := w.fpi(1, 1, img[1]); lsn < 5 {
		t.Fatalf("image at LSN %d, below redo", lsn)
	}
	w.data(2)
	s.tear(1, 1)
	before := s.walFiles()

	st, ix := s.mustOpen()
	if want := []heap.PageID{{File: 1, Page: 1}}; !slices.Equal(st.Repaired, want) {
		t.Fatalf("Repaired %v, want %v", st.Repaired, want)
	}
	if !bytes.Equal(s.image(1, 1), img[1]) {
		t.Fatal("page 1 on disk is not its full-page image")
	}
	if got := keys(ix); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("loaded keys %v", got)
	}
	if st.Images != 1 {
		t.Fatalf("Images %d, want 1", st.Images)
	}
	// The WAL is read, never written: wal.Recover runs next.
	after := s.walFiles()
	if len(after) != len(before) {
		t.Fatalf("WAL files %d, were %d", len(after), len(before))
	}
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Fatalf("WAL file %s changed", name)
		}
	}
}

func TestTornPageWithoutImage(t *testing.T) {
	s, img := tornShard(t)
	w := s.openWAL(1, 0)
	w.data(5)
	w.fpi(1, 0, img[0]) // an image of another page
	w.data(1)
	s.tear(1, 1)

	o := s.open(nil)
	wantErr(t, o.err, ErrNoImage, heap.FileName(1))
	var pe *heap.PageError
	if !errors.As(o.err, &pe) || pe.File != 1 || pe.Page != 1 || !errors.Is(o.err, heap.ErrChecksum) {
		t.Fatalf("Open: %v, want a *heap.PageError naming page 1 of file 1 (checksum)", o.err)
	}
}

func TestImageBelowRedoIgnored(t *testing.T) {
	s, img := tornShard(t)
	w := s.openWAL(1, 0)
	w.data(1)
	if lsn := w.fpi(1, 1, img[1]); lsn >= 5 {
		t.Fatalf("image at LSN %d, want it below redo 5", lsn)
	}
	w.data(6)
	s.tear(1, 1)

	o := s.open(nil)
	wantErr(t, o.err, ErrNoImage, heap.FileName(1), "redo point 5")
	if bytes.Equal(s.image(1, 1), img[1]) {
		t.Fatal("page 1 was restored from an image below the redo point")
	}
}

func TestHighestLSNImageWins(t *testing.T) {
	s := newShard(t)
	m := manifest.New(testShard)
	s.insert(m, 0, rec("a", 1))
	older := s.image(1, 0)
	s.insert(m, 0, rec("b", 2)) // same page, newer content
	newer := s.image(1, 0)
	if bytes.Equal(older, newer) {
		t.Fatal("the second insert did not change page 0")
	}
	s.writeManifest(m)
	s.writeControl(3, 0, uint32(m.NextID()))
	// Small segments: each image in a segment of its own.
	w := s.openWAL(1, wal.MinSegmentSize)
	w.data(3)
	w.fpi(1, 0, older)
	w.data(2)
	w.fpi(1, 0, newer)
	w.data(1)
	if n := len(s.segments()); n < 3 {
		t.Fatalf("%d segments, want the images in different ones", n)
	}
	s.tear(1, 0)

	st, ix := s.mustOpen()
	if !bytes.Equal(s.image(1, 0), newer) {
		t.Fatal("page 0 was not restored from the image with the highest LSN")
	}
	if got := keys(ix); !slices.Equal(got, []string{"a", "b"}) || len(st.Repaired) != 1 {
		t.Fatalf("loaded keys %v, Repaired %v", got, st.Repaired)
	}
}

func TestPartialTailPage(t *testing.T) {
	for _, withImage := range []bool{true, false} {
		t.Run(map[bool]string{true: "image", false: "no image"}[withImage], func(t *testing.T) {
			s, img := tornShard(t)
			w := s.openWAL(1, 0)
			w.data(5)
			if withImage {
				w.fpi(1, 1, img[1])
			}
			w.data(1)
			// A write that extended the file to page 1 was torn after 1000
			// bytes.
			if err := os.Truncate(heap.FilePath(s.heapDir, 1), heap.PageSize+1000); err != nil {
				t.Fatal(err)
			}
			o := s.open(nil)
			if !withImage {
				wantErr(t, o.err, ErrNoImage, heap.FileName(1), "torn write that extended it")
				var pe *heap.PageError
				if !errors.As(o.err, &pe) || pe.File != 1 || pe.Page != 1 || !errors.Is(o.err, heap.ErrShortPage) {
					t.Fatalf("Open: %v, want a *heap.PageError naming page 1 of file 1 (short page)", o.err)
				}
				return
			}
			if o.err != nil {
				t.Fatalf("Open: %v", o.err)
			}
			if want := []heap.PageID{{File: 1, Page: 1}}; !slices.Equal(o.st.Repaired, want) {
				t.Fatalf("Repaired %v, want %v", o.st.Repaired, want)
			}
			if !bytes.Equal(s.image(1, 1), img[1]) {
				t.Fatal("the partial page was not restored from its image")
			}
			if got := keys(o.ix); !slices.Equal(got, []string{"a", "b"}) {
				t.Fatalf("loaded keys %v", got)
			}
		})
	}
}

// An image of a page the file does not reach is not written: the
// checkpoint logged it and crashed before the write.
func TestImageBeyondTheFileNotWritten(t *testing.T) {
	s, img := tornShard(t)
	w := s.openWAL(1, 0)
	w.data(5)
	w.rawFPI(1, 5, img[1]) // never read back: the file has no page 5
	w.data(1)
	st, _ := s.mustOpen()
	if len(st.Repaired) != 0 {
		t.Fatalf("Repaired %v", st.Repaired)
	}
	if fi, err := os.Stat(heap.FilePath(s.heapDir, 1)); err != nil || fi.Size() != 2*heap.PageSize {
		t.Fatalf("heap file 1: %v, %v; want 2 pages", fi.Size(), err)
	}
}

// A page that was never written (a hole: all zeros) is valid, image or
// not: the checkpoint that logged the image never wrote it.
func TestNeverWrittenPageKept(t *testing.T) {
	s, img := tornShard(t)
	w := s.openWAL(1, 0)
	w.data(5)
	w.fpi(1, 1, img[1])
	w.data(1)
	f, err := os.OpenFile(heap.FilePath(s.heapDir, 1), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, heap.PageSize), heap.PageOffset(1)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, ix := s.mustOpen()
	if len(st.Repaired) != 0 || !bytes.Equal(s.image(1, 1), make([]byte, heap.PageSize)) {
		t.Fatalf("a never-written page was replaced: Repaired %v", st.Repaired)
	}
	if got := keys(ix); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("loaded keys %v", got)
	}
}

func TestReadErrorDuringRepair(t *testing.T) {
	s, img := tornShard(t)
	w := s.openWAL(1, 0)
	w.data(5)
	w.fpi(1, 1, img[1])
	w.data(1)
	fsys := vfs.NewFaulty(vfs.Default)
	fsys.Add(vfs.Rule{Op: vfs.OpRead, Path: heap.FileName(1), Fault: vfs.FaultError, Err: syscall.EIO})
	o := s.open(fsys)
	wantErr(t, o.err, syscall.EIO, heap.FileName(1))
}

func TestInvalidImageRefused(t *testing.T) {
	s, img := tornShard(t)
	w := s.openWAL(1, 0)
	w.data(5)
	w.rawFPI(1, 1, img[0]) // page 0's bytes named as page 1: the wrong place
	w.data(1)
	s.tear(1, 1)
	torn := s.image(1, 1)
	o := s.open(nil)
	wantErr(t, o.err, heap.ErrWrongPlace, "not a valid page for that place", s.segments()[0])
	if !bytes.Equal(s.image(1, 1), torn) {
		t.Fatal("an invalid image was written")
	}
}

func TestUnregisteredFileSwept(t *testing.T) {
	s := newShard(t)
	m := manifest.New(testShard)
	s.insert(m, 0, rec("a", 1))
	s.writeManifest(m)
	// Files of a checkpoint that never committed, one far above the
	// counter (2), with a torn page and an image of it in the WAL.
	for _, id := range []uint32{5, 9} {
		if err := os.WriteFile(heap.FilePath(s.heapDir, id), bytes.Repeat([]byte{7}, heap.PageSize), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := s.openWAL(1, 0)
	w.data(2)
	w.rawFPI(9, 0, bytes.Repeat([]byte{1}, heap.PageSize)) // not a valid page: must not even be read
	w.data(1)

	st, ix := s.mustOpen()
	if !slices.Equal(st.Swept, []uint32{5, 9}) {
		t.Fatalf("Swept %v, want [5 9]", st.Swept)
	}
	for _, id := range []uint32{5, 9} {
		if s.exists(heap.FilePath(s.heapDir, id)) {
			t.Fatalf("%s was not deleted", heap.FileName(id))
		}
	}
	if got := keys(ix); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("loaded keys %v", got)
	}
	// The counter never moves back: in memory and on disk.
	if st.Manifest.NextID() != 10 {
		t.Fatalf("counter %d, want 10", st.Manifest.NextID())
	}
	if got := s.readManifest().NextID(); got != 10 {
		t.Fatalf("counter on disk %d, want 10", got)
	}
	id, err := st.Heap.Insert(heap.Record{Key: []byte("k"), Value: bytes.Repeat([]byte("v"), 4000), KeyLSN: 9})
	if err != nil || id.File == 5 || id.File == 9 {
		t.Fatalf("insert after the sweep went to %v (%v): an id of a swept file", id, err)
	}
}

// The counter is durable before the files that raised it are deleted: a
// crash in the middle of the sweep cannot move it back.
func TestCounterDurableBeforeSweep(t *testing.T) {
	s := newShard(t)
	m := manifest.New(testShard)
	s.insert(m, 0, rec("a", 1))
	s.writeManifest(m)
	if err := os.WriteFile(heap.FilePath(s.heapDir, 9), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fsys := vfs.NewFaulty(vfs.Default)
	fsys.Add(vfs.Rule{Op: vfs.OpRemove, Path: heap.FileName(9), Fault: vfs.FaultError, Err: syscall.EIO})
	o := s.open(fsys)
	wantErr(t, o.err, syscall.EIO, heap.FileName(9))
	if got := s.readManifest().NextID(); got != 10 {
		t.Fatalf("counter on disk %d after a failed sweep, want 10", got)
	}
}

func TestCounterSeededFromControl(t *testing.T) {
	s := newShard(t)
	m := manifest.New(testShard)
	s.insert(m, 0, rec("a", 1))
	s.writeManifest(m)
	w := s.openWAL(1, 0)
	w.data(3)
	// An id was handed out between the manifest commit and the control
	// write: the control file's next id is above the manifest's counter.
	s.writeControl(2, 3, 20)
	st, _ := s.mustOpen()
	if st.Manifest.NextID() != 20 || s.readManifest().NextID() != 20 {
		t.Fatalf("counter %d, on disk %d, want 20", st.Manifest.NextID(), s.readManifest().NextID())
	}
}

func TestTombstonedFiles(t *testing.T) {
	// build returns a shard whose file 1 is live and files 2 and 3 are
	// tombstoned by the checkpoints whose redo points are two and three.
	build := func(t *testing.T, two, three uint64) *shard {
		s := newShard(t)
		m := manifest.New(testShard)
		s.insert(m, heap.PageSize, big("a", 1), big("b", 2), big("c", 3)) // a file each
		if !slices.Equal(m.Live(), []uint32{1, 2, 3}) {
			t.Fatalf("live files %v", m.Live())
		}
		if err := m.Tombstone(2, two); err != nil {
			t.Fatal(err)
		}
		if err := m.Tombstone(3, three); err != nil {
			t.Fatal(err)
		}
		s.writeManifest(m)
		w := s.openWAL(1, 0)
		w.data(10)
		return s
	}
	t.Run("covered", func(t *testing.T) {
		s := build(t, 5, 9)
		s.writeControl(7, 8, 4)
		st, ix := s.mustOpen()
		if !slices.Equal(st.Unlinked, []uint32{2}) {
			t.Fatalf("Unlinked %v, want [2]", st.Unlinked)
		}
		if s.exists(heap.FilePath(s.heapDir, 2)) || !s.exists(heap.FilePath(s.heapDir, 3)) {
			t.Fatal("want file 2 unlinked and file 3 kept")
		}
		disk := s.readManifest()
		if _, ok := disk.Lookup(2); ok {
			t.Fatal("the manifest on disk still lists the unlinked file")
		}
		if e, ok := disk.Lookup(3); !ok || e.State != manifest.Tombstoned || disk.NextID() != 4 {
			t.Fatalf("manifest on disk: file 3 %+v (%v), next %d", e, ok, disk.NextID())
		}
		if _, ok := st.Manifest.Lookup(2); ok {
			t.Fatal("the manifest in memory still lists the unlinked file")
		}
		if got := keys(ix); !slices.Equal(got, []string{"a"}) || !slices.Equal(st.Files, []uint32{1}) {
			t.Fatalf("loaded keys %v from files %v; tombstoned files are not loaded", got, st.Files)
		}
	})
	t.Run("fresh", func(t *testing.T) {
		// No checkpoint finalized: no tombstone is covered, not even one
		// by a checkpoint whose redo point was 1 (it began on an empty
		// log and never finalized).
		s := build(t, 1, 1)
		st, _ := s.mustOpen()
		if len(st.Unlinked) != 0 || !s.exists(heap.FilePath(s.heapDir, 2)) {
			t.Fatalf("fresh shard unlinked %v", st.Unlinked)
		}
	})
}

func TestMissingHistory(t *testing.T) {
	cases := []struct {
		name      string
		walFrom   uint64 // 0: no WAL
		redo      uint64 // 0: no control file
		ckpt      uint64
		want      bool
		mentioned string
	}{
		{name: "fresh, WAL from 1", walFrom: 1},
		{name: "fresh, no WAL"},
		{name: "fresh, WAL from 5", walFrom: 5, want: true, mentioned: wal.SegmentName(5)},
		{name: "redo inside the WAL", walFrom: 4, redo: 6, ckpt: 7},
		{name: "redo at the first segment", walFrom: 6, redo: 6, ckpt: 7},
		{name: "redo below the first segment", walFrom: 7, redo: 6, ckpt: 7, want: true, mentioned: wal.SegmentName(7)},
		{name: "control without WAL", redo: 6, ckpt: 7, want: true, mentioned: "LSN 7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newShard(t)
			m := manifest.New(testShard)
			s.writeManifest(m)
			if tc.walFrom != 0 {
				w := s.openWAL(tc.walFrom, 0)
				w.data(4)
			}
			if tc.redo != 0 {
				s.writeControl(tc.redo, tc.ckpt, 1)
			}
			o := s.open(nil)
			if !tc.want {
				if o.err != nil {
					t.Fatalf("Open: %v", o.err)
				}
				return
			}
			wantErr(t, o.err, ErrMissingHistory, tc.mentioned, "below the redo point is missing")
		})
	}
	// More segments: the scan starts at the one that holds redo.
	t.Run("several segments", func(t *testing.T) {
		s, img := tornShard(t) // redo 5
		w := s.openWAL(1, wal.MinSegmentSize)
		w.data(7)
		w.fpi(1, 1, img[1])
		w.data(1)
		if n := len(s.segments()); n < 5 {
			t.Fatalf("%d segments", n)
		}
		// Recycle what is wholly below redo, as a checkpoint does.
		for _, seg := range s.segments() {
			if first, _ := wal.ParseSegmentName(seg[len(s.walDir)+1:]); first < 5 {
				if err := os.Remove(seg); err != nil {
					t.Fatal(err)
				}
			}
		}
		s.tear(1, 1)
		st, _ := s.mustOpen()
		if len(st.Repaired) != 1 {
			t.Fatalf("Repaired %v", st.Repaired)
		}
	})
}

func TestControlCorrupt(t *testing.T) {
	s := newShard(t)
	m := manifest.New(testShard)
	s.insert(m, 0, rec("a", 1))
	s.writeManifest(m)
	c := s.writeControl(2, 3, uint32(m.NextID()))
	b := c.Encode()
	b[20] ^= 1 // the redo LSN
	if err := os.WriteFile(control.Path(s.dir), b, 0o644); err != nil {
		t.Fatal(err)
	}
	o := s.open(nil)
	var ce *control.Error
	wantErr(t, o.err, control.ErrChecksum, control.Path(s.dir))
	if !errors.As(o.err, &ce) {
		t.Fatalf("Open: %v, want a *control.Error", o.err)
	}
	if !s.exists(heap.FilePath(s.heapDir, 1)) {
		t.Fatal("a heap file was deleted")
	}
}

func TestManifestMissingNextToControl(t *testing.T) {
	s := newShard(t)
	m := manifest.New(testShard)
	s.insert(m, 0, rec("a", 1))
	w := s.openWAL(1, 0)
	w.data(3)
	s.writeControl(2, 3, uint32(m.NextID()))
	o := s.open(nil)
	wantErr(t, o.err, ErrManifestMissing, manifest.Path(s.dir))
	if !s.exists(heap.FilePath(s.heapDir, 1)) {
		t.Fatal("the heap file was swept")
	}
}

func TestFsyncs(t *testing.T) {
	build := func(t *testing.T) *shard {
		s := newShard(t)
		m := manifest.New(testShard)
		s.insert(m, heap.PageSize, big("a", 1), big("b", 2)) // two files
		s.writeManifest(m)
		return s
	}
	t.Run("every live file and the directories", func(t *testing.T) {
		s := build(t)
		fsys := vfs.NewFaulty(vfs.Default)
		open := make(chan struct{})
		close(open)
		// A hang whose gate is open lets the call through and counts it.
		files := fsys.Add(vfs.Rule{Op: vfs.OpSync, Path: "heap-*.dat", Fault: vfs.FaultHang, Gate: open})
		dir := fsys.Add(vfs.Rule{Op: vfs.OpSync, Path: s.heapDir, Fault: vfs.FaultHang, Gate: open})
		shardDir := fsys.Add(vfs.Rule{Op: vfs.OpSync, Path: s.dir, Fault: vfs.FaultHang, Gate: open})
		o := s.open(fsys)
		if o.err != nil {
			t.Fatalf("Open: %v", o.err)
		}
		if fsys.Hits(files) != 2 || fsys.Hits(dir) != 1 || fsys.Hits(shardDir) != 1 {
			t.Fatalf("fsyncs: heap files %d (want 2), heap directory %d, shard directory %d (want 1)",
				fsys.Hits(files), fsys.Hits(dir), fsys.Hits(shardDir))
		}
	})
	t.Run("failure", func(t *testing.T) {
		s := build(t)
		fsys := vfs.NewFaulty(vfs.Default)
		fsys.Add(vfs.EIOOnSync(heap.FileName(2)))
		o := s.open(fsys)
		wantErr(t, o.err, syscall.EIO, heap.FileName(2))
		if !vfs.IsSyncFailure(o.err) {
			t.Fatalf("Open: %v, want a sync failure", o.err)
		}
	})
	t.Run("missing live file", func(t *testing.T) {
		s := build(t)
		if err := os.Remove(heap.FilePath(s.heapDir, 2)); err != nil {
			t.Fatal(err)
		}
		o := s.open(nil)
		wantErr(t, o.err, os.ErrNotExist, heap.FileName(2), "lists it live")
	})
}

func TestWALDamage(t *testing.T) {
	t.Run("torn tail of the last segment", func(t *testing.T) {
		s, img := tornShard(t)
		w := s.openWAL(1, 0)
		w.data(5)
		w.fpi(1, 1, img[1])
		w.data(1)
		segs := s.segments()
		last := segs[len(segs)-1]
		f, err := os.OpenFile(last, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte{40, 0, 0, 0, 9, 9}); err != nil { // half a record
			t.Fatal(err)
		}
		f.Close()
		s.tear(1, 1)
		before := s.walFiles()
		st, _ := s.mustOpen()
		if len(st.Repaired) != 1 {
			t.Fatalf("Repaired %v", st.Repaired)
		}
		for name, b := range s.walFiles() {
			if !bytes.Equal(before[name], b) {
				t.Fatalf("WAL file %s changed: the torn tail is wal.Recover's to cut", name)
			}
		}
	})
	// damaged builds a log whose first segment is damaged and whose image
	// of page 1 is in a later segment. hdr damages the segment's header
	// rather than its first record.
	damaged := func(t *testing.T, tear, hdr, salvage bool) (*shard, [2][]byte, opened) {
		s, img := tornShard(t)
		s.salvage = salvage
		w := s.openWAL(1, wal.MinSegmentSize)
		w.data(5)
		w.fpi(1, 1, img[1])
		w.data(1)
		// One record per segment: the redo point 5 is in the third,
		// the image (LSN 11) in the sixth; damage the fourth.
		seg := wal.SegmentPath(s.walDir, 7)
		b, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		if hdr {
			b[10] ^= 0xFF
		} else {
			b[wal.SegmentHeaderSize+20] ^= 0xFF // inside its first record
		}
		if err := os.WriteFile(seg, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if tear {
			s.tear(1, 1)
		}
		o := s.open(nil)
		if o.err != nil || salvage {
			return s, img, o
		}
		if len(o.st.Repaired) != 0 || o.st.Images != 0 {
			t.Fatalf("images after the damage were used: Repaired %v, Images %d", o.st.Repaired, o.st.Images)
		}
		return s, img, o
	}
	t.Run("earlier segment damaged, nothing to repair", func(t *testing.T) {
		// Not an error here: wal.Recover judges the log.
		if _, _, o := damaged(t, false, false, false); o.err != nil {
			t.Fatalf("Open: %v", o.err)
		}
	})
	t.Run("earlier segment damaged, image after the damage", func(t *testing.T) {
		_, _, o := damaged(t, true, false, false)
		wantErr(t, o.err, ErrNoImage, "stopped in", wal.SegmentName(7))
		// The same refusal as wal.Recover's, with the way out: a damaged
		// log fails the boot alike whichever step meets it.
		var tear *wal.MidChainTearError
		if !errors.As(o.err, &tear) || !strings.HasSuffix(tear.Segment, wal.SegmentName(7)) {
			t.Fatalf("Open: %v, want a *wal.MidChainTearError naming %s", o.err, wal.SegmentName(7))
		}
		wantErr(t, o.err, nil, "--wal-salvage", wal.SalvageEnv+"=1")
	})
	for _, hdr := range []bool{false, true} {
		name := map[bool]string{false: "record", true: "header"}[hdr]
		t.Run("salvage, earlier segment's "+name+" damaged, image after the damage", func(t *testing.T) {
			s, img, o := damaged(t, true, hdr, true)
			if o.err != nil {
				t.Fatalf("Open with salvage: %v", o.err)
			}
			if want := []heap.PageID{{File: 1, Page: 1}}; !slices.Equal(o.st.Repaired, want) {
				t.Fatalf("Repaired %v, want %v: the scan did not go on past the damage", o.st.Repaired, want)
			}
			if !bytes.Equal(s.image(1, 1), img[1]) {
				t.Fatal("page 1 on disk is not its full-page image")
			}
		})
	}
}

// A segment that does not link to the one before it (another copy of the
// log, say) is not read: its images are not the shard's.
func TestBrokenChainNotRead(t *testing.T) {
	s, img := tornShard(t)
	w := s.openWAL(1, 0)
	w.data(6)
	w.close()                // sealed: LSNs 1..7
	other := s.openWAL(8, 0) // a new log: no link to the sealed segment
	other.fpi(1, 1, img[1])
	other.data(1)
	s.tear(1, 1)
	o := s.open(nil)
	wantErr(t, o.err, ErrNoImage, "links to", wal.SegmentName(8))
}

// Under salvage, wal.Recover replays a segment that does not link to the
// one before it (and reports the skip): its images are used as well.
func TestBrokenChainReadUnderSalvage(t *testing.T) {
	s, img := tornShard(t)
	s.salvage = true
	w := s.openWAL(1, 0)
	w.data(6)
	w.close()
	other := s.openWAL(8, 0)
	other.fpi(1, 1, img[1])
	other.data(1)
	s.tear(1, 1)
	o := s.open(nil)
	if o.err != nil {
		t.Fatalf("Open with salvage: %v", o.err)
	}
	if want := []heap.PageID{{File: 1, Page: 1}}; !slices.Equal(o.st.Repaired, want) {
		t.Fatalf("Repaired %v, want %v", o.st.Repaired, want)
	}
}

func TestOnRecordError(t *testing.T) {
	s := newShard(t)
	m := manifest.New(testShard)
	s.insert(m, 0, rec("a", 1))
	s.writeManifest(m)
	boom := errors.New("boom")
	_, err := Open(Options{ShardDir: s.dir, Shard: testShard, Cache: heap.NewCache(1 << 20),
		OnRecord: func(*heap.ScanRecord) error { return boom }})
	if !errors.Is(err, boom) {
		t.Fatalf("Open: %v, want the OnRecord error", err)
	}
}
