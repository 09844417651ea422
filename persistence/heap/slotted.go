package heap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Slotted (KV) page layout. See the package documentation.
const (
	// SlotSize is the size of one entry of the slot array.
	SlotSize = 4
	// MaxRecordSize is the largest record a slot can hold: an empty page's
	// body less one slot.
	MaxRecordSize = PageSize - HeaderSize - SlotSize
	// MaxInline is the most key‖value bytes a record without an overflow
	// chain can hold.
	MaxInline = MaxRecordSize - RecordHeaderSize
	// MaxSlots bounds the slot count: every slot holds at least a record
	// header.
	MaxSlots = (PageSize - HeaderSize) / (SlotSize + RecordHeaderSize)

	kvOffSlotCount = offSpecific      // u16 number of slots
	kvOffUpper     = offSpecific + 2  // u16 offset of the lowest record byte
	kvOffDead      = offSpecific + 4  // u16 bytes of deleted records above upper
	kvOffReserved  = offSpecific + 6  // 10 bytes, zero
	slotsOff       = HeaderSize       // the slot array
	kvReservedEnd  = offSpecific + 16 // == HeaderSize
)

func (p *Page) mustKV() {
	if p.Type() != PageKV {
		panic(fmt.Sprintf("heap: slotted operation on a %v page", p.Type()))
	}
}

// SlotCount is the number of slots, live or dead. Slot numbers are stable:
// a record keeps its slot number until it is deleted, compaction included.
func (p *Page) SlotCount() int { return int(binary.LittleEndian.Uint16(p.b[kvOffSlotCount:])) }

func (p *Page) setSlotCount(n int) { binary.LittleEndian.PutUint16(p.b[kvOffSlotCount:], uint16(n)) }
func (p *Page) upper() int         { return int(binary.LittleEndian.Uint16(p.b[kvOffUpper:])) }
func (p *Page) setUpper(u int)     { binary.LittleEndian.PutUint16(p.b[kvOffUpper:], uint16(u)) }
func (p *Page) dead() int          { return int(binary.LittleEndian.Uint16(p.b[kvOffDead:])) }
func (p *Page) setDead(n int)      { binary.LittleEndian.PutUint16(p.b[kvOffDead:], uint16(n)) }
func (p *Page) lower() int         { return slotsOff + SlotSize*p.SlotCount() }
func (p *Page) slot(i int) (off, n int) {
	s := p.b[slotsOff+SlotSize*i:]
	return int(binary.LittleEndian.Uint16(s)), int(binary.LittleEndian.Uint16(s[2:]))
}
func (p *Page) setSlot(i, off, n int) {
	s := p.b[slotsOff+SlotSize*i:]
	binary.LittleEndian.PutUint16(s, uint16(off))
	binary.LittleEndian.PutUint16(s[2:], uint16(n))
}

// FreeSpace is the number of bytes available to new records and their
// slots once the page is compacted: the gap between the slot array and
// the records plus the bytes of deleted records.
func (p *Page) FreeSpace() int {
	p.mustKV()
	return p.upper() - p.lower() + p.dead()
}

// Room is the size of a record InsertRecord is sure to accept (compacting
// if it must), assuming it needs a new slot: the figure the free-space map
// keeps.
func (p *Page) Room() int {
	p.mustKV()
	return slottedRoom(p.b[:])
}

// slottedRoom is Room of the image img of a slotted page.
func slottedRoom(img []byte) int {
	count := int(binary.LittleEndian.Uint16(img[kvOffSlotCount:]))
	if count >= MaxSlots {
		return 0
	}
	upper := int(binary.LittleEndian.Uint16(img[kvOffUpper:]))
	dead := int(binary.LittleEndian.Uint16(img[kvOffDead:]))
	free := upper - (slotsOff + SlotSize*count) + dead
	return max(free-SlotSize, 0)
}

// LiveRecords is the number of live slots.
func (p *Page) LiveRecords() int {
	p.mustKV()
	n := 0
	for i := range p.SlotCount() {
		if off, _ := p.slot(i); off != 0 {
			n++
		}
	}
	return n
}

