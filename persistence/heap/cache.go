package heap

import (
	"fmt"
	"strings"
)

// PageID names a page of the heap: a file id and a page number in it.
type PageID struct {
	File uint32
	Page uint32
}

func (id PageID) String() string { return fmt.Sprintf("%08x:%d", id.File, id.Page) }

// Flags are a cached page's state bits.
type Flags uint8

const (
	// Dirty: the page in memory differs from the page on disk; it must be
	// written before the checkpoint that covers its changes can finalize.
	// A dirty page is never evicted.
	Dirty Flags = 1 << iota
	// FPIPending: the page is dirty and has not been written since the
	// current checkpoint cycle began, so a full-page image must be appended
	// to the WAL (and be durable) before it is written: a torn write of it
	// is then repairable.
	FPIPending
)

func (f Flags) String() string {
	if f == 0 {
		return "clean"
	}
	var parts []string
	if f&Dirty != 0 {
		parts = append(parts, "dirty")
	}
	if f&FPIPending != 0 {
		parts = append(parts, "fpi-pending")
	}
	if rest := f &^ (Dirty | FPIPending); rest != 0 {
		parts = append(parts, fmt.Sprintf("Flags(%#x)", uint8(rest)))
	}
	return strings.Join(parts, "|")
}

// Frame is a page resident in the cache with its state. Page is the page
// itself: whoever changes it calls Cache.MarkDirty in the same loop step.
// A *Frame stays valid while it is resident; pin it (Cache.Pin) to hold it
// across steps that may evict. An evicted frame's Page goes back to the
// cache for a later page's bytes (Page is nil from then on), so neither
// may be kept past the step without a pin.
//
// Page is an allocation of its own, free of pointers: the collector marks
// it without scanning its bytes, and it fits the allocator's 4 KiB size
// class exactly.
type Frame struct {
	Page *Page

	id       PageID
	flags    Flags
	version  uint64 // bumped by every MarkDirty; see WriteDone
	fpiCycle uint64 // the cycle whose full-page image was logged; 0 for none
	fpiLSN   uint64 // the LSN of that image
	pins     int32
	vanished bool // its file vanished: clean, readable, never dirty again
	ref      bool // looked up since eviction last passed it (second chance)

	list       listID // the list the frame is on
	prev, next *Frame
}

// ID is the page the frame holds.
func (f *Frame) ID() PageID { return f.id }

// Flags is the frame's state.
func (f *Frame) Flags() Flags { return f.flags }

// Dirty reports whether the page must be written.
func (f *Frame) Dirty() bool { return f.flags&Dirty != 0 }

// FPIPending reports whether a full-page image must be logged before the
// page is written.
func (f *Frame) FPIPending() bool { return f.flags&FPIPending != 0 }

// FPILSN is the LSN of the page's last full-page image (0 for none). A
// write of the page waits for the WAL to be durable through it, also when
// the image was appended by an earlier attempt whose barrier failed.
func (f *Frame) FPILSN() uint64 { return f.fpiLSN }

// Version identifies the page's content: it changes with every MarkDirty.
// BeginWrite returns it.
func (f *Frame) Version() uint64 { return f.version }

// Pinned reports whether the frame is pinned.
func (f *Frame) Pinned() bool { return f.pins > 0 }

type listID uint8

const (
	onNone  listID = iota // pinned and clean: not evictable
	onClean               // clean and unpinned: evictable, LRU order
	onDirty               // dirty, in the order it became dirty
)

// frameList is an intrusive doubly linked list of frames.
type frameList struct {
	id         listID
	head, tail *Frame // head: most recently added
	n          int
}

func (l *frameList) pushFront(f *Frame) {
	if f.list != onNone || f.prev != nil || f.next != nil {
		panic(fmt.Sprintf("heap: page %v pushed on a list while on list %d", f.id, f.list))
	}
	f.list = l.id
	f.next = l.head
	if l.head != nil {
		l.head.prev = f
	} else {
		l.tail = f
	}
	l.head = f
	l.n++
}

func (l *frameList) remove(f *Frame) {
	if f.list != l.id {
		panic(fmt.Sprintf("heap: page %v removed from list %d while on list %d", f.id, l.id, f.list))
	}
	if f.prev != nil {
		f.prev.next = f.next
	} else {
		l.head = f.next
	}
	if f.next != nil {
		f.next.prev = f.prev
	} else {
		l.tail = f.prev
	}
	f.prev, f.next, f.list = nil, nil, onNone
	l.n--
}

