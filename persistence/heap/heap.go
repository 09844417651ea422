package heap

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"

	"github.com/moond-db/moond/persistence/vfs"
)

// DefaultMaxFileSize is the size at which a heap file stops growing and
// the next page goes to a new file.
const DefaultMaxFileSize = 64 << 20

// RecordID names a record: the file, the page and the slot of its head.
// It is stable until the record is freed: compaction moves bytes within a
// page, never records between slots.
type RecordID struct {
	File uint32
	Page uint32
	Slot uint16
}

// PageID is the page that holds the record's head.
func (r RecordID) PageID() PageID { return PageID{r.File, r.Page} }

func (r RecordID) String() string { return fmt.Sprintf("%08x:%d/%d", r.File, r.Page, r.Slot) }

// FileIDAllocator hands out heap file ids: the manifest, whose counter
// never moves back. An id it returns is registered (live) in it.
type FileIDAllocator interface {
	AllocateFileID() (uint32, error)
}

// ErrNotResident is what an operation that needs a page that is not in the
// cache returns when the heap does not read misses itself (Options.
// ReadMisses is false, as on the serving loop). The error is a
// *NotResidentError naming the page: load it (Cache.AddClean) and retry.
// Operations that fail with it change nothing.
var ErrNotResident = errors.New("heap: page not resident")

// NotResidentError names the page an operation needs loaded.
type NotResidentError struct{ Page PageID }

func (e *NotResidentError) Error() string {
	return fmt.Sprintf("heap: page %v not resident", e.Page)
}

// Is makes errors.Is(err, ErrNotResident) hold.
func (e *NotResidentError) Is(target error) bool { return target == ErrNotResident }

// ErrFileVanished is returned when a record's page is not cached and its
// file vanished: the record cannot be read (a cold key whose heap file is
// missing is an error, never a nil).
var ErrFileVanished = errors.New("heap: heap file vanished")

// Options configures Open.
type Options struct {
	FS  vfs.FS // vfs.Default when nil
	Dir string // the shard's heap directory, <shard dir>/heap
	// Files are the live heap files (the manifest's): Open reads every
	// page of each, builds the free-space map and reports every live
	// record to OnRecord. Tombstoned and unregistered files are not
	// listed.
	Files []uint32
	// Cache holds the heap's pages in memory. Required.
	Cache *Cache
	// MaxFileSize bounds a file's size (DefaultMaxFileSize when 0); a
	// file reaching it gets no new pages, except a record whose overflow
	// chain alone exceeds it, which gets a file of its own.
	MaxFileSize int64
	// FileIDs allocates ids for new files (the manifest). When nil the
	// heap counts from past the highest id in Files: tests and tools only.
	FileIDs FileIDAllocator
	// ReadMisses makes operations read pages that are not cached through
	// FS, synchronously: boot, tools and tests. On the serving loop it is
	// false, and such operations fail with a *NotResidentError.
	ReadMisses bool
	// OnRecord, when set, receives every live record Open finds, in file
	// and page order: the boot-time load of the keyspace index. The
	// record is valid only during the call. An error stops Open and is
	// returned.
	OnRecord func(*ScanRecord) error
}

// Heap places records in pages of heap files, reads them back and frees
// them, through the page cache, and keeps the free-space map. It never
// writes a file itself (except WriteDirtySync, the reference path for tests
// and tools): changed pages are marked dirty in the cache, and the
// checkpoint writes them.
//
// # Deferred free
//
// When a key gets a new version, the checkpoint inserts it and the old
// version stays live in its slot until the checkpoint that wrote the new
// one has finalized: only then does the caller Free the old RecordID (see
// DeferredFrees). So at every crash point each key has a whole copy in the
// durable heap or is rebuilt from the WAL above the redo point. Until the
// free's page is written, both versions can be on disk: boot keeps the one
// with the higher key LSN (see Index).
//
// A key that was deleted has no new version: the checkpoint that covers the
// deletion frees its record right away (Free with the deletion's LSN), so
// the deletion reaches the disk in that checkpoint; if the checkpoint does
// not finalize, the deletion is in the WAL above the redo point.
//
// Not safe for concurrent use: the shard's loop thread owns it.
type Heap struct {
	fsys       vfs.FS
	dir        string
	cache      *Cache
	space      *space
	handles    map[uint32]*File
	maxPages   int
	ids        FileIDAllocator
	nextLocal  uint32
	readMisses bool
	active     uint32 // the file new pages go to; 0 for none
	dirMade    bool

	chain []uint32 // scratch: the pages of a chain being freed
	buf   []byte   // scratch: one page read from a file
	stats Stats
}

