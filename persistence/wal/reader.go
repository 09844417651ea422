package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Stop says how a segment scan ended.
type Stop uint8

const (
	// StopSealed: the segment ends with its seal record, exactly at the end
	// of the file. The normal shape of every segment but the last.
	StopSealed Stop = iota + 1
	// StopEOF: the file ends exactly at a record boundary and there is no
	// seal. The normal shape of the last segment of a process that crashed
	// between writes.
	StopEOF
	// StopTorn: from Offset on, the bytes are not a valid record (partial,
	// checksum mismatch, zero-filled, garbage) and no valid record follows
	// them. The normal shape of the last segment of a process that crashed
	// in the middle of a write.
	StopTorn
	// StopCorrupt: the segment is damaged in a way no crash of the writer
	// can produce: bad bytes followed by a valid record with a later LSN,
	// a valid record with the wrong LSN or an unknown type, a malformed
	// seal, bytes after the seal, or a bad header.
	StopCorrupt
)

func (s Stop) String() string {
	switch s {
	case StopSealed:
		return "sealed"
	case StopEOF:
		return "clean end without seal"
	case StopTorn:
		return "torn tail"
	case StopCorrupt:
		return "corrupt"
	}
	return fmt.Sprintf("Stop(%d)", uint8(s))
}

// Errors that explain a StopCorrupt (ScanResult.Reason wraps one of these,
// or ErrInvalidType, ErrZeroLSN, ErrBadSeal, or a header error).
var (
	ErrLSNOrder       = errors.New("wal: record LSN out of sequence")
	ErrDataAfterSeal  = errors.New("wal: bytes after the seal record")
	ErrValidAfterTear = errors.New("wal: valid records follow damaged bytes")
	ErrZeroedTail     = errors.New("wal: zero-filled bytes")
	// ErrDurableDamaged: a sync mark after the damage says the damaged
	// bytes were made durable (mark.go).
	ErrDurableDamaged = errors.New("wal: bytes a completed fdatasync covered are damaged")
)

// ScanResult describes one segment scan: where the valid prefix ends and why.
type ScanResult struct {
	Header SegmentHeader // zero when the header did not decode
	Size   int64         // file size scanned
	Stop   Stop
	// Offset is the end of the valid prefix: the first byte that is not part
	// of an accepted record (Size for StopSealed and StopEOF; 0 for a bad
	// header; for ErrDataAfterSeal, the byte after the seal).
	Offset int64
	// LastLSN is the LSN of the last accepted record (the seal included), or
	// Header.FirstLSN-1 when there is none.
	LastLSN uint64
	// Records is the number of accepted records, the seal included.
	Records int64
	// Seal is the decoded seal and SealCRC its record's CRC (StopSealed).
	Seal    Seal
	SealCRC uint32
	// Digest is the segment digest (see DigestUpdate) of the accepted
	// records before the seal.
	Digest uint32
	// Reason says what is wrong at Offset (StopTorn and StopCorrupt).
	Reason error
	// After the damage (StopTorn and StopCorrupt found by scanning ahead):
	// the offset and LSN of the first valid record with an LSN above
	// LastLSN (-1 and 0 when there is none), and the highest such LSN.
	NextValidOffset int64
	NextValidLSN    uint64
	MaxLSNAfter     uint64
	// Durable is the durable point the sync marks of the valid prefix claim
	// (mark.go): every byte before it was covered by a completed fdatasync
	// when the last of them was written. 0 when there is none (format 1).
	Durable int64
	// DurableAfter is the highest durable point claimed by a sync mark
	// found after the damage, and DurableAfterOffset that mark's offset
	// (0 and -1 when there is none). DurableAfter > Offset means bytes
	// made durable are damaged: StopCorrupt.
	DurableAfter       int64
	DurableAfterOffset int64
}

// Link is the chain link naming this segment's end; meaningful for
// StopSealed only.
func (r ScanResult) Link() ChainLink {
	return ChainLink{FirstLSN: r.Header.FirstLSN, SealLSN: r.LastLSN, SealCRC: r.SealCRC}
}

