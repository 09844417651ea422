package heap

import (
	"errors"
	"testing"
)

// cleanImage is a valid image of page no of file 1.
func cleanImage(no uint32) []byte {
	p := new(Page)
	p.Init(PageKV, 1, no)
	return image(p)
}

func addClean(t *testing.T, c *Cache, no uint32) *Frame {
	t.Helper()
	f, err := c.AddClean(PageID{1, no}, cleanImage(no))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCacheEvictsTheOldestCleanPageNotLookedUpSince(t *testing.T) {
	c := NewCache(3 * PageSize)
	for no := range uint32(3) {
		addClean(t, c, no)
	}
	if c.Lookup(PageID{1, 0}) == nil { // page 0, the oldest, gets a second chance
		t.Fatal("page 0 missing")
	}
	addClean(t, c, 3)
	if c.Resident(PageID{1, 1}) {
		t.Fatal("page 1, the oldest not looked up, was not evicted")
	}
	for _, no := range []uint32{0, 2, 3} {
		if !c.Resident(PageID{1, no}) {
			t.Fatalf("page %d evicted", no)
		}
	}
	if s := c.Stats(); s.Evictions != 1 || s.Resident != 3 || s.Hits != 1 || s.OverBudget {
		t.Fatalf("stats %+v", s)
	}
}

func TestCacheNeverEvictsDirtyPagesAndSaysWhenTheyExceedTheBudget(t *testing.T) {
	c := NewCache(2 * PageSize)
	var dirty []*Frame
	for no := range uint32(3) {
		dirty = append(dirty, c.AddNew(PageID{1, no}, PageKV, 0))
	}
	for _, f := range dirty {
		if !c.Resident(f.ID()) {
			t.Fatalf("dirty page %v evicted", f.ID())
		}
	}
	if !c.OverBudget() || c.Stats().OverBudgetEvents != 1 {
		t.Fatalf("over budget %v, stats %+v", c.OverBudget(), c.Stats())
	}
	// While dirty pages fill the budget, only the clean page just added
	// (which its caller is about to use) stays beyond them.
	addClean(t, c, 9)
	addClean(t, c, 10)
	if c.Resident(PageID{1, 9}) || c.Stats().Resident != 4 {
		t.Fatalf("clean pages pile up while over budget: %d resident", c.Stats().Resident)
	}
	f := dirty[0]
	c.FPILogged(f, 1)
	if !c.WriteDone(f, c.BeginWrite(f)) {
		t.Fatal("write of an unchanged page left it dirty")
	}
	if c.OverBudget() {
		t.Fatal("still over budget once a page is clean and evictable")
	}
	if c.Stats().Resident != 2 || c.Resident(f.ID()) {
		t.Fatalf("%d resident pages, want the 2 still dirty", c.Stats().Resident)
	}
}

func TestCacheFlagTransitions(t *testing.T) {
	c := NewCache(16 * PageSize)
	f := c.AddNew(PageID{1, 0}, PageKV, 0)
	if f.Flags() != Dirty|FPIPending {
		t.Fatalf("new page: %v", f.Flags())
	}
	c.FPILogged(f, 1)
	if f.Flags() != Dirty {
		t.Fatalf("after FPI: %v", f.Flags())
	}
	c.MarkDirty(f) // a change after the FPI in the same cycle needs none
	if f.Flags() != Dirty {
		t.Fatalf("changed again in the cycle: %v", f.Flags())
	}
	if !c.WriteDone(f, c.BeginWrite(f)) || f.Flags() != 0 {
		t.Fatalf("after write: %v", f.Flags())
	}
	c.MarkDirty(f) // still the same cycle: its FPI is logged
	if f.Flags() != Dirty {
		t.Fatalf("dirtied again in the cycle: %v", f.Flags())
	}
	c.BeginCycle()
	if f.Flags() != Dirty|FPIPending {
		t.Fatalf("dirty page in a new cycle: %v", f.Flags())
	}
	c.FPILogged(f, 1)
	c.WriteDone(f, c.BeginWrite(f))
	g := addClean(t, c, 1)
	c.BeginCycle()
	c.MarkDirty(g)
	if g.Flags() != Dirty|FPIPending {
		t.Fatalf("clean page dirtied in a new cycle: %v", g.Flags())
	}
	if got := Flags(Dirty | FPIPending).String(); got != "dirty|fpi-pending" {
		t.Fatalf("String: %q", got)
	}
}

func TestCacheKeepsAPageDirtyWhenItChangedDuringItsWrite(t *testing.T) {
	c := NewCache(16 * PageSize)
	f := c.AddNew(PageID{1, 0}, PageKV, 0)
	c.FPILogged(f, 1)
	v := c.BeginWrite(f)
	c.MarkDirty(f) // changed while the write of version v was in flight
	if c.WriteDone(f, v) || !f.Dirty() {
		t.Fatal("a page that changed during its write was marked clean")
	}
	if len(c.AppendDirty(nil)) != 1 {
		t.Fatal("the page left the dirty list")
	}
	if !c.WriteDone(f, c.BeginWrite(f)) || f.Dirty() {
		t.Fatal("the second write did not clean the page")
	}
}

func TestCacheRefusesToWriteAPageBeforeItsFPI(t *testing.T) {
	c := NewCache(16 * PageSize)
	f := c.AddNew(PageID{1, 0}, PageKV, 0)
	defer func() {
		if recover() == nil {
			t.Fatal("BeginWrite let a page be written before its full-page image")
		}
	}()
	c.BeginWrite(f)
}

func TestCacheCleansAPageWhoseWriteSpannedTheStartOfACycle(t *testing.T) {
	c := NewCache(16 * PageSize)
	f := c.AddNew(PageID{1, 0}, PageKV, 0)
	c.FPILogged(f, 1)
	v := c.BeginWrite(f)
	c.BeginCycle() // the next checkpoint begins while the write is in flight
	if !f.FPIPending() {
		t.Fatal("a dirty page did not get FPIPending in the new cycle")
	}
	if !c.WriteDone(f, v) || f.Flags() != 0 {
		t.Fatalf("after the write: %v", f.Flags())
	}
	c.MarkDirty(f)
	if f.Flags() != Dirty|FPIPending {
		t.Fatalf("changed in the new cycle: %v", f.Flags())
	}
}

func TestCachePinnedPagesAreNotEvicted(t *testing.T) {
	c := NewCache(1 * PageSize)
	f := addClean(t, c, 0)
	c.Pin(f)
	addClean(t, c, 1)
	if !c.Resident(f.ID()) {
		t.Fatal("pinned page evicted")
	}
	if c.Drop(f.ID()) {
		t.Fatal("pinned page dropped")
	}
	c.Unpin(f)
	addClean(t, c, 2)
	if c.Resident(f.ID()) {
		t.Fatal("unpinned page not evicted")
	}
}

func TestCacheDirtyListIsOldestFirst(t *testing.T) {
	c := NewCache(16 * PageSize)
	for _, no := range []uint32{5, 2, 9} {
		c.AddNew(PageID{1, no}, PageKV, 0)
	}
	var got []uint32
	for _, f := range c.AppendDirty(nil) {
		got = append(got, f.ID().Page)
	}
	if len(got) != 3 || got[0] != 5 || got[1] != 2 || got[2] != 9 {
		t.Fatalf("dirty order %v", got)
	}
}

func TestCacheFileVanishedDropsDirtyAndFPIFlagsAndKeepsPagesReadable(t *testing.T) {
	c := NewCache(16 * PageSize)
	d := c.AddNew(PageID{1, 0}, PageKV, 0)
	cl := addClean(t, c, 1)
	other := c.AddNew(PageID{2, 0}, PageKV, 0)
	if n := c.FileVanished(1, false); n != 1 {
		t.Fatalf("dropped %d dirty pages, want 1", n)
	}
	if d.Flags() != 0 || !c.Resident(d.ID()) || !c.Resident(cl.ID()) {
		t.Fatalf("vanished file's pages: %v, resident %v %v", d.Flags(), c.Resident(d.ID()), c.Resident(cl.ID()))
	}
	if other.Flags() != Dirty|FPIPending {
		t.Fatal("another file's page lost its flags")
	}
	if c.FileVanished(1, false) != 0 || c.Stats().VanishedUnexpected != 1 {
		t.Fatal("a second report of the same file counted again")
	}
	c.FileVanished(3, true)
	if s := c.Stats(); s.VanishedRetired != 1 || s.DroppedDirty != 1 {
		t.Fatalf("stats %+v", s)
	}
	if v, r := c.Vanished(3); !v || !r {
		t.Fatal("file 3 not recorded as retired")
	}
	if f, err := c.AddClean(PageID{1, 7}, cleanImage(7)); err != nil || !f.vanished {
		t.Fatalf("page of a vanished file added later: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a page of a vanished file became dirty")
		}
	}()
	c.MarkDirty(cl)
}

