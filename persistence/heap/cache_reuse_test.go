package heap

import (
	"bytes"
	"testing"
	"unsafe"
)

// A cached page is an allocation of its own, not bytes inside the frame:
// the collector then marks it without scanning it, and a frame is small.
func TestFrameHoldsItsPageOutsideItself(t *testing.T) {
	if size := unsafe.Sizeof(Frame{}); size >= PageSize {
		t.Fatalf("a Frame is %d bytes: its page is inline", size)
	}
}

// An evicted frame gives its page to the next frame, which then holds
// exactly its own page's bytes, and the evicted frame holds none.
func TestCacheReusesAnEvictedPageWithNoBytesOfItsOldContent(t *testing.T) {
	c := NewCache(1 * PageSize)
	old := c.AddNew(PageID{1, 0}, PageKV, 7)
	if _, err := old.Page.InsertRecord(head([]byte("k"), bytes.Repeat([]byte("v"), 500), 7), []byte("k"), bytes.Repeat([]byte("v"), 500)); err != nil {
		t.Fatal(err)
	}
	c.MarkDirty(old)
	c.FPILogged(old, 7)
	c.WriteDone(old, c.BeginWrite(old))
	full := old.Page

	one := addClean(t, c, 1) // evicts page 0: its page is spare
	if c.Resident(PageID{1, 0}) {
		t.Fatal("page 0 was not evicted")
	}
	if old.Page != nil {
		t.Fatal("the evicted frame still holds a page")
	}
	onePage := one.Page

	n := c.AddNew(PageID{1, 2}, PageKV, 9) // takes page 0's; evicts page 1
	if n.Page != full {
		t.Fatal("AddNew did not reuse the evicted frame's page")
	}
	fresh := new(Page)
	fresh.Init(PageKV, 1, 2)
	fresh.RaiseLSN(9)
	if !bytes.Equal(image(n.Page), image(fresh)) {
		t.Fatal("a new page on a reused page is not empty")
	}

	f := addClean(t, c, 3) // takes page 1's
	if f.Page != onePage {
		t.Fatal("AddClean did not reuse the evicted frame's page")
	}
	if !bytes.Equal(image(f.Page), cleanImage(3)) {
		t.Fatal("the reused page does not hold exactly page 3's image")
	}
}

// The cache keeps at most maxSpare pages for reuse, so that a cache that
// shrinks gives its memory back.
func TestCacheKeepsABoundedNumberOfSparePages(t *testing.T) {
	c := NewCache(2 * maxSpare * PageSize)
	for no := range uint32(2 * maxSpare) {
		addClean(t, c, no)
	}
	c.budget = 1
	c.evict(nil)
	if got := len(c.spare); got != maxSpare {
		t.Fatalf("%d spare pages after evicting %d, want %d", got, 2*maxSpare-1, maxSpare)
	}
}