// MaxLSN is the highest LSN the segment holds anywhere, valid prefix or
// records found after damage.
func (r ScanResult) MaxLSN() uint64 { return max(r.LastLSN, r.MaxLSNAfter) }

// ScanOptions configures ScanSegment.
type ScanOptions struct {
	// Visit, when set, is called for each accepted record in order, the seal
	// included, with the record's offset. The payload is valid only during
	// the call. An error stops the scan and is returned by ScanSegment.
	Visit func(rec Record, off int64) error
	// FirstLSN, when set, is the first LSN the segment should hold (from its
	// file name). It is used only when the header does not decode: the scan
	// then looks for valid records after the header anyway, so that the
	// result's MaxLSNAfter says which LSNs the damaged segment may hold.
	FirstLSN uint64
}

// scanChunk is how much of a segment the scanner reads at a time.
const scanChunk = 256 << 10

// ScanSegment reads the segment in r (size bytes) from the start and
// classifies where its valid prefix ends. The error is for I/O errors and
// errors returned by Visit; damage is reported in the result, never as an
// error. Memory use is bounded by the largest record actually present in
// the file (a length field is trusted only as far as the bytes that exist).
//
// When the valid prefix ends on bytes that are not a record, ScanSegment
// scans the rest of the file for a valid record with a later LSN: finding
// one means the damage is in the middle (StopCorrupt); finding none means a
// torn tail (StopTorn). A candidate must have a valid type, a checksum that
// matches, and an LSN in (LastLSN, LastLSN + 1 + distance/RecordOverhead],
// the only LSNs that could follow the damage that far on; this keeps the
// scan linear and ignores stale records with older LSNs.
func ScanSegment(r io.ReaderAt, size int64, opts ScanOptions) (ScanResult, error) {
	res := ScanResult{Size: size, NextValidOffset: -1, DurableAfterOffset: -1}
	w := window{r: r, size: size}
	hb, err := w.bytes(0, min(size, SegmentHeaderSize))
	if err != nil {
		return res, err
	}
	h, err := DecodeSegmentHeader(hb)
	if err != nil {
		if opts.FirstLSN == 0 {
			res.Stop, res.Reason = StopCorrupt, err
			return res, nil
		}
		// A bad header is never a torn write (segments are created
		// atomically); survey what the file holds anyway.
		res.LastLSN = opts.FirstLSN - 1
		return res, w.corrupt(&res, 0, 0, err)
	}
	res.Header = h
	res.LastLSN = h.FirstLSN - 1

	off := int64(SegmentHeaderSize)
	partOpen := false // the last record was a RecordPart (continuation.go)
	for {
		if off == size {
			res.Stop, res.Offset = StopEOF, off
			return res, nil
		}
		b, err := w.record(off)
		if err != nil {
			return res, err
		}
		rec, n, derr := DecodeRecord(b)
		switch {
		case errors.Is(derr, ErrIncomplete), errors.Is(derr, ErrTooLarge), errors.Is(derr, ErrChecksum):
			res.Offset, res.Reason = off, derr
			return res, w.damage(&res)
		case derr != nil:
			return res, w.corrupt(&res, off, rec.LSN, fmt.Errorf("%w (LSN field %d)", derr, rec.LSN))
		case rec.LSN != res.LastLSN+1:
			return res, w.corrupt(&res, off, rec.LSN,
				fmt.Errorf("%w: LSN %d where %d was expected", ErrLSNOrder, rec.LSN, res.LastLSN+1))
		}
		if rec.Type == RecordMark {
			// A sync mark opens a group: it takes no LSN, is not visited
			// and not part of the digest (mark.go).
			if h.Version < 2 {
				return res, w.corrupt(&res, off, 0, fmt.Errorf("%w: sync mark in a format %d segment", ErrInvalidType, h.Version))
			}
			q, err := decodeMark(rec, off, res.Durable)
			if err != nil {
				return res, w.corrupt(&res, off, 0, err)
			}
			res.Durable = q
			off += int64(n)
			continue
		}
		// Only the next part, or a recovery seal over a torn run, may
		// follow a part: the writer appends nothing else in between.
		if partOpen && (rec.Type == RecordCheckpoint ||
			rec.Type == RecordSeal && len(rec.Payload) > 0 && SealReason(rec.Payload[0]) != SealRecovery) {
			return res, w.corrupt(&res, off, rec.LSN, fmt.Errorf("%w: %v record at LSN %d", ErrPartOrder, rec.Type, rec.LSN))
		}
		partOpen = rec.Type == RecordPart
		var seal Seal
		if rec.Type == RecordSeal {
			if seal, err = DecodeSeal(rec.Payload); err != nil {
				return res, w.corrupt(&res, off, rec.LSN, err)
			}
			if seal.Digest != res.Digest {
				return res, w.corrupt(&res, off, rec.LSN, fmt.Errorf(
					"%w: digest %#08x, the records before it give %#08x", ErrBadSeal, seal.Digest, res.Digest))
			}
		}
		if rec.Type != RecordSeal {
			res.Digest = digestRecord(res.Digest, b[:n])
		}
		if opts.Visit != nil {
			if err := opts.Visit(rec, off); err != nil {
				return res, err
			}
		}
		off += int64(n)
		res.LastLSN = rec.LSN
		res.Records++
		if rec.Type == RecordSeal {
			res.Seal, res.SealCRC, res.Offset = seal, rec.CRC, off
			if off != size {
				return res, w.corrupt(&res, off, 0,
					fmt.Errorf("%w: seal at LSN %d ends at offset %d, the file at %d", ErrDataAfterSeal, rec.LSN, off, size))
			}
			res.Stop = StopSealed
			return res, nil
		}
	}
}

