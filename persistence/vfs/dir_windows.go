//go:build windows

package vfs

import "os"

// syncDir is a no-op: Windows has no way to flush a directory's entries, and
// FlushFileBuffers on a directory handle fails.
func syncDir(*os.File) error { return nil }
