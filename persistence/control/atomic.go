package control

import "github.com/moond-db/moond/persistence/vfs"

// TempSuffix is appended to a file's name for the temporary copy of an
// atomic replacement (vfs.TempSuffix).
const TempSuffix = vfs.TempSuffix

// AtomicWrite is vfs.AtomicWrite, under the name persistence/checkpoint
// still uses; new code names vfs.AtomicWrite.
type AtomicWrite = vfs.AtomicWrite

// SyncError is vfs.SyncError, under the name persistence/checkpoint still
// uses; new code names vfs.SyncError.
type SyncError = vfs.SyncError

// IsSyncFailure is vfs.IsSyncFailure, for persistence/checkpoint until it
// switches; new code calls vfs.IsSyncFailure.
func IsSyncFailure(err error) bool { return vfs.IsSyncFailure(err) }
