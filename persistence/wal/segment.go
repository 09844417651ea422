package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/moond-db/moond/persistence/vfs"
)

// Segment header layout. See the package documentation.
const (
	// SegmentHeaderSize is the fixed size of a segment header.
	SegmentHeaderSize = 64
	// SegmentMagic opens every segment file.
	SegmentMagic = "MOONDWAL"
	// FormatVersion is the version of the segment and record format this
	// package writes. Version 2 opens every group with a sync mark
	// (mark.go); version 1, which this package still reads, has none.
	FormatVersion = 2
	// MinFormatVersion is the oldest version this package reads.
	MinFormatVersion = 1

	headerCRCOffset = SegmentHeaderSize - 4
	reservedOffset  = 44
)

// DirName is the name of a shard's WAL directory: <shard dir>/wal.
const DirName = "wal"

// Errors for segment headers. All of them mean the header is not what this
// package wrote (segments are created atomically, so a header is never torn).
var (
	ErrShortHeader    = errors.New("wal: segment shorter than its header")
	ErrBadMagic       = errors.New("wal: not a segment (bad magic)")
	ErrHeaderChecksum = errors.New("wal: segment header checksum mismatch")
	ErrVersion        = errors.New("wal: unsupported segment format version")
	ErrBadHeader      = errors.New("wal: inconsistent segment header")
)

// ChainLink names the end of a sealed segment: its first LSN and the LSN and
// CRC of its seal record. Each segment's header holds the link to the
// segment before it, so recovery can prove that no segment is missing or was
// replaced and that the previous one ended where the next one thinks.
// The zero ChainLink means "no previous segment".
type ChainLink struct {
	FirstLSN uint64
	SealLSN  uint64
	SealCRC  uint32
}

// IsZero reports whether l names no segment.
func (l ChainLink) IsZero() bool { return l == ChainLink{} }

func (l ChainLink) String() string {
	if l.IsZero() {
		return "none"
	}
	return fmt.Sprintf("{first LSN %d, seal LSN %d, seal CRC %#08x}", l.FirstLSN, l.SealLSN, l.SealCRC)
}

// SegmentHeader is the decoded header of a segment file.
type SegmentHeader struct {
	Version  uint32
	Shard    uint32
	FirstLSN uint64 // LSN of the segment's first record
	Prev     ChainLink
}

// Append appends the encoded header (SegmentHeaderSize bytes) to dst.
func (h SegmentHeader) Append(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, SegmentMagic...)
	dst = binary.LittleEndian.AppendUint32(dst, h.Version)
	dst = binary.LittleEndian.AppendUint32(dst, h.Shard)
	dst = binary.LittleEndian.AppendUint64(dst, h.FirstLSN)
	dst = binary.LittleEndian.AppendUint64(dst, h.Prev.FirstLSN)
	dst = binary.LittleEndian.AppendUint64(dst, h.Prev.SealLSN)
	dst = binary.LittleEndian.AppendUint32(dst, h.Prev.SealCRC)
	dst = append(dst, make([]byte, headerCRCOffset-reservedOffset)...)
	return binary.LittleEndian.AppendUint32(dst, crc32c(dst[start:]))
}

// check verifies the header's internal consistency.
func (h SegmentHeader) check() error {
	if h.FirstLSN == 0 {
		return fmt.Errorf("%w: first LSN 0", ErrBadHeader)
	}
	if h.Prev.IsZero() {
		return nil
	}
	if h.Prev.FirstLSN == 0 || h.Prev.FirstLSN > h.Prev.SealLSN || h.Prev.SealLSN >= h.FirstLSN {
		return fmt.Errorf("%w: first LSN %d with previous segment %v", ErrBadHeader, h.FirstLSN, h.Prev)
	}
	return nil
}

// DecodeSegmentHeader decodes and verifies a segment header.
func DecodeSegmentHeader(b []byte) (SegmentHeader, error) {
	if len(b) < SegmentHeaderSize {
		return SegmentHeader{}, ErrShortHeader
	}
	if string(b[:len(SegmentMagic)]) != SegmentMagic {
		return SegmentHeader{}, ErrBadMagic
	}
	stored := binary.LittleEndian.Uint32(b[headerCRCOffset:])
	if got := crc32c(b[:headerCRCOffset]); got != stored {
		return SegmentHeader{}, fmt.Errorf("%w (stored %#08x, computed %#08x)", ErrHeaderChecksum, stored, got)
	}
	h := SegmentHeader{
		Version:  binary.LittleEndian.Uint32(b[8:]),
		Shard:    binary.LittleEndian.Uint32(b[12:]),
		FirstLSN: binary.LittleEndian.Uint64(b[16:]),
		Prev: ChainLink{
			FirstLSN: binary.LittleEndian.Uint64(b[24:]),
			SealLSN:  binary.LittleEndian.Uint64(b[32:]),
			SealCRC:  binary.LittleEndian.Uint32(b[40:]),
		},
	}
	if h.Version < MinFormatVersion || h.Version > FormatVersion {
		return h, fmt.Errorf("%w %d (this build reads %d to %d)", ErrVersion, h.Version, MinFormatVersion, FormatVersion)
	}
	for _, c := range b[reservedOffset:headerCRCOffset] {
		if c != 0 {
			return h, fmt.Errorf("%w: reserved bytes are not zero", ErrBadHeader)
		}
	}
	return h, h.check()
}

