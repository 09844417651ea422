package wal

import (
	"errors"
	"fmt"
	"math"
)

// DefaultSegmentSize is the rotation bound when none is configured.
const DefaultSegmentSize = 64 << 20

// MinSegmentSize is the smallest rotation bound: a header, one empty record
// and a seal, each group opened by its sync mark.
const MinSegmentSize = SegmentHeaderSize + RecordOverhead + sealRecordSize + 2*markRecordSize

// maxSpareBuffer is the largest group buffer the Appender keeps for reuse
// after its group is done; bigger ones (a group that held a huge value) go
// to the garbage collector.
const maxSpareBuffer = 4 << 20

var (
	// ErrRecordTooLarge is returned for a checkpoint payload above the
	// record limit (data records are split instead).
	ErrRecordTooLarge = errors.New("wal: record payload exceeds the maximum")
	// errLSNSpace: the LSNs are spent (not in this universe's lifetime).
	errLSNSpace = errors.New("wal: LSN space exhausted")
	// ErrPoisoned is returned by every append after Poison: an fsync of the
	// log failed, so no later fsync can be trusted to have made anything
	// durable (fsyncgate). Errors wrap both this and the original cause.
	ErrPoisoned = errors.New("wal: log poisoned by a failed fsync")
)

// AppenderOptions configures an Appender.
type AppenderOptions struct {
	Shard uint32
	// SegmentSize is the rotation bound in bytes, header and seal included
	// (DefaultSegmentSize when zero). A single record larger than the bound
	// gets a segment of its own.
	SegmentSize int64
	// NextLSN is the LSN of the first record to append: Recover's NextLSN.
	NextLSN uint64
	// Prev is the sealed segment this log continues (Recover's Tail); the
	// zero link for a new log.
	Prev ChainLink
	// MaxRecordPayload is the largest payload of one record (MaxPayload
	// when zero): a data record above it is split into continuation
	// records (continuation.go). Tests lower it to split small records.
	MaxRecordPayload int
}

// Group is a run of encoded records bound for one place in one segment file.
// The Appender decides the layout; whoever does the I/O follows it:
//
//  1. If Create is set, create the segment file for Segment (CreateSegment:
//     header, fsync, rename, directory fsync) before anything else, unless
//     an earlier try of this same group already created it.
//  2. Write Buf at Offset in that segment file.
//  3. Under appendfsync always, fdatasync the file. If Sealed is set,
//     fdatasync it whatever the mode, then close it: no byte is ever
//     written to it again, and the next group creates the next segment.
//     (Syncing the old segment before the next one exists is what keeps a
//     power loss from leaving a torn segment in the middle of the chain.)
//  4. Report the outcome with Appender.Done, and Appender.MarkDurable once
//     an fdatasync that started after the write completed has succeeded.
//
// The I/O side owns Buf from Take until Done, and must not touch the Group
// after Done.
//
// Buf starts with the group's sync mark (mark.go), which Take fills in.
type Group struct {
	Segment  SegmentHeader
	Create   bool
	Offset   int64
	Buf      []byte
	FirstLSN uint64
	LastLSN  uint64
	Records  int
	Sealed   bool
	SealCRC  uint32 // CRC of the seal record, when Sealed
}

// End is the offset just past the group in its segment.
func (g *Group) End() int64 { return g.Offset + int64(len(g.Buf)) }

// Appender assigns LSNs and encodes records into group buffers, on the
// shard's thread, without I/O. It lays the records out in segments: it knows
// each segment's header and each group's offset, appends the seal record
// and starts the next segment when a segment reaches the size bound, and
// tracks which LSNs are written and which are durable.
//
// At most one group is in flight at a time (taken and not yet Done): a
// second write→fdatasync chain issued before the first completes could
// finish first, and "durable through LSN X" would stop meaning that
// everything below X is durable. Records appended meanwhile wait in the next
// group, which is how group commit batches under load.
//
// State per LSN, in order: assigned (Append returned it) → written (the
// group holding it is Done without error) → durable (MarkDurable covered
// it). A group that fails is put back at the head of the queue, with the
// same LSNs, offset and bytes, and goes out again on the next Take:
// an appended record is never dropped.
//
// Not safe for concurrent use.
type Appender struct {
	shard   uint32
	segSize int64
	maxPart int // the largest payload of one record (MaxRecordPayload)

	next    uint64 // next LSN to assign
	written uint64 // every LSN <= written is written
	durable uint64 // every LSN <= durable is durable

	// writtenAt is where the last written group ended, syncedAt the end of
	// the last write covered by a completed fdatasync: the sync mark of
	// the next group taken in that segment claims syncedAt.End.
	writtenAt WritePoint
	syncedAt  WritePoint

	seg    SegmentHeader // segment the next record goes to
	segOff int64         // bytes of seg assigned so far, header included
	digest uint32        // digest of seg's records so far (DigestUpdate)

	queue    []*Group // not yet taken, in order; the last is open unless Sealed
	inflight *Group

	spare   []*Group
	poison  error
	lastErr error
}

