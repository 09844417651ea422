// Package uring is a small Linux io_uring binding on golang.org/x/sys/unix.
//
// It knows nothing of moond: it sets up a ring (dropping setup flags the kernel
// refuses, one at a time), prepares submission queue entries (SQEs), submits
// them, waits for completions with a timeout, and reaps completion queue
// entries (CQEs). It also probes which opcodes the kernel supports and
// registers files and buffers.
//
// # Threads
//
// A Ring is owned by one goroutine, locked to its OS thread with
// runtime.LockOSThread before New is called. With SetupSingleIssuer and
// SetupDeferTaskrun the kernel insists that the thread that created the ring is
// the only one that submits to it and reaps deferred completions; Go moves
// unlocked goroutines between threads freely, so an unlocked owner gets EEXIST
// from io_uring_enter. Nothing in a Ring is safe for concurrent use; the only
// cross-thread operation is another ring's MSG_RING targeting this ring's fd.
//
// # Memory the kernel reads and writes
//
// An SQE carries addresses as integers. Go's garbage collector does not see
// them, and a goroutine's stack may move at any function call. So every buffer,
// iovec array, path and timespec that an SQE points at must
//
//   - be allocated on the heap (escape analysis decides: storing the value in
//     a heap-held struct or slice, as an in-flight table does, guarantees it),
//   - stay referenced from Go memory until the CQE for that SQE has been reaped,
//     including the ECANCELED CQEs of a broken link chain.
//
// Provided buffer rings (BufRing) are the exception that needs no such care:
// their ring and buffers are anonymous mmaps, outside the Go heap, that only
// BufRing.Close unmaps. A multishot recv (PrepRecvMultishot) picks a buffer
// from the ring for every chunk it receives, so one SQE serves a connection
// for as long as it stays armed.
//
// The user_data field is an integer the caller owns; the idiomatic use is an
// index into the caller's in-flight table that holds the operation, its
// buffers and its callback. Never put a pointer into user_data.
//
// # Errors
//
// A CQE's Res is the syscall result: a non-negative count or fd, or a negated
// errno. Syscall errors from Submit and Wait are returned as unix.Errno; EINTR
// (caused by Go's own runtime signals) is retried inside. When io_uring cannot
// be used at all, New returns an *UnavailableError that says why, so callers
// can fall back to a portable backend.
package uring
