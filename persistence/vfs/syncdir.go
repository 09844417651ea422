package vfs

import "fmt"

// SyncDir fsyncs directory dir through fsys, making the creations, renames
// and removals in it durable.
//
// Every failure to make the directory durable is a *SyncError, opening it
// included: after any of them the caller cannot know whether the entries it
// changed are on disk, which is exactly what a failed fsync means. Only a
// failure to close the directory after a good fsync is a plain error.
func SyncDir(fsys FS, dir string) error {
	d, err := fsys.OpenDir(dir)
	if err != nil {
		return &SyncError{Err: fmt.Errorf("open directory %s for fsync: %w", dir, err)}
	}
	err = d.Sync()
	cerr := d.Close()
	if err != nil {
		return &SyncError{Err: fmt.Errorf("fsync directory %s: %w", dir, err)}
	}
	if cerr != nil {
		return fmt.Errorf("close directory %s: %w", dir, cerr)
	}
	return nil
}