// window reads a file through one reusable buffer.
type window struct {
	r     io.ReaderAt
	size  int64
	buf   []byte
	start int64 // file offset of buf[0]
}

// bytes returns the file's bytes [off, off+n), which must lie inside the
// file. The slice is valid until the next call.
func (w *window) bytes(off int64, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > w.size {
		panic(fmt.Sprintf("wal: window read [%d,%d) outside a file of %d bytes", off, off+n, w.size))
	}
	if off >= w.start && off+n <= w.start+int64(len(w.buf)) {
		return w.buf[off-w.start : off-w.start+n], nil
	}
	want := min(max(n, scanChunk), w.size-off)
	if int64(cap(w.buf)) < want {
		w.buf = make([]byte, want)
	}
	w.buf = w.buf[:want]
	w.start = off
	m, err := w.r.ReadAt(w.buf, off)
	if int64(m) < want {
		w.buf = w.buf[:0]
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("wal: read %d bytes at offset %d: %w", want, off, err)
	}
	return w.buf, nil
}

// record returns the bytes of the record at off as far as they exist: the
// whole record when its length field fits the file and MaxPayload, else
// just enough for DecodeRecord to report what is wrong.
func (w *window) record(off int64) ([]byte, error) {
	rem := w.size - off
	if rem < RecordHeaderSize {
		return w.bytes(off, rem)
	}
	h, err := w.bytes(off, RecordHeaderSize)
	if err != nil {
		return nil, err
	}
	n := int64(binary.LittleEndian.Uint32(h))
	if n > MaxPayload || int64(RecordOverhead)+n > rem {
		return h, nil
	}
	return w.bytes(off, RecordOverhead+n)
}