// NewAppender returns an Appender that continues a log after recovery.
func NewAppender(o AppenderOptions) *Appender {
	if o.NextLSN == 0 {
		panic("wal: Appender with NextLSN 0")
	}
	if !o.Prev.IsZero() && o.Prev.SealLSN >= o.NextLSN {
		panic(fmt.Sprintf("wal: Appender NextLSN %d not after the previous segment %v", o.NextLSN, o.Prev))
	}
	size := o.SegmentSize
	if size == 0 {
		size = DefaultSegmentSize
	}
	if size < MinSegmentSize {
		panic(fmt.Sprintf("wal: segment size %d below the minimum %d", size, MinSegmentSize))
	}
	part := o.MaxRecordPayload
	if part == 0 {
		part = MaxPayload
	}
	if part < 1 || part > MaxPayload {
		panic(fmt.Sprintf("wal: record payload limit %d outside [1, %d]", part, MaxPayload))
	}
	a := &Appender{
		shard:   o.Shard,
		segSize: size,
		maxPart: part,
		next:    o.NextLSN,
		written: o.NextLSN - 1,
		durable: o.NextLSN - 1,
		segOff:  SegmentHeaderSize,

		writtenAt: WritePoint{LSN: o.NextLSN - 1},
	}
	a.seg = SegmentHeader{Version: FormatVersion, Shard: o.Shard, FirstLSN: o.NextLSN, Prev: o.Prev}
	return a
}

// Continuation is where a log that continues this one starts once it is
// closed: the next LSN and the link to the segment Seal ended. It panics
// while the current segment holds records and no seal: a log continued
// from there would fork the chain.
func (a *Appender) Continuation() (next uint64, prev ChainLink) {
	if a.segOff != SegmentHeaderSize {
		panic("wal: Continuation of a log whose segment is not sealed")
	}
	return a.next, a.seg.Prev
}

// WritePoint names the end of a written group: the LSN of its last record,
// its segment's first LSN and the offset just past it in that segment.
type WritePoint struct {
	LSN     uint64
	Segment uint64
	End     int64
}

// WrittenPoint is where the last written group ended. An fdatasync of its
// segment submitted now covers everything before it: the writer passes it
// to MarkDurableAt when that fdatasync succeeds.
func (a *Appender) WrittenPoint() WritePoint { return a.writtenAt }

// NextLSN is the LSN the next appended record will get.
func (a *Appender) NextLSN() uint64 { return a.next }

// WrittenLSN is the highest LSN such that it and every LSN below it are
// written (not necessarily durable).
func (a *Appender) WrittenLSN() uint64 { return a.written }

// DurableLSN is the highest LSN such that it and every LSN below it are
// durable.
func (a *Appender) DurableLSN() uint64 { return a.durable }

// Unwritten is the number of encoded bytes not yet written: queued groups
// and the one in flight. The writer compares it with its back-pressure
// bound.
func (a *Appender) Unwritten() int {
	n := 0
	for _, g := range a.queue {
		n += len(g.Buf)
	}
	if a.inflight != nil {
		n += len(a.inflight.Buf)
	}
	return n
}

// InFlight reports whether a group is taken and not yet Done.
func (a *Appender) InFlight() bool { return a.inflight != nil }

// LastError is the error of the most recent failed group, cleared by the
// next successful one (aof_last_write_status).
func (a *Appender) LastError() error { return a.lastErr }

// Poisoned returns the error that poisoned the log, or nil.
func (a *Appender) Poisoned() error { return a.poison }

// Poison marks the log as failed for good (an fsync failed). Every later
// append fails with an error wrapping ErrPoisoned and err.
func (a *Appender) Poison(err error) {
	if err == nil {
		panic("wal: Poison(nil)")
	}
	if a.poison == nil {
		a.poison = err
	}
}

