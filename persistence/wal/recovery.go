package wal

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/moond-db/moond/persistence/vfs"
)

// SalvageEnv is the environment variable that asks for salvage when set to
// 1, like the --wal-salvage flag. Reading it is the caller's business.
const SalvageEnv = "MOOND_WAL_SALVAGE"

// DefaultProgressEvery is how many scanned bytes pass between Progress
// calls when RecoverOptions.ProgressEvery is zero.
const DefaultProgressEvery = 64 << 20

// RecoverOptions configures Recover.
type RecoverOptions struct {
	FS    vfs.FS // vfs.Default when nil
	Dir   string // the shard's WAL directory, <shard dir>/wal
	Shard uint32 // every segment header must name it
	// Redo is the first LSN to replay: Apply sees the records with
	// lsn >= Redo (0 means 1).
	Redo uint64
	// Floor is the lowest NextLSN the caller accepts (say, from the control
	// file): LSNs below it may have been handed out before.
	Floor uint64
	// Salvage continues past damage that would otherwise refuse recovery,
	// and reports what was skipped in RecoverResult.Skipped.
	Salvage bool
	// Apply receives every data and checkpoint record with lsn >= Redo, in
	// LSN order. The payload is valid only during the call. An error stops
	// recovery and is returned (wrapped); files are left as they were.
	Apply func(lsn uint64, typ RecordType, payload []byte) error
	// ReadOnly reads the log and changes nothing: no torn tail is cut, no
	// segment sealed, no half-created segment removed (a first pass over
	// the log, before the recovery proper).
	ReadOnly bool
	// Progress, when set, is called every ProgressEvery scanned bytes and
	// once at the end.
	Progress      func(Progress)
	ProgressEvery int64
}

// Progress reports how far a recovery has got.
type Progress struct {
	Segment       string // the segment being scanned
	Segments      int    // segments scanned so far, the current one included
	SegmentsTotal int    // segments to scan
	Records       int64  // records scanned
	Applied       int64  // records passed to Apply
	Bytes         int64  // bytes scanned
	Elapsed       time.Duration
	Done          bool
}

// MBPerSec is the scan rate so far, in MB (10^6 bytes) per second.
func (p Progress) MBPerSec() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Bytes) / 1e6 / p.Elapsed.Seconds()
}

// Skipped describes damage that salvage stepped over.
type Skipped struct {
	Segment string
	// [FromOffset, ToOffset) are the bytes of Segment that were not
	// replayed.
	FromOffset, ToOffset int64
	// [FromLSN, ToLSN] are the LSNs that were lost, as far as the log can
	// tell; FromLSN > ToLSN when no LSN is known to be lost (a broken link
	// between segments whose LSNs are contiguous).
	FromLSN, ToLSN uint64
	Reason         error
	// SavedAs names the copy of the skipped bytes, when recovery cut them
	// off the last segment, or the name the segment was moved to.
	SavedAs string
}

func (s Skipped) String() string {
	lost := "no LSNs known lost"
	if s.FromLSN <= s.ToLSN {
		lost = fmt.Sprintf("LSNs %d..%d lost", s.FromLSN, s.ToLSN)
	}
	saved := ""
	if s.SavedAs != "" {
		saved = ", bytes kept in " + s.SavedAs
	}
	return fmt.Sprintf("%s: skipped bytes %d..%d, %s%s: %v", s.Segment, s.FromOffset, s.ToOffset, lost, saved, s.Reason)
}

// Truncation describes the torn tail recovery cut off the last segment.
type Truncation struct {
	Segment string
	Offset  int64 // the new size, before the seal was appended
	Bytes   int64 // bytes removed
	// Durable is the last durable point the segment's sync marks claim
	// (0 for a format-1 segment): everything cut lies after it.
	Durable int64
	Reason  error // what the scan found at Offset
}

