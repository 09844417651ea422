package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// SQE mirrors struct io_uring_sqe (64 bytes). The Prep methods fill it for one
// operation; they reset every field first, so a reused slot carries nothing
// over. Addresses are stored as integers: see the package doc for how the
// memory they point at must be kept alive.
type SQE struct {
	Opcode      uint8
	Flags       uint8
	Ioprio      uint16
	Fd          int32
	Off         uint64 // offset, or addr2
	Addr        uint64 // buffer/path/iovec address
	Len         uint32
	OpFlags     uint32 // rw_flags, fsync_flags, timeout_flags, open_flags, msg_flags, ... (a union)
	UserData    uint64
	BufIndex    uint16
	Personality uint16
	SpliceFdIn  int32 // also file_index
	Addr3       uint64
	_           uint64
}

// CQE mirrors struct io_uring_cqe (16 bytes).
type CQE struct {
	UserData uint64
	Res      int32 // result, or a negated errno
	Flags    uint32
}

// Err returns the CQE's errno, or nil when Res is not negative.
func (c CQE) Err() error {
	if c.Res < 0 {
		return unix.Errno(-c.Res)
	}
	return nil
}

// Timespec mirrors struct __kernel_timespec.
type Timespec struct {
	Sec  int64
	Nsec int64
}

func (s *SQE) prep(op uint8, fd int, addr unsafe.Pointer, length uint32, off uint64) {
	*s = SQE{Opcode: op, Fd: int32(fd), Addr: uint64(uintptr(addr)), Len: length, Off: off}
}

func bufAddr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// SetUserData sets the integer the CQE will carry back.
func (s *SQE) SetUserData(u uint64) { s.UserData = u }

// SetFlags ORs SQE flags (SQEIOLink, SQEIODrain, ...) into the entry.
func (s *SQE) SetFlags(f uint8) { s.Flags |= f }

// PrepNop prepares a no-op.
func (s *SQE) PrepNop() { s.prep(OpNop, -1, nil, 0, 0) }

// PrepRead prepares a read of len(buf) bytes at off (^uint64(0): the file position).
func (s *SQE) PrepRead(fd int, buf []byte, off uint64) {
	s.prep(OpRead, fd, bufAddr(buf), uint32(len(buf)), off)
}

// PrepWrite prepares a write of buf at off (^uint64(0): the file position).
func (s *SQE) PrepWrite(fd int, buf []byte, off uint64) {
	s.prep(OpWrite, fd, bufAddr(buf), uint32(len(buf)), off)
}

// PrepReadv prepares a vectored read into iov at off.
func (s *SQE) PrepReadv(fd int, iov []unix.Iovec, off uint64) {
	s.prep(OpReadv, fd, iovAddr(iov), uint32(len(iov)), off)
}

// PrepWritev prepares a vectored write of iov at off.
func (s *SQE) PrepWritev(fd int, iov []unix.Iovec, off uint64) {
	s.prep(OpWritev, fd, iovAddr(iov), uint32(len(iov)), off)
}

func iovAddr(iov []unix.Iovec) unsafe.Pointer {
	if len(iov) == 0 {
		return nil
	}
	return unsafe.Pointer(&iov[0])
}

// PrepFsync prepares an fsync, or an fdatasync with FsyncDatasync in flags.
func (s *SQE) PrepFsync(fd int, flags uint32) {
	s.prep(OpFsync, fd, nil, 0, 0)
	s.OpFlags = flags
}

// PrepOpenat prepares openat(dirfd, path, flags, mode). path is a
// NUL-terminated string (unix.BytePtrFromString) kept alive until the CQE.
func (s *SQE) PrepOpenat(dirfd int, path *byte, flags int, mode uint32) {
	s.prep(OpOpenat, dirfd, unsafe.Pointer(path), mode, 0)
	s.OpFlags = uint32(flags)
}

// PrepClose prepares close(fd).
func (s *SQE) PrepClose(fd int) { s.prep(OpClose, fd, nil, 0, 0) }

// PrepRenameat prepares renameat2(olddirfd, oldpath, newdirfd, newpath, flags).
func (s *SQE) PrepRenameat(olddirfd int, oldpath *byte, newdirfd int, newpath *byte, flags uint32) {
	s.prep(OpRenameat, olddirfd, unsafe.Pointer(oldpath), uint32(newdirfd), uint64(uintptr(unsafe.Pointer(newpath))))
	s.OpFlags = flags
}

// PrepUnlinkat prepares unlinkat(dirfd, path, flags) (unix.AT_REMOVEDIR for a directory).
func (s *SQE) PrepUnlinkat(dirfd int, path *byte, flags uint32) {
	s.prep(OpUnlinkat, dirfd, unsafe.Pointer(path), 0, 0)
	s.OpFlags = flags
}

// PrepAccept prepares accept4(fd, NULL, NULL, flags): the CQE's Res is the new socket.
func (s *SQE) PrepAccept(fd int, flags uint32) {
	s.prep(OpAccept, fd, nil, 0, 0)
	s.OpFlags = flags
}

// PrepMultishotAccept prepares an accept that posts one CQE per connection
// (with CQEFMore set while it stays armed) until it fails or is cancelled.
func (s *SQE) PrepMultishotAccept(fd int, flags uint32) {
	s.PrepAccept(fd, flags)
	s.Ioprio |= AcceptMultishot
}

// PrepRecv prepares recv(fd, buf, flags).
func (s *SQE) PrepRecv(fd int, buf []byte, flags uint32) {
	s.prep(OpRecv, fd, bufAddr(buf), uint32(len(buf)), 0)
	s.OpFlags = flags
}

// PrepSend prepares send(fd, buf, flags).
func (s *SQE) PrepSend(fd int, buf []byte, flags uint32) {
	s.prep(OpSend, fd, bufAddr(buf), uint32(len(buf)), 0)
	s.OpFlags = flags
}

// PrepTimeout prepares a timeout that completes with -ETIME after ts, or
// with 0 once count other completions have been posted (count 0: only the time).
func (s *SQE) PrepTimeout(ts *Timespec, count uint32, flags uint32) {
	s.prep(OpTimeout, -1, unsafe.Pointer(ts), 1, uint64(count))
	s.OpFlags = flags
}

// PrepLinkTimeout prepares a timeout for the SQE linked before it: if that one
// has not completed after ts, it is cancelled (its CQE says ECANCELED).
func (s *SQE) PrepLinkTimeout(ts *Timespec, flags uint32) {
	s.prep(OpLinkTimeout, -1, unsafe.Pointer(ts), 1, 0)
	s.OpFlags = flags
}

// PrepCancel prepares the cancellation of the request whose user_data is userData
// (with CancelAll: every such request; with CancelFd: by Fd instead).
func (s *SQE) PrepCancel(userData uint64, flags uint32) {
	s.prep(OpAsyncCancel, -1, nil, 0, 0)
	s.Addr = userData
	s.OpFlags = flags
}

// PrepCancelFd prepares the cancellation of requests on fd (all of them with CancelAll).
func (s *SQE) PrepCancelFd(fd int, flags uint32) {
	s.prep(OpAsyncCancel, fd, nil, 0, 0)
	s.OpFlags = flags | CancelFd
}

// PrepMsgRing prepares a message to the ring whose fd is ringFd: a CQE with
// userData and Res = res appears on that ring (IORING_MSG_DATA).
func (s *SQE) PrepMsgRing(ringFd int, res uint32, userData uint64, flags uint32) {
	s.prep(OpMsgRing, ringFd, nil, res, userData)
	s.OpFlags = flags
}