// Stats are the heap's figures.
type Stats struct {
	Files         int   // live files
	Pages         int   // pages in them
	FreePages     int   // of them, holding nothing live
	OverflowPages int   // of them, in live chains
	LiveRecords   int   // records
	Bytes         int64 // Pages × PageSize
	// FreesOfVanished counts Free calls for records whose file vanished
	// (nothing to free).
	FreesOfVanished int64
}

// FileStat describes one heap file.
type FileStat struct {
	ID            uint32
	Pages         int
	FreePages     int
	OverflowPages int
	LiveRecords   int
	Vanished      bool
}

// Open opens the heap in o.Dir made of the files o.Files: it reads every
// page of each (once, sequentially, bypassing the cache), verifies it, and
// builds the free-space map; it verifies every overflow chain and counts
// overflow pages that no record reaches as free. It reports every live
// record to o.OnRecord.
//
// Pages must be valid when Open runs: torn pages are repaired from their
// full-page images first (File.WriteImage). A page that fails validation
// (other than one never written), a partial page at the end of a file, or
// a listed file that does not exist fails Open with an error that names
// the file (and the page: *PageError).
func Open(o Options) (*Heap, error) {
	if o.Cache == nil {
		return nil, errors.New("heap: Open without a page cache")
	}
	fsys := o.FS
	if fsys == nil {
		fsys = vfs.Default
	}
	maxSize := o.MaxFileSize
	if maxSize == 0 {
		maxSize = DefaultMaxFileSize
	}
	if maxSize < PageSize {
		return nil, fmt.Errorf("heap: MaxFileSize %d is less than a page", maxSize)
	}
	h := &Heap{
		fsys:       fsys,
		dir:        o.Dir,
		cache:      o.Cache,
		space:      newSpace(),
		handles:    make(map[uint32]*File),
		maxPages:   int(min(maxSize/PageSize, int64(MaxPages))),
		ids:        o.FileIDs,
		readMisses: o.ReadMisses,
	}
	files := slices.Clone(o.Files)
	slices.Sort(files)
	for i, id := range files {
		if id == 0 || (i > 0 && files[i-1] == id) {
			return nil, fmt.Errorf("heap: Open with file id %d listed twice or zero", id)
		}
	}
	for _, id := range files {
		if err := h.load(id, o.OnRecord); err != nil {
			h.Close()
			return nil, err
		}
		h.active = id
		h.nextLocal = id + 1
	}
	if h.nextLocal == 0 {
		h.nextLocal = 1
	}
	return h, nil
}

// Close closes the heap's file handles. The cache is the caller's.
func (h *Heap) Close() error {
	var first error
	for id, f := range h.handles {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
		delete(h.handles, id)
	}
	return first
}

// Cache is the heap's page cache.
func (h *Heap) Cache() *Cache { return h.cache }

