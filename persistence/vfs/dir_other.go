//go:build !windows

package vfs

import "os"

// syncDir fsyncs the directory, making renames, creations and removals in it
// durable.
func syncDir(d *os.File) error { return d.Sync() }
