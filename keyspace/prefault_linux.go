package keyspace

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// prefault backs the n bytes at p with memory at once, in transparent huge
// pages where the kernel has them (MADV_HUGEPAGE, then
// MADV_POPULATE_WRITE on the whole pages inside the range). It is for a
// large array about to be written all over in random order, the table a
// load reserves: faulting it in page by page, first through the shared
// zero page on a read and then again on the write, cost a tenth of a
// million-key boot, and huge pages spare the random accesses most of
// their TLB misses. Advice only: errors (an old kernel, no THP) are
// ignored and the memory faults in as it would have.
func prefault(p unsafe.Pointer, n uintptr) {
	const page = 4096
	start := (uintptr(p) + page - 1) &^ (page - 1)
	end := (uintptr(p) + n) &^ (page - 1)
	if end <= start {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(p, start-uintptr(p))), end-start)
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	_ = unix.Madvise(b, unix.MADV_POPULATE_WRITE)
}