func (t Truncation) String() string {
	return fmt.Sprintf("%s: cut %d bytes from offset %d (durable through offset %d): %v", t.Segment, t.Bytes, t.Offset, t.Durable, t.Reason)
}

// RecoverResult describes a finished recovery.
type RecoverResult struct {
	// NextLSN is the LSN for the writer's first record: above every LSN
	// found on disk (and the seal recovery appended), and not below Floor
	// or Redo. LSNs are never reused.
	NextLSN uint64
	// LastLSN is the highest LSN found in the log, the seal recovery
	// appended included; 0 when there is no segment.
	LastLSN uint64
	// Tail links to the last segment, which is sealed when Recover returns:
	// the writer's first segment continues from it. Zero when there is none.
	Tail ChainLink
	// Segments is the number of segment files found, Scanned the number
	// read (those wholly below Redo are not).
	Segments, Scanned int
	Records           int64 // records scanned, seals included
	Applied           int64 // records passed to Apply
	Bytes             int64 // bytes scanned
	// SealedSegment is the path of the segment recovery sealed, if any.
	SealedSegment string
	// Truncated describes the torn tail cut off, if any.
	Truncated *Truncation
	// Skipped lists what salvage stepped over (empty without salvage).
	Skipped []Skipped
	// RemovedTemp lists half-created segment files (*.log.tmp) removed.
	RemovedTemp []string
	Elapsed     time.Duration
}

// MidChainTearError is the refusal to recover a log whose acknowledged
// history is damaged: a tear or corruption in a segment that is not the
// last, corruption (not a torn tail) in the last one, a bad segment header,
// a broken link between segments, or a missing segment.
type MidChainTearError struct {
	Shard   uint32
	Segment string // path of the damaged segment
	Offset  int64  // byte offset of the damage in Segment
	LastLSN uint64 // the last good LSN before the damage
	Last    bool   // Segment is the last segment of the log
	Reason  error
}

func (e *MidChainTearError) Error() string {
	where := "a segment before the last"
	if e.Last {
		where = "the last segment, in a way a crash cannot explain"
	}
	return fmt.Sprintf("wal: shard %d: the write-ahead log is damaged in %s: segment %s, byte offset %d (last good LSN %d): %v; "+
		"acknowledged writes after this point would be lost, so recovery refuses to continue; "+
		"to skip the damage and start with what can be read, restart with --wal-salvage (or %s=1), which reports exactly what it skips",
		e.Shard, where, e.Segment, e.Offset, e.LastLSN, e.Reason, SalvageEnv)
}

func (e *MidChainTearError) Unwrap() error { return e.Reason }

// DamagedLog marks it as a damaged log's refusal (see DamagedLog).
func (e *MidChainTearError) DamagedLog() {}

// DamagedLog is implemented by the errors that refuse a boot because the
// log's history is damaged or missing, each with the way out in its text:
// moond exits with status 70 (EX_SOFTWARE) for every one of them, and with
// other statuses for everything else. Other packages' errors of the kind
// (recovery's missing history) implement it too.
type DamagedLog interface {
	error
	DamagedLog()
}

// unorderedError is salvage's refusal of a segment that does not start
// after what was replayed: it cannot be placed in the history.
type unorderedError struct {
	shard      uint32
	path       string
	first, max uint64
}

func (e *unorderedError) Error() string {
	return fmt.Sprintf("wal: shard %d: segment %s starts at LSN %d, not after LSN %d already replayed; salvage cannot order it: "+
		"move the segment out of the WAL directory (its records are lost) and start again", e.shard, e.path, e.first, e.max)
}

// DamagedLog marks it as a damaged log's refusal.
func (e *unorderedError) DamagedLog() {}

// segFile is a segment file found in the directory.
type segFile struct {
	lsn  uint64 // from the name
	path string
}

