package heap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"testing"

	"github.com/moond-db/moond/persistence/vfs"
)

func rec(key string, value []byte, lsn uint64) Record {
	return Record{Key: []byte(key), Value: value, KeyLSN: lsn, Kind: byte(lsn % 5), Expiry: int64(lsn) * 1000}
}

func TestHeapRecordsRoundTripThroughTheCacheAndTheDisk(t *testing.T) {
	th := newTestHeap(t, 4096, 0)
	sizes := []int{0, 1, 100, MaxInline - 3, MaxInline - 2, MaxInline + 1, headInline + 1,
		OverflowCapacity * 3, 1 << 20, 5<<20 + 17}
	want := map[RecordID]Record{}
	for i, n := range sizes {
		r := rec(fmt.Sprintf("key-%d", i), randBytes(uint64(i), n), uint64(i+1))
		id, err := th.Insert(r)
		if err != nil {
			t.Fatalf("insert %d bytes: %v", n, err)
		}
		want[id] = r
		mustCheck(t, th.Heap)
	}
	for id, r := range want {
		if got := mustRead(t, th.Heap, id); !sameRecord(got, r) {
			t.Fatalf("record %v (%d-byte value) read back differently from the cache", id, len(r.Value))
		}
	}
	h, ix := th.reopen(t, vfs.Default, 64)
	mustCheck(t, h)
	if len(ix.Keys) != len(want) || len(ix.Superseded) != 0 {
		t.Fatalf("index: %d keys, %d superseded; want %d, 0", len(ix.Keys), len(ix.Superseded), len(want))
	}
	for id, r := range want {
		e := ix.Keys[string(r.Key)]
		if e.ID != id || e.KeyLSN != r.KeyLSN || e.Expiry != r.Expiry || e.Kind != r.Kind {
			t.Fatalf("index entry %+v for %v", e, id)
		}
		if got := mustRead(t, h, id); !sameRecord(got, r) {
			t.Fatalf("record %v (%d-byte value) read back differently from the disk", id, len(r.Value))
		}
	}
}

func TestBootScanDeliversKeysAndValuesOfChainedRecords(t *testing.T) {
	th := newTestHeap(t, 1024, 0)
	longKey := string(randBytes(1, 9000))
	value := randBytes(2, 20000)
	if _, err := th.Insert(rec(longKey, value, 3)); err != nil {
		t.Fatal(err)
	}
	if _, err := th.WriteDirtySync(); err != nil {
		t.Fatal(err)
	}
	th.Close()
	found := 0
	_, err := Open(Options{Dir: th.dir, Files: []uint32{1}, Cache: NewCache(1 << 20), OnRecord: func(r *ScanRecord) error {
		found++
		k, err := r.Key()
		if err != nil || string(k) != longKey {
			return fmt.Errorf("key of %d bytes, err %v", len(k), err)
		}
		v, err := r.AppendValue([]byte("prefix"))
		if err != nil || !bytes.Equal(v[6:], value) || string(v[:6]) != "prefix" {
			return fmt.Errorf("value of %d bytes, err %v", len(v), err)
		}
		return nil
	}})
	if err != nil || found != 1 {
		t.Fatalf("open: %v, %d records", err, found)
	}
}