// InsertRecord stores the record with head h and inline bytes
// inlineKey‖inlineValue in the page and returns its slot number. It reuses
// the lowest dead slot, or appends one; it compacts the page when the free
// space is fragmented. It fails with ErrNoSpace when the record does not
// fit, leaving the page unchanged, and with another error when h and the
// inline bytes disagree (a caller bug). It raises the page LSN to h.KeyLSN.
// It does not allocate unless it fails.
func (p *Page) InsertRecord(h RecordHead, inlineKey, inlineValue []byte) (uint16, error) {
	p.mustKV()
	n := len(inlineKey) + len(inlineValue)
	if len(inlineValue) > 0 && len(inlineKey) != int(h.KeyLen) {
		return 0, fmt.Errorf("heap: insert record: %d inline value bytes after a partial key (%d of %d bytes)",
			len(inlineValue), len(inlineKey), h.KeyLen)
	}
	if err := checkHead(&h, n, p.Number()); err != nil {
		return 0, fmt.Errorf("heap: insert record: %w", err)
	}
	size := recordSize(h, n)
	if size > MaxRecordSize {
		return 0, fmt.Errorf("%w: record of %d bytes exceeds %d", ErrNoSpace, size, MaxRecordSize)
	}
	count := p.SlotCount()
	slot := count
	for i := range count {
		if off, _ := p.slot(i); off == 0 {
			slot = i
			break
		}
	}
	need := size
	if slot == count {
		need += SlotSize
		if count >= MaxSlots {
			return 0, fmt.Errorf("%w: %d slots", ErrNoSpace, count)
		}
	}
	if need > p.FreeSpace() {
		return 0, ErrNoSpace
	}
	if p.upper()-p.lower() < need {
		p.Compact()
	}
	if slot == count {
		p.setSlotCount(count + 1)
	}
	at := p.upper() - size
	if at < p.lower() {
		panic(fmt.Sprintf("heap: page %d: record at %d below slot array end %d after compaction", p.Number(), at, p.lower()))
	}
	putRecord(p.b[at:at+size], h, inlineKey, inlineValue)
	p.setSlot(slot, at, size)
	p.setUpper(at)
	p.RaiseLSN(h.KeyLSN)
	return uint16(slot), nil
}

// Record returns the record in slot. The view aliases the page.
func (p *Page) Record(slot int) (RecordView, error) {
	p.mustKV()
	if slot < 0 || slot >= p.SlotCount() {
		return RecordView{}, fmt.Errorf("%w: slot %d of %d", ErrNoRecord, slot, p.SlotCount())
	}
	off, n := p.slot(slot)
	if off == 0 {
		return RecordView{}, fmt.Errorf("%w: slot %d is dead", ErrNoRecord, slot)
	}
	if off < p.upper() || off+n > PageSize {
		// Pages are validated when they are decoded and only this file
		// changes them: a bad slot here is a bug.
		panic(fmt.Sprintf("heap: page %d slot %d at [%d,%d) outside the records [%d,%d)", p.Number(), slot, off, off+n, p.upper(), PageSize))
	}
	var v RecordView
	if err := decodeRecord(p.b[off:off+n], p.Number(), &v); err != nil {
		return RecordView{}, fmt.Errorf("heap: page %d slot %d: %w", p.Number(), slot, err)
	}
	return v, nil
}

// DeleteRecord kills the record in slot: its bytes count as dead (reclaimed
// by the next compaction) and the slot number becomes free for reuse.
// Trailing dead slots are dropped from the slot array; a page left without
// records is reset to empty.
func (p *Page) DeleteRecord(slot int) error {
	p.mustKV()
	if slot < 0 || slot >= p.SlotCount() {
		return fmt.Errorf("%w: slot %d of %d", ErrNoRecord, slot, p.SlotCount())
	}
	off, n := p.slot(slot)
	if off == 0 {
		return fmt.Errorf("%w: slot %d is dead", ErrNoRecord, slot)
	}
	p.setSlot(slot, 0, 0)
	p.setDead(p.dead() + n)
	count := p.SlotCount()
	for count > 0 {
		if off, _ := p.slot(count - 1); off != 0 {
			break
		}
		count--
	}
	p.setSlotCount(count)
	if count == 0 {
		clear(p.b[HeaderSize:])
		p.setUpper(PageSize)
		p.setDead(0)
	}
	return nil
}

