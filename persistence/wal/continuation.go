package wal

import (
	"errors"
	"fmt"
	"slices"
)

// Continuation records. A data record whose payload exceeds the part limit
// (MaxPayload, or AppenderOptions.MaxRecordPayload) is written as a run of
// records with consecutive LSNs in one segment: every record but the last
// has type RecordPart, the last has the logical record's type (data), and
// their payloads concatenated are the logical record's payload. Each part
// is an ordinary record (its own length, LSN, type and CRC, its own place
// in the segment digest), so the scanner needs nothing new to tell a torn
// tail from damage. The logical record has the LSN of its last part: that
// is the LSN Append returns, the one a reply waits for and the one replay
// applies it at. A run that does not reach its last part (a crash tore the
// group that held it) is dropped whole.
//
// Why this shape: the last part carrying the real type means a logical
// record that fits in one record is byte for byte what it was before
// continuation records existed, and a reader that only looks for
// checkpoint records (recovery.Open's full-page-image scan) skips parts
// without knowing them.

// ErrPartOrder is reported for a record that cannot follow a RecordPart:
// a checkpoint record, or a seal the writer wrote (rotate, shutdown). The
// writer keeps a split record's parts together in one segment and appends
// nothing between them, so this is damage, never a crash's shape.
var ErrPartOrder = errors.New("wal: a continuation record is not followed by its next part")

// splitSize is the encoded size of a logical payload of n bytes split
// into parts of at most part bytes, and the number of records.
func splitSize(n, part int) (size, records int) {
	records = max(1, (n+part-1)/part)
	return n + records*RecordOverhead, records
}

// partWriter encodes a logical record's payload into consecutive part
// records in a group buffer, in pieces as the caller produces them, so that
// a command of hundreds of megabytes is encoded once, where it is written.
type partWriter struct {
	a     *Appender
	g     *Group
	typ   RecordType // the last part's type
	lsn   uint64     // the current part's LSN
	left  int        // logical payload bytes not yet written
	room  int        // bytes left in the current part
	start int        // offset in g.Buf of the current part
}

// begin opens the first part of a logical payload of n bytes whose first
// LSN is lsn.
func (w *partWriter) begin(g *Group, typ RecordType, lsn uint64, n int) {
	w.g, w.typ, w.lsn, w.left = g, typ, lsn, n
	w.open()
}

func (w *partWriter) open() {
	n := min(w.left, w.a.maxPart)
	typ := RecordPart
	if n == w.left {
		typ = w.typ
	}
	w.start = len(w.g.Buf)
	w.g.Buf = appendRecordHeader(w.g.Buf, w.lsn, typ, n)
	w.room = n
}

// close finishes the current part: its CRC, and its place in the digest.
func (w *partWriter) close() {
	w.g.Buf = finishRecord(w.g.Buf, w.start)
	w.a.digest = digestRecord(w.a.digest, w.g.Buf)
}

func (w *partWriter) write(p []byte) {
	for len(p) > 0 {
		if w.room == 0 {
			w.close()
			w.lsn++
			w.open()
		}
		k := min(len(p), w.room)
		w.g.Buf = append(w.g.Buf, p[:k]...)
		w.room -= k
		w.left -= k
		p = p[k:]
	}
}

func (w *partWriter) uvarint(v uint64) {
	var b [10]byte
	n := 0
	for v >= 0x80 {
		b[n] = byte(v) | 0x80
		v >>= 7
		n++
	}
	b[n] = byte(v)
	w.write(b[:n+1])
}

// end finishes the last part and returns its LSN, the logical record's.
func (w *partWriter) end() uint64 {
	if w.left != 0 || w.room != 0 {
		panic(fmt.Sprintf("wal: split record ends with %d bytes unwritten", w.left+w.room))
	}
	w.close()
	return w.lsn
}

// Joiner reassembles logical records from the records of a segment, given
// in order: it holds the payloads of RecordPart records until the part
// that ends them. Recovery uses one per segment; a run of parts still open
// when the segment ends (a torn tail) is dropped with it.
type Joiner struct {
	buf   []byte
	parts int
}

// Add takes the segment's next record. It returns the logical record that
// rec completes and true: rec itself when no part precedes it, or a record
// with rec's LSN and type whose payload joins the parts' and rec's (valid
// until the next Add). It returns false for a RecordPart (more follow) and
// for a seal, which drops an open run (recovery seals a torn tail there).
func (j *Joiner) Add(rec Record) (Record, bool, error) {
	switch rec.Type {
	case RecordPart:
		j.buf = append(j.buf, rec.Payload...)
		j.parts++
		return Record{}, false, nil
	case RecordSeal:
		j.Reset()
		return rec, false, nil
	}
	if j.parts == 0 {
		return rec, true, nil
	}
	if rec.Type != RecordData {
		return Record{}, false, fmt.Errorf("%w: %v record at LSN %d after %d parts", ErrPartOrder, rec.Type, rec.LSN, j.parts)
	}
	j.buf = append(j.buf, rec.Payload...)
	rec.Payload = j.buf
	j.buf, j.parts = j.buf[:0], 0
	return rec, true, nil
}

// Open is the number of parts held, waiting for the part that ends them.
func (j *Joiner) Open() int { return j.parts }

// Reset drops an open run of parts.
func (j *Joiner) Reset() {
	j.buf, j.parts = j.buf[:0], 0
	if cap(j.buf) > maxSpareBuffer {
		j.buf = nil
	}
}

// growFor makes room in g's buffer for size more bytes at once, so that a
// split record is not copied by append's doubling.
func growFor(g *Group, size int) { g.Buf = slices.Grow(g.Buf, size) }
