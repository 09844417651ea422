package vfs

import "errors"

// SyncError marks a failed fsync or fdatasync (of a file or a directory).
// After one, the caller cannot know what is durable: the kernel may have
// dropped the dirty pages (fsyncgate), so the persistence packages poison
// the shard on it instead of retrying.
type SyncError struct{ Err error }

func (e *SyncError) Error() string { return e.Err.Error() }
func (e *SyncError) Unwrap() error { return e.Err }

// IsSyncFailure reports whether err comes from a failed fsync.
func IsSyncFailure(err error) bool {
	var se *SyncError
	return errors.As(err, &se)
}
