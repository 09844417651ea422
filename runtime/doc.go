// Package runtime is moond's shard runtime: the event loop each shard runs on
// its own locked OS thread, the Backend through which that loop does every
// bit of its network and disk I/O, timers, cross-shard mailboxes, and the
// choice between the io_uring backend and the portable pool backend.
//
// # The loop
//
// A Loop is a goroutine that calls runtime.LockOSThread first, then creates
// its backend on that thread (an io_uring ring with SINGLE_ISSUER and
// DEFER_TASKRUN where the kernel has them). One iteration:
//
//  1. reap completions and run their callbacks,
//  2. drain the mailbox (functions posted by other goroutines and shards),
//  3. run due timers (the shard's tick),
//  4. submit everything queued and wait for the next completion, mailbox
//     wake-up or timer deadline.
//
// Everything of a shard runs on that one thread, one callback at a time, and
// nothing there blocks on I/O. Code outside the loop talks to it only through
// Post, PostWait and Call.
//
// # Invariants
//
//   - Loop thread only: Backend, every Backend method, timers, Now. Every
//     callback runs on the loop's thread, exactly once, and never inside the
//     call that started the operation.
//   - Memory the kernel reads or writes (buffers, iovecs, paths) is never only
//     referenced by an SQE: the uring backend keeps each operation, its
//     buffers and its callback in an in-flight table indexed by user_data
//     until the CQE arrives; a caller's buffer is the backend's until the
//     callback runs.
//   - No lost wake-ups: the loop sets its sleeping flag before its last look
//     at the mailbox; a producer that queues a message and finds the flag set
//     wakes it (MSG_RING from another uring loop's ring, the loop's eventfd
//     otherwise, a channel on pool). A burst of posts costs one wake-up.
//   - Bounded mailboxes: Post never blocks and returns ErrMailboxFull when
//     MailboxSize messages wait; the sender sees the back-pressure.
//   - Ordered chains: Chain runs steps strictly in order (IOSQE_IO_LINK on
//     io_uring); a failed or short step makes every later step report
//     ECANCELED, so the caller knows which step failed (FailedStep).
//   - Errors are syscall.Errno values where the OS gave one, the same on both
//     backends; cancelled operations report ECANCELED.
//   - Stop refuses new messages, runs those already accepted, cancels what is
//     in flight and runs its callbacks, drops timers, closes every descriptor
//     the backend still holds, and returns after the thread has exited.
//
// # Backends
//
// KindUring runs one io_uring per loop (Linux); its RecvMulti keeps one
// multishot recv armed per connection over a per-loop ring of provided
// buffers (registered at the first RecvMulti; without kernel support it
// loops one-shot recvs instead). KindPool runs sockets on
// Go's netpoller (one goroutine per pending operation) and files on a bounded
// pool of worker goroutines, and hands completions back through a queue and a
// wake-up channel; it builds everywhere. Select resolves --io-backend
// (auto|uring|pool): auto probes io_uring and every opcode the uring backend
// uses, and falls back to pool for all loops at once, saying why. The
// environment variable MOOND_IO_BACKEND overrides the preference. Both
// backends pass one conformance suite (conformance_test.go).
package runtime
