package runtime

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// FD is a backend handle. On the uring backend it is the kernel's file
// descriptor; on the pool backend it is an index into the backend's table of
// open sockets and files. An FD is meaningful only to the backend (and so the
// loop) that produced it.
type FD int32

// Backend is the only door to I/O for code running on a Loop.
//
// Invariants every implementation keeps:
//   - Every method is called on the loop's own thread (from a completion
//     callback, a timer or a mailbox message).
//   - Every callback runs on the loop's thread, exactly once, and never
//     inside the call that started the operation.
//   - A buffer passed to an operation belongs to the backend until the
//     callback runs: the caller neither reads nor writes it before then.
//   - At most one Recv (or RecvMulti, until its done callback) and one Send
//     may be outstanding per connection at a time; the caller queues further
//     sends itself.
//   - Errors handed to callbacks are syscall.Errno values where the operating
//     system gave one (or wrap one, so errors.Is works); an operation that was
//     cancelled (by Stop, or by an earlier failed step of a Chain) reports
//     syscall.ECANCELED.
type Backend interface {
	// Name is "uring" or "pool".
	Name() string

	// Listen opens a listening TCP socket with SO_REUSEADDR and SO_REUSEPORT,
	// so that every loop may listen on the same port. It is synchronous.
	Listen(network, addr string) (FD, net.Addr, error)
	// Accept waits for one connection on listener l.
	Accept(l FD, cb func(c FD, err error))
	// Recv reads once into buf. n == 0 with err == nil means end of stream.
	Recv(c FD, buf []byte, cb func(n int, err error))
	// RecvMulti receives on c until the stream ends: cb runs once per chunk
	// of data that arrived (done == false, err == nil, len(data) > 0), then
	// a last time with done == true: err != nil (ECANCELED after Close or
	// Stop), or end of stream (len(data) == 0, err == nil). data is valid
	// only during the call: the backend reuses its memory afterwards, so a
	// caller that keeps bytes copies them. RecvMulti is the connection's one
	// outstanding recv from the call until the done callback. There is no
	// back-pressure: chunks keep coming while the connection is open, and
	// Close (also from inside cb) is the way to stop them; after Close the
	// only callback left is the done one with ECANCELED.
	//
	// On the uring backend it is one multishot recv per connection over a
	// per-loop ring of provided buffers, so receiving costs no SQE per chunk;
	// the pool backend loops one-shot reads into a buffer of its own.
	RecvMulti(c FD, cb func(data []byte, err error, done bool))
	// Send writes all of buf, looping over short sends, or fails.
	Send(c FD, buf []byte, cb func(n int, err error))
	// LocalAddr and RemoteAddr are a socket's own and peer addresses, or
	// nil when fd is not a socket this backend holds (or the peer is gone).
	// They are synchronous and cheap.
	LocalAddr(fd FD) net.Addr
	RemoteAddr(fd FD) net.Addr
	// Close releases fd. A socket is shut down first, and the accept, recv
	// and send pending on it complete with ECANCELED (never with an EOF the
	// caller could take for the peer's). File operations already started
	// finish normally. cb may be nil.
	Close(fd FD, cb func(err error))

	// Open opens path with the os.O_* flags in flag (O_CLOEXEC is implied).
	Open(path string, flag int, perm uint32, cb func(fd FD, err error))
	// Pread reads up to len(buf) bytes at off; a short count is reported as is.
	Pread(fd FD, buf []byte, off int64, cb func(n int, err error))
	// Pwrite writes buf at off.
	Pwrite(fd FD, buf []byte, off int64, cb func(n int, err error))
	// Pwritev writes bufs, in order, starting at off.
	Pwritev(fd FD, bufs [][]byte, off int64, cb func(n int, err error))
	// Fsync flushes data and metadata of fd to stable storage.
	Fsync(fd FD, cb func(err error))
	// Fdatasync flushes data of fd (and the metadata needed to read it back).
	Fdatasync(fd FD, cb func(err error))
	// Rename renames oldpath to newpath (replacing newpath).
	Rename(oldpath, newpath string, cb func(err error))
	// Unlink removes the file at path (never a directory).
	Unlink(path string, cb func(err error))
	// SyncDir fsyncs the directory dir, making renames and unlinks in it
	// durable. It is a no-op on Windows, where there is no such call.
	SyncDir(dir string, cb func(err error))

	// Chain runs ops strictly in order, each step starting only after the
	// previous one completed in full. When a step fails or transfers fewer
	// bytes than asked (its Err is then ErrShort), every later step reports
	// syscall.ECANCELED without running. results[i] belongs to ops[i]. On the
	// uring backend a chain is one run of IOSQE_IO_LINK SQEs. At most
	// MaxChainLen steps; a chain that cannot run at all (too long, an unknown
	// kind) reports syscall.EINVAL on the offending step (or the first) and
	// ECANCELED on every other.
	Chain(ops []Op, cb func(results []Result))
}

// recvMultiBufSize is the size of the buffers RecvMulti receives into: on the
// pool backend (and the uring backend without provided buffer rings) one per
// connection, on the uring backend each of the ring's buffers. 16 KiB holds a
// deep pipeline of small commands in one chunk, while larger writes simply
// arrive as several chunks.
const recvMultiBufSize = 16 << 10

