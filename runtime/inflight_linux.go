package runtime

import (
	"golang.org/x/sys/unix"
)

// slotKind says how a CQE for a slot completes.
type slotKind uint8

const (
	slotFree      slotKind = iota
	slotAccept             // cbFD(new socket)
	slotRecv               // cbN(n)
	slotRecvMulti          // cbData per chunk; a multishot recv, re-armed until the stream ends
	slotSend               // cbN(len) after every byte went out; resubmits short sends
	slotStep               // one step of a chain (a single file op is a chain of one)
	slotEventfd            // the loop's own read on its wake-up eventfd; re-armed
	slotMsgRing            // a MSG_RING this loop sent to wake another
	slotOpen               // cbFD(new fd)
	slotClose              // cbErr
)

// slot is one entry of the in-flight table: an operation the kernel holds.
//
// Invariant: everything the SQE points at (buf, iov and the buffers it
// describes, path, path2) is referenced from here from before the SQE is
// prepared until the slot is released, which happens only after the
// operation's CQE has been reaped. Memory the kernel reads or writes is
// therefore never only referenced by an integer in an SQE, and never on a
// goroutine stack (storing it here makes it escape to the heap).
type slot struct {
	idx  uint32
	gen  uint32
	kind slotKind
	fd   FD

	buf   []byte
	sent  int // slotSend: bytes already sent
	bufs  [][]byte
	iov   []unix.Iovec
	path  []byte // NUL-terminated
	path2 []byte // NUL-terminated

	cbN   func(n int, err error)
	cbErr func(err error)
	cbFD  func(fd FD, err error)

	cbData  func(data []byte, err error, done bool) // slotRecvMulti
	gotData bool                                    // slotRecvMulti: a chunk arrived since RecvMulti

	chain *uchain // slotStep
	step  int     // slotStep: index in chain
	op    OpKind  // slotStep
	want  int     // slotStep: bytes a transfer step asks for

	target *Loop // slotMsgRing

	owner *fdState // socket operations: the descriptor's state, for Close
	cut   bool     // Close was called on the descriptor while this ran
}

// uchain collects the results of a chain's steps until the last CQE.
type uchain struct {
	results []Result
	left    int
	cb      func([]Result)
}

// Reserved user_data values. Slots encode gen<<32|idx with gen >= 1, so no
// slot's user_data is below 1<<32 and none is ^0 (uring.TimeoutUserData):
// gen never reaches 1<<32-1 paired with idx 1<<32-1 because idx stays far
// below that.
const (
	udIgnore uint64 = 0 // CQEs nobody waits for (our async cancels)
	udWake   uint64 = 1 // a MSG_RING wake-up arriving from another loop
)

// inflightTable maps user_data to slots.
//
// Invariants: a slot is in free exactly when its kind is slotFree; gen
// changes every time a slot is released, so a stale user_data never finds a
// live operation; slots are never moved (the table holds pointers), so a
// *slot stays valid while the table grows.
type inflightTable struct {
	slots []*slot
	free  []uint32
	used  int
}

func (t *inflightTable) alloc(kind slotKind) (*slot, uint64) {
	var s *slot
	if n := len(t.free); n > 0 {
		s = t.slots[t.free[n-1]]
		t.free = t.free[:n-1]
	} else {
		s = &slot{idx: uint32(len(t.slots)), gen: 1}
		t.slots = append(t.slots, s)
	}
	s.kind = kind
	t.used++
	return s, uint64(s.gen)<<32 | uint64(s.idx)
}

// get returns the live slot for user_data ud, or nil.
func (t *inflightTable) get(ud uint64) *slot {
	idx, gen := uint32(ud), uint32(ud>>32)
	if int(idx) >= len(t.slots) {
		return nil
	}
	s := t.slots[idx]
	if s.gen != gen || s.kind == slotFree {
		return nil
	}
	return s
}

// release frees a slot whose CQE has been handled, dropping every reference
// it held so that the buffers can be collected.
func (t *inflightTable) release(s *slot) {
	idx, gen := s.idx, s.gen+1
	if gen == 0 || gen == 1<<32-1 {
		gen = 1
	}
	*s = slot{idx: idx, gen: gen}
	t.free = append(t.free, idx)
	t.used--
}

// userData is the user_data of a live slot.
func (s *slot) userData() uint64 { return uint64(s.gen)<<32 | uint64(s.idx) }
