package heap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Page geometry and header layout. See the package documentation for the
// byte-by-byte format.
const (
	// PageSize is the size of every heap page, on disk and in memory.
	PageSize = 4096
	// HeaderSize is the size of the page header every page type shares
	// (the common part and the type-specific part).
	HeaderSize = 48
	// PageMagic opens every heap page.
	PageMagic = "MDHP"
	// PageVersion is the page format version this package writes and reads.
	PageVersion = 1
	// NoPage is the page number that names no page: the end of an overflow
	// chain, a record without one.
	NoPage uint32 = 0xFFFFFFFF
	// MaxPages is the number of pages a heap file can hold: page numbers
	// are 0..MaxPages-1 (NoPage is never a page).
	MaxPages = NoPage

	offMagic    = 0
	offType     = 4
	offVersion  = 5
	offReserved = 6 // 2 bytes
	offLSN      = 8
	offCRC      = 16
	offFile     = 20
	offNumber   = 24
	offReserve2 = 28 // 4 bytes
	offSpecific = 32 // 16 type-specific bytes
)

// PageType says what a page holds. Zero is never a valid type, so that a
// zero-filled page can never decode as one.
type PageType uint8

const (
	// PageKV is a slotted page of records.
	PageKV PageType = 1
	// PageOverflow holds one piece of a record's key and value bytes that
	// did not fit in its slotted page.
	PageOverflow PageType = 2
	// PageFree holds nothing: a page whose records were all deleted.
	PageFree PageType = 3
)

// Valid reports whether t is a page type this format defines.
func (t PageType) Valid() bool { return t >= PageKV && t <= PageFree }

func (t PageType) String() string {
	switch t {
	case PageKV:
		return "kv"
	case PageOverflow:
		return "overflow"
	case PageFree:
		return "free"
	}
	return fmt.Sprintf("PageType(%d)", uint8(t))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var zeroCRC [4]byte

// pageCRC is CRC-32C of the 4096-byte image b with its CRC field taken as
// zero, so that the checksum can be verified and set in place.
func pageCRC(b []byte) uint32 {
	c := crc32.Update(0, castagnoli, b[:offCRC])
	c = crc32.Update(c, castagnoli, zeroCRC[:])
	return crc32.Update(c, castagnoli, b[offCRC+4:PageSize])
}

// Errors that describe a page image that is not a valid page. Decoders wrap
// them in a *PageError that names the file and the page.
var (
	// ErrShortPage: the image is not PageSize bytes long (a partial page at
	// the end of a file: a write that extended the file was torn).
	ErrShortPage = errors.New("heap: page image is not 4096 bytes")
	// ErrZeroPage: every byte is zero. A page that was never written: a
	// hole left when the file was extended past it. Not damage.
	ErrZeroPage = errors.New("heap: page was never written (all zero)")
	// ErrBadMagic: the page does not start with PageMagic.
	ErrBadMagic = errors.New("heap: not a heap page (bad magic)")
	// ErrChecksum: the stored CRC does not match the content. A torn write
	// (part new, part old) or damage.
	ErrChecksum = errors.New("heap: page checksum mismatch")
	// ErrVersion: a page format this build does not read.
	ErrVersion = errors.New("heap: unsupported page format version")
	// ErrBadType: the checksum is right but the page type is unknown.
	ErrBadType = errors.New("heap: unknown page type")
	// ErrWrongPlace: an intact page that belongs to another file or page
	// number: it was written to the wrong place (or the file was copied or
	// renamed).
	ErrWrongPlace = errors.New("heap: page belongs to another place")
	// ErrCorrupt: the checksum is right but the content is impossible
	// (slot offsets outside the page, overlapping records, a bad record
	// header, nonzero reserved bytes). Never a torn write: a bug or a
	// page written by something else.
	ErrCorrupt = errors.New("heap: corrupt page")
)

// PageError is what the decoders return: which page, and what is wrong with
// it (one of the Err* values above, wrapped with detail). errors.Is works on
// it for the sentinel errors.
type PageError struct {
	File uint32 // the file id the page was read from (or expected in)
	Page uint32 // the page number it was read from
	Err  error
}

func (e *PageError) Error() string {
	return fmt.Sprintf("heap: file %08x page %d: %v", e.File, e.Page, e.Err)
}

func (e *PageError) Unwrap() error { return e.Err }

func pageErr(file, page uint32, sentinel error, format string, args ...any) error {
	if format == "" {
		return &PageError{File: file, Page: page, Err: sentinel}
	}
	return &PageError{File: file, Page: page, Err: fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)}
}

// Page is one heap page in memory: exactly the bytes that go to disk. The
// header fields and the slotted layout are read and written in place, so
// encoding is sealing (setting the CRC) and decoding is validating and
// copying. The zero Page is not a valid page; use Init or Decode.
type Page struct {
	b [PageSize]byte
}

// Init makes p an empty page of type typ that lives at page number no of
// file id file, with page LSN 0.
func (p *Page) Init(typ PageType, file, no uint32) {
	if !typ.Valid() {
		panic(fmt.Sprintf("heap: init page with type %d", typ))
	}
	if no == NoPage {
		panic("heap: init page NoPage")
	}
	p.b = [PageSize]byte{}
	copy(p.b[offMagic:], PageMagic)
	p.b[offType] = byte(typ)
	p.b[offVersion] = PageVersion
	binary.LittleEndian.PutUint32(p.b[offFile:], file)
	binary.LittleEndian.PutUint32(p.b[offNumber:], no)
	if typ == PageKV {
		p.setUpper(PageSize)
	}
}