// Compact moves the live records together at the end of the page, so that
// all free space is one gap between the slot array and the records. Slot
// numbers do not change. The freed bytes are zeroed. It does not allocate.
func (p *Page) Compact() {
	p.mustKV()
	tmp := p.b
	pos := PageSize
	for i := range p.SlotCount() {
		off, n := p.slot(i)
		if off == 0 {
			continue
		}
		pos -= n
		copy(p.b[pos:pos+n], tmp[off:off+n])
		p.setSlot(i, pos, n)
	}
	clear(p.b[p.lower():pos])
	p.setUpper(pos)
	p.setDead(0)
}

// slotRecord is a live record of a slotted page image, decoded, and its
// slot: what checkSlotted hands the boot scan.
type slotRecord struct {
	slot uint16
	view RecordView
}

// checkSlotted validates the slotted structure of a page image whose header
// has been verified: the slot array and the records fit the page, no two
// records overlap, every record decodes, the dead-byte count accounts for
// every byte between the records start and the page end that no record
// holds, and the last slot is live. When recs is not nil, each live record
// it decoded is appended to *recs, in slot order; the views alias img.
func checkSlotted(img []byte, recs *[]slotRecord) error {
	count := int(binary.LittleEndian.Uint16(img[kvOffSlotCount:]))
	upper := int(binary.LittleEndian.Uint16(img[kvOffUpper:]))
	dead := int(binary.LittleEndian.Uint16(img[kvOffDead:]))
	no := binary.LittleEndian.Uint32(img[offNumber:])
	if !allZero(img[kvOffReserved:kvReservedEnd]) {
		return errors.New("nonzero reserved header bytes")
	}
	lower := slotsOff + SlotSize*count
	if count > MaxSlots || lower > upper || upper > PageSize {
		return fmt.Errorf("%d slots end at %d, records start at %d", count, lower, upper)
	}
	if count == 0 && (upper != PageSize || dead != 0) {
		return fmt.Errorf("no slots, records start at %d, %d dead bytes", upper, dead)
	}
	var used [PageSize / 64]uint64 // one bit per byte of the page
	var scratch RecordView         // where records decode when recs is nil
	live := 0
	for i := range count {
		s := img[slotsOff+SlotSize*i:]
		off, n := int(binary.LittleEndian.Uint16(s)), int(binary.LittleEndian.Uint16(s[2:]))
		if off == 0 {
			if n != 0 {
				return fmt.Errorf("dead slot %d with length %d", i, n)
			}
			if i == count-1 {
				return fmt.Errorf("last slot %d is dead", i)
			}
			continue
		}
		if off < upper || n < RecordHeaderSize || off+n > PageSize {
			return fmt.Errorf("slot %d at [%d,%d) outside the records [%d,%d)", i, off, off+n, upper, PageSize)
		}
		if markRange(&used, off, off+n) {
			return fmt.Errorf("slot %d at [%d,%d) overlaps another record", i, off, off+n)
		}
		v := &scratch
		if recs != nil {
			// Grown in place rather than appended: appending builds the
			// element on the stack and copies it.
			rs := slices.Grow(*recs, 1)
			rs = rs[:len(rs)+1]
			rs[len(rs)-1].slot = uint16(i)
			v = &rs[len(rs)-1].view
			*recs = rs
		}
		if err := decodeRecord(img[off:off+n], no, v); err != nil {
			return fmt.Errorf("slot %d: %w", i, err)
		}
		live += n
	}
	if live+dead != PageSize-upper {
		return fmt.Errorf("%d live and %d dead bytes in a record area of %d", live, dead, PageSize-upper)
	}
	return nil
}

// markRange sets the bits [lo, hi) of bm and reports whether any of them
// was already set. It works a word at a time.
func markRange(bm *[PageSize / 64]uint64, lo, hi int) (overlap bool) {
	for lo < hi {
		w, b := lo/64, lo%64
		n := min(64-b, hi-lo)
		mask := (^uint64(0) >> (64 - n)) << b
		if n == 64 {
			mask = ^uint64(0)
		}
		if bm[w]&mask != 0 {
			overlap = true
		}
		bm[w] |= mask
		lo += n
	}
	return overlap
}
