package heap

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// fuzzHead is how many bytes of a short fuzz input go to the start of the
// page image; the rest go to its end, where slotted pages keep their
// records.
const fuzzHead = 256

// fuzzImage maps a fuzz input to a page image: a whole page as it is, a
// shorter input split between the start and the end of the page (zeros in
// between), so that short inputs, which the fuzzer mutates and minimizes
// quickly, reach every part of a page.
func fuzzImage(b []byte) []byte {
	img := make([]byte, PageSize)
	if len(b) >= PageSize {
		copy(img, b)
		return img
	}
	k := min(len(b), fuzzHead)
	copy(img, b[:k])
	copy(img[PageSize-(len(b)-k):], b[k:])
	return img
}

// fuzzSeed is the shortest input fuzzImage maps to img (the zeros after
// its first fuzzHead bytes dropped).
func fuzzSeed(img []byte) []byte {
	start := fuzzHead
	for start < PageSize && img[start] == 0 {
		start++
	}
	return append(bytes.Clone(img[:fuzzHead]), img[start:]...)
}

// FuzzDecodePage feeds arbitrary bytes to the page decoder, as they are and
// as a page image with our magic, place and a valid checksum (so that the
// structural checks are reached), and exercises every page that decodes:
// its records, and inserts, deletes and compaction, after which it must
// still decode.
func FuzzDecodePage(f *testing.F) {
	f.Add(fuzzSeed(image(kvPage(f, "a", "bb", "ccc"))))
	ov := new(Page)
	ov.InitOverflow(testFile, testPage, OverflowHeader{Next: 9, Len: 5, OwnerPage: 1, Seq: 2}, 3, []byte("hello"), nil)
	f.Add(fuzzSeed(image(ov)))
	free := new(Page)
	free.Init(PageFree, testFile, testPage)
	f.Add(fuzzSeed(image(free)))
	f.Add([]byte("MDHP"))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := bytes.Clone(b)
		if _, err := CheckPage(b, testFile, testPage); err == nil && len(b) != PageSize {
			t.Fatal("accepted an image that is not a page long")
		}
		if !bytes.Equal(in, b) {
			t.Fatal("CheckPage modified its input")
		}
		if len(b) > PageSize {
			return // nothing more to learn than the length check above
		}
		img := fuzzImage(b)
		// Give it our magic, place and checksum, so that the structure
		// checks run on arbitrary content.
		copy(img, PageMagic)
		img[offVersion] = PageVersion
		img[offFile], img[offFile+1], img[offFile+2], img[offFile+3] = testFile, 0, 0, 0
		img[offNumber], img[offNumber+1], img[offNumber+2], img[offNumber+3] = testPage, 0, 0, 0
		reseal(img)
		var p Page
		err := p.Decode(img, testFile, testPage)
		// The boot scan's check, which also collects the records it
		// decodes, must judge every image as CheckPage does.
		var recs []slotRecord
		if _, rerr := checkPage(img, testFile, testPage, &recs); fmt.Sprint(rerr) != fmt.Sprint(err) {
			t.Fatalf("the boot scan's check says %v, CheckPage %v", rerr, err)
		}
		var pe *PageError
		if err != nil {
			if !errors.As(err, &pe) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if !bytes.Equal(p.Bytes(), img) {
			t.Fatal("a decoded page does not encode to its image")
		}
		switch p.Type() {
		case PageKV:
			exerciseSlotted(t, &p, recs)
		case PageOverflow:
			h, data := p.Overflow()
			if int(h.Len) != len(data) {
				t.Fatal("overflow data length")
			}
		}
	})
}

// exerciseSlotted reads every record of the decoded slotted page p,
// checking that recs (what the boot scan collected from its image) holds
// the same ones, then changes the page, which must still decode.
func exerciseSlotted(t *testing.T, p *Page, recs []slotRecord) {
	live := 0
	for slot := range p.SlotCount() {
		v, err := p.Record(slot)
		if errors.Is(err, ErrNoRecord) {
			continue
		}
		if err != nil {
			t.Fatalf("slot %d of a decoded page: %v", slot, err)
		}
		if live >= len(recs) || int(recs[live].slot) != slot || recs[live].view.RecordHead != v.RecordHead ||
			!bytes.Equal(recs[live].view.Inline, v.Inline) {
			t.Fatalf("slot %d: the boot scan's records %+v differ from the page's", slot, recs)
		}
		live++
		_, _ = v.Key()
		_, _ = v.Value()
	}
	if live != p.LiveRecords() || live != len(recs) {
		t.Fatalf("live record count %d, LiveRecords %d, boot scan %d", live, p.LiveRecords(), len(recs))
	}
	if p.FreeSpace() != expectedFree(p) {
		t.Fatalf("free space %d, expected %d", p.FreeSpace(), expectedFree(p))
	}
	if p.SlotCount() > 0 {
		if err := p.DeleteRecord(p.SlotCount() - 1); err != nil {
			t.Fatalf("delete the last slot: %v", err)
		}
	}
	_, err := p.InsertRecord(head([]byte("fz"), []byte("value"), 1), []byte("fz"), []byte("value"))
	if err != nil && !errors.Is(err, ErrNoSpace) {
		t.Fatal(err)
	}
	p.Compact()
	if _, err := CheckPage(image(p), testFile, testPage); err != nil {
		t.Fatalf("page no longer decodes after delete, insert and compact: %v", err)
	}
}

func TestFuzzSeedsMapBackToTheirPages(t *testing.T) {
	ov := new(Page)
	ov.InitOverflow(testFile, testPage, OverflowHeader{Next: 9, Len: 5, OwnerPage: 1, Seq: 2}, 3, []byte("hello"), nil)
	for _, img := range [][]byte{image(kvPage(t, "a", "bb")), image(kvPage(t)), image(ov)} {
		if got := fuzzImage(fuzzSeed(img)); !bytes.Equal(got, img) {
			t.Fatal("fuzzImage(fuzzSeed(img)) != img")
		}
	}
}