// CacheStats are the page cache's figures.
type CacheStats struct {
	Resident    int   // pages in memory
	Dirty       int   // of them dirty
	BudgetPages int   // the bound: --pagecache-size in pages
	Hits        int64 // Lookup found the page
	Misses      int64 // Lookup did not
	Evictions   int64 // clean pages dropped to stay within the budget
	// OverBudget is set while dirty and pinned pages alone exceed the
	// budget: only a checkpoint (which cleans pages) brings the cache back
	// under it. OverBudgetEvents counts the times it became set.
	OverBudget       bool
	OverBudgetEvents int64
	// Vanished files: retired (the manifest no longer listed them as live)
	// and unexpected (it did), and the dirty pages their vanishing dropped.
	VanishedRetired    int64
	VanishedUnexpected int64
	DroppedDirty       int64
}

// Cache holds heap pages in memory, bounded by a budget. Clean, unpinned
// pages are evicted in CLOCK order (second chance: the oldest clean page
// goes first unless it was looked up since it was last passed over, which
// buys it another round; a hit costs no list update); dirty pages are never
// evicted, and when they alone exceed the budget the cache says so
// (OverBudget) so that the shard can start a checkpoint.
//
// It also keeps the checkpoint cycle for full-page images: BeginCycle
// starts one, and a page's first write in a cycle must be preceded by its
// FPI (FPIPending).
//
// Transitions of a page's flags:
//
//	AddClean              → clean
//	AddNew                → Dirty, plus FPIPending unless its FPI was logged this cycle
//	MarkDirty             → Dirty, plus FPIPending unless its FPI was logged this cycle
//	FPILogged(lsn)        FPIPending cleared (the FPI is logged for this cycle, at lsn: FPILSN)
//	BeginWrite            (a writer takes the bytes: Dirty, no FPIPending, asserted)
//	WriteDone(version)    → clean, when the page did not change since
//	                        BeginWrite; else still Dirty
//	BeginCycle            every Dirty page gets FPIPending again
//	FileVanished          the file's pages → clean, never dirty again
//
// The cache is used from the shard's loop thread only: not safe for
// concurrent use.
type Cache struct {
	budget int
	frames map[PageID]*Frame
	clean  frameList
	dirty  frameList
	cycle  uint64
	stats  CacheStats
	over   bool
	gone   map[uint32]bool // vanished files: true when retired
	spare  []*Page         // pages of evicted frames, for the next frames
}

// maxSpare bounds the pages kept for reuse: what one round of cold reads
// takes back at once, so that a shrinking cache still gives memory back.
const maxSpare = 64

// newPage returns a page for a new frame: a spare one when there is one.
// Its bytes are garbage until Decode or Init writes them.
func (c *Cache) newPage() *Page {
	if n := len(c.spare); n > 0 {
		p := c.spare[n-1]
		c.spare[n-1] = nil
		c.spare = c.spare[:n-1]
		return p
	}
	return new(Page)
}

// release takes back the page of frame f, which left the cache: f holds
// none from now on, so a use of it after its eviction fails loudly rather
// than reading another page's bytes.
func (c *Cache) release(f *Frame) {
	if f.Page != nil && len(c.spare) < maxSpare {
		c.spare = append(c.spare, f.Page)
	}
	f.Page = nil
}

// NewCache returns a cache bounded by budgetBytes (--pagecache-size),
// rounded down to whole pages and at least one page.
func NewCache(budgetBytes int64) *Cache {
	pages := max(budgetBytes/PageSize, 1)
	if pages > 1<<40 {
		pages = 1 << 40
	}
	return &Cache{
		budget: int(pages),
		frames: make(map[PageID]*Frame),
		clean:  frameList{id: onClean},
		dirty:  frameList{id: onDirty},
		cycle:  1,
		gone:   make(map[uint32]bool),
	}
}

// Lookup returns the frame of page id, or nil when it is not resident, and
// counts a hit or a miss. A hit marks the page referenced: eviction gives
// it a second chance.
func (c *Cache) Lookup(id PageID) *Frame {
	f := c.frames[id]
	if f == nil {
		c.stats.Misses++
		return nil
	}
	c.stats.Hits++
	f.ref = true
	return f
}

// Peek returns the frame of page id, or nil, without touching the LRU order
// or the counters.
func (c *Cache) Peek(id PageID) *Frame { return c.frames[id] }

// Resident reports whether page id is in the cache.
func (c *Cache) Resident(id PageID) bool { return c.frames[id] != nil }

// AddClean adds page id, read from disk as img, as a clean page. The image
// is validated (CheckPage) first; an invalid one is refused with its
// *PageError. When the page is already resident, its frame is returned
// unchanged: the resident copy is at least as new as anything read from
// disk. It may evict other clean pages.
func (c *Cache) AddClean(id PageID, img []byte) (*Frame, error) {
	if f := c.frames[id]; f != nil {
		return f, nil
	}
	f := &Frame{Page: c.newPage(), id: id, vanished: c.isGone(id.File)}
	if err := f.Page.Decode(img, id.File, id.Page); err != nil {
		c.release(f)
		return nil, err
	}
	c.frames[id] = f
	c.clean.pushFront(f)
	c.evict(f)
	return f, nil
}

