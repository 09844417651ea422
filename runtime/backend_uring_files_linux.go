package runtime

// The uring backend's file operations and chains of linked SQEs.

import (
	"strings"
	"syscall"

	"github.com/moond-db/moond/uring"
	"golang.org/x/sys/unix"
)

// cpath returns path as a NUL-terminated byte slice, or EINVAL when path
// holds a NUL.
func cpath(path string) ([]byte, error) {
	if strings.IndexByte(path, 0) >= 0 {
		return nil, syscall.EINVAL
	}
	b := make([]byte, len(path)+1)
	copy(b, path)
	return b, nil
}

func (u *uringBackend) Open(path string, flag int, perm uint32, cb func(fd FD, err error)) {
	p, err := cpath(path)
	if u.closing {
		err = syscall.ECANCELED
	}
	if err != nil {
		u.later(func() { cb(-1, err) })
		return
	}
	s, ud := u.table.alloc(slotOpen)
	s.path, s.cbFD = p, cb
	q := u.sqe()
	q.PrepOpenat(unix.AT_FDCWD, &p[0], flag|unix.O_CLOEXEC, perm)
	q.SetUserData(ud)
}

func (u *uringBackend) Pread(fd FD, buf []byte, off int64, cb func(n int, err error)) {
	u.single(Op{Kind: OpPread, FD: fd, Buf: buf, Off: off}, func(r Result) { cb(r.N, r.Err) })
}

func (u *uringBackend) Pwrite(fd FD, buf []byte, off int64, cb func(n int, err error)) {
	u.single(Op{Kind: OpPwrite, FD: fd, Buf: buf, Off: off}, func(r Result) { cb(r.N, r.Err) })
}

func (u *uringBackend) Pwritev(fd FD, bufs [][]byte, off int64, cb func(n int, err error)) {
	u.single(Op{Kind: OpPwritev, FD: fd, Bufs: bufs, Off: off}, func(r Result) { cb(r.N, r.Err) })
}

func (u *uringBackend) Fsync(fd FD, cb func(err error)) {
	u.single(Op{Kind: OpFsync, FD: fd}, func(r Result) { cb(r.Err) })
}

func (u *uringBackend) Fdatasync(fd FD, cb func(err error)) {
	u.single(Op{Kind: OpFdatasync, FD: fd}, func(r Result) { cb(r.Err) })
}

func (u *uringBackend) Rename(oldpath, newpath string, cb func(err error)) {
	u.single(Op{Kind: OpRename, Path: oldpath, NewPath: newpath}, func(r Result) { cb(r.Err) })
}

func (u *uringBackend) Unlink(path string, cb func(err error)) {
	u.single(Op{Kind: OpUnlink, Path: path}, func(r Result) { cb(r.Err) })
}

// single runs one file operation as a chain of one. A lone step reports its
// short count as is (no ErrShort: nothing follows it to cancel).
func (u *uringBackend) single(op Op, cb func(Result)) {
	u.Chain([]Op{op}, func(res []Result) {
		r := res[0]
		if r.Err == ErrShort {
			r.Err = nil
		}
		cb(r)
	})
}

// SyncDir opens dir, fsyncs it and closes it, each step starting from the
// previous one's callback (a linked fsync cannot name the fd an open in the
// same chain is still to produce).
func (u *uringBackend) SyncDir(dir string, cb func(err error)) {
	u.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0, func(fd FD, err error) {
		if err != nil {
			cb(err)
			return
		}
		u.Fsync(fd, func(serr error) {
			u.Close(fd, func(cerr error) {
				if serr != nil {
					cb(serr)
					return
				}
				cb(cerr)
			})
		})
	})
}

