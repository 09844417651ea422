//go:build !linux

package keyspace

import "unsafe"

// prefault does nothing where madvise's MADV_POPULATE_WRITE is not
// available: the memory faults in as it is first written.
func prefault(unsafe.Pointer, uintptr) {}
