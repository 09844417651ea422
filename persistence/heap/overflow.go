package heap

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Overflow page layout. See the package documentation.
const (
	// OverflowCapacity is how many bytes of key‖value one overflow page
	// holds.
	OverflowCapacity = PageSize - HeaderSize

	ovOffNext      = offSpecific      // u32 next page of the chain, NoPage at the end
	ovOffLen       = offSpecific + 4  // u32 data bytes in this page
	ovOffOwnerPage = offSpecific + 8  // u32 page of the record that owns the chain
	ovOffOwnerSlot = offSpecific + 12 // u16 its slot
	ovOffSeq       = offSpecific + 14 // u16 index of this page in the chain, mod 65536
)

// OverflowHeader is the type-specific header of an overflow page. Chains
// never leave their file: Next and Owner.Page are page numbers in the same
// file.
type OverflowHeader struct {
	// Next is the chain's next page, NoPage for the last one.
	Next uint32
	// Len is the number of data bytes in the page, 1..OverflowCapacity.
	Len uint32
	// OwnerPage and OwnerSlot name the record whose chain this is. Reading
	// or freeing a chain checks them on every page, so that a chain never
	// wanders into a page that was freed and reused.
	OwnerPage uint32
	OwnerSlot uint16
	// Seq is the page's index in the chain (0 for the first), mod 65536.
	Seq uint16
}

// InitOverflow makes p the overflow page no of file id file with header h,
// page LSN lsn, and data a‖b (either may be empty; together they are
// h.Len bytes).
func (p *Page) InitOverflow(file, no uint32, h OverflowHeader, lsn uint64, a, b []byte) {
	if int(h.Len) != len(a)+len(b) || h.Len == 0 || h.Len > OverflowCapacity {
		panic(fmt.Sprintf("heap: overflow page with %d data bytes, header says %d", len(a)+len(b), h.Len))
	}
	if h.Next == no || h.OwnerPage == no || h.OwnerPage == NoPage {
		panic(fmt.Sprintf("heap: overflow page %d with next %d, owner %d", no, h.Next, h.OwnerPage))
	}
	p.Init(PageOverflow, file, no)
	binary.LittleEndian.PutUint32(p.b[ovOffNext:], h.Next)
	binary.LittleEndian.PutUint32(p.b[ovOffLen:], h.Len)
	binary.LittleEndian.PutUint32(p.b[ovOffOwnerPage:], h.OwnerPage)
	binary.LittleEndian.PutUint16(p.b[ovOffOwnerSlot:], h.OwnerSlot)
	binary.LittleEndian.PutUint16(p.b[ovOffSeq:], h.Seq)
	n := copy(p.b[HeaderSize:], a)
	copy(p.b[HeaderSize+n:], b)
	p.RaiseLSN(lsn)
}

// Overflow returns an overflow page's header and data (which aliases the
// page).
func (p *Page) Overflow() (OverflowHeader, []byte) {
	if p.Type() != PageOverflow {
		panic(fmt.Sprintf("heap: overflow operation on a %v page", p.Type()))
	}
	h := overflowHeader(p.b[:])
	return h, p.b[HeaderSize : HeaderSize+int(h.Len)]
}

func overflowHeader(img []byte) OverflowHeader {
	return OverflowHeader{
		Next:      binary.LittleEndian.Uint32(img[ovOffNext:]),
		Len:       binary.LittleEndian.Uint32(img[ovOffLen:]),
		OwnerPage: binary.LittleEndian.Uint32(img[ovOffOwnerPage:]),
		OwnerSlot: binary.LittleEndian.Uint16(img[ovOffOwnerSlot:]),
		Seq:       binary.LittleEndian.Uint16(img[ovOffSeq:]),
	}
}

// checkOverflow validates the header of an overflow page image at page
// number no: a data length the page can hold, a next page and an owner
// that are not the page itself, and zero bytes after the data.
func checkOverflow(img []byte, no uint32) error {
	h := overflowHeader(img)
	switch {
	case h.Len == 0 || h.Len > OverflowCapacity:
		return fmt.Errorf("data length %d outside 1..%d", h.Len, OverflowCapacity)
	case h.Next == no:
		return fmt.Errorf("next page is the page itself")
	case h.OwnerPage == no || h.OwnerPage == NoPage:
		return fmt.Errorf("owner page %d", h.OwnerPage)
	case !allZero(img[HeaderSize+int(h.Len):]):
		return errors.New("nonzero bytes after the data")
	}
	return nil
}

// chainPages is the number of overflow pages that hold n bytes.
func chainPages(n uint64) uint64 { return (n + OverflowCapacity - 1) / OverflowCapacity }