// Insert places a new record and returns its id. A record whose key and
// value fit in a slot (MaxInline bytes together) goes to the fullest
// slotted page with room (best fit), or a new page; a larger one takes a
// whole page for its head (the key and as much of the value as fits) and
// a chain of overflow pages, all in one file. Every page it changes is
// marked dirty in the cache. The page LSN of each is raised to
// r.KeyLSN.
//
// On the serving loop (ReadMisses false) it only uses slotted pages that
// are cached, so it never fails with ErrNotResident. Insert copies the key
// and the value.
func (h *Heap) Insert(r Record) (RecordID, error) {
	switch {
	case r.KeyLSN == 0:
		return RecordID{}, errors.New("heap: insert record with key LSN 0")
	case len(r.Key) > MaxKeyLen:
		return RecordID{}, fmt.Errorf("heap: insert record: key of %d bytes exceeds %d", len(r.Key), MaxKeyLen)
	case uint64(len(r.Value)) > MaxValueLen:
		return RecordID{}, fmt.Errorf("heap: insert record: value of %d bytes exceeds %d", len(r.Value), uint64(MaxValueLen))
	}
	head := RecordHead{Kind: r.Kind, Expiry: r.Expiry, KeyLSN: r.KeyLSN,
		KeyLen: uint32(len(r.Key)), ValueLen: uint64(len(r.Value)), Overflow: NoPage}
	if total := len(r.Key) + len(r.Value); total <= MaxInline {
		return h.insertInline(head, r.Key, r.Value)
	}
	return h.insertChained(head, r.Key, r.Value)
}

func (h *Heap) insertInline(head RecordHead, key, value []byte) (RecordID, error) {
	size := recordSize(head, len(key)+len(value))
	pid := h.space.find(size, h.active, h.placeable)
	var f *Frame
	if pid.Page != NoPage {
		var err error
		if f, err = h.frame(pid); err != nil {
			return RecordID{}, err
		}
	} else {
		var err error
		if pid, err = h.wholePage(); err != nil {
			return RecordID{}, err
		}
		f = h.cache.AddNew(pid, PageKV, 0)
	}
	slot, err := f.Page.InsertRecord(head, key, value)
	if err != nil {
		// The free-space map said it fits: the map and the page disagree.
		panic(fmt.Sprintf("heap: page %v with room %d refused a %d-byte record: %v", pid, f.Page.Room(), size, err))
	}
	h.cache.MarkDirty(f)
	fs := h.space.files[pid.File]
	h.space.setKV(fs, pid.Page, f.Page.Room())
	fs.liveRecords++
	return RecordID{pid.File, pid.Page, slot}, nil
}

// headInline is how many bytes of key‖value a chained record keeps in its
// slot: its page is its own, so it fills it.
const headInline = MaxRecordSize - RecordHeaderSize - 4

func (h *Heap) insertChained(head RecordHead, key, value []byte) (RecordID, error) {
	total := uint64(len(key)) + uint64(len(value))
	pages := chainPages(total - headInline)
	if pages+1 > uint64(MaxPages) {
		return RecordID{}, fmt.Errorf("heap: insert record: %d bytes need more pages than a file holds", total)
	}
	fs, err := h.fileForChain(int(pages) + 1)
	if err != nil {
		return RecordID{}, err
	}
	headNo := h.takePage(fs)
	h.chain = h.chain[:0]
	for range pages {
		h.chain = append(h.chain, h.takePage(fs))
	}
	head.Overflow = h.chain[0]
	hf := h.cache.AddNew(PageID{fs.id, headNo}, PageKV, 0)
	kp, vp := span(key, value, 0, headInline)
	slot, err := hf.Page.InsertRecord(head, kp, vp)
	if err != nil {
		panic(fmt.Sprintf("heap: empty page %08x:%d refused a chained record's head: %v", fs.id, headNo, err))
	}
	h.cache.MarkDirty(hf)
	h.space.setKV(fs, headNo, hf.Page.Room())
	fs.liveRecords++
	for i, no := range h.chain {
		from := headInline + i*OverflowCapacity
		to := min(from+OverflowCapacity, int(total))
		next := NoPage
		if i+1 < len(h.chain) {
			next = h.chain[i+1]
		}
		a, b := span(key, value, from, to)
		of := h.cache.AddNew(PageID{fs.id, no}, PageOverflow, 0)
		of.Page.InitOverflow(fs.id, no, OverflowHeader{Next: next, Len: uint32(to - from),
			OwnerPage: headNo, OwnerSlot: slot, Seq: uint16(i)}, head.KeyLSN, a, b)
		h.cache.MarkDirty(of)
		h.space.setOverflow(fs, no)
		fs.overflowPages++
	}
	return RecordID{fs.id, headNo, slot}, nil
}