// recvByReads implements RecvMulti with one one-shot Recv after another into
// buf, which it owns: each chunk's callback returns before the next Recv
// reuses buf. open reports whether c is still the connection RecvMulti
// started on (neither closed nor its number reused, the backend not
// stopping); once it is not, the next callback is the last, with ECANCELED.
func recvByReads(b Backend, c FD, buf []byte, open func() bool, cb func(data []byte, err error, done bool)) {
	var next func()
	next = func() {
		b.Recv(c, buf, func(n int, err error) {
			switch {
			case err != nil:
				cb(nil, err, true)
			case n == 0:
				cb(nil, nil, true)
			default:
				cb(buf[:n], nil, false)
				if !open() {
					cb(nil, syscall.ECANCELED, true)
					return
				}
				next()
			}
		})
	}
	next()
}

// OpKind names one step of a Chain.
type OpKind uint8

const (
	OpNop       OpKind = iota + 1 // completes with N == 0
	OpRead                        // read(FD, Buf) at the file's position (pipes, FIFOs)
	OpWrite                       // write(FD, Buf) at the file's position
	OpPread                       // pread(FD, Buf, Off)
	OpPwrite                      // pwrite(FD, Buf, Off)
	OpPwritev                     // pwritev(FD, Bufs, Off)
	OpFsync                       // fsync(FD)
	OpFdatasync                   // fdatasync(FD)
	OpClose                       // close(FD)
	OpRename                      // rename(Path, NewPath)
	OpUnlink                      // unlink(Path)
)

var opKindNames = [...]string{
	OpNop: "nop", OpRead: "read", OpWrite: "write", OpPread: "pread", OpPwrite: "pwrite",
	OpPwritev: "pwritev", OpFsync: "fsync", OpFdatasync: "fdatasync", OpClose: "close",
	OpRename: "rename", OpUnlink: "unlink",
}

func (k OpKind) String() string {
	if int(k) < len(opKindNames) && opKindNames[k] != "" {
		return opKindNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", k)
}

// Op is one step of a Chain. Only the fields its Kind uses are read.
type Op struct {
	Kind    OpKind
	FD      FD
	Buf     []byte   // OpRead, OpWrite, OpPread, OpPwrite
	Bufs    [][]byte // OpPwritev
	Off     int64    // OpPread, OpPwrite, OpPwritev
	Path    string   // OpRename (old), OpUnlink
	NewPath string   // OpRename (new)
}

// Result is the outcome of one Chain step: the byte count of a transfer, or
// the error. Err is a syscall.Errno where the kernel gave one, ErrShort for
// a step that transferred less than asked, and syscall.ECANCELED for a step
// that did not run because an earlier one failed.
type Result struct {
	N   int
	Err error
}

// MaxChainLen is the most steps one Chain may hold, on every backend.
const MaxChainLen = 256

// ErrShort marks the Chain step that transferred fewer bytes than it asked
// for; the steps after it report syscall.ECANCELED.
var ErrShort = errors.New("runtime: short transfer in chain")

// FailedStep returns the index of the first step of a chain that did not
// complete in full, or -1 when every step succeeded.
func FailedStep(results []Result) int {
	for i, r := range results {
		if r.Err != nil {
			return i
		}
	}
	return -1
}

// isTransfer reports whether a step of kind k moves bytes, so that a short
// count breaks the chain.
func (k OpKind) isTransfer() bool {
	switch k {
	case OpRead, OpWrite, OpPread, OpPwrite, OpPwritev:
		return true
	}
	return false
}

// wantBytes is the count a transfer step asks for.
func (op *Op) wantBytes() int {
	if op.Kind == OpPwritev {
		n := 0
		for _, b := range op.Bufs {
			n += len(b)
		}
		return n
	}
	return len(op.Buf)
}

// validChain checks a chain before anything of it runs. It returns the
// results to report when the chain is refused, or nil when it may run.
func validChain(ops []Op) []Result {
	bad := -1
	switch {
	case len(ops) > MaxChainLen:
		bad = 0
	default:
		for i := range ops {
			if ops[i].Kind < OpNop || ops[i].Kind > OpUnlink {
				bad = i
				break
			}
		}
	}
	if bad < 0 {
		return nil
	}
	res := make([]Result, len(ops))
	for i := range res {
		res[i].Err = syscall.ECANCELED
	}
	res[bad].Err = syscall.EINVAL
	return res
}

// cancelledResults is what a chain reports when it never ran at all.
func cancelledResults(n int) []Result {
	res := make([]Result, n)
	for i := range res {
		res[i].Err = syscall.ECANCELED
	}
	return res
}

// driver is what a Loop needs from its backend beyond the Backend interface.
// All methods but wake run on the loop's thread.
type driver interface {
	Backend

	// reap runs the callbacks of completed operations, at most about budget
	// of them, and returns how many ran.
	reap(budget int) int
	// wait submits everything queued and then blocks until an operation
	// completes, wake is called, or timeout passes. timeout == 0 only
	// submits and collects; timeout < 0 means no deadline.
	wait(timeout time.Duration) error
	// wake makes a blocked (or the next) wait return. Any goroutine may call
	// it, at any time, also after close.
	wake()
	// cancelAll cancels every operation in flight and makes every operation
	// started later complete with ECANCELED. It begins shutdown.
	cancelAll()
	// inflight is the number of operations whose callbacks have not run.
	inflight() int
	// close closes every handle the backend still holds and releases the
	// backend. Operations still in flight are abandoned (their memory is kept
	// reachable for the kernel, never reused).
	close() error
}