// Append encodes a record of type typ (data or checkpoint; seals are the
// Appender's own) and returns its LSN. A data payload larger than the
// record limit is split into continuation records, and the LSN returned
// is the last part's, the logical record's; a checkpoint payload must fit
// in one record.
func (a *Appender) Append(typ RecordType, payload []byte) (uint64, error) {
	if typ != RecordData && typ != RecordCheckpoint {
		return 0, fmt.Errorf("wal: cannot append a record of type %v", typ)
	}
	if len(payload) > a.maxPart && typ != RecordData {
		return 0, fmt.Errorf("%w: %v record of %d bytes", ErrRecordTooLarge, typ, len(payload))
	}
	size, records := splitSize(len(payload), a.maxPart)
	g, lsn, err := a.reserve(size, records)
	if err != nil {
		return 0, err
	}
	if records == 1 {
		g.Buf = AppendRecord(g.Buf, lsn, typ, payload)
		a.digest = digestRecord(a.digest, g.Buf)
		return lsn, nil
	}
	growFor(g, size)
	w := partWriter{a: a}
	w.begin(g, typ, lsn, len(payload))
	w.write(payload)
	return w.end(), nil
}

// AppendCommand encodes a data record holding the command (see
// EncodeCommand) straight into the group buffer and returns its LSN. A
// command larger than the record limit is split into continuation records,
// encoded in place all the same; its LSN is the last part's.
func (a *Appender) AppendCommand(db int, args [][]byte) (uint64, error) {
	n := CommandSize(db, args)
	size, records := splitSize(n, a.maxPart)
	g, lsn, err := a.reserve(size, records)
	if err != nil {
		return 0, err
	}
	if records == 1 {
		start := len(g.Buf)
		g.Buf = appendRecordHeader(g.Buf, lsn, RecordData, n)
		g.Buf = AppendCommand(g.Buf, db, args)
		g.Buf = finishRecord(g.Buf, start)
		a.digest = digestRecord(a.digest, g.Buf)
		return lsn, nil
	}
	if db < 0 || len(args) == 0 {
		panic(fmt.Sprintf("wal: command for db %d with %d arguments", db, len(args)))
	}
	growFor(g, size)
	w := partWriter{a: a}
	w.begin(g, RecordData, lsn, n)
	w.uvarint(uint64(db))
	w.uvarint(uint64(len(args)))
	for _, arg := range args {
		w.uvarint(uint64(len(arg)))
		w.write(arg)
	}
	return w.end(), nil
}

// CanAppend returns the error the next append would fail with whatever its
// size, or nil: a caller that must not change anything it cannot log asks
// before it changes it.
func (a *Appender) CanAppend() error {
	if a.poison != nil {
		return a.poisonedErr()
	}
	if a.next >= math.MaxUint64-1-1<<32 {
		return errLSNSpace
	}
	return nil
}

// Seal ends the current segment with a seal record, as for a clean
// shutdown. It returns false (and does nothing) when the current segment
// holds no record yet: its file has not been created and there is nothing
// to seal.
func (a *Appender) Seal(reason SealReason) (bool, error) {
	if a.poison != nil {
		return false, a.poisonedErr()
	}
	if a.segOff == SegmentHeaderSize {
		return false, nil
	}
	a.seal(reason)
	return true, nil
}

func (a *Appender) poisonedErr() error {
	return fmt.Errorf("%w: %w", ErrPoisoned, a.poison)
}

// reserve assigns the next records LSNs to records of size bytes in all
// (the parts of one logical record, or one record), sealing the current
// segment first when they and a seal would not fit in it, and returns the
// group the caller must append exactly those bytes to and the first LSN.
// The parts of a split record always share one segment and one group.
func (a *Appender) reserve(size, records int) (*Group, uint64, error) {
	if err := a.CanAppend(); err != nil {
		return nil, 0, err
	}
	// Room for these records, the seal that must follow them and the
	// seal's LSN: CanAppend leaves 2^32 LSNs, more than any record splits
	// into.
	// The bound counts a sync mark for the group these records may open
	// and one for the group the seal may need.
	if a.segOff > SegmentHeaderSize && a.segOff+int64(size)+sealRecordSize+2*markRecordSize > a.segSize {
		a.seal(SealRotate)
	}
	g := a.open()
	lsn := a.next
	a.next += uint64(records)
	a.segOff += int64(size)
	if g.Records == 0 {
		g.FirstLSN = lsn
	}
	g.LastLSN = a.next - 1
	g.Records += records
	return g, lsn, nil
}

// open returns the group that takes the next record, starting one at the
// current end of the current segment when the last queued group is sealed or
// there is none.
func (a *Appender) open() *Group {
	if n := len(a.queue); n > 0 && !a.queue[n-1].Sealed {
		return a.queue[n-1]
	}
	var g *Group
	if n := len(a.spare); n > 0 {
		g = a.spare[n-1]
		a.spare = a.spare[:n-1]
		*g = Group{Buf: g.Buf[:0]}
	} else {
		g = &Group{}
	}
	g.Segment = a.seg
	g.Offset = a.segOff
	g.Create = a.segOff == SegmentHeaderSize
	// Every group opens with its sync mark; its LSN field names the
	// group's first record, the next LSN to assign.
	g.Buf = appendMark(g.Buf, a.next)
	a.segOff += markRecordSize
	a.queue = append(a.queue, g)
	return g
}