// placeable says whether a slotted page can take a record now: it is
// cached, or misses are read.
func (h *Heap) placeable(id PageID) bool { return h.readMisses || h.cache.Resident(id) }

// wholePage finds a page that holds nothing: a free page of the active
// file, of any other file, a new page at the end of the active file, or
// the first page of a new file.
func (h *Heap) wholePage() (PageID, error) {
	if fs := h.activeFile(); fs != nil {
		if no := h.space.takeFree(fs); no != NoPage {
			return PageID{fs.id, no}, nil
		}
	}
	for _, id := range h.space.withFree.ids {
		fs := h.space.files[id]
		if no := h.space.takeFree(fs); no != NoPage {
			return PageID{id, no}, nil
		}
	}
	fs := h.activeFile()
	if fs == nil || len(fs.pages) >= h.maxPages {
		var err error
		if fs, err = h.newFile(); err != nil {
			return PageID{}, err
		}
	}
	return PageID{fs.id, fs.grow(1)}, nil
}

// fileForChain finds a file that can take n whole pages: the active file
// (from its free pages and by growing up to the size bound; an empty file
// takes any chain), another file with n free pages, or a new file.
func (h *Heap) fileForChain(n int) (*fileSpace, error) {
	if fs := h.activeFile(); fs != nil {
		if len(fs.pages) == 0 || len(fs.free)+max(h.maxPages-len(fs.pages), 0) >= n {
			return fs, nil
		}
	}
	for _, id := range h.space.withFree.ids {
		if fs := h.space.files[id]; len(fs.free) >= n {
			return fs, nil
		}
	}
	return h.newFile()
}

// takePage takes a free page of fs, or grows it by one.
func (h *Heap) takePage(fs *fileSpace) uint32 {
	if no := h.space.takeFree(fs); no != NoPage {
		return no
	}
	return fs.grow(1)
}

func (h *Heap) activeFile() *fileSpace {
	fs := h.space.files[h.active]
	if fs == nil || fs.closed {
		return nil
	}
	return fs
}

// newFile starts a new file, with no pages, and makes it the active one.
func (h *Heap) newFile() (*fileSpace, error) {
	var id uint32
	if h.ids != nil {
		var err error
		if id, err = h.ids.AllocateFileID(); err != nil {
			return nil, fmt.Errorf("heap: allocate a file id: %w", err)
		}
	} else {
		id = h.nextLocal
		h.nextLocal++
	}
	if id == 0 || h.space.files[id] != nil {
		return nil, fmt.Errorf("heap: file id allocator returned %d, which is in use or invalid", id)
	}
	fs := h.space.addFile(id)
	h.active = id
	return fs, nil
}

// frame returns the cached frame of page id, reading it when it is not
// cached and misses are read.
func (h *Heap) frame(id PageID) (*Frame, error) {
	if f := h.cache.Lookup(id); f != nil {
		return f, nil
	}
	fs := h.space.files[id.File]
	if fs == nil {
		return nil, fmt.Errorf("heap: page %v: %w (no such file)", id, ErrNoRecord)
	}
	if vanished, _ := h.cache.Vanished(id.File); vanished {
		return nil, fmt.Errorf("heap: page %v: %w", id, ErrFileVanished)
	}
	if !h.readMisses {
		return nil, &NotResidentError{id}
	}
	if int(id.Page) >= len(fs.pages) {
		return nil, fmt.Errorf("heap: page %v beyond the file's %d pages", id, len(fs.pages))
	}
	file, err := h.handle(id.File, false)
	if err != nil {
		return nil, err
	}
	if h.buf == nil {
		h.buf = make([]byte, PageSize)
	}
	n, err := file.ReadRaw(id.Page, h.buf)
	if err != nil {
		return nil, err
	}
	if n != 1 {
		return nil, fmt.Errorf("heap: read %s: %w", file.Path(), pageErr(id.File, id.Page, ErrShortPage, "beyond the end of the file"))
	}
	f, err := h.cache.AddClean(id, h.buf)
	if err != nil {
		return nil, fmt.Errorf("heap: read %s: %w", file.Path(), err)
	}
	return f, nil
}

