package keyspace

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// prefault backs the n bytes at p with memory at once
// (MADV_POPULATE_WRITE on the whole pages inside the range). It is for a
// large array about to be written all over in random order, the table a
// load reserves: faulted in page by page, each page faulted twice, first
// mapping the shared zero page on the read that looks for a key and then
// again on the write, a tenth of a million-key boot. Advice only: an
// error (a kernel before 5.14) is ignored and the memory faults in as it
// would have.
//
// Transparent huge pages (MADV_HUGEPAGE) would save the boot a little
// more in a fresh process, but where memory is fragmented, as in a
// process that already freed a table, the kernel compacts memory to make
// them and the boot got slower, not faster.
func prefault(p unsafe.Pointer, n uintptr) {
	const page = 4096
	start := (uintptr(p) + page - 1) &^ (page - 1)
	end := (uintptr(p) + n) &^ (page - 1)
	if end <= start {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(p, start-uintptr(p))), end-start)
	_ = unix.Madvise(b, unix.MADV_POPULATE_WRITE)
}