// damage finishes a scan that stopped on bytes that are not a record at
// res.Offset: it scans ahead and decides between StopTorn and StopCorrupt.
func (w *window) damage(res *ScanResult) error {
	from := res.Offset
	if zero, err := w.allZero(from); err != nil {
		return err
	} else if zero {
		res.Stop = StopTorn
		res.Reason = fmt.Errorf("%w: %d bytes from offset %d to the end (was: %w)", ErrZeroedTail, w.size-from, from, res.Reason)
		return nil
	}
	if err := w.survey(res, from); err != nil {
		return err
	}
	if res.DurableAfter > from {
		// Bytes a completed fdatasync covered are damaged: no power loss
		// does that.
		res.Stop = StopCorrupt
		res.Reason = fmt.Errorf("%w: %w at offset %d, yet the sync mark at offset %d says every byte before offset %d was durable",
			ErrDurableDamaged, res.Reason, from, res.DurableAfterOffset, res.DurableAfter)
		if res.NextValidOffset >= 0 {
			res.Reason = fmt.Errorf("%w (%w: LSN %d starts at offset %d)", res.Reason, ErrValidAfterTear, res.NextValidLSN, res.NextValidOffset)
		}
		return nil
	}
	if res.NextValidOffset < 0 {
		res.Stop = StopTorn
		return nil
	}
	if res.Header.Version >= 2 {
		// Valid records follow the damage, but no sync mark says the
		// damaged bytes were ever durable: a power loss kept some pages
		// of writes after the last fdatasync and not others. Nothing
		// there was acknowledged under appendfsync always.
		res.Stop = StopTorn
		res.Reason = fmt.Errorf("%w at offset %d, beyond the last durable point (offset %d): a power loss's unsynced pages (valid records up to LSN %d follow and are cut)",
			res.Reason, from, max(res.Durable, res.DurableAfter, SegmentHeaderSize), res.MaxLSNAfter)
		return nil
	}
	res.Stop = StopCorrupt
	res.Reason = fmt.Errorf("%w: %w at offset %d, yet a valid record with LSN %d starts at offset %d",
		ErrValidAfterTear, res.Reason, from, res.NextValidLSN, res.NextValidOffset)
	return nil
}

// corrupt ends a scan at damage that no crash explains, at off. badLSN is
// the LSN of a checksummed record found there (0 if none): it was written,
// so it counts among the LSNs the segment holds. The rest of the file is
// surveyed for the same reason.
func (w *window) corrupt(res *ScanResult, off int64, badLSN uint64, reason error) error {
	res.Stop, res.Offset, res.Reason = StopCorrupt, off, reason
	if badLSN > res.LastLSN {
		res.MaxLSNAfter = max(res.MaxLSNAfter, badLSN)
	}
	return w.survey(res, off)
}

// survey looks for valid records after the damage at from: checksummed
// records of a defined type whose LSN could follow res.LastLSN that far
// into the file. It records the first one and the highest LSN among them.
func (w *window) survey(res *ScanResult, from int64) error {
	for y := from + 1; y+RecordOverhead <= w.size; y++ {
		h, err := w.bytes(y, RecordHeaderSize)
		if err != nil {
			return err
		}
		n := int64(binary.LittleEndian.Uint32(h))
		lsn := binary.LittleEndian.Uint64(h[4:])
		typ := RecordType(h[12])
		if n > MaxPayload || RecordOverhead+n > w.size-y || !typ.Valid() ||
			lsn <= res.LastLSN || lsn > res.LastLSN+1+uint64(y-from)/RecordOverhead {
			continue
		}
		b, err := w.bytes(y, RecordOverhead+n)
		if err != nil {
			return err
		}
		rec, _, err := DecodeRecord(b)
		if err != nil {
			continue
		}
		if typ == RecordMark {
			if q, ok := markQ(rec); ok && q > res.DurableAfter {
				res.DurableAfter, res.DurableAfterOffset = q, y
			}
			continue
		}
		if res.NextValidOffset < 0 {
			res.NextValidOffset, res.NextValidLSN = y, lsn
		}
		res.MaxLSNAfter = max(res.MaxLSNAfter, lsn)
	}
	return nil
}

// allZero reports whether the file is zero from off to its end.
func (w *window) allZero(off int64) (bool, error) {
	for off < w.size {
		n := min(w.size-off, scanChunk)
		b, err := w.bytes(off, n)
		if err != nil {
			return false, err
		}
		for _, c := range b {
			if c != 0 {
				return false, nil
			}
		}
		off += n
	}
	return true, nil
}
