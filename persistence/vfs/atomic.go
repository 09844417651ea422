package vfs

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/moond-db/moond/runtime"
)

// TempSuffix is appended to a file's name for the temporary copy of an
// atomic replacement.
const TempSuffix = ".tmp"

// AtomicWrite describes the atomic replacement of a small file: write Data
// to Temp (created or truncated), fsync Temp, close it, rename Temp to
// Final, fsync Dir. A crash leaves Final old or new, never torn.
//
// Run performs it synchronously through an FS (boot, tools); Start through
// a runtime.Backend (the serving loop). Both classify failures alike:
//   - before the rename (create, write, fsync, close of Temp, or the rename
//     itself), Final is untouched and Temp is removed, best effort;
//   - a failed fsync, of Temp or of Dir (opening Dir included, see
//     SyncDir), is a *SyncError: the caller cannot know what is durable;
//   - after a failed fsync of Dir the rename happened but may not survive a
//     crash.
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

// Run performs the replacement through fsys, synchronously.
func (w AtomicWrite) Run(fsys FS) error {
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
	return SyncDir(fsys, w.Dir)
}

// Start performs the replacement through be, asynchronously: open Temp
// (O_CREAT|O_TRUNC|O_WRONLY), then the write and the fsync as one chain,
// close, rename, and SyncDir, each step starting from the previous one's
// callback. done runs once, on the loop's thread, with nil or the first
// failure, classified as Run classifies it. Loop thread only; w.Data
// belongs to the backend until done runs.
func (w AtomicWrite) Start(be runtime.Backend, done func(error)) {
	be.Open(w.Temp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644, func(fd runtime.FD, err error) {
		if err != nil {
			done(fmt.Errorf("create %s: %w", w.Temp, err))
			return
		}
		ops := []runtime.Op{
			{Kind: runtime.OpPwrite, FD: fd, Buf: w.Data},
			{Kind: runtime.OpFsync, FD: fd},
		}
		be.Chain(ops, func(res []runtime.Result) {
			be.Close(fd, func(cerr error) {
				var err error
				switch {
				case res[0].Err == runtime.ErrShort:
					err = fmt.Errorf("write %s: %d of %d bytes: %w", w.Temp, res[0].N, len(w.Data), res[0].Err)
				case res[0].Err != nil:
					err = fmt.Errorf("write %s: %w", w.Temp, res[0].Err)
				case res[1].Err != nil:
					err = &SyncError{Err: fmt.Errorf("fsync %s: %w", w.Temp, res[1].Err)}
				case cerr != nil:
					err = fmt.Errorf("close %s: %w", w.Temp, cerr)
				}
				if err != nil {
					be.Unlink(w.Temp, func(error) { done(err) })
					return
				}
				be.Rename(w.Temp, w.Final, func(err error) {
					if err != nil {
						rerr := fmt.Errorf("rename %s: %w", w.Temp, err)
						be.Unlink(w.Temp, func(error) { done(rerr) })
						return
					}
					be.SyncDir(w.Dir, func(err error) {
						if err != nil {
							done(&SyncError{Err: fmt.Errorf("fsync directory %s: %w", w.Dir, err)})
							return
						}
						done(nil)
					})
				})
			})
		})
	})
}
