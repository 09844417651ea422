package heap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"testing"
)

func TestPageRoundTripsThroughBytesAndDecode(t *testing.T) {
	p := kvPage(t, "alpha", "beta", "gamma")
	p.RaiseLSN(42)
	img := bytes.Clone(p.Bytes())
	var q Page
	if err := q.Decode(img, testFile, testPage); err != nil {
		t.Fatal(err)
	}
	if q.LSN() != 42 || q.File() != testFile || q.Number() != testPage || q.Type() != PageKV {
		t.Fatalf("header: lsn %d file %d page %d type %v", q.LSN(), q.File(), q.Number(), q.Type())
	}
	if got, want := records(t, &q), records(t, p); !maps.Equal(got, want) || len(got) != 3 {
		t.Fatalf("records %v, want %v", got, want)
	}
}

func TestEncodeIntoMatchesBytesAndLeavesThePageAlone(t *testing.T) {
	p := kvPage(t, "k")
	before := p.b
	dst := make([]byte, PageSize)
	p.EncodeInto(dst)
	if p.b != before {
		t.Fatal("EncodeInto changed the page")
	}
	if !bytes.Equal(dst, p.Bytes()) {
		t.Fatal("EncodeInto and Bytes differ")
	}
	if _, err := CheckPage(dst, testFile, testPage); err != nil {
		t.Fatal(err)
	}
}

func TestRaiseLSNNeverMovesBack(t *testing.T) {
	p := kvPage(t)
	p.RaiseLSN(10)
	p.RaiseLSN(5)
	if p.LSN() != 10 {
		t.Fatalf("LSN %d, want 10", p.LSN())
	}
}

func TestEveryBitOfTheHeaderIsCoveredByTheChecksum(t *testing.T) {
	img := image(kvPage(t, "a", "b"))
	for off := range HeaderSize {
		for bit := range 8 {
			c := bytes.Clone(img)
			c[off] ^= 1 << bit
			if _, err := CheckPage(c, testFile, testPage); err == nil {
				t.Fatalf("flipping bit %d of header byte %d went unnoticed", bit, off)
			}
		}
	}
}

func TestCheckPageNamesWhatIsWrongWithEachHeaderField(t *testing.T) {
	cases := []struct {
		name   string
		mutate func([]byte)
		reseal bool
		want   error
	}{
		{"magic", func(b []byte) { b[0] = 'X' }, true, ErrBadMagic},
		{"type zero", func(b []byte) { b[offType] = 0 }, true, ErrBadType},
		{"type unknown", func(b []byte) { b[offType] = 9 }, true, ErrBadType},
		{"version", func(b []byte) { b[offVersion] = 2 }, true, ErrVersion},
		{"lsn", func(b []byte) { b[offLSN] ^= 1 }, false, ErrChecksum},
		{"crc", func(b []byte) { b[offCRC+2] ^= 0x10 }, false, ErrChecksum},
		{"file id", func(b []byte) { binary.LittleEndian.PutUint32(b[offFile:], testFile+1) }, true, ErrWrongPlace},
		{"page number", func(b []byte) { binary.LittleEndian.PutUint32(b[offNumber:], testPage+1) }, true, ErrWrongPlace},
		{"reserved 6", func(b []byte) { b[offReserved] = 1 }, true, ErrCorrupt},
		{"reserved 28", func(b []byte) { b[offReserve2+3] = 1 }, true, ErrCorrupt},
		{"slot count", func(b []byte) { binary.LittleEndian.PutUint16(b[kvOffSlotCount:], 3) }, true, ErrCorrupt},
		{"records start", func(b []byte) { binary.LittleEndian.PutUint16(b[kvOffUpper:], PageSize-8) }, true, ErrCorrupt},
		{"dead bytes", func(b []byte) { binary.LittleEndian.PutUint16(b[kvOffDead:], 1) }, true, ErrCorrupt},
		{"kv reserved", func(b []byte) { b[kvOffReserved+9] = 1 }, true, ErrCorrupt},
		{"body byte", func(b []byte) { b[PageSize-1] ^= 1 }, false, ErrChecksum},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img := image(kvPage(t, "a", "b"))
			tc.mutate(img)
			if tc.reseal {
				reseal(img)
			}
			_, err := CheckPage(img, testFile, testPage)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			var pe *PageError
			if !errors.As(err, &pe) || pe.File != testFile || pe.Page != testPage {
				t.Fatalf("error %v does not name file %d page %d", err, testFile, testPage)
			}
		})
	}
}

func TestCheckPageRejectsATornPage(t *testing.T) {
	old := kvPage(t, "a", "b", "c")
	old.RaiseLSN(5)
	oldImg := image(old)
	newer := kvPage(t, "a", "b", "c", "d", "e")
	if err := newer.DeleteRecord(1); err != nil {
		t.Fatal(err)
	}
	newer.Compact()
	newImg := image(newer)
	torn := 0
	for cut := 512; cut < PageSize; cut += 512 {
		img := append(bytes.Clone(newImg[:cut]), oldImg[cut:]...)
		if bytes.Equal(img, newImg) || bytes.Equal(img, oldImg) {
			continue
		}
		torn++
		if _, err := CheckPage(img, testFile, testPage); !errors.Is(err, ErrChecksum) {
			t.Fatalf("first %d bytes new, rest old: got %v, want ErrChecksum", cut, err)
		}
		// And the other way round: a write whose head did not land.
		img = append(bytes.Clone(oldImg[:cut]), newImg[cut:]...)
		if _, err := CheckPage(img, testFile, testPage); !errors.Is(err, ErrChecksum) {
			t.Fatalf("first %d bytes old, rest new: got %v, want ErrChecksum", cut, err)
		}
	}
	if torn == 0 {
		t.Fatal("no torn image differed from both versions")
	}
}

