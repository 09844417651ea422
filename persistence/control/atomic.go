package control

import (
	"fmt"
	"path/filepath"

	"github.com/moond-db/moond/persistence/vfs"
)

// TempSuffix is appended to a file's name for the temporary copy of an
// atomic replacement.
const TempSuffix = ".tmp"

// AtomicWrite describes the atomic replacement of a small file: write Data
// to Temp (created or truncated), fsync Temp, close it, rename Temp to
// Final, fsync Dir. A crash leaves Final old or new, never torn.
type AtomicWrite struct {
	Dir   string // the directory both files are in
	Temp  string // Final + TempSuffix
	Final string
	Data  []byte
}

// NewAtomicWrite returns the replacement of dir/name with data.
func NewAtomicWrite(dir, name string, data []byte) AtomicWrite {
	final := filepath.Join(dir, name)
	return AtomicWrite{Dir: dir, Temp: final + TempSuffix, Final: final, Data: data}
}

// SyncError marks a failed fsync (of the temporary file or of the
// directory): after one, the caller cannot know what is durable
// (fsyncgate).
type SyncError = vfs.SyncError

// IsSyncFailure reports whether err comes from a failed fsync.
func IsSyncFailure(err error) bool { return vfs.IsSyncFailure(err) }

// Run performs the replacement through fsys, synchronously. When it fails
// before the rename, Final is untouched and Temp is removed (best effort);
// when the directory fsync fails, the rename happened but may not be
// durable: the error is a *SyncError.
func (w AtomicWrite) Run(fsys vfs.FS) error {
	f, err := fsys.Create(w.Temp)
	if err != nil {
		return fmt.Errorf("create %s: %w", w.Temp, err)
	}
	if _, err := f.WriteAt(w.Data, 0); err != nil {
		f.Close()
		_ = fsys.Remove(w.Temp)
		return fmt.Errorf("write %s: %w", w.Temp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		_ = fsys.Remove(w.Temp)
		return &SyncError{Err: fmt.Errorf("fsync %s: %w", w.Temp, err)}
	}
	if err := f.Close(); err != nil {
		_ = fsys.Remove(w.Temp)
		return fmt.Errorf("close %s: %w", w.Temp, err)
	}
	if err := fsys.Rename(w.Temp, w.Final); err != nil {
		_ = fsys.Remove(w.Temp)
		return fmt.Errorf("rename %s: %w", w.Temp, err)
	}
	d, err := fsys.OpenDir(w.Dir)
	if err != nil {
		return &SyncError{Err: fmt.Errorf("open directory %s for fsync: %w", w.Dir, err)}
	}
	err = d.Sync()
	cerr := d.Close()
	if err != nil {
		return &SyncError{Err: fmt.Errorf("fsync directory %s: %w", w.Dir, err)}
	}
	if cerr != nil {
		return fmt.Errorf("close directory %s: %w", w.Dir, cerr)
	}
	return nil
}