// ReadSegmentHeader reads and decodes the header at the start of r.
func ReadSegmentHeader(r io.ReaderAt) (SegmentHeader, error) {
	var b [SegmentHeaderSize]byte
	n, err := r.ReadAt(b[:], 0)
	if n < len(b) {
		if err == nil || errors.Is(err, io.EOF) {
			return SegmentHeader{}, ErrShortHeader
		}
		return SegmentHeader{}, err
	}
	return DecodeSegmentHeader(b[:])
}

const (
	segmentPrefix = "wal-"
	segmentSuffix = ".log"
	tempSuffix    = ".tmp"
)

// SegmentName is the file name of the segment whose first LSN is lsn:
// "wal-" + 16 lower-case hex digits + ".log", so names sort by LSN.
func SegmentName(firstLSN uint64) string {
	return fmt.Sprintf("%s%016x%s", segmentPrefix, firstLSN, segmentSuffix)
}

// SegmentPath is SegmentName under dir.
func SegmentPath(dir string, firstLSN uint64) string {
	return filepath.Join(dir, SegmentName(firstLSN))
}

// ParseSegmentName returns the first LSN a segment file name carries, and
// whether name is a segment name at all.
func ParseSegmentName(name string) (uint64, bool) {
	hex, ok := strings.CutPrefix(name, segmentPrefix)
	if !ok {
		return 0, false
	}
	hex, ok = strings.CutSuffix(hex, segmentSuffix)
	if !ok || len(hex) != 16 || strings.ToLower(hex) != hex {
		return 0, false
	}
	v, err := strconv.ParseUint(hex, 16, 64)
	if err != nil || v == 0 {
		return 0, false
	}
	return v, true
}

// isTempSegment reports whether name is a segment being created (see
// CreateSegment): never part of the log.
func isTempSegment(name string) bool {
	base, ok := strings.CutSuffix(name, tempSuffix)
	if !ok {
		return false
	}
	_, ok = ParseSegmentName(base)
	return ok
}

// CreateSegment creates the segment file for h in dir and returns it open for
// reading and writing, positioned nowhere in particular (use WriteAt, from
// offset SegmentHeaderSize).
//
// Creation is atomic: the header is written to a temporary file and fsynced,
// the file is renamed to its final name, and the directory is fsynced. So a
// segment file under its final name always has a whole, durable header, and
// an invalid header is damage, never a crash during creation. It refuses to
// replace an existing segment.
func CreateSegment(fs vfs.FS, dir string, h SegmentHeader) (vfs.File, error) {
	if h.Version == 0 {
		h.Version = FormatVersion
	}
	if err := h.check(); err != nil {
		panic(err) // the writer built it: a bug
	}
	final := SegmentPath(dir, h.FirstLSN)
	if _, err := fs.Stat(final); err == nil {
		return nil, fmt.Errorf("wal: create segment %s: already exists", final)
	}
	tmp := final + tempSuffix
	f, err := fs.Create(tmp)
	if err != nil {
		return nil, fmt.Errorf("wal: create segment: %w", err)
	}
	err = writeNewSegment(fs, f, dir, tmp, final, h)
	f.Close()
	if err != nil {
		return nil, err
	}
	// Reopen under the final name, so that the handle (and every error
	// message and fault rule about it) names the segment, not the
	// temporary file.
	f, err = fs.OpenReadWrite(final)
	if err != nil {
		return nil, fmt.Errorf("wal: open new segment: %w", err)
	}
	return f, nil
}

// writeNewSegment is CreateSegment after the temporary file exists; on
// failure before the rename it removes the temporary file.
func writeNewSegment(fs vfs.FS, f vfs.File, dir, tmp, final string, h SegmentHeader) error {
	if _, err := f.WriteAt(h.Append(make([]byte, 0, SegmentHeaderSize)), 0); err != nil {
		_ = fs.Remove(tmp)
		return fmt.Errorf("wal: write header of %s: %w", final, err)
	}
	if err := f.Sync(); err != nil {
		_ = fs.Remove(tmp)
		return &vfs.SyncError{Err: fmt.Errorf("wal: fsync new segment %s: %w", tmp, err)}
	}
	if err := fs.Rename(tmp, final); err != nil {
		_ = fs.Remove(tmp)
		return fmt.Errorf("wal: create segment: %w", err)
	}
	return vfs.SyncDir(fs, dir)
}

// ListSegments returns the first LSNs of the segment files in dir,
// ascending. Temporary files of unfinished segments and salvage leftovers
// are not segments; a missing directory holds none.
func ListSegments(fs vfs.FS, dir string) ([]uint64, error) {
	names, err := fs.List(dir)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("wal: list segments in %s: %w", dir, err)
	}
	var firsts []uint64
	for _, name := range names {
		if lsn, ok := ParseSegmentName(name); ok {
			firsts = append(firsts, lsn)
		}
	}
	slices.Sort(firsts)
	return firsts, nil
}