// overflowStep reads chain pages through the cache.
func (h *Heap) overflowStep(file uint32) chainStep {
	return pageStep(file, func(no uint32) (*Page, error) {
		if fs := h.space.files[file]; fs == nil || int(no) >= len(fs.pages) {
			return nil, pageErr(file, no, ErrCorrupt, "overflow chain reaches beyond the end of the file")
		}
		f, err := h.frame(PageID{file, no})
		if err != nil {
			return nil, err
		}
		return f.Page, nil
	})
}

// record returns the frame and the view of the record at id.
func (h *Heap) record(id RecordID) (*Frame, RecordView, error) {
	fs := h.space.files[id.File]
	if fs == nil || int(id.Page) >= len(fs.pages) {
		return nil, RecordView{}, fmt.Errorf("heap: record %v: %w (no such page)", id, ErrNoRecord)
	}
	if fs.pages[id.Page].kind != pkKV {
		return nil, RecordView{}, fmt.Errorf("heap: record %v: %w (not a slotted page)", id, ErrNoRecord)
	}
	f, err := h.frame(id.PageID())
	if err != nil {
		return nil, RecordView{}, err
	}
	v, err := f.Page.Record(int(id.Slot))
	if err != nil {
		return nil, RecordView{}, fmt.Errorf("heap: record %v: %w", id, err)
	}
	return f, v, nil
}

// Read returns the record at id, its key and value copied into buf (reused
// when it is large enough): Key and Value alias buf.
func (h *Heap) Read(id RecordID, buf []byte) (Record, error) {
	_, v, err := h.record(id)
	if err != nil {
		return Record{}, err
	}
	total := v.total()
	if uint64(cap(buf)) < total {
		buf = make([]byte, 0, total)
	}
	buf, err = appendSpan(buf[:0], id, v, h.overflowStep(id.File), 0, total)
	if err != nil {
		return Record{}, fmt.Errorf("heap: read record %v: %w", id, err)
	}
	return Record{Key: buf[:v.KeyLen:v.KeyLen], Kind: v.Kind, Expiry: v.Expiry, KeyLSN: v.KeyLSN, Value: buf[v.KeyLen:]}, nil
}

// ReadThrough is Read that reads the pages missing from the cache from
// their file, synchronously, whatever Options.ReadMisses says: a cold
// value needed where its reader cannot wait for the ring (a step under a
// transaction's hold). The pages it reads stay cached, clean.
func (h *Heap) ReadThrough(id RecordID, buf []byte) (Record, error) {
	prev := h.readMisses
	h.readMisses = true
	defer func() { h.readMisses = prev }()
	return h.Read(id, buf)
}

// Head returns what the record at id says about itself, without its bytes.
func (h *Heap) Head(id RecordID) (RecordHead, error) {
	_, v, err := h.record(id)
	return v.RecordHead, err
}

