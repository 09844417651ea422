package heap

import (
	"errors"
	"fmt"
)

// scanChunk is how many pages Open reads from a file at a time.
const scanChunk = 64

// ScanRecord is a live record found by Open, handed to Options.OnRecord. It
// is valid only during the call: the key and the inline bytes alias Open's
// read buffer.
type ScanRecord struct {
	ID   RecordID
	Head RecordHead

	view    RecordView
	file    *File
	scratch *Page
	keyBuf  []byte
}

// Key returns the record's key. A key too long to be inline is read from
// the overflow chain (synchronously, through the file).
func (r *ScanRecord) Key() ([]byte, error) {
	if k, ok := r.view.Key(); ok {
		return k, nil
	}
	var err error
	r.keyBuf, err = appendSpan(r.keyBuf[:0], r.ID, r.view, r.fileStep(), 0, uint64(r.Head.KeyLen))
	return r.keyBuf, err
}

// AppendValue appends the record's value to dst, reading its overflow chain
// (synchronously, through the file) when it has one.
func (r *ScanRecord) AppendValue(dst []byte) ([]byte, error) {
	if v, ok := r.view.Value(); ok {
		return append(dst, v...), nil
	}
	k := uint64(r.Head.KeyLen)
	return appendSpan(dst, r.ID, r.view, r.fileStep(), k, k+r.Head.ValueLen)
}

func (r *ScanRecord) fileStep() chainStep {
	return pageStep(r.ID.File, func(no uint32) (*Page, error) {
		if err := r.file.ReadPage(no, r.scratch); err != nil {
			return nil, err
		}
		return r.scratch, nil
	})
}

// ovMeta is what the boot scan keeps of an overflow page: its header, and
// whether a live record's chain reached it.
type ovMeta struct {
	h       OverflowHeader
	isOv    bool
	reached bool
}

// chainHead is a record with an overflow chain, found by the boot scan.
type chainHead struct {
	id    RecordID
	first uint32
	bytes uint64
}

// load reads every page of file id, verifies it, adds the file to the
// free-space map, and reports its live records to onRecord.
func (h *Heap) load(id uint32, onRecord func(*ScanRecord) error) error {
	file, err := OpenFile(h.fsys, h.dir, id)
	if err != nil {
		return err
	}
	h.handles[id] = file
	pages, tail, err := file.Size()
	if err != nil {
		return err
	}
	if tail != 0 {
		return fmt.Errorf("heap: load %s: %w", file.Path(),
			pageErr(id, pages, ErrShortPage, "%d bytes at the end of the file (a torn write that extended it)", tail))
	}
	fs := h.space.addFile(id)
	fs.grow(int(pages))
	ovs := make([]ovMeta, pages)
	var heads []chainHead
	buf := make([]byte, scanChunk*PageSize)
	recs := make([]slotRecord, 0, MaxSlots)
	rec := &ScanRecord{file: file, scratch: new(Page)}
	for first := uint32(0); first < pages; first += scanChunk {
		n := int(min(scanChunk, pages-first))
		got, err := file.ReadRaw(first, buf[:n*PageSize])
		if err != nil {
			return err
		}
		if got != n {
			return fmt.Errorf("heap: load %s: file shrank to %d pages while it was read", file.Path(), first+uint32(got))
		}
		for i := range n {
			no := first + uint32(i)
			img := buf[i*PageSize : (i+1)*PageSize]
			recs = recs[:0]
			typ, err := checkPage(img, id, no, &recs)
			switch {
			case errors.Is(err, ErrZeroPage):
				h.space.pushFree(fs, no)
				continue
			case err != nil:
				return fmt.Errorf("heap: load %s: %w", file.Path(), err)
			}
			switch typ {
			case PageFree:
				h.space.pushFree(fs, no)
			case PageOverflow:
				ovs[no] = ovMeta{h: overflowHeader(img), isOv: true}
			case PageKV:
				if err := loadRecords(rec, recs, no, &heads, onRecord); err != nil {
					return err
				}
				if len(recs) == 0 {
					h.space.pushFree(fs, no)
				} else {
					h.space.setKV(fs, no, slottedRoom(img))
					fs.liveRecords += len(recs)
				}
			}
		}
	}
	// Every chain must be whole; an overflow page no chain reaches is
	// free (its record was freed, and the page was not written since).
	for _, hd := range heads {
		step := func(no uint32) (OverflowHeader, []byte, error) {
			if no >= pages || !ovs[no].isOv {
				return OverflowHeader{}, nil, pageErr(id, no, ErrCorrupt, "overflow chain of %v reaches a page that is not an overflow page", hd.id)
			}
			return ovs[no].h, nil, nil
		}
		err := walkChain(hd.id, hd.first, hd.bytes, step, func(no uint32, _ []byte) (bool, error) {
			if ovs[no].reached {
				return false, pageErr(id, no, ErrCorrupt, "overflow page is in two chains")
			}
			ovs[no].reached = true
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("heap: load %s: %w", file.Path(), err)
		}
	}
	for no, m := range ovs {
		switch {
		case m.reached:
			h.space.setOverflow(fs, uint32(no))
			fs.overflowPages++
		case m.isOv:
			h.space.pushFree(fs, uint32(no))
		}
	}
	return nil
}

// loadRecords hands onRecord, through rec, the live records recs of page
// no of rec's file (the views alias the scan's read buffer), and adds
// those with an overflow chain to heads.
func loadRecords(rec *ScanRecord, recs []slotRecord, no uint32, heads *[]chainHead, onRecord func(*ScanRecord) error) error {
	for i := range recs {
		v := &recs[i].view
		rid := RecordID{rec.file.ID(), no, recs[i].slot}
		if v.Overflow != NoPage {
			*heads = append(*heads, chainHead{rid, v.Overflow, v.ChainBytes()})
		}
		if onRecord != nil {
			rec.ID, rec.Head, rec.view = rid, v.RecordHead, *v
			if err := onRecord(rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// IndexEntry is where a key's version lives in the heap, and what the
// keyspace needs to know about it without its value.
type IndexEntry struct {
	ID     RecordID
	Kind   uint8
	Expiry int64
	KeyLSN uint64
}

// Index is the boot-time map from keys to their records: the reference
// for loading the heap into the keyspace (its Add is an OnRecord). A key
// found more than once (an old version whose deferred free had not reached
// the disk) keeps the version with the highest key LSN; the others are
// listed in Superseded, to be freed.
type Index struct {
	Keys       map[string]IndexEntry
	Superseded []RecordID
}

// NewIndex returns an empty index.
func NewIndex() *Index { return &Index{Keys: make(map[string]IndexEntry)} }

// Add records r.
func (ix *Index) Add(r *ScanRecord) error {
	key, err := r.Key()
	if err != nil {
		return err
	}
	e := IndexEntry{ID: r.ID, Kind: r.Head.Kind, Expiry: r.Head.Expiry, KeyLSN: r.Head.KeyLSN}
	old, ok := ix.Keys[string(key)]
	switch {
	case !ok:
		ix.Keys[string(key)] = e
	case e.KeyLSN > old.KeyLSN:
		ix.Superseded = append(ix.Superseded, old.ID)
		ix.Keys[string(key)] = e
	default:
		ix.Superseded = append(ix.Superseded, e.ID)
	}
	return nil
}