type recovery struct {
	o   RecoverOptions
	fs  vfs.FS
	res RecoverResult

	start     time.Time
	nextProg  int64
	segIndex  int
	segsTotal int

	// prev is the scan of the previous segment when it ended sealed and the
	// chain is intact up to it; nil otherwise.
	prev *ScanResult
	// last is the highest LSN accepted so far, in order.
	last uint64
	// maxSeen is the highest LSN seen anywhere (NextLSN must exceed it).
	maxSeen uint64
}

// Recover replays the WAL of one shard from o.Redo and leaves it ready for a
// writer: see the package documentation for what it checks and repairs.
//
// Recovery runs in one pass: records are passed to Apply as their segment
// is scanned, so on an error some records may have been applied; the caller
// must then discard what it built (boot refuses). Files are modified only
// at the end, once every segment has been read: the last segment's torn
// tail is cut off and the segment sealed.
func Recover(o RecoverOptions) (*RecoverResult, error) {
	if o.Dir == "" {
		return nil, errors.New("wal: Recover without a directory")
	}
	r := &recovery{o: o, fs: o.FS, start: time.Now()}
	if r.fs == nil {
		r.fs = vfs.Default
	}
	if r.o.Redo == 0 {
		r.o.Redo = 1
	}
	if r.o.ProgressEvery <= 0 {
		r.o.ProgressEvery = DefaultProgressEvery
	}
	r.nextProg = r.o.ProgressEvery
	if err := r.run(); err != nil {
		return nil, err
	}
	r.res.Elapsed = time.Since(r.start)
	r.res.NextLSN = max(r.maxSeen+1, r.o.Floor, r.o.Redo)
	r.res.LastLSN = r.maxSeen
	r.progress("", true)
	return &r.res, nil
}

func (r *recovery) run() error {
	segs, err := r.list()
	if err != nil {
		return err
	}
	r.res.Segments = len(segs)
	if len(segs) == 0 {
		return nil
	}
	// Segments wholly below the redo point are not read: the first one to
	// scan is the last whose first LSN is at or below Redo.
	start := 0
	for i, s := range segs {
		if s.lsn <= r.o.Redo {
			start = i
		}
	}
	r.segsTotal = len(segs) - start
	for i := start; i < len(segs); i++ {
		r.segIndex = i - start + 1
		if err := r.segment(segs[i], i == start, i == len(segs)-1, segs, i); err != nil {
			return err
		}
	}
	return nil
}