func TestCacheAddCleanKeepsTheResidentCopyAndRefusesBadImages(t *testing.T) {
	c := NewCache(16 * PageSize)
	f := c.AddNew(PageID{1, 0}, PageKV, 0)
	f.Page.RaiseLSN(50)
	g, err := c.AddClean(PageID{1, 0}, cleanImage(0))
	if err != nil || g != f || f.Page.LSN() != 50 || !f.Dirty() {
		t.Fatal("AddClean replaced a resident page")
	}
	if _, err := c.AddClean(PageID{1, 4}, cleanImage(5)); !errors.Is(err, ErrWrongPlace) {
		t.Fatalf("image of another page: %v", err)
	}
	if c.Resident(PageID{1, 4}) {
		t.Fatal("a refused image is resident")
	}
}

func TestCacheDropFileRemovesEveryPageOfTheFile(t *testing.T) {
	c := NewCache(16 * PageSize)
	c.AddNew(PageID{1, 0}, PageKV, 0)
	addClean(t, c, 1)
	c.AddNew(PageID{2, 0}, PageKV, 0)
	if n := c.DropFile(1); n != 1 {
		t.Fatalf("dropped %d dirty pages, want 1", n)
	}
	if s := c.Stats(); s.Resident != 1 || s.Dirty != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// Room counts evictable pages as free: it falls as pages become dirty or
// pinned, below zero once they alone exceed the budget, and rises again as
// they are written.
func TestCacheRoomIsTheBudgetLessDirtyAndPinnedPages(t *testing.T) {
	c := NewCache(4 * PageSize)
	a, b := addClean(t, c, 0), addClean(t, c, 1)
	if c.Room() != 4 || c.Budget() != 4 {
		t.Fatalf("room %d budget %d with two clean pages, want 4 and 4", c.Room(), c.Budget())
	}
	c.MarkDirty(a)
	c.Pin(b)
	if c.Room() != 2 || c.DirtyPages() != 1 {
		t.Fatalf("room %d, dirty %d with one dirty and one pinned page", c.Room(), c.DirtyPages())
	}
	for i := range 3 {
		c.AddNew(PageID{1, uint32(10 + i)}, PageKV, 0)
	}
	if c.Room() != -1 || !c.OverBudget() {
		t.Fatalf("room %d (over budget %v) with five pages that cannot be evicted", c.Room(), c.OverBudget())
	}
	c.FPILogged(a, 7)
	if a.FPILSN() != 7 {
		t.Fatalf("FPILSN %d, want 7", a.FPILSN())
	}
	c.WriteDone(a, c.BeginWrite(a))
	c.Unpin(b)
	if c.Room() != 1 {
		t.Fatalf("room %d once two pages are evictable again, want 1", c.Room())
	}
}