func TestFreeSpaceMapPutsARecordInTheFullestPageThatFits(t *testing.T) {
	th := newTestHeap(t, 1024, 0)
	// Three pages with different room: a nearly full one, a half full one
	// and a fresh one.
	fill := func(n int) RecordID {
		id, err := th.Insert(rec("fill", make([]byte, n), 1))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	a := fill(MaxInline - 600) // page A: ~600 bytes of room
	b := fill(MaxInline - 2000)
	if b.Page == a.Page {
		t.Fatal("setup: second record went to the first page")
	}
	mustCheck(t, th.Heap)
	small, err := th.Insert(rec("small", make([]byte, 100), 2))
	if err != nil {
		t.Fatal(err)
	}
	if small.PageID() != a.PageID() {
		t.Fatalf("a 100-byte record went to %v, want the fullest page %v", small, a.PageID())
	}
	mid, err := th.Insert(rec("mid", make([]byte, 1000), 3))
	if err != nil {
		t.Fatal(err)
	}
	if mid.PageID() != b.PageID() {
		t.Fatalf("a 1000-byte record went to %v, want %v (the only page with room)", mid, b.PageID())
	}
	mustCheck(t, th.Heap)
	if st := th.Stats(); st.Pages != 2 || st.LiveRecords != 4 {
		t.Fatalf("stats %+v: want 2 pages, 4 records", st)
	}
}

func TestFreedRecordsRoomIsReused(t *testing.T) {
	th := newTestHeap(t, 1024, 0)
	var ids []RecordID
	for i := range 200 {
		id, err := th.Insert(rec(fmt.Sprintf("k%03d", i), make([]byte, 150), uint64(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	pages := th.Stats().Pages
	for _, id := range ids[:100] {
		if err := th.Free(id, 0); err != nil {
			t.Fatal(err)
		}
		mustCheck(t, th.Heap)
	}
	for i := range 100 {
		if _, err := th.Insert(rec(fmt.Sprintf("n%03d", i), make([]byte, 150), uint64(300+i))); err != nil {
			t.Fatal(err)
		}
	}
	mustCheck(t, th.Heap)
	if got := th.Stats().Pages; got != pages {
		t.Fatalf("heap grew from %d to %d pages although the freed room fit the new records", pages, got)
	}
}

func TestFreeingAChainedRecordReleasesAllItsPages(t *testing.T) {
	th := newTestHeap(t, 1024, 0)
	id, err := th.Insert(rec("big", make([]byte, 10*OverflowCapacity), 1))
	if err != nil {
		t.Fatal(err)
	}
	st := th.Stats()
	if st.OverflowPages != 10 || st.FreePages != 0 {
		t.Fatalf("stats after insert %+v", st)
	}
	if err := th.Free(id, 7); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, th.Heap)
	st = th.Stats()
	if st.OverflowPages != 0 || st.FreePages != st.Pages || st.LiveRecords != 0 {
		t.Fatalf("stats after free %+v", st)
	}
	// The head page was rewritten as a free page carrying the deletion's LSN.
	f := th.Cache().Peek(id.PageID())
	if f == nil || f.Page.Type() != PageFree || f.Page.LSN() != 7 || !f.Dirty() {
		t.Fatalf("head page after free: %+v", f)
	}
	if _, err := th.Read(id, nil); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("read of a freed record: %v", err)
	}
	if err := th.Free(id, 0); !errors.Is(err, ErrNoRecord) {
		t.Fatalf("double free: %v", err)
	}
	pages := st.Pages
	if _, err := th.Insert(rec("again", make([]byte, 10*OverflowCapacity), 2)); err != nil {
		t.Fatal(err)
	}
	if got := th.Stats().Pages; got != pages {
		t.Fatalf("a chain of the same size grew the heap from %d to %d pages", pages, got)
	}
	mustCheck(t, th.Heap)
}

func TestHeapStartsANewFileAtTheSizeBound(t *testing.T) {
	const bound = 4
	th := newTestHeap(t, 1024, bound*PageSize)
	for i := range 30 {
		if _, err := th.Insert(rec(fmt.Sprintf("k%d", i), make([]byte, 2000), uint64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	files := th.Files()
	if len(files) < 2 {
		t.Fatalf("%d files", len(files))
	}
	for _, f := range files {
		if f.Pages > bound {
			t.Fatalf("file %08x has %d pages, bound %d", f.ID, f.Pages, bound)
		}
	}
	// A chain larger than the bound gets a file of its own.
	id, err := th.Insert(rec("huge", make([]byte, 3*bound*OverflowCapacity), 99))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range th.Files() {
		if f.ID == id.File && f.LiveRecords != 1 {
			t.Fatalf("the huge record shares file %08x with %d records", f.ID, f.LiveRecords-1)
		}
	}
	mustCheck(t, th.Heap)
	if ids := th.ids.next; int(ids) != len(th.Files()) {
		t.Fatalf("%d ids allocated for %d files", ids, len(th.Files()))
	}
}

func TestHeapOnTheServingLoopNeverReadsAndSaysWhatToLoad(t *testing.T) {
	th := newTestHeap(t, 1024, 0)
	small, err := th.Insert(rec("small", []byte("v"), 1))
	if err != nil {
		t.Fatal(err)
	}
	big, err := th.Insert(rec("big", make([]byte, 3*OverflowCapacity), 2))
	if err != nil {
		t.Fatal(err)
	}
	var files []uint32
	for _, f := range th.Files() {
		files = append(files, f.ID)
	}
	if _, err := th.WriteDirtySync(); err != nil {
		t.Fatal(err)
	}
	th.Close()
	cache := NewCache(1 << 20)
	h, err := Open(Options{Dir: th.dir, Files: files, Cache: cache, FileIDs: th.ids})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()

	// Inserting never needs a read: the page with room is not cached, so
	// the record goes to a new page.
	id, err := h.Insert(rec("new", []byte("v"), 3))
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	if id.PageID() == small.PageID() {
		t.Fatal("insert used a page that is not cached")
	}
	mustCheck(t, h)

	loads := 0
	load := func(id PageID) {
		loads++
		f, err := OpenFile(vfs.Default, th.dir, id.File)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img := make([]byte, PageSize)
		if _, err := f.ReadRaw(id.Page, img); err != nil {
			t.Fatal(err)
		}
		if _, err := cache.AddClean(id, img); err != nil {
			t.Fatal(err)
		}
	}
	// Reading and freeing say which page to load, one at a time, and
	// succeed once everything is resident.
	for tries := 0; ; tries++ {
		err := h.Free(big, 0)
		var nr *NotResidentError
		if errors.As(err, &nr) {
			if !errors.Is(err, ErrNotResident) {
				t.Fatal("NotResidentError is not ErrNotResident")
			}
			if tries > 5 {
				t.Fatal("free keeps asking")
			}
			// Nothing changed while pages were missing.
			if f := cache.Peek(big.PageID()); f != nil && f.Dirty() {
				t.Fatal("a free that failed changed the head page")
			}
			load(nr.Page)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	if loads != 4 {
		t.Fatalf("free loaded %d pages, want the head and 3 chain pages", loads)
	}
	mustCheck(t, h)
	if _, err := h.Read(small, nil); !errors.Is(err, ErrNotResident) {
		t.Fatalf("read of an uncached record: %v", err)
	}
	load(small.PageID())
	if r := mustRead(t, h, small); string(r.Value) != "v" {
		t.Fatalf("value %q", r.Value)
	}
}

func TestBootCountsOverflowPagesNoRecordReachesAsFree(t *testing.T) {
	th := newTestHeap(t, 1024, 0)
	id, err := th.Insert(rec("big", make([]byte, 4*OverflowCapacity), 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := th.Insert(rec("small", []byte("x"), 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := th.WriteDirtySync(); err != nil {
		t.Fatal(err)
	}
	if err := th.Free(id, 3); err != nil {
		t.Fatal(err)
	}
	// Only the head page is dirty: the chain pages stay on disk as they were.
	if d := th.Cache().Stats().Dirty; d != 1 {
		t.Fatalf("%d dirty pages after freeing a chained record, want 1", d)
	}
	h, ix := th.reopen(t, vfs.Default, 64)
	st := h.Stats()
	if st.OverflowPages != 0 || st.LiveRecords != 1 || st.FreePages != st.Pages-1 || len(ix.Keys) != 1 {
		t.Fatalf("after reopen: %+v, %d keys", st, len(ix.Keys))
	}
	mustCheck(t, h)
}

// heapFileBytes returns the content of heap file id.
func heapFileBytes(t *testing.T, dir string, id uint32) []byte {
	t.Helper()
	b, err := os.ReadFile(FilePath(dir, id))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeHeapFile(t *testing.T, dir string, id uint32, b []byte) {
	t.Helper()
	if err := os.WriteFile(FilePath(dir, id), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// openFiles opens the heap in dir made of files.
func openFiles(dir string, files ...uint32) (*Heap, error) {
	return Open(Options{Dir: dir, Files: files, Cache: NewCache(1 << 20), ReadMisses: true})
}

func TestOpenRefusesABrokenChain(t *testing.T) {
	th := newTestHeap(t, 1024, 0)
	id, err := th.Insert(rec("big", make([]byte, 3*OverflowCapacity), 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := th.WriteDirtySync(); err != nil {
		t.Fatal(err)
	}
	th.Close()
	b := heapFileBytes(t, th.dir, id.File)
	// Find the chain's second page and make it claim another owner, with a
	// valid checksum: only the chain check can catch it.
	for no := range len(b) / PageSize {
		img := b[no*PageSize : (no+1)*PageSize]
		if PageType(img[offType]) == PageOverflow && binary.LittleEndian.Uint16(img[ovOffSeq:]) == 1 {
			binary.LittleEndian.PutUint16(img[ovOffOwnerSlot:], 5)
			reseal(img)
		}
	}
	writeHeapFile(t, th.dir, id.File, b)
	_, err = openFiles(th.dir, id.File)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v, want ErrCorrupt", err)
	}
}

func TestOpenRefusesATornPageAndNamesTheFile(t *testing.T) {
	th := newTestHeap(t, 1024, 0)
	id, err := th.Insert(rec("k", []byte("v1"), 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := th.WriteDirtySync(); err != nil {
		t.Fatal(err)
	}
	old := heapFileBytes(t, th.dir, id.File)
	if _, err := th.Insert(rec("k2", []byte("v2"), 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := th.WriteDirtySync(); err != nil {
		t.Fatal(err)
	}
	th.Close()
	cur := heapFileBytes(t, th.dir, id.File)
	// The new version's first half reached the disk, the rest is old.
	torn := append(bytes.Clone(cur[:PageSize/2]), old[PageSize/2:PageSize]...)
	writeHeapFile(t, th.dir, id.File, torn)
	_, err = openFiles(th.dir, id.File)
	var pe *PageError
	if !errors.Is(err, ErrChecksum) || !errors.As(err, &pe) || pe.Page != id.Page {
		t.Fatalf("got %v, want a checksum error for page %d", err, id.Page)
	}
	if want := FileName(id.File); !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Fatalf("error %q does not name %s", err, want)
	}
	// Repairing it from its full-page image makes it readable again.
	f, err := OpenFile(vfs.Default, th.dir, id.File)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.WriteImage(id.Page, bytes.Clone(torn)); err == nil {
		t.Fatal("WriteImage accepted a torn image")
	}
	if err := f.WriteImage(id.Page, cur[:PageSize]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	h, err := openFiles(th.dir, id.File)
	if err != nil {
		t.Fatalf("after repair: %v", err)
	}
	h.Close()
}

func TestOpenRefusesAPartialPageAtTheEndOfAFile(t *testing.T) {
	th := newTestHeap(t, 1024, 0)
	id, err := th.Insert(rec("k", []byte("v"), 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := th.WriteDirtySync(); err != nil {
		t.Fatal(err)
	}
	th.Close()
	writeHeapFile(t, th.dir, id.File, append(heapFileBytes(t, th.dir, id.File), make([]byte, 100)...))
	if _, err := openFiles(th.dir, id.File); !errors.Is(err, ErrShortPage) {
		t.Fatalf("got %v, want ErrShortPage", err)
	}
}

func TestOpenRefusesAMissingLiveFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := openFiles(dir, 3); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v, want NotExist", err)
	}
}

func TestOpenTakesNeverWrittenPagesAsFree(t *testing.T) {
	dir := t.TempDir()
	p := kvPage(t)
	p.Init(PageKV, 1, 3)
	if _, err := p.InsertRecord(head([]byte("k"), []byte("v"), 4), []byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4*PageSize)
	p.EncodeInto(b[3*PageSize:])
	writeHeapFile(t, dir, 1, b)
	h, err := openFiles(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if st := h.Stats(); st.Pages != 4 || st.FreePages != 3 || st.LiveRecords != 1 {
		t.Fatalf("stats %+v", st)
	}
	mustCheck(t, h)
}

func TestOpenRefusesAPageWrittenToTheWrongPlace(t *testing.T) {
	dir := t.TempDir()
	p := kvPage(t, "k") // file 7, page 3
	b := make([]byte, PageSize)
	p.EncodeInto(b)
	writeHeapFile(t, dir, 1, b)
	if _, err := openFiles(dir, 1); !errors.Is(err, ErrWrongPlace) {
		t.Fatalf("got %v, want ErrWrongPlace", err)
	}
}

func TestIndexKeepsTheVersionWithTheHighestKeyLSN(t *testing.T) {
	th := newTestHeap(t, 1024, 0)
	oldID, err := th.Insert(rec("k", []byte("old"), 5))
	if err != nil {
		t.Fatal(err)
	}
	newID, err := th.Insert(rec("k", []byte("new"), 9))
	if err != nil {
		t.Fatal(err)
	}
	older, err := th.Insert(rec("k", []byte("older"), 2))
	if err != nil {
		t.Fatal(err)
	}
	_, ix := th.reopen(t, vfs.Default, 64)
	if e := ix.Keys["k"]; e.ID != newID || e.KeyLSN != 9 {
		t.Fatalf("index keeps %+v, want %v", e, newID)
	}
	slices.SortFunc(ix.Superseded, func(a, b RecordID) int { return int(a.Slot) - int(b.Slot) })
	if want := []RecordID{oldID, older}; !slices.Equal(ix.Superseded, want) {
		t.Fatalf("superseded %v, want %v", ix.Superseded, want)
	}
}

func TestScanVisitsEveryLiveRecordOnce(t *testing.T) {
	th := newTestHeap(t, 8, 8*PageSize)
	want := map[RecordID]string{}
	for i := range 300 {
		id, err := th.Insert(rec(fmt.Sprintf("k%03d", i), make([]byte, i*7), uint64(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		want[id] = fmt.Sprintf("k%03d", i)
		if i%3 == 0 {
			if err := th.Free(id, 0); err != nil {
				t.Fatal(err)
			}
			delete(want, id)
		}
		if i%50 == 0 {
			if _, err := th.WriteDirtySync(); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := map[RecordID]string{}
	err := th.Scan(func(id RecordID, v RecordView) error {
		k, _ := v.Key()
		if _, dup := got[id]; dup {
			return fmt.Errorf("%v twice", id)
		}
		got[id] = string(k)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("scan found %d records, want %d", len(got), len(want))
	}
	for id, k := range want {
		if got[id] != k {
			t.Fatalf("%v: %q, want %q", id, got[id], k)
		}
	}
}

func TestOnlyEmptyFilesCanBeRetired(t *testing.T) {
	th := newTestHeap(t, 1024, 2*PageSize)
	var ids []RecordID
	for i := range 6 {
		id, err := th.Insert(rec(fmt.Sprintf("k%d", i), make([]byte, 3000), uint64(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	first := ids[0].File
	if len(th.EmptyFiles()) != 0 {
		t.Fatalf("empty files %v", th.EmptyFiles())
	}
	if err := th.RetireFile(first); err == nil {
		t.Fatal("retired a file with live records")
	}
	for _, id := range ids {
		if id.File == first {
			if err := th.Free(id, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := th.EmptyFiles(); !slices.Equal(got, []uint32{first}) {
		t.Fatalf("empty files %v, want [%d]", got, first)
	}
	if err := th.RetireFile(first); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, th.Heap)
	for i := range 20 {
		id, err := th.Insert(rec(fmt.Sprintf("n%d", i), make([]byte, 100), uint64(10+i)))
		if err != nil {
			t.Fatal(err)
		}
		if id.File == first {
			t.Fatal("a record was placed in a retired file")
		}
	}
	for _, f := range th.Cache().AppendDirty(nil) {
		if f.ID().File == first {
			t.Fatal("a retired file's page is still dirty in the cache")
		}
	}
}

func TestVanishedFileKeepsCachedRecordsReadableAndTakesNoNewOnes(t *testing.T) {
	th := newTestHeap(t, 1024, 2*PageSize)
	var ids []RecordID
	for i := range 8 {
		id, err := th.Insert(rec(fmt.Sprintf("k%d", i), make([]byte, 1500), uint64(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := th.WriteDirtySync(); err != nil {
		t.Fatal(err)
	}
	gone := ids[0].File
	if err := th.Free(ids[1], 20); err != nil { // a dirty page in the file
		t.Fatal(err)
	}
	if dropped := th.FileVanished(gone, false); dropped != 1 {
		t.Fatalf("dropped %d dirty pages, want 1", dropped)
	}
	if r := mustRead(t, th.Heap, ids[0]); r.KeyLSN != 1 {
		t.Fatalf("cached record of a vanished file: %+v", r)
	}
	if err := th.Free(ids[0], 0); err != nil {
		t.Fatalf("freeing a record of a vanished file: %v", err)
	}
	if th.Stats().FreesOfVanished != 1 {
		t.Fatal("free of a vanished record not counted")
	}
	th.Cache().Drop(ids[0].PageID())
	if _, err := th.Read(ids[0], nil); !errors.Is(err, ErrFileVanished) {
		t.Fatalf("uncached record of a vanished file: %v", err)
	}
	for i := range 20 {
		id, err := th.Insert(rec(fmt.Sprintf("n%d", i), make([]byte, 100), uint64(30+i)))
		if err != nil {
			t.Fatal(err)
		}
		if id.File == gone {
			t.Fatal("a record was placed in a vanished file")
		}
	}
	mustCheck(t, th.Heap)
	if cs := th.Cache().Stats(); cs.VanishedUnexpected != 1 || cs.VanishedRetired != 0 || cs.DroppedDirty != 1 {
		t.Fatalf("cache stats %+v", cs)
	}
}

func TestWriteDirtySyncFailsWhenAFileCannotBeSynced(t *testing.T) {
	dir := t.TempDir() + "/heap"
	ff := vfs.NewFaulty(vfs.Default)
	ff.Add(vfs.EIOOnSync("heap-*.dat"))
	h, err := Open(Options{FS: ff, Dir: dir, Cache: NewCache(1 << 20), ReadMisses: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Insert(rec("k", []byte("v"), 1)); err != nil {
		t.Fatal(err)
	}
	_, err = h.WriteDirtySync()
	if !vfs.IsSyncFailure(err) {
		t.Fatalf("got %v, want a sync failure", err)
	}
	if h.Cache().Stats().Dirty != 1 {
		t.Fatal("a page whose file was not synced was marked clean")
	}
}

func TestInsertRejectsRecordsOutsideTheLimits(t *testing.T) {
	th := newTestHeap(t, 16, 0)
	if _, err := th.Insert(Record{Key: []byte("k"), KeyLSN: 0}); err == nil {
		t.Fatal("accepted key LSN 0")
	}
	if th.Stats().Pages != 0 {
		t.Fatal("a refused insert took a page")
	}
}

func TestFileNamesRoundTrip(t *testing.T) {
	for _, id := range []uint32{1, 0xabc, 0xffffffff} {
		got, ok := ParseFileName(FileName(id))
		if !ok || got != id {
			t.Fatalf("%d → %s → %d, %v", id, FileName(id), got, ok)
		}
	}
	for _, bad := range []string{"heap-00000000.dat", "heap-0000000A.dat", "heap-1.dat", "heap-00000001.dat.tmp", "wal-00000001.dat"} {
		if _, ok := ParseFileName(bad); ok {
			t.Fatalf("parsed %q", bad)
		}
	}
	if PageOffset(3) != 3*PageSize {
		t.Fatal("PageOffset")
	}
}

func TestListFilesReturnsHeapFilesOnlyAscending(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{FileName(3), FileName(1), "junk", FileName(2) + ".tmp"} {
		if err := os.WriteFile(dir+"/"+name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ListFiles(vfs.Default, dir)
	if err != nil || !slices.Equal(got, []uint32{1, 3}) {
		t.Fatalf("%v, %v", got, err)
	}
	if got, err := ListFiles(vfs.Default, dir+"/missing"); err != nil || got != nil {
		t.Fatalf("missing directory: %v, %v", got, err)
	}
}

// TestFileRecordHeadReadsTheKeyLSNFromDisk: boot tells two versions of a
// key apart by the key LSN it reads back from the file; a record of
// another file or a dead slot is an error, not a zero LSN.
func TestFileRecordHeadReadsTheKeyLSNFromDisk(t *testing.T) {
	th := newTestHeap(t, 64, 0)
	id, err := th.Insert(rec("k", []byte("v"), 42))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := th.WriteDirtySync(); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(vfs.Default, th.dir, id.File)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if h, err := f.RecordHead(id); err != nil || h.KeyLSN != 42 || h.KeyLen != 1 {
		t.Fatalf("RecordHead(%v) = %+v, %v; want key LSN 42", id, h, err)
	}
	other := id
	other.File++
	if _, err := f.RecordHead(other); err == nil {
		t.Fatalf("RecordHead of a record in another file succeeded")
	}
	dead := id
	dead.Slot++
	if _, err := f.RecordHead(dead); err == nil {
		t.Fatalf("RecordHead of an unused slot succeeded")
	}
}
