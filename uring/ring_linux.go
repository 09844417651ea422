package uring

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// params mirrors struct io_uring_params (120 bytes).
type params struct {
	sqEntries    uint32
	cqEntries    uint32
	flags        uint32
	sqThreadCPU  uint32
	sqThreadIdle uint32
	features     uint32
	wqFd         uint32
	resv         [3]uint32
	sqOff        sqringOffsets
	cqOff        cqringOffsets
}

type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

const (
	offSQRing uint64 = 0
	offCQRing uint64 = 0x8000000
	offSQEs   uint64 = 0x10000000
)

// Ring is one io_uring instance: its fd, the mapped submission and completion
// rings, and the SQE array. See the package doc for the threading rules.
type Ring struct {
	fd       int
	flags    uint32 // setup flags in force
	features uint32

	// Submission ring. khead is written by the kernel, ktail by us.
	sqKHead, sqKTail, sqKFlags, sqKDropped *uint32
	sqMask, sqEntries                      uint32
	sqes                                   []SQE
	sqeTail                                uint32 // next SQE to hand out; SQEs in [*ktail, sqeTail) are prepared but unpublished

	// Completion ring. ktail is written by the kernel, khead by us.
	cqKHead, cqKTail, cqKOverflow *uint32
	cqMask, cqEntries             uint32
	cqes                          []CQE

	sqRingMem, cqRingMem, sqeMem []byte

	// Kept here, on the heap, because the kernel reads them during io_uring_enter
	// through integers: a goroutine stack must never hold them.
	waitArg getEventsArg
	waitTS  Timespec
	fallTS  Timespec // for the TIMEOUT SQE fallback without EXT_ARG

	regBufs [][]byte // registered buffers stay referenced while the kernel has them pinned
	closed  bool
}

// New creates a ring with room for entries SQEs (rounded up to a power of two
// by the kernel) and a completion queue twice that size. flags are setup flags
// to ask for; each one the kernel refuses with EINVAL is dropped, newest
// first, and the ring is created with the rest (Flags tells which stayed).
// Call it on the locked OS thread that will own the ring.
func New(entries uint32, flags uint32) (*Ring, error) {
	if entries == 0 {
		entries = 256
	}
	var p params
	var fd int
	for {
		p = params{flags: flags}
		var err error
		fd, err = setup(entries, &p)
		if err == nil {
			break
		}
		if err == unix.EINVAL {
			if next, ok := dropOne(flags); ok {
				flags = next
				continue
			}
		}
		return nil, classifySetupError(err)
	}
	r := &Ring{fd: fd, flags: p.flags, features: p.features}
	if err := r.mmap(&p); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("io_uring mmap: %w", err)
	}
	return r, nil
}

// dropOne removes the first flag of droppable that is set.
func dropOne(flags uint32) (uint32, bool) {
	for _, f := range droppable {
		if flags&f != 0 {
			return flags &^ f, true
		}
	}
	return flags, false
}

func setup(entries uint32, p *params) (int, error) {
	for {
		fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return -1, errno
		}
		return int(fd), nil
	}
}

// classifySetupError turns a failed io_uring_setup into an *UnavailableError
// where the cause means "no io_uring here", and says why.
func classifySetupError(err error) error {
	switch {
	case errors.Is(err, unix.ENOSYS):
		return &UnavailableError{Reason: "kernel has no io_uring_setup (too old, or blocked by a seccomp filter)", Err: err}
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		reason := "io_uring_setup not permitted (seccomp filter or container policy)"
		if b, rerr := os.ReadFile("/proc/sys/kernel/io_uring_disabled"); rerr == nil {
			if v := strings.TrimSpace(string(b)); v != "0" {
				reason = "kernel.io_uring_disabled=" + v
			}
		}
		return &UnavailableError{Reason: reason, Err: err}
	case errors.Is(err, unix.ENOMEM):
		return &UnavailableError{Reason: "io_uring_setup out of memory (RLIMIT_MEMLOCK too low on kernels before 5.12?)", Err: err}
	case errors.Is(err, unix.EINVAL):
		return &UnavailableError{Reason: "kernel refused every io_uring setup", Err: err}
	}
	return fmt.Errorf("io_uring_setup: %w", err)
}

