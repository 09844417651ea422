package control

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/moond-db/moond/persistence/vfs"
)

// Layout. See the package documentation.
const (
	// FileName is the control file's name in the shard directory.
	FileName = "control"
	// Size is the length of an encoded control file.
	Size = 64
	// Magic opens a control file.
	Magic = "MOONDCTL"
	// Version is the format version this package writes and reads.
	Version = 1

	offVersion    = 8
	offShard      = 12
	offRedo       = 16
	offCheckpoint = 24
	offTime       = 32
	offNextFile   = 40
	offReserved   = 44
	offCRC        = 60
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Control is the content of a control file.
type Control struct {
	Shard uint32
	// RedoLSN is the first LSN recovery replays (lsn >= RedoLSN). At least 1.
	RedoLSN uint64
	// CheckpointLSN is the LSN of the last finalized checkpoint's record,
	// at or above RedoLSN; 0 when no checkpoint has finalized.
	CheckpointLSN uint64
	// Time is when that checkpoint finalized (millisecond precision).
	Time time.Time
	// NextFileID is above every heap file id handed out. At least 1.
	NextFileID uint32
}

// Fresh is the control of a shard that has never checkpointed: replay
// everything from LSN 1.
func Fresh(shard uint32) Control {
	return Control{Shard: shard, RedoLSN: 1, NextFileID: 1}
}

// Errors Decode returns.
var (
	ErrSize     = errors.New("control: file is not 64 bytes")
	ErrBadMagic = errors.New("control: not a control file (bad magic)")
	ErrChecksum = errors.New("control: checksum mismatch")
	ErrVersion  = errors.New("control: unsupported format version")
	ErrInvalid  = errors.New("control: impossible values")
	ErrShard    = errors.New("control: control file of another shard")
)

// Validate checks the invariants of c.
func (c Control) Validate() error {
	switch {
	case c.RedoLSN == 0:
		return fmt.Errorf("%w: redo LSN 0", ErrInvalid)
	case c.CheckpointLSN != 0 && c.CheckpointLSN < c.RedoLSN:
		return fmt.Errorf("%w: checkpoint LSN %d below redo LSN %d", ErrInvalid, c.CheckpointLSN, c.RedoLSN)
	case c.NextFileID == 0:
		return fmt.Errorf("%w: next file id 0", ErrInvalid)
	}
	return nil
}

// Append appends the encoded control file (Size bytes) to dst. It panics
// when c is invalid: the caller built it.
func (c Control) Append(dst []byte) []byte {
	if err := c.Validate(); err != nil {
		panic(err)
	}
	start := len(dst)
	dst = append(dst, Magic...)
	dst = binary.LittleEndian.AppendUint32(dst, Version)
	dst = binary.LittleEndian.AppendUint32(dst, c.Shard)
	dst = binary.LittleEndian.AppendUint64(dst, c.RedoLSN)
	dst = binary.LittleEndian.AppendUint64(dst, c.CheckpointLSN)
	var ms int64
	if !c.Time.IsZero() {
		ms = c.Time.UnixMilli()
	}
	dst = binary.LittleEndian.AppendUint64(dst, uint64(ms))
	dst = binary.LittleEndian.AppendUint32(dst, c.NextFileID)
	dst = append(dst, make([]byte, offCRC-offReserved)...)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// Encode returns the encoded control file.
func (c Control) Encode() []byte { return c.Append(make([]byte, 0, Size)) }

// Decode decodes and validates an encoded control file.
func Decode(b []byte) (Control, error) {
	if len(b) != Size {
		return Control{}, fmt.Errorf("%w (%d bytes)", ErrSize, len(b))
	}
	if string(b[:len(Magic)]) != Magic {
		return Control{}, ErrBadMagic
	}
	stored := binary.LittleEndian.Uint32(b[offCRC:])
	if got := crc32.Checksum(b[:offCRC], castagnoli); got != stored {
		return Control{}, fmt.Errorf("%w (stored %#08x, computed %#08x)", ErrChecksum, stored, got)
	}
	if v := binary.LittleEndian.Uint32(b[offVersion:]); v != Version {
		return Control{}, fmt.Errorf("%w %d (this build reads %d)", ErrVersion, v, Version)
	}
	for _, x := range b[offReserved:offCRC] {
		if x != 0 {
			return Control{}, fmt.Errorf("%w: reserved bytes are not zero", ErrInvalid)
		}
	}
	c := Control{
		Shard:         binary.LittleEndian.Uint32(b[offShard:]),
		RedoLSN:       binary.LittleEndian.Uint64(b[offRedo:]),
		CheckpointLSN: binary.LittleEndian.Uint64(b[offCheckpoint:]),
		NextFileID:    binary.LittleEndian.Uint32(b[offNextFile:]),
	}
	if ms := int64(binary.LittleEndian.Uint64(b[offTime:])); ms != 0 {
		c.Time = time.UnixMilli(ms)
	}
	if err := c.Validate(); err != nil {
		return Control{}, err
	}
	return c, nil
}

// Path is the control file of the shard in shardDir.
func Path(shardDir string) string { return filepath.Join(shardDir, FileName) }

// Error is a control file that is present but unusable, or unreadable.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("control file %s: %v", e.Path, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Read reads the control file of the shard in shardDir, which must belong to
// shard. It reports whether the file exists: when it does not, the shard is
// fresh and Read returns Fresh(shard). A file that exists and does not
// decode, or belongs to another shard, is an *Error naming it.
func Read(fsys vfs.FS, shardDir string, shard uint32) (Control, bool, error) {
	path := Path(shardDir)
	f, err := fsys.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Fresh(shard), false, nil
	}
	if err != nil {
		return Control{}, false, &Error{path, err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Control{}, true, &Error{path, err}
	}
	if st.Size() != Size {
		return Control{}, true, &Error{path, fmt.Errorf("%w (%d bytes)", ErrSize, st.Size())}
	}
	b := make([]byte, Size)
	if n, err := f.ReadAt(b, 0); n != Size {
		if err == nil || errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w (read %d bytes)", ErrSize, n)
		}
		return Control{}, true, &Error{path, err}
	}
	c, err := Decode(b)
	if err != nil {
		return Control{}, true, &Error{path, err}
	}
	if c.Shard != shard {
		return Control{}, true, &Error{path, fmt.Errorf("%w: it names shard %d, this is shard %d", ErrShard, c.Shard, shard)}
	}
	return c, true, nil
}

// Prepare returns the atomic replacement that publishes c in shardDir: the
// steps the serving loop performs through runtime.Backend (see
// vfs.AtomicWrite).
func Prepare(shardDir string, c Control) vfs.AtomicWrite {
	return vfs.NewAtomicWrite(shardDir, FileName, c.Encode())
}

// Write publishes c in shardDir atomically through fsys. On error, the file
// holds its old content or the new (the error says which step failed; a
// *vfs.SyncError after the rename means the new content may not be durable).
func Write(fsys vfs.FS, shardDir string, c Control) error {
	if err := Prepare(shardDir, c).Run(fsys); err != nil {
		return fmt.Errorf("control: write %s: %w", Path(shardDir), err)
	}
	return nil
}
