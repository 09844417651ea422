package uring

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	registerPbufRing   = 22 // IORING_REGISTER_PBUF_RING (5.19)
	unregisterPbufRing = 23 // IORING_UNREGISTER_PBUF_RING

	// MaxBufRingEntries is the largest provided buffer ring the kernel
	// accepts (it refuses 1<<16 and above; entries must be a power of two).
	MaxBufRingEntries = 1 << 15
)

// bufRingEntry mirrors struct io_uring_buf (16 bytes). In slot 0 the last two
// bytes (resv) are the ring's tail: struct io_uring_buf_ring overlays
// {resv1 u64, resv2 u32, resv3 u16, tail u16} on the first entry.
type bufRingEntry struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16
}

// bufReg mirrors struct io_uring_buf_reg (40 bytes).
type bufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	flags       uint16
	resv        [3]uint64
}

// tailPair is the 32-bit word at offset 12 of the ring: slot 0's bid, then
// the tail. Publishing the tail stores this whole word atomically, because Go
// has no 16-bit atomic store; slot 0's bid is written back unchanged (only
// we write it). The zero-length array aligns the pair to 4 bytes, so that it
// can be read as one uint32 in the machine's byte order.
type tailPair struct {
	_    [0]uint32
	bid  uint16
	tail uint16
}

// BufRing is a provided buffer ring (IORING_REGISTER_PBUF_RING, kernel 5.19;
// multishot recv on it needs 6.0): a group of equal-sized buffers the kernel
// picks from when an SQE has SQEBufferSelect and names the group. Each CQE
// that consumed a buffer has CQEFBuffer set and names it (CQE.Buffer); the
// buffer is then ours until we give it back with Recycle (or Add + Publish).
//
// Both the ring and the buffers are anonymous mmaps, outside the Go heap, so
// the garbage collector never moves or frees memory the kernel writes into;
// they are unmapped only by Close.
//
// A BufRing belongs to its Ring's owner thread, like the Ring itself.
type BufRing struct {
	r       *Ring
	bgid    uint16
	mask    uint16
	tail    uint16 // buffers added so far (mod 1<<16), published or not
	size    int    // bytes per buffer
	ents    []bufRingEntry
	word    *uint32 // the tailPair word in ringMem
	ringMem []byte
	data    []byte
	closed  bool
}

// RegisterBufRing registers a provided buffer ring for group bgid with
// entries buffers of bufSize bytes each, and provides all of them: buffer id
// i is Buf(i). entries must be a power of two no larger than
// MaxBufRingEntries. Kernels before 5.19 refuse with EINVAL.
func (r *Ring) RegisterBufRing(bgid uint16, entries int, bufSize int) (*BufRing, error) {
	if entries <= 0 || entries > MaxBufRingEntries || entries&(entries-1) != 0 {
		return nil, fmt.Errorf("io_uring register buffer ring %d: %d entries is not a power of two in [1, %d]: %w",
			bgid, entries, MaxBufRingEntries, unix.EINVAL)
	}
	if bufSize <= 0 || int64(bufSize) > 1<<31 {
		return nil, fmt.Errorf("io_uring register buffer ring %d: buffer size %d: %w", bgid, bufSize, unix.EINVAL)
	}
	ringSize := entries * int(unsafe.Sizeof(bufRingEntry{}))
	ringMem, err := unix.Mmap(-1, 0, ringSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("io_uring register buffer ring %d: mmap ring: %w", bgid, err)
	}
	data, err := unix.Mmap(-1, 0, entries*bufSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		unix.Munmap(ringMem)
		return nil, fmt.Errorf("io_uring register buffer ring %d: mmap %d buffers of %d bytes: %w", bgid, entries, bufSize, err)
	}
	base := unsafe.Pointer(&ringMem[0])
	b := &BufRing{
		r:       r,
		bgid:    bgid,
		mask:    uint16(entries - 1),
		size:    bufSize,
		ents:    unsafe.Slice((*bufRingEntry)(base), entries),
		word:    (*uint32)(unsafe.Add(base, 12)),
		ringMem: ringMem,
		data:    data,
	}
	reg := &bufReg{ringAddr: uint64(uintptr(base)), ringEntries: uint32(entries), bgid: bgid}
	if err := r.register(registerPbufRing, unsafe.Pointer(reg), 1); err != nil {
		b.unmap()
		return nil, fmt.Errorf("io_uring register buffer ring %d (%d x %d bytes): %w", bgid, entries, bufSize, err)
	}
	for i := range entries {
		b.Add(uint16(i))
	}
	b.Publish()
	return b, nil
}