// Free deletes the record at id and releases its overflow pages. lsn is
// the LSN of the change that killed the record when it was deleted (the
// page LSN is raised to it); 0 when it was superseded by a newer version.
//
// Call it for a superseded version only after the checkpoint that holds
// the new version has finalized (deferred free; see DeferredFrees), and
// for a deleted key in the checkpoint that covers the deletion.
//
// It finds and checks every page first and changes nothing when one is
// missing (*NotResidentError) or damaged. A record whose file vanished is
// not there to free: Free returns nil (and counts it).
func (h *Heap) Free(id RecordID, lsn uint64) error {
	if vanished, _ := h.cache.Vanished(id.File); vanished {
		h.stats.FreesOfVanished++
		return nil
	}
	f, v, err := h.record(id)
	if err != nil {
		return err
	}
	h.cache.Pin(f)
	defer h.cache.Unpin(f)
	h.chain = h.chain[:0]
	if v.Overflow != NoPage {
		err := walkChain(id, v.Overflow, v.ChainBytes(), h.overflowStep(id.File), func(no uint32, _ []byte) (bool, error) {
			if pi := h.space.files[id.File].pages[no]; pi.kind != pkOverflow {
				return false, pageErr(id.File, no, ErrCorrupt, "chain page of kind %d", pi.kind)
			}
			h.chain = append(h.chain, no)
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("heap: free record %v: %w", id, err)
		}
	}
	fs := h.space.files[id.File]
	if err := f.Page.DeleteRecord(int(id.Slot)); err != nil {
		panic(fmt.Sprintf("heap: delete of the record just read at %v: %v", id, err))
	}
	f.Page.RaiseLSN(lsn)
	if f.Page.SlotCount() == 0 {
		plsn := f.Page.LSN()
		f.Page.Init(PageFree, id.File, id.Page)
		f.Page.RaiseLSN(plsn)
		h.space.setFree(fs, id.Page)
	} else {
		h.space.setKV(fs, id.Page, f.Page.Room())
	}
	h.cache.MarkDirty(f)
	fs.liveRecords--
	for _, no := range h.chain {
		h.space.setFree(fs, no)
		fs.overflowPages--
		h.cache.Drop(PageID{id.File, no})
	}
	return nil
}

// Scan calls fn for every live record of every live file, in file and page
// order, reading pages through the cache (a *NotResidentError stops it when
// a page is not cached and misses are not read). The view aliases the page and is
// valid only during the call; fn must not change the heap (collect ids and
// act after Scan returns). Read gives a record's whole value.
func (h *Heap) Scan(fn func(RecordID, RecordView) error) error {
	for _, id := range h.fileIDs() {
		fs := h.space.files[id]
		if fs.closed {
			continue
		}
		for no := range fs.pages {
			if fs.pages[no].kind != pkKV {
				continue
			}
			f, err := h.frame(PageID{id, uint32(no)})
			if err != nil {
				return err
			}
			for slot := range f.Page.SlotCount() {
				v, err := f.Page.Record(slot)
				if errors.Is(err, ErrNoRecord) {
					continue
				}
				if err != nil {
					return err
				}
				if err := fn(RecordID{id, uint32(no), uint16(slot)}, v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (h *Heap) fileIDs() []uint32 {
	ids := make([]uint32, 0, len(h.space.files))
	for id := range h.space.files {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Files describes every file of the heap, vanished ones included, by id.
func (h *Heap) Files() []FileStat {
	var out []FileStat
	for _, id := range h.fileIDs() {
		fs := h.space.files[id]
		vanished, _ := h.cache.Vanished(id)
		out = append(out, FileStat{ID: id, Pages: len(fs.pages), FreePages: len(fs.free),
			OverflowPages: fs.overflowPages, LiveRecords: fs.liveRecords, Vanished: vanished})
	}
	return out
}

// EmptyFiles lists the files that hold no live record (nor chain): the
// candidates for a tombstone in the manifest, then RetireFile.
func (h *Heap) EmptyFiles() []uint32 {
	var out []uint32
	for _, id := range h.fileIDs() {
		fs := h.space.files[id]
		if fs.liveRecords == 0 && fs.overflowPages == 0 && !fs.closed {
			out = append(out, id)
		}
	}
	return out
}

// RetireFile takes an empty file out of the heap for good: nothing is
// placed in it again, its pages leave the cache (dirty ones unwritten:
// they only record deaths) and its handle is closed. The caller has
// tombstoned it in the manifest and unlinks it after the checkpoint that
// commits the tombstone.
func (h *Heap) RetireFile(id uint32) error {
	fs := h.space.files[id]
	if fs == nil {
		return fmt.Errorf("heap: retire file %08x: not in the heap", id)
	}
	if fs.liveRecords != 0 || fs.overflowPages != 0 {
		return fmt.Errorf("heap: retire file %08x: %d live records and %d chain pages remain", id, fs.liveRecords, fs.overflowPages)
	}
	h.space.closeFile(fs)
	delete(h.space.files, id)
	h.cache.DropFile(id)
	h.closeHandle(id)
	if h.active == id {
		h.active = 0
	}
	return nil
}

// FileVanished handles a heap file found missing (NotFound): nothing is
// placed in it again, its cached pages lose their dirty and FPI flags and
// stay readable (Cache.FileVanished), and freeing its records does
// nothing. retired is what the manifest says: the file was no longer
// live. The records it held are lost to the heap; an unexpected loss
// (retired false) is the caller's to report, and its keys are the
// caller's to write again. It returns how many dirty pages were dropped.
func (h *Heap) FileVanished(id uint32, retired bool) int {
	dropped := h.cache.FileVanished(id, retired)
	if fs := h.space.files[id]; fs != nil && !fs.closed {
		h.space.closeFile(fs)
	}
	h.closeHandle(id)
	if h.active == id {
		h.active = 0
	}
	return dropped
}

// Stats returns the heap's figures.
func (h *Heap) Stats() Stats {
	s := h.stats
	for id, fs := range h.space.files {
		if vanished, _ := h.cache.Vanished(id); vanished {
			continue
		}
		s.Files++
		s.Pages += len(fs.pages)
		s.FreePages += len(fs.free)
		s.OverflowPages += fs.overflowPages
		s.LiveRecords += fs.liveRecords
	}
	s.Bytes = int64(s.Pages) * PageSize
	return s
}

// handle returns the open File for id, opening it (or, with create, creating
// it when it does not exist yet).
func (h *Heap) handle(id uint32, create bool) (*File, error) {
	if f := h.handles[id]; f != nil {
		return f, nil
	}
	f, err := OpenFile(h.fsys, h.dir, id)
	if err != nil && create && errors.Is(err, fs.ErrNotExist) {
		if err := h.ensureDir(); err != nil {
			return nil, err
		}
		f, err = CreateFile(h.fsys, h.dir, id)
	}
	if err != nil {
		return nil, err
	}
	h.handles[id] = f
	return f, nil
}

func (h *Heap) closeHandle(id uint32) {
	if f := h.handles[id]; f != nil {
		_ = f.Close()
		delete(h.handles, id)
	}
}

// ensureDir creates the heap directory when it is missing and makes its
// entry durable in the shard directory.
func (h *Heap) ensureDir() error {
	if h.dirMade {
		return nil
	}
	if _, err := h.fsys.Stat(h.dir); err != nil {
		if err := h.fsys.MkdirAll(h.dir, 0o755); err != nil {
			return fmt.Errorf("heap: create heap directory: %w", err)
		}
		if err := vfs.SyncDir(h.fsys, filepath.Dir(h.dir)); err != nil {
			return err
		}
	}
	h.dirMade = true
	return nil
}

// WriteDirtySync writes every dirty page to its file (creating files that do
// not exist yet), fsyncs every file it wrote, and marks the pages clean. It
// is the synchronous reference path for tests and tools, not the
// checkpoint: it logs no full-page images (it clears FPIPending as if it
// had) and takes no WAL barrier. It returns how many pages it wrote.
func (h *Heap) WriteDirtySync() (int, error) {
	frames := h.cache.AppendDirty(nil)
	versions := make([]uint64, len(frames))
	written := make(map[uint32]*File)
	for i, f := range frames {
		file, err := h.handle(f.id.File, true)
		if err != nil {
			return 0, err
		}
		if f.FPIPending() {
			h.cache.FPILogged(f, 0)
		}
		versions[i] = h.cache.BeginWrite(f)
		if err := file.WritePage(f.Page); err != nil {
			return 0, err
		}
		written[f.id.File] = file
	}
	for _, id := range slices.Sorted(maps.Keys(written)) {
		if err := written[id].Sync(); err != nil {
			return 0, err
		}
	}
	for i, f := range frames {
		h.cache.WriteDone(f, versions[i])
	}
	return len(frames), nil
}