// Chain prepares one SQE per step, each but the last with IOSQE_IO_LINK, in
// one run of the SQ. The kernel starts a step only after the previous one
// succeeded in full, and completes the rest with -ECANCELED otherwise.
func (u *uringBackend) Chain(ops []Op, cb func(results []Result)) {
	if res := validChain(ops); res != nil {
		u.later(func() { cb(res) })
		return
	}
	if u.closing {
		u.later(func() { cb(cancelledResults(len(ops))) })
		return
	}
	ch := &uchain{results: make([]Result, len(ops)), left: len(ops), cb: cb}
	if len(ops) == 0 {
		u.later(func() { cb(ch.results) })
		return
	}
	// Every path is converted before anything is prepared: a bad step
	// refuses the whole chain rather than leave half of it in the SQ.
	paths := make([][2][]byte, len(ops))
	for i := range ops {
		var err error
		switch ops[i].Kind {
		case OpRename:
			if paths[i][0], err = cpath(ops[i].Path); err == nil {
				paths[i][1], err = cpath(ops[i].NewPath)
			}
		case OpUnlink:
			paths[i][0], err = cpath(ops[i].Path)
		}
		if err != nil {
			res := cancelledResults(len(ops))
			res[i].Err = err
			u.later(func() { cb(res) })
			return
		}
	}
	u.reserve(len(ops))
	for i := range ops {
		op := &ops[i]
		s, ud := u.table.alloc(slotStep)
		s.chain, s.step, s.op, s.fd, s.want = ch, i, op.Kind, op.FD, op.wantBytes()
		s.path, s.path2 = paths[i][0], paths[i][1]
		q := u.r.GetSQE() // reserve made room for the whole chain
		u.prepStep(q, s, op)
		q.SetUserData(ud)
		if i < len(ops)-1 {
			q.SetFlags(uring.SQEIOLink)
		}
		if op.Kind == OpClose {
			delete(u.open, op.FD)
		}
	}
}

// prepStep fills q for op and stores in s what the kernel will point at.
func (u *uringBackend) prepStep(q *uring.SQE, s *slot, op *Op) {
	fd := int(op.FD)
	switch op.Kind {
	case OpNop:
		q.PrepNop()
	case OpRead:
		s.buf = op.Buf
		q.PrepRead(fd, s.buf, ^uint64(0))
	case OpWrite:
		s.buf = op.Buf
		q.PrepWrite(fd, s.buf, ^uint64(0))
	case OpPread:
		s.buf = op.Buf
		q.PrepRead(fd, s.buf, uint64(op.Off))
	case OpPwrite:
		s.buf = op.Buf
		q.PrepWrite(fd, s.buf, uint64(op.Off))
	case OpPwritev:
		s.bufs = op.Bufs
		s.iov = make([]unix.Iovec, len(op.Bufs))
		for i, b := range s.bufs {
			if len(b) > 0 {
				s.iov[i].Base = &b[0]
				s.iov[i].SetLen(len(b))
			}
		}
		q.PrepWritev(fd, s.iov, uint64(op.Off))
	case OpFsync:
		q.PrepFsync(fd, 0)
	case OpFdatasync:
		q.PrepFsync(fd, uring.FsyncDatasync)
	case OpClose:
		q.PrepClose(fd)
	case OpRename:
		q.PrepRenameat(unix.AT_FDCWD, &s.path[0], unix.AT_FDCWD, &s.path2[0], 0)
	case OpUnlink:
		q.PrepUnlinkat(unix.AT_FDCWD, &s.path[0], 0)
	}
}

// stepDone records one step's CQE; the chain's callback runs after the last.
func (u *uringBackend) stepDone(s *slot, res int32) {
	ch, i := s.chain, s.step
	r := Result{}
	switch {
	case res < 0:
		r.Err = errno(res)
	default:
		r.N = int(res)
		if s.op.isTransfer() && r.N < s.want {
			r.Err = ErrShort
		}
	}
	u.table.release(s)
	ch.results[i] = r
	ch.left--
	if ch.left == 0 {
		ch.cb(ch.results)
	}
}