func (c *Cache) isGone(file uint32) bool { _, ok := c.gone[file]; return ok }

// AddNew makes page id a fresh, empty page of type typ with page LSN lsn,
// and dirty: a page that is allocated, not read. A resident frame of the
// page is reused (its old content is garbage: the page was free). It
// panics for a page of a file that vanished: nothing is written to one
// again.
func (c *Cache) AddNew(id PageID, typ PageType, lsn uint64) *Frame {
	if c.isGone(id.File) {
		panic(fmt.Sprintf("heap: new page %v in vanished file", id))
	}
	f := c.frames[id]
	if f == nil {
		f = &Frame{Page: c.newPage(), id: id}
		c.frames[id] = f
	}
	f.Page.Init(typ, id.File, id.Page)
	f.Page.RaiseLSN(lsn)
	c.MarkDirty(f)
	c.evict(nil)
	return f
}

// MarkDirty records that f's page changed: it becomes Dirty, its version
// moves on, and it needs a full-page image unless one was logged in the
// current cycle. It panics for a page of a file that vanished.
func (c *Cache) MarkDirty(f *Frame) {
	c.mustResident(f)
	if f.vanished {
		panic(fmt.Sprintf("heap: page %v of a vanished file marked dirty", f.id))
	}
	f.version++
	if f.fpiCycle != c.cycle {
		f.flags |= FPIPending
	}
	if f.flags&Dirty != 0 {
		return
	}
	f.flags |= Dirty
	if f.list == onClean {
		c.clean.remove(f)
	}
	c.dirty.pushFront(f)
}

// FPILogged records that f's full-page image was appended to the WAL in the
// current cycle, at lsn: FPIPending is cleared and stays clear for the rest
// of the cycle, and FPILSN is lsn. The page must be dirty.
func (c *Cache) FPILogged(f *Frame, lsn uint64) {
	c.mustResident(f)
	if f.flags&Dirty == 0 {
		panic(fmt.Sprintf("heap: FPI logged for clean page %v", f.id))
	}
	f.flags &^= FPIPending
	f.fpiCycle = c.cycle
	f.fpiLSN = lsn
}

// BeginWrite is called when a writer takes the bytes of f's page to write
// them (EncodeInto, in the same loop step): it returns the version to hand
// to WriteDone. It panics when the page is clean or its full-page image is
// still pending: writing it now would break log-before-data.
func (c *Cache) BeginWrite(f *Frame) uint64 {
	c.mustResident(f)
	switch {
	case f.flags&Dirty == 0:
		panic(fmt.Sprintf("heap: write of clean page %v", f.id))
	case f.flags&FPIPending != 0:
		panic(fmt.Sprintf("heap: write of page %v before its full-page image was logged", f.id))
	}
	return f.version
}

// WriteDone records that the bytes of f's page taken at version (see
// BeginWrite) were written, successfully. The page becomes clean when it
// has not changed since; otherwise it stays dirty and is written again. It
// reports whether the page is clean now. A frame no longer resident (its
// file was dropped) is ignored.
//
// When a new cycle began while the write was in flight, the page got
// FPIPending back; the write still stored its current content, so the page
// is clean, and its next change in the new cycle needs an image again.
func (c *Cache) WriteDone(f *Frame, version uint64) bool {
	if c.frames[f.id] != f {
		return false
	}
	if f.flags&Dirty == 0 {
		return true
	}
	if f.version != version {
		return false
	}
	c.makeClean(f)
	c.evict(nil)
	return true
}

func (c *Cache) makeClean(f *Frame) {
	if f.flags&Dirty != 0 {
		c.dirty.remove(f)
	}
	f.flags &^= Dirty | FPIPending
	if f.pins == 0 {
		c.clean.pushFront(f)
	}
}

// BeginCycle starts a new checkpoint cycle and returns its number: every
// page's next write needs a full-page image first, so every dirty page is
// FPIPending again.
func (c *Cache) BeginCycle() uint64 {
	c.cycle++
	for f := c.dirty.head; f != nil; f = f.next {
		f.flags |= FPIPending
	}
	return c.cycle
}

// Cycle is the current checkpoint cycle.
func (c *Cache) Cycle() uint64 { return c.cycle }

// Pin keeps f resident (never evicted, never dropped by Drop) until the
// matching Unpin.
func (c *Cache) Pin(f *Frame) {
	c.mustResident(f)
	if f.list == onClean {
		c.clean.remove(f)
	}
	f.pins++
}