func TestCheckPageReportsNeverWrittenAndShortPages(t *testing.T) {
	if _, err := CheckPage(make([]byte, PageSize), 1, 2); !errors.Is(err, ErrZeroPage) {
		t.Fatalf("zero page: %v", err)
	}
	if _, err := CheckPage(make([]byte, PageSize-1), 1, 2); !errors.Is(err, ErrShortPage) {
		t.Fatalf("short page: %v", err)
	}
	img := make([]byte, PageSize)
	img[100] = 1
	if _, err := CheckPage(img, 1, 2); !errors.Is(err, ErrBadMagic) {
		t.Fatalf("nonzero page without magic: %v", err)
	}
}

// slotImage returns a resealed image of a two-record page after mutate.
func slotImage(t *testing.T, mutate func(p *Page)) []byte {
	t.Helper()
	p := kvPage(t, "first", "second")
	mutate(p)
	return image(p)
}

func TestCheckPageRejectsImpossibleSlots(t *testing.T) {
	cases := map[string]func(p *Page){
		"slot below records start": func(p *Page) { _, n := p.slot(0); p.setSlot(0, p.upper()-4, n) },
		"slot past page end":       func(p *Page) { off, _ := p.slot(0); p.setSlot(0, off, PageSize-off+1) },
		// Two slots share one record; the dead-byte count is made to add
		// up, and the record decodes: only the overlap check can tell.
		"overlapping slots":       func(p *Page) { off, n := p.slot(0); _, n1 := p.slot(1); p.setSlot(1, off, n); p.setDead(n1 - n) },
		"dead slot with length":   func(p *Page) { _, n := p.slot(0); p.setSlot(0, 0, n); p.setDead(n) },
		"last slot dead":          func(p *Page) { _, n := p.slot(1); p.setSlot(1, 0, 0); p.setDead(n) },
		"shorter than a header":   func(p *Page) { off, n := p.slot(0); p.setSlot(0, off+n-8, 8); p.setDead(n - 8) },
		"slot array over records": func(p *Page) { p.setSlotCount(1000) },
		"empty page with records start": func(p *Page) {
			p.setSlotCount(0)
			p.setDead(0)
		},
		"key LSN zero":  func(p *Page) { off, _ := p.slot(0); binary.LittleEndian.PutUint64(p.b[off+recOffKeyLSN:], 0) },
		"unknown flag":  func(p *Page) { off, _ := p.slot(0); p.b[off+recOffFlags] = 4 },
		"inline length": func(p *Page) { off, _ := p.slot(0); binary.LittleEndian.PutUint32(p.b[off+recOffKeyLen:], 1) },
		"key too long":  func(p *Page) { off, _ := p.slot(0); binary.LittleEndian.PutUint32(p.b[off+recOffKeyLen:], MaxKeyLen+1) },
		"overflow at itself": func(p *Page) {
			off, _ := p.slot(0)
			p.b[off+recOffFlags] = recFlagOverflow
			binary.LittleEndian.PutUint32(p.b[off+recOffOverflow:], testPage)
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			img := slotImage(t, mutate)
			if _, err := CheckPage(img, testFile, testPage); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestCheckPageRejectsBadOverflowAndFreePages(t *testing.T) {
	ov := func(mutate func(b []byte)) []byte {
		p := new(Page)
		p.InitOverflow(testFile, testPage, OverflowHeader{Next: NoPage, Len: 3, OwnerPage: 1}, 9, []byte("abc"), nil)
		img := image(p)
		mutate(img)
		reseal(img)
		return img
	}
	if _, err := CheckPage(ov(func([]byte) {}), testFile, testPage); err != nil {
		t.Fatalf("valid overflow page: %v", err)
	}
	cases := map[string][]byte{
		"zero length":      ov(func(b []byte) { binary.LittleEndian.PutUint32(b[ovOffLen:], 0) }),
		"too long":         ov(func(b []byte) { binary.LittleEndian.PutUint32(b[ovOffLen:], OverflowCapacity+1) }),
		"next is itself":   ov(func(b []byte) { binary.LittleEndian.PutUint32(b[ovOffNext:], testPage) }),
		"owner is itself":  ov(func(b []byte) { binary.LittleEndian.PutUint32(b[ovOffOwnerPage:], testPage) }),
		"bytes after data": ov(func(b []byte) { b[HeaderSize+3] = 1 }),
	}
	free := new(Page)
	free.Init(PageFree, testFile, testPage)
	img := image(free)
	img[offSpecific+5] = 1
	reseal(img)
	cases["free page with fields"] = img
	for name, img := range cases {
		if _, err := CheckPage(img, testFile, testPage); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", name, err)
		}
	}
}

func TestDecodingAValidPageDoesNotAllocate(t *testing.T) {
	img := image(kvPage(t, "a", "bb", "ccc", "dddd"))
	var p Page
	allocs := testing.AllocsPerRun(100, func() {
		if err := p.Decode(img, testFile, testPage); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Record(2); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.0f allocations per decode", allocs)
	}
}

func TestDecodeLeavesThePageUnchangedOnError(t *testing.T) {
	p := kvPage(t, "keep")
	before := p.b
	bad := image(kvPage(t, "other"))
	bad[200] ^= 1
	if err := p.Decode(bad, testFile, testPage); err == nil {
		t.Fatal("decoded a damaged image")
	}
	if p.b != before {
		t.Fatal("failed decode changed the page")
	}
}