func (r *Ring) mmap(p *params) error {
	sqSize := uintptr(p.sqOff.array) + uintptr(p.sqEntries)*4
	cqSize := uintptr(p.cqOff.cqes) + uintptr(p.cqEntries)*unsafe.Sizeof(CQE{})
	single := p.features&FeatSingleMmap != 0
	if single && cqSize > sqSize {
		sqSize = cqSize
	}
	var err error
	r.sqRingMem, err = unix.Mmap(r.fd, int64(offSQRing), int(sqSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("sq ring: %w", err)
	}
	r.cqRingMem = r.sqRingMem
	if !single {
		r.cqRingMem, err = unix.Mmap(r.fd, int64(offCQRing), int(cqSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			r.unmap()
			return fmt.Errorf("cq ring: %w", err)
		}
	}
	sqeSize := uintptr(p.sqEntries) * unsafe.Sizeof(SQE{})
	r.sqeMem, err = unix.Mmap(r.fd, int64(offSQEs), int(sqeSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		r.unmap()
		return fmt.Errorf("sqes: %w", err)
	}

	sq := unsafe.Pointer(&r.sqRingMem[0])
	r.sqKHead = (*uint32)(unsafe.Add(sq, p.sqOff.head))
	r.sqKTail = (*uint32)(unsafe.Add(sq, p.sqOff.tail))
	r.sqKFlags = (*uint32)(unsafe.Add(sq, p.sqOff.flags))
	r.sqKDropped = (*uint32)(unsafe.Add(sq, p.sqOff.dropped))
	r.sqMask = *(*uint32)(unsafe.Add(sq, p.sqOff.ringMask))
	r.sqEntries = *(*uint32)(unsafe.Add(sq, p.sqOff.ringEntries))
	// The indirection array maps ring slots to SQE indices; identity, set once.
	array := unsafe.Slice((*uint32)(unsafe.Add(sq, p.sqOff.array)), r.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.sqes = unsafe.Slice((*SQE)(unsafe.Pointer(&r.sqeMem[0])), r.sqEntries)
	r.sqeTail = *r.sqKTail

	cq := unsafe.Pointer(&r.cqRingMem[0])
	r.cqKHead = (*uint32)(unsafe.Add(cq, p.cqOff.head))
	r.cqKTail = (*uint32)(unsafe.Add(cq, p.cqOff.tail))
	r.cqKOverflow = (*uint32)(unsafe.Add(cq, p.cqOff.overflow))
	r.cqMask = *(*uint32)(unsafe.Add(cq, p.cqOff.ringMask))
	r.cqEntries = *(*uint32)(unsafe.Add(cq, p.cqOff.ringEntries))
	r.cqes = unsafe.Slice((*CQE)(unsafe.Add(cq, p.cqOff.cqes)), r.cqEntries)
	return nil
}

func (r *Ring) unmap() {
	if r.sqeMem != nil {
		unix.Munmap(r.sqeMem)
		r.sqeMem = nil
	}
	if len(r.cqRingMem) > 0 && &r.cqRingMem[0] != &r.sqRingMem[0] {
		unix.Munmap(r.cqRingMem)
	}
	r.cqRingMem = nil
	if r.sqRingMem != nil {
		unix.Munmap(r.sqRingMem)
		r.sqRingMem = nil
	}
}

// Close unmaps the rings and closes the ring fd. The kernel cancels what is
// still in flight; buffers of such operations must stay alive until Close returns.
func (r *Ring) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.unmap()
	r.sqes, r.cqes = nil, nil
	return unix.Close(r.fd)
}

// Fd is the ring's file descriptor (the target of another ring's MSG_RING).
func (r *Ring) Fd() int { return r.fd }

// Flags are the setup flags in force.
func (r *Ring) Flags() uint32 { return r.flags }

// Features are the IORING_FEAT_* bits the kernel reported.
func (r *Ring) Features() uint32 { return r.features }

// SQEntries is the size of the submission queue.
func (r *Ring) SQEntries() uint32 { return r.sqEntries }

// CQEntries is the size of the completion queue.
func (r *Ring) CQEntries() uint32 { return r.cqEntries }