// Unpin releases a Pin.
func (c *Cache) Unpin(f *Frame) {
	if f.pins <= 0 {
		panic(fmt.Sprintf("heap: unpin of unpinned page %v", f.id))
	}
	f.pins--
	if f.pins == 0 && f.flags&Dirty == 0 && c.frames[f.id] == f {
		c.clean.pushFront(f)
		c.evict(nil)
	}
}

// Drop removes page id when it is resident, clean and unpinned (a page
// that was freed), and reports whether it did.
func (c *Cache) Drop(id PageID) bool {
	f := c.frames[id]
	if f == nil || f.list != onClean {
		return false
	}
	c.clean.remove(f)
	delete(c.frames, id)
	return true
}

// DropFile removes every page of file from the cache, dirty ones included:
// the file was retired (tombstoned) and none of its pages will be written
// or read again. It returns how many dirty pages it dropped.
func (c *Cache) DropFile(file uint32) int {
	dropped := 0
	for id, f := range c.frames {
		if id.File != file {
			continue
		}
		switch f.list {
		case onClean:
			c.clean.remove(f)
		case onDirty:
			c.dirty.remove(f)
			dropped++
		}
		f.flags &^= Dirty | FPIPending
		delete(c.frames, id)
	}
	return dropped
}

// FileVanished handles a heap file that no longer exists (an open or fsync
// said NotFound): its pages lose their Dirty and FPIPending flags (there
// is nothing to write them to, and a vanished file is never re-created),
// stay readable while they are cached, and can never become dirty again.
// retired says whether the manifest still listed the file as live (false:
// an unexpected loss, which the caller logs as an error) or not (true: the
// file was retired, and removing it was the point). It returns how many
// dirty pages were dropped. Calling it again for the same file does
// nothing.
func (c *Cache) FileVanished(file uint32, retired bool) int {
	if c.isGone(file) {
		return 0
	}
	c.gone[file] = retired
	if retired {
		c.stats.VanishedRetired++
	} else {
		c.stats.VanishedUnexpected++
	}
	dropped := 0
	for id, f := range c.frames {
		if id.File != file {
			continue
		}
		f.vanished = true
		if f.flags&Dirty != 0 {
			dropped++
			c.makeClean(f)
		}
	}
	c.stats.DroppedDirty += int64(dropped)
	c.evict(nil)
	return dropped
}

// Vanished reports whether file vanished, and if so whether it was retired.
func (c *Cache) Vanished(file uint32) (vanished, retired bool) {
	retired, vanished = c.gone[file]
	return vanished, retired
}

// AppendDirty appends every dirty frame to dst, oldest dirty first, and
// returns the extended slice: the pages a checkpoint flushes.
func (c *Cache) AppendDirty(dst []*Frame) []*Frame {
	for f := c.dirty.tail; f != nil; f = f.prev {
		dst = append(dst, f)
	}
	return dst
}

// Budget is the number of pages the cache is bounded to.
func (c *Cache) Budget() int { return c.budget }

// Room is how many more pages the cache holds within its budget once every
// evictable page is counted as free: the budget less the dirty and pinned
// pages. It is negative while those alone exceed the budget. Reading more
// cold pages than Room at once evicts pages of the same read.
func (c *Cache) Room() int { return c.budget - (len(c.frames) - c.clean.n) }

// DirtyPages is the number of dirty pages.
func (c *Cache) DirtyPages() int { return c.dirty.n }

// OverBudget reports whether the resident pages exceed the budget although
// every evictable page is gone: dirty (and pinned) pages alone fill it, and
// a checkpoint is due.
func (c *Cache) OverBudget() bool { return c.over }

// Stats returns the cache's figures.
func (c *Cache) Stats() CacheStats {
	s := c.stats
	s.Resident = len(c.frames)
	s.Dirty = c.dirty.n
	s.BudgetPages = c.budget
	s.OverBudget = c.over
	return s
}

// evict drops clean pages in CLOCK order, except keep (the page being
// added), while the cache is over its budget, and updates the over-budget
// state. A referenced page loses its mark and goes back to the front of
// the list, so each page is passed over at most once per call.
func (c *Cache) evict(keep *Frame) {
	for len(c.frames) > c.budget && c.clean.tail != nil {
		f := c.clean.tail
		if f == keep {
			break
		}
		c.clean.remove(f)
		if f.ref {
			f.ref = false
			c.clean.pushFront(f)
			continue
		}
		delete(c.frames, f.id)
		c.release(f)
		c.stats.Evictions++
	}
	over := len(c.frames) > c.budget
	if over && !c.over {
		c.stats.OverBudgetEvents++
	}
	c.over = over
}

func (c *Cache) mustResident(f *Frame) {
	if c.frames[f.id] != f {
		panic(fmt.Sprintf("heap: page %v is not resident", f.id))
	}
}
