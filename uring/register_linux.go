package uring

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	registerBuffers   = 0
	unregisterBuffers = 1
	registerFiles     = 2
	unregisterFiles   = 3
	registerProbe     = 8
	probeOpSupported  = 1 << 0
	probeOps          = 256
)

func (r *Ring) register(op uintptr, arg unsafe.Pointer, n uint32) error {
	for {
		_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), op, uintptr(arg), uintptr(n), 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return errno
		}
		return nil
	}
}

// probeHeader mirrors struct io_uring_probe; probeOp mirrors struct io_uring_probe_op.
type probeHeader struct {
	lastOp uint8
	opsLen uint8
	resv   uint16
	resv2  [3]uint32
}

type probeOp struct {
	op    uint8
	resv  uint8
	flags uint16
	resv2 uint32
}

type probeBuf struct {
	hdr probeHeader
	ops [probeOps]probeOp
}

// Probe is the kernel's answer to IORING_REGISTER_PROBE.
type Probe struct {
	LastOp    uint8
	supported [probeOps]bool
}

// Supported reports whether the kernel implements op.
func (p *Probe) Supported(op uint8) bool { return p.supported[op] }

// Probe asks the kernel which opcodes it supports.
func (r *Ring) Probe() (*Probe, error) {
	buf := new(probeBuf)
	if err := r.register(registerProbe, unsafe.Pointer(buf), probeOps); err != nil {
		return nil, fmt.Errorf("io_uring register probe: %w", err)
	}
	p := &Probe{LastOp: buf.hdr.lastOp}
	for i := 0; i < int(buf.hdr.opsLen) && i < probeOps; i++ {
		o := buf.ops[i]
		if o.flags&probeOpSupported != 0 {
			p.supported[o.op] = true
		}
	}
	return p, nil
}

// RegisterFiles registers a fixed file table; SQEs with SQEFixedFile then use
// indices into it instead of fds (-1 marks an empty slot).
func (r *Ring) RegisterFiles(fds []int32) error {
	if len(fds) == 0 {
		return fmt.Errorf("io_uring register files: empty table: %w", unix.EINVAL)
	}
	if err := r.register(registerFiles, unsafe.Pointer(&fds[0]), uint32(len(fds))); err != nil {
		return fmt.Errorf("io_uring register files: %w", err)
	}
	return nil
}

// UnregisterFiles drops the fixed file table.
func (r *Ring) UnregisterFiles() error { return r.register(unregisterFiles, nil, 0) }

// RegisterBuffers pins bufs for READ_FIXED/WRITE_FIXED (BufIndex selects one).
// The ring keeps bufs referenced until UnregisterBuffers or Close.
func (r *Ring) RegisterBuffers(bufs [][]byte) error {
	if len(bufs) == 0 {
		return fmt.Errorf("io_uring register buffers: none: %w", unix.EINVAL)
	}
	iov := make([]unix.Iovec, len(bufs))
	for i, b := range bufs {
		if len(b) == 0 {
			return fmt.Errorf("io_uring register buffers: buffer %d is empty: %w", i, unix.EINVAL)
		}
		iov[i].Base = &b[0]
		iov[i].SetLen(len(b))
	}
	if err := r.register(registerBuffers, unsafe.Pointer(&iov[0]), uint32(len(iov))); err != nil {
		return fmt.Errorf("io_uring register buffers: %w", err)
	}
	r.regBufs = bufs
	return nil
}

// UnregisterBuffers unpins the registered buffers.
func (r *Ring) UnregisterBuffers() error {
	err := r.register(unregisterBuffers, nil, 0)
	if err == nil {
		r.regBufs = nil
	}
	return err
}

// PrepReadFixed prepares a read into registered buffer bufIndex (buf must lie inside it).
func (s *SQE) PrepReadFixed(fd int, buf []byte, off uint64, bufIndex uint16) {
	s.prep(OpReadFixed, fd, bufAddr(buf), uint32(len(buf)), off)
	s.BufIndex = bufIndex
}

// PrepWriteFixed prepares a write from registered buffer bufIndex (buf must lie inside it).
func (s *SQE) PrepWriteFixed(fd int, buf []byte, off uint64, bufIndex uint16) {
	s.prep(OpWriteFixed, fd, bufAddr(buf), uint32(len(buf)), off)
	s.BufIndex = bufIndex
}