// list finds the segment files, sorted by first LSN, and removes the
// temporary files of segments whose creation never finished.
func (r *recovery) list() ([]segFile, error) {
	names, err := r.fs.List(r.o.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("wal: list %s: %w", r.o.Dir, err)
	}
	var segs []segFile
	for _, name := range names {
		path := filepath.Join(r.o.Dir, name)
		if isTempSegment(name) {
			if r.o.ReadOnly {
				continue
			}
			if err := r.fs.Remove(path); err != nil {
				return nil, fmt.Errorf("wal: remove half-created segment: %w", err)
			}
			r.res.RemovedTemp = append(r.res.RemovedTemp, path)
			continue
		}
		if lsn, ok := ParseSegmentName(name); ok {
			segs = append(segs, segFile{lsn: lsn, path: path})
			r.maxSeen = max(r.maxSeen, lsn-1)
		}
	}
	if len(r.res.RemovedTemp) > 0 {
		if err := vfs.SyncDir(r.fs, r.o.Dir); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(segs, func(a, b segFile) int { return cmp.Compare(a.lsn, b.lsn) })
	return segs, nil
}

// damage refuses recovery, or with salvage records what is skipped and lets
// it go on.
func (r *recovery) damage(seg string, last bool, off int64, lastGood uint64, reason error, skip Skipped) error {
	if !r.o.Salvage {
		return &MidChainTearError{Shard: r.o.Shard, Segment: seg, Offset: off, LastLSN: lastGood, Last: last, Reason: reason}
	}
	skip.Segment, skip.Reason = seg, reason
	r.res.Skipped = append(r.res.Skipped, skip)
	return nil
}

func (r *recovery) segment(s segFile, first, last bool, segs []segFile, i int) error {
	f, err := r.fs.Open(s.path)
	if err != nil {
		return fmt.Errorf("wal: open segment: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("wal: stat segment %s: %w", s.path, err)
	}
	size := fi.Size()
	// nextFirst bounds the LSNs this segment may hold when it is not the last.
	nextFirst := uint64(0)
	if !last {
		nextFirst = segs[i+1].lsn
	}
	r.res.Scanned++

	// The header first: nothing of a segment is applied before it is known
	// to belong where it is.
	h, herr := ReadSegmentHeader(f)
	if herr != nil && errors.Is(herr, ErrVersion) {
		return fmt.Errorf("wal: segment %s: %w; was it written by a newer moond?", s.path, herr)
	}
	if herr == nil {
		switch {
		case h.Shard != r.o.Shard:
			herr = fmt.Errorf("%w: header names shard %d", ErrBadHeader, h.Shard)
		case h.FirstLSN != s.lsn:
			herr = fmt.Errorf("%w: header names first LSN %d, the file name %d", ErrBadHeader, h.FirstLSN, s.lsn)
		}
	}
	if herr != nil && !isHeaderDamage(herr) {
		return fmt.Errorf("wal: read header of %s: %w", s.path, herr)
	}
	if herr != nil {
		return r.badHeader(f, s, size, last, nextFirst, herr)
	}

	if err := r.checkLink(s, h, first, last); err != nil {
		return err
	}

	base := r.res.Bytes
	// The parts of a split record are in one segment; a run still open
	// when the segment ends was torn and is dropped with the tail.
	var parts Joiner
	res, err := ScanSegment(f, size, ScanOptions{Visit: func(rec Record, off int64) error {
		r.res.Records++
		r.res.Bytes = base + off + int64(rec.Size())
		rec, whole, err := parts.Add(rec)
		if err != nil {
			return fmt.Errorf("wal: segment %s at offset %d: %w", s.path, off, err)
		}
		if whole && rec.LSN >= r.o.Redo && r.o.Apply != nil {
			if err := r.o.Apply(rec.LSN, rec.Type, rec.Payload); err != nil {
				return fmt.Errorf("wal: apply LSN %d from %s: %w", rec.LSN, s.path, err)
			}
			r.res.Applied++
		}
		if r.res.Bytes >= r.nextProg {
			r.progress(s.path, false)
			r.nextProg = r.res.Bytes + r.o.ProgressEvery
		}
		return nil
	}})
	if err != nil {
		return err
	}
	r.res.Bytes = base + size
	r.maxSeen = max(r.maxSeen, res.MaxLSN())
	if res.Records > 0 {
		r.last = res.LastLSN
	}

	switch {
	case res.Stop == StopSealed:
		r.prev = &res
		if last {
			r.res.Tail = res.Link()
		}
		return nil
	case last && (res.Stop == StopEOF || res.Stop == StopTorn):
		return r.sealTail(s.path, res, nil)
	case last:
		// Corruption a crash cannot explain, in the last segment.
		if err := r.damage(s.path, true, res.Offset, res.LastLSN, res.Reason, Skipped{}); err != nil {
			return err
		}
		skip := &r.res.Skipped[len(r.res.Skipped)-1]
		return r.sealTail(s.path, res, skip)
	}
	// A segment before the last that does not end with its seal.
	reason := res.Reason
	if res.Stop == StopEOF {
		reason = errors.New("wal: segment ends without a seal record")
	}
	r.prev = nil
	return r.damage(s.path, false, res.Offset, res.LastLSN, reason, Skipped{
		FromOffset: res.Offset, ToOffset: size,
		FromLSN: res.LastLSN + 1, ToLSN: max(nextFirst-1, res.MaxLSNAfter),
	})
}

func isHeaderDamage(err error) bool {
	return errors.Is(err, ErrShortHeader) || errors.Is(err, ErrBadMagic) ||
		errors.Is(err, ErrHeaderChecksum) || errors.Is(err, ErrBadHeader)
}

// checkLink verifies that segment s continues the log where it stands: it
// links to the previous segment's seal, or (the first segment read) no
// history at or above Redo is missing before it.
func (r *recovery) checkLink(s segFile, h SegmentHeader, first, last bool) error {
	switch {
	case first:
		// LSNs up to h.Prev.SealLSN existed in a segment that is gone; if the
		// redo point is among them, history that must be replayed is lost.
		if h.FirstLSN > r.o.Redo && !h.Prev.IsZero() && r.o.Redo <= h.Prev.SealLSN {
			return r.damage(s.path, last, 0, r.o.Redo-1, fmt.Errorf(
				"wal: the redo point is LSN %d, but the oldest segment starts at LSN %d and the segment before it (ending at LSN %d) is gone",
				r.o.Redo, h.FirstLSN, h.Prev.SealLSN),
				Skipped{FromLSN: r.o.Redo, ToLSN: h.Prev.SealLSN})
		}
	case r.prev != nil:
		if h.Prev != r.prev.Link() || h.FirstLSN <= r.prev.LastLSN {
			return r.damage(s.path, last, 0, r.prev.LastLSN, fmt.Errorf(
				"wal: segment does not continue the one before it: its header links to %v, the previous segment ends %v (a segment is missing or was replaced)",
				h.Prev, r.prev.Link()),
				Skipped{FromLSN: r.prev.LastLSN + 1, ToLSN: h.FirstLSN - 1})
		}
	default:
		// The previous segment was damaged and skipped (salvage): its end is
		// unknown, but LSNs must still go forward.
		if h.FirstLSN <= r.last {
			return &unorderedError{shard: r.o.Shard, path: s.path, first: h.FirstLSN, max: r.last}
		}
	}
	return nil
}

// badHeader handles a segment whose header is damaged or does not belong.
// With salvage, a segment before the last is skipped whole; the last one
// is moved aside so that the writer can start a fresh segment.
func (r *recovery) badHeader(f vfs.File, s segFile, size int64, last bool, nextFirst uint64, herr error) error {
	res, err := ScanSegment(f, size, ScanOptions{FirstLSN: s.lsn})
	if err != nil {
		return err
	}
	r.maxSeen = max(r.maxSeen, res.MaxLSNAfter)
	toLSN := res.MaxLSNAfter
	if !last {
		toLSN = max(toLSN, nextFirst-1)
	}
	prev := r.prev
	r.prev = nil
	skip := Skipped{FromOffset: 0, ToOffset: size, FromLSN: s.lsn, ToLSN: toLSN}
	if err := r.damage(s.path, last, 0, s.lsn-1, herr, skip); err != nil {
		return err
	}
	if !last {
		return nil
	}
	aside := s.path + ".damaged"
	if err := r.fs.Rename(s.path, aside); err != nil {
		return fmt.Errorf("wal: move damaged segment aside: %w", err)
	}
	if err := vfs.SyncDir(r.fs, r.o.Dir); err != nil {
		return err
	}
	r.res.Skipped[len(r.res.Skipped)-1].SavedAs = aside
	// The writer continues from the last good sealed segment, if any.
	if prev != nil {
		r.res.Tail = prev.Link()
	}
	return nil
}

// sealTail makes the last segment end with a seal record: it cuts off
// whatever follows the valid prefix (a torn tail, or with salvage the
// damaged rest, copied aside first), fsyncs, appends a seal record and
// fsyncs again. After this the segment cannot be mistaken for a torn one
// in the middle of the chain when later segments exist.
func (r *recovery) sealTail(path string, res ScanResult, skip *Skipped) error {
	if r.o.ReadOnly {
		return nil
	}
	off := res.Offset
	cut := res.Size - off
	if skip != nil {
		skip.FromOffset, skip.ToOffset = off, res.Size
		skip.FromLSN, skip.ToLSN = res.LastLSN+1, res.MaxLSNAfter
		if cut > 0 {
			saved, err := r.saveBytes(path, off, res.Size)
			if err != nil {
				return err
			}
			skip.SavedAs = saved
		}
	}
	if cut > 0 {
		if err := r.fs.Truncate(path, off); err != nil {
			return fmt.Errorf("wal: cut torn tail: %w", err)
		}
		if skip == nil {
			r.res.Truncated = &Truncation{Segment: path, Offset: off, Bytes: cut, Durable: res.Durable, Reason: res.Reason}
		}
	}
	f, err := r.fs.OpenReadWrite(path)
	if err != nil {
		return fmt.Errorf("wal: open segment to seal it: %w", err)
	}
	defer f.Close()
	if cut > 0 {
		if err := f.Sync(); err != nil {
			return &vfs.SyncError{Err: fmt.Errorf("wal: fsync %s after cutting its tail at offset %d: %w", path, off, err)}
		}
	}
	sealLSN := res.LastLSN + 1
	rec := AppendRecord(make([]byte, 0, sealRecordSize), sealLSN, RecordSeal,
		AppendSeal(make([]byte, 0, SealPayloadSize), Seal{Reason: SealRecovery, Truncated: uint64(cut), Digest: res.Digest}))
	if _, err := f.WriteAt(rec, off); err != nil {
		return fmt.Errorf("wal: seal %s at offset %d: %w", path, off, err)
	}
	if err := f.Sync(); err != nil {
		return &vfs.SyncError{Err: fmt.Errorf("wal: fsync %s after sealing it: %w", path, err)}
	}
	r.maxSeen = max(r.maxSeen, sealLSN)
	r.res.SealedSegment = path
	r.res.Tail = ChainLink{FirstLSN: res.Header.FirstLSN, SealLSN: sealLSN, SealCRC: recordCRC(rec)}
	return nil
}

// saveBytes copies bytes [from, to) of path to a new file beside it before
// salvage cuts them off, and returns its name.
func (r *recovery) saveBytes(path string, from, to int64) (string, error) {
	dst := fmt.Sprintf("%s.salvage-%d", path, from)
	src, err := r.fs.Open(path)
	if err != nil {
		return "", fmt.Errorf("wal: open segment to save its damaged tail: %w", err)
	}
	defer src.Close()
	out, err := r.fs.Create(dst)
	if err != nil {
		return "", fmt.Errorf("wal: save damaged tail: %w", err)
	}
	defer out.Close()
	buf := make([]byte, min(to-from, 1<<20))
	for off := from; off < to; {
		n := min(int64(len(buf)), to-off)
		m, err := src.ReadAt(buf[:n], off)
		if int64(m) < n {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return "", fmt.Errorf("wal: read damaged tail of %s at %d: %w", path, off, err)
		}
		if _, err := out.WriteAt(buf[:n], off-from); err != nil {
			return "", fmt.Errorf("wal: save damaged tail: %w", err)
		}
		off += n
	}
	if err := out.Sync(); err != nil {
		return "", &vfs.SyncError{Err: fmt.Errorf("wal: fsync %s: %w", dst, err)}
	}
	if err := vfs.SyncDir(r.fs, r.o.Dir); err != nil {
		return "", err
	}
	return dst, nil
}

func (r *recovery) progress(seg string, done bool) {
	if r.o.Progress == nil {
		return
	}
	r.o.Progress(Progress{
		Segment: seg, Segments: r.segIndex, SegmentsTotal: r.segsTotal,
		Records: r.res.Records, Applied: r.res.Applied, Bytes: r.res.Bytes,
		Elapsed: time.Since(r.start), Done: done,
	})
}