// Type is the page type.
func (p *Page) Type() PageType { return PageType(p.b[offType]) }

// LSN is the page LSN: the highest LSN of a change in the page (see
// RaiseLSN). The WAL must be durable through it before the page is
// written.
func (p *Page) LSN() uint64 { return binary.LittleEndian.Uint64(p.b[offLSN:]) }

// RaiseLSN sets the page LSN to lsn if that is higher; the page LSN never
// moves back.
func (p *Page) RaiseLSN(lsn uint64) {
	if lsn > p.LSN() {
		binary.LittleEndian.PutUint64(p.b[offLSN:], lsn)
	}
}

// File is the id of the file the page belongs to.
func (p *Page) File() uint32 { return binary.LittleEndian.Uint32(p.b[offFile:]) }

// Number is the page's number in its file.
func (p *Page) Number() uint32 { return binary.LittleEndian.Uint32(p.b[offNumber:]) }

// Bytes sets the page's CRC and returns the PageSize bytes to write at
// PageOffset(p.Number()) of the page's file. The slice aliases the page:
// a write that is still in flight when the page changes writes a mix of
// old and new bytes, so a caller that lets the page change before the write
// completes must write a copy (EncodeInto).
func (p *Page) Bytes() []byte {
	binary.LittleEndian.PutUint32(p.b[offCRC:], pageCRC(p.b[:]))
	return p.b[:]
}

// EncodeInto copies the page into dst[:PageSize] with the CRC set: the
// bytes to write, independent of later changes to p. It does not allocate.
func (p *Page) EncodeInto(dst []byte) {
	if len(dst) < PageSize {
		panic(fmt.Sprintf("heap: encode page into %d bytes", len(dst)))
	}
	copy(dst, p.b[:])
	binary.LittleEndian.PutUint32(dst[offCRC:], pageCRC(dst))
}

// CRC is the checksum stored in the page (set by Bytes and EncodeInto).
func (p *Page) CRC() uint32 { return binary.LittleEndian.Uint32(p.b[offCRC:]) }

// Decode validates img as the page at page number no of file id file (see
// CheckPage) and, when it is valid, copies it into p. It does not allocate
// unless it fails. On failure p is left unchanged.
func (p *Page) Decode(img []byte, file, no uint32) error {
	if _, err := CheckPage(img, file, no); err != nil {
		return err
	}
	copy(p.b[:], img)
	return nil
}

// CheckPage validates the image img in place, as the page that should be at
// page number no of file id file, and returns its type. The checks, in
// order: length (ErrShortPage), all zero (ErrZeroPage), magic
// (ErrBadMagic), checksum (ErrChecksum), version (ErrVersion), type
// (ErrBadType), file id and page number (ErrWrongPlace), then the
// type-specific structure (ErrCorrupt). Every error is a *PageError. It
// never reads outside img, never modifies it, and does not allocate unless
// it fails.
func CheckPage(img []byte, file, no uint32) (PageType, error) {
	return checkPage(img, file, no, nil)
}

// checkPage is CheckPage. For a slotted page, when recs is not nil, it also
// appends to *recs every live record as it validates it (checkSlotted):
// the boot scan reads them all, and so decodes each record once. After a
// failure *recs holds some of the page's records, or none: the caller
// drops them.
func checkPage(img []byte, file, no uint32, recs *[]slotRecord) (PageType, error) {
	if len(img) != PageSize {
		return 0, pageErr(file, no, ErrShortPage, "%d bytes", len(img))
	}
	if string(img[offMagic:offMagic+len(PageMagic)]) != PageMagic {
		if allZero(img) {
			return 0, pageErr(file, no, ErrZeroPage, "")
		}
		return 0, pageErr(file, no, ErrBadMagic, "")
	}
	stored := binary.LittleEndian.Uint32(img[offCRC:])
	if got := pageCRC(img); got != stored {
		return 0, pageErr(file, no, ErrChecksum, "stored %#08x, computed %#08x", stored, got)
	}
	if img[offVersion] != PageVersion {
		return 0, pageErr(file, no, ErrVersion, "version %d (this build reads %d)", img[offVersion], PageVersion)
	}
	typ := PageType(img[offType])
	if !typ.Valid() {
		return 0, pageErr(file, no, ErrBadType, "type %d", img[offType])
	}
	gotFile := binary.LittleEndian.Uint32(img[offFile:])
	gotNo := binary.LittleEndian.Uint32(img[offNumber:])
	if gotFile != file || gotNo != no {
		return typ, pageErr(file, no, ErrWrongPlace, "page says file %08x page %d", gotFile, gotNo)
	}
	if binary.LittleEndian.Uint16(img[offReserved:]) != 0 || binary.LittleEndian.Uint32(img[offReserve2:]) != 0 {
		return typ, pageErr(file, no, ErrCorrupt, "reserved header bytes are not zero")
	}
	var err error
	switch typ {
	case PageKV:
		err = checkSlotted(img, recs)
	case PageOverflow:
		err = checkOverflow(img, no)
	case PageFree:
		if !allZero(img[offSpecific:HeaderSize]) {
			err = errors.New("free page with nonzero header fields")
		}
	}
	if err != nil {
		return typ, pageErr(file, no, ErrCorrupt, "%v page: %v", typ, err)
	}
	return typ, nil
}

// allZero reports whether every byte of b is zero, eight at a time.
func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