// Group is the buffer group id SQEs name to select from this ring.
func (b *BufRing) Group() uint16 { return b.bgid }

// Entries is the number of buffers in the ring.
func (b *BufRing) Entries() int { return len(b.ents) }

// BufSize is the size of every buffer.
func (b *BufRing) BufSize() int { return b.size }

// Buf returns the whole of buffer bid; a CQE's Res says how much of it holds
// data.
func (b *BufRing) Buf(bid uint16) []byte {
	off := int(bid&b.mask) * b.size
	return b.data[off : off+b.size : off+b.size]
}

// Add puts buffer bid back at the ring's tail without telling the kernel:
// Publish makes every added buffer visible at once. Add each buffer only
// after the kernel handed it out (a CQE named it), and at most once per
// handing out: the ring has room for exactly Entries buffers.
func (b *BufRing) Add(bid uint16) {
	buf := b.Buf(bid)
	e := &b.ents[b.tail&b.mask]
	e.addr = uint64(uintptr(unsafe.Pointer(&buf[0])))
	e.len = uint32(len(buf))
	e.bid = bid & b.mask
	b.tail++
}

// Publish makes the added buffers visible to the kernel: one atomic store of
// the tail (store-release), ordered after the stores that filled the
// entries, which the kernel reads after its load-acquire of the tail.
func (b *BufRing) Publish() {
	p := tailPair{bid: b.ents[0].bid, tail: b.tail}
	atomic.StoreUint32(b.word, *(*uint32)(unsafe.Pointer(&p)))
}

// Recycle gives buffer bid back to the kernel at once (Add, then Publish).
func (b *BufRing) Recycle(bid uint16) {
	b.Add(bid)
	b.Publish()
}

// Close unregisters the ring and unmaps it and its buffers. Call it only
// once no operation that may select from the group is in flight: the kernel
// may still be writing into a buffer it picked. Closing the Ring first (with
// requests still in flight) unregisters the group with it; the buffers must
// then stay mapped for the life of the process, so do not call Close.
func (b *BufRing) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	reg := &bufReg{bgid: b.bgid}
	err := b.r.register(unregisterPbufRing, unsafe.Pointer(reg), 1)
	b.unmap()
	if err != nil {
		return fmt.Errorf("io_uring unregister buffer ring %d: %w", b.bgid, err)
	}
	return nil
}

func (b *BufRing) unmap() {
	b.ents, b.word = nil, nil
	if b.ringMem != nil {
		unix.Munmap(b.ringMem)
		b.ringMem = nil
	}
	if b.data != nil {
		unix.Munmap(b.data)
		b.data = nil
	}
}

// PrepRecvMultishot prepares a recv that stays armed (IORING_RECV_MULTISHOT,
// kernel 6.0): each time data arrives the kernel takes a buffer from group
// bgid, fills it and posts a CQE with CQEFBuffer (CQE.Buffer names it) and,
// while the request stays armed, CQEFMore. The last CQE lacks CQEFMore: Res 0
// at end of stream, -ENOBUFS when the group had no buffer left, another
// negated errno on failure or -ECANCELED after a cancel; a CQE that carries
// data may be the last too (the kernel may end a multishot at any time, e.g.
// when its CQ overflows), so re-arm whenever CQEFMore is missing and the
// stream goes on.
func (s *SQE) PrepRecvMultishot(fd int, bgid uint16, flags uint32) {
	s.prep(OpRecv, fd, nil, 0, 0)
	s.OpFlags = flags
	s.Ioprio = RecvMultishot
	s.Flags = SQEBufferSelect
	s.BufIndex = bgid // buf_group shares the field with buf_index
}

// More reports whether the multishot request that posted c stays armed
// (CQEFMore): further CQEs with the same user_data will follow.
func (c CQE) More() bool { return c.Flags&CQEFMore != 0 }

// Buffer returns the id of the provided buffer c consumed (CQEFBuffer set),
// or ok == false when it consumed none.
func (c CQE) Buffer() (bid uint16, ok bool) {
	if c.Flags&CQEFBuffer == 0 {
		return 0, false
	}
	return uint16(c.Flags >> CQEBufferShift), true
}