// seal appends the seal record to the current segment and moves on to the
// next one, whose header links back to it.
func (a *Appender) seal(reason SealReason) {
	g := a.open()
	lsn := a.next
	a.next++
	start := len(g.Buf)
	g.Buf = appendRecordHeader(g.Buf, lsn, RecordSeal, SealPayloadSize)
	g.Buf = AppendSeal(g.Buf, Seal{Reason: reason, Digest: a.digest})
	g.Buf = finishRecord(g.Buf, start)
	if g.Records == 0 {
		g.FirstLSN = lsn
	}
	g.LastLSN = lsn
	g.Records++
	g.Sealed = true
	g.SealCRC = recordCRC(g.Buf)
	a.seg = SegmentHeader{
		Version:  FormatVersion,
		Shard:    a.shard,
		FirstLSN: a.next,
		Prev:     ChainLink{FirstLSN: a.seg.FirstLSN, SealLSN: lsn, SealCRC: g.SealCRC},
	}
	a.segOff = SegmentHeaderSize
	a.digest = 0
}

// Take hands the oldest queued group to the I/O side. It returns nil when a
// group is already in flight or nothing is queued.
func (a *Appender) Take() *Group {
	if a.inflight != nil || len(a.queue) == 0 {
		return nil
	}
	g := a.queue[0]
	// Shift in place (the queue is short): reslicing from the front would
	// make every later append reallocate.
	n := copy(a.queue, a.queue[1:])
	a.queue[n] = nil
	a.queue = a.queue[:n]
	a.inflight = g
	// The mark claims what completed fdatasyncs made durable of this
	// segment by now: at least its header, fsynced at creation. At most
	// one group is in flight, so nothing after g.Offset can be.
	q := int64(SegmentHeaderSize)
	if a.syncedAt.Segment == g.Segment.FirstLSN {
		q = a.syncedAt.End
	}
	if q > g.Offset {
		panic(fmt.Sprintf("wal: segment %d durable through offset %d, beyond the group at %d", g.Segment.FirstLSN, q, g.Offset))
	}
	fillMark(g.Buf, q)
	return g
}

// Done reports the outcome of the in-flight group g's write (and of the
// segment creation it asked for). On success its records are written; on
// failure the group goes back to the head of the queue to be written again,
// as it is, by a later Take, and LastError reports err.
func (a *Appender) Done(g *Group, err error) {
	if g == nil || g != a.inflight {
		panic("wal: Done for a group that is not in flight")
	}
	a.inflight = nil
	if err != nil {
		a.lastErr = err
		a.queue = append(a.queue, nil)
		copy(a.queue[1:], a.queue)
		a.queue[0] = g
		return
	}
	if g.FirstLSN != a.written+1 {
		panic(fmt.Sprintf("wal: group %d..%d written after LSN %d", g.FirstLSN, g.LastLSN, a.written))
	}
	a.lastErr = nil
	a.written = g.LastLSN
	a.writtenAt = WritePoint{LSN: g.LastLSN, Segment: g.Segment.FirstLSN, End: g.End()}
	if cap(g.Buf) <= maxSpareBuffer && len(a.spare) < 2 {
		*g = Group{Buf: g.Buf[:0]}
		a.spare = append(a.spare, g)
	}
}

// MarkDurable records that an fdatasync covering every write up to lsn
// succeeded. lsn must not exceed WrittenLSN; a smaller one than already
// recorded is ignored. When lsn is the last written group's, the sync
// marks learn where that group ended; otherwise use MarkDurableAt.
func (a *Appender) MarkDurable(lsn uint64) {
	if lsn > a.written {
		panic(fmt.Sprintf("wal: MarkDurable(%d) beyond the written LSN %d", lsn, a.written))
	}
	if lsn == a.writtenAt.LSN {
		a.MarkDurableAt(a.writtenAt)
		return
	}
	a.durable = max(a.durable, lsn)
}

// MarkDurableAt records that an fdatasync submitted when WrittenPoint was
// p succeeded: every record through p.LSN is durable, and so is every byte
// of segment p.Segment before p.End.
func (a *Appender) MarkDurableAt(p WritePoint) {
	if p.LSN > a.written {
		panic(fmt.Sprintf("wal: MarkDurableAt(%d) beyond the written LSN %d", p.LSN, a.written))
	}
	a.durable = max(a.durable, p.LSN)
	if p.Segment > a.syncedAt.Segment || p.Segment == a.syncedAt.Segment && p.End > a.syncedAt.End {
		a.syncedAt = p
	}
}
