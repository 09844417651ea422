package runtime

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/moond-db/moond/uring"
	"golang.org/x/sys/unix"
)

// uringBackend runs a loop's I/O on one io_uring owned by the loop's thread.
//
// Invariants:
//   - Only the loop's thread touches the ring (SINGLE_ISSUER); other threads
//     reach the loop through its eventfd, or through MSG_RING sent from their
//     own ring.
//   - Every SQE carries the user_data of a live slot in table (or a reserved
//     value whose CQE is ignored); the slot keeps the operation's memory and
//     callback alive until its CQE is reaped.
//   - SQEs are prepared during an iteration and go to the kernel together at
//     the iteration's wait; a full SQ is submitted early, never dropped, and a
//     chain never straddles two submits (that would cut its links).
//   - open holds every descriptor this backend produced and the caller has not
//     closed; close closes what is left, so a stopped loop leaks none.
//   - For a socket, open also lists the accept, recv and send slots pending
//     on it; Close marks them cut, and a cut operation reports ECANCELED
//     whatever the kernel answered (after shutdown the kernel says EOF or
//     EINVAL, which a caller could mistake for the peer's doing).
//   - A RecvMulti is one slot for its whole life: its multishot recv is
//     re-armed with the same user_data when the kernel ends it while the
//     connection stays open, and the slot is released only with the done
//     callback. Every provided buffer a CQE names goes back to the ring right
//     after that CQE's callback, so none is held across iterations.
type uringBackend struct {
	loop *Loop
	r    *uring.Ring

	table    inflightTable
	cqes     []uring.CQE
	backlog  []uring.CQE // CQEs taken off a full CQ so that a submit could go through
	deferred []func()    // completions decided at call time
	closing  bool
	open     map[FD]*fdState

	// Wake-up eventfd: other threads write it, the loop keeps a read on it.
	efd    int
	efdBuf []byte

	// wakes are loops to wake with MSG_RING at the next submit; held is
	// flushWakes' scratch.
	wakes []*Loop
	held  []*uringBackend
	// msgRings counts the MSG_RING wake-ups this loop sent (loop thread);
	// efdWakes the eventfd wake-ups others sent it.
	msgRings int
	efdWakes atomic.Int64

	// alive guards efd and the ring fd against wakers from other threads: they
	// hold it shared while they use either, close takes it exclusively.
	alive  sync.RWMutex
	closed bool

	// bufs is the provided buffer ring RecvMulti receives into, registered
	// at the first RecvMulti (nil before, and after bufsErr said the kernel
	// has none). bufCount and bufSize size it; tests shrink them.
	bufs          *uring.BufRing
	bufsErr       error
	bufCount      int
	bufSize       int
	noMultishot   bool // the kernel refused multishot recv: RecvMulti loops one-shot Recvs
	multiRearms   int  // multishot recvs re-armed after the kernel ended them (tests, tuning)
	multiFallback int  // RecvMultis served by one-shot Recvs
}

// Provided buffer ring of the uring backend's RecvMulti: group recvBufGroup,
// recvBufCount buffers of recvMultiBufSize bytes (4 MiB of address space per
// loop, touched only as buffers get used). A buffer is busy only from the
// kernel filling it until its CQE's callback returns, so the count bounds
// the chunks received but not yet reaped in one iteration, across all of a
// loop's connections: 256 covers a full reap batch (the backend reaps 256
// CQEs at a time). When it runs dry the kernel ends the multishots that found
// no buffer with ENOBUFS, and each is re-armed after the buffers went back:
// one extra SQE, what a one-shot recv costs every time.
const (
	recvBufGroup = 0
	recvBufCount = 256
)

// abandoned keeps the in-flight tables of rings closed with operations still
// in flight (past StopGrace) reachable for the life of the process: the
// kernel may still write into their buffers while it tears the ring down.
var (
	abandonedMu sync.Mutex
	abandoned   []*inflightTable
)

func newUringBackend(l *Loop) (driver, error) {
	flags := l.cfg.RingFlags
	if flags == 0 {
		flags = uring.DefaultSetupFlags
	}
	r, err := uring.New(l.cfg.RingEntries, flags)
	if err != nil {
		return nil, err
	}
	if r.SQEntries() < MaxChainLen {
		r.Close()
		return nil, fmt.Errorf("io_uring SQ of %d entries cannot hold a chain of %d", r.SQEntries(), MaxChainLen)
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	u := &uringBackend{
		loop:   l,
		r:      r,
		cqes:   make([]uring.CQE, 256),
		open:   make(map[FD]*fdState),
		efd:    efd,
		efdBuf: make([]byte, 8),

		bufCount: recvBufCount,
		bufSize:  recvMultiBufSize,
	}
	u.armEventfd()
	return u, nil
}

func (u *uringBackend) Name() string { return "uring" }

// --- SQ plumbing ---

// sqe returns a free SQE, submitting what is queued when the SQ is full.
func (u *uringBackend) sqe() *uring.SQE {
	for {
		if s := u.r.GetSQE(); s != nil {
			return s
		}
		u.submitNow()
	}
}

// reserve makes room for n SQEs in one run, so that a chain is submitted
// whole.
func (u *uringBackend) reserve(n int) {
	for int(u.r.SQSpace()) < n {
		u.submitNow()
	}
}

// submitNow hands the queued SQEs to the kernel before the iteration's wait.
// When the kernel pushes back (EBUSY, EAGAIN: its CQ is overflowing), the
// ready CQEs are moved to backlog, where reap finds them, and the submit is
// retried: SQEs are never dropped.
func (u *uringBackend) submitNow() {
	for tries := 0; ; tries++ {
		_, err := u.r.Submit()
		if err == nil {
			return
		}
		if !errors.Is(err, unix.EBUSY) && !errors.Is(err, unix.EAGAIN) {
			panic(fmt.Sprintf("runtime: loop %d: io_uring submit: %v", u.loop.cfg.ID, err))
		}
		u.drainToBacklog()
		if tries > 0 {
			time.Sleep(time.Duration(min(tries, 100)) * 10 * time.Microsecond)
		}
	}
}

func (u *uringBackend) drainToBacklog() {
	var buf [64]uring.CQE
	for {
		k := u.r.PeekCQEs(buf[:])
		if k == 0 {
			return
		}
		u.backlog = append(u.backlog, buf[:k]...)
		u.r.CQAdvance(uint32(k))
	}
}

// --- loop hooks ---

func (u *uringBackend) reap(budget int) int {
	n := 0
	for len(u.deferred) > 0 && n < budget {
		batch := u.deferred
		u.deferred = nil
		for _, fn := range batch {
			fn()
		}
		n += len(batch)
	}
	for n < budget {
		// CQEs set aside by a submit that met a full CQ are older than
		// those still in the ring: they go first.
		if len(u.backlog) > 0 {
			batch := u.backlog
			u.backlog = nil
			for _, c := range batch {
				u.complete(c)
			}
			n += len(batch)
			continue
		}
		k := u.r.PeekCQEs(u.cqes)
		if k == 0 {
			break
		}
		// The CQEs are copies: give the slots back to the kernel before the
		// callbacks, which may submit.
		u.r.CQAdvance(uint32(k))
		for _, c := range u.cqes[:k] {
			u.complete(c)
		}
		n += k
	}
	return n
}

func (u *uringBackend) wait(timeout time.Duration) error {
	u.flushWakes()
	if len(u.deferred) > 0 || len(u.backlog) > 0 || u.r.CQReady() > 0 {
		timeout = 0
	}
	var err error
	switch {
	case timeout == 0:
		_, err = u.r.Submit()
	case timeout < 0:
		_, err = u.r.SubmitAndWait(1)
	default:
		_, err = u.r.SubmitAndWaitTimeout(1, timeout)
	}
	switch {
	case err == nil, errors.Is(err, unix.ETIME), errors.Is(err, unix.EINTR):
		return nil
	case errors.Is(err, unix.EBUSY), errors.Is(err, unix.EAGAIN):
		// The CQ is overflowing: the next reap empties it, the next wait
		// submits again.
		u.drainToBacklog()
		return nil
	}
	return fmt.Errorf("io_uring_enter: %w", err)
}

func (u *uringBackend) wake() {
	u.alive.RLock()
	defer u.alive.RUnlock()
	if u.closed {
		return
	}
	u.efdWakes.Add(1)
	one := [8]byte{1}
	_, _ = unix.Write(u.efd, one[:]) // EAGAIN: the counter is full, a wake-up is pending anyway
}

// wakeRing queues a MSG_RING to dst for this loop's next submit. It runs on
// this loop's thread, from Post.
func (u *uringBackend) wakeRing(dst *Loop) bool {
	if u.closing {
		return false
	}
	if _, ok := dst.drv.(*uringBackend); !ok {
		return false
	}
	u.wakes = append(u.wakes, dst)
	return true
}

// flushWakes sends the queued MSG_RINGs and submits at once, while it holds
// each target's alive lock: MSG_RING resolves the target's ring fd during
// submission, and the lock keeps that fd from being closed (and reused)
// meanwhile.
func (u *uringBackend) flushWakes() {
	if len(u.wakes) == 0 {
		return
	}
	held := u.held[:0]
	for _, dst := range u.wakes {
		d := dst.drv.(*uringBackend)
		d.alive.RLock()
		if d.closed {
			d.alive.RUnlock()
			continue
		}
		held = append(held, d)
		s, ud := u.table.alloc(slotMsgRing)
		s.target = dst
		q := u.sqe()
		q.PrepMsgRing(d.r.Fd(), 0, udWake, 0)
		q.SetUserData(ud)
		u.msgRings++
	}
	clear(u.wakes)
	u.wakes = u.wakes[:0]
	if len(held) > 0 {
		u.submitNow()
	}
	for _, d := range held {
		d.alive.RUnlock()
	}
	clear(held)
	u.held = held[:0]
}

func (u *uringBackend) cancelAll() {
	u.closing = true
	for _, dst := range u.wakes {
		dst.drv.wake()
	}
	clear(u.wakes)
	u.wakes = u.wakes[:0]
	for _, s := range u.table.slots {
		if s.kind == slotFree || s.kind == slotMsgRing {
			continue
		}
		q := u.sqe()
		q.PrepCancel(s.userData(), 0)
		q.SetUserData(udIgnore)
	}
	u.submitNow()
}

func (u *uringBackend) inflight() int { return u.table.used + len(u.deferred) + len(u.backlog) }

func (u *uringBackend) close() error {
	for fd, st := range u.open {
		if st.sock {
			_ = unix.Shutdown(int(fd), unix.SHUT_RDWR)
		}
		_ = unix.Close(int(fd))
	}
	u.open = nil
	var bufErr error
	if u.bufs != nil && u.table.used == 0 {
		// With operations abandoned in flight the kernel may still write
		// into a buffer: the mapping then stays for the life of the process.
		bufErr = u.bufs.Close()
	}
	u.alive.Lock()
	u.closed = true
	_ = unix.Close(u.efd)
	err := u.r.Close()
	if err == nil {
		err = bufErr
	}
	u.alive.Unlock()
	if u.table.used > 0 {
		abandonedMu.Lock()
		abandoned = append(abandoned, &u.table)
		abandonedMu.Unlock()
	}
	return err
}

// later runs fn at the next reap: for operations decided at call time.
func (u *uringBackend) later(fn func()) { u.deferred = append(u.deferred, fn) }

// --- completions ---

func (u *uringBackend) complete(c uring.CQE) {
	if c.UserData == udIgnore || c.UserData == udWake || c.UserData == uring.TimeoutUserData {
		return
	}
	s := u.table.get(c.UserData)
	if s == nil {
		return
	}
	switch s.kind {
	case slotAccept:
		cb, cut := s.cbFD, u.settle(s)
		u.table.release(s)
		switch {
		case cut:
			if c.Res >= 0 {
				_ = unix.Close(int(c.Res)) // accepted as the listener closed
			}
			cb(-1, syscall.ECANCELED)
		case c.Res < 0:
			cb(-1, errno(c.Res))
		default:
			fd := FD(c.Res)
			u.open[fd] = &fdState{sock: true}
			_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
			cb(fd, nil)
		}
	case slotRecv:
		cb, cut := s.cbN, u.settle(s)
		u.table.release(s)
		switch {
		case cut:
			cb(0, syscall.ECANCELED)
		case c.Res < 0:
			cb(0, errno(c.Res))
		default:
			cb(int(c.Res), nil)
		}
	case slotRecvMulti:
		u.recvMultiDone(s, c)
	case slotSend:
		u.sendDone(s, c.Res)
	case slotStep:
		u.stepDone(s, c.Res)
	case slotOpen:
		cb := s.cbFD
		u.table.release(s)
		if c.Res < 0 {
			cb(-1, errno(c.Res))
			return
		}
		u.open[FD(c.Res)] = &fdState{}
		cb(FD(c.Res), nil)
	case slotClose:
		cb := s.cbErr
		u.table.release(s)
		if cb != nil {
			cb(errnoOrNil(c.Res))
		}
	case slotEventfd:
		u.table.release(s)
		if !u.closing {
			u.armEventfd()
		}
	case slotMsgRing:
		dst := s.target
		u.table.release(s)
		if c.Res < 0 {
			dst.drv.wake() // the ring refused: fall back to the eventfd
		}
	}
}

func errno(res int32) error { return syscall.Errno(-res) }

func errnoOrNil(res int32) error {
	if res < 0 {
		return errno(res)
	}
	return nil
}

func (u *uringBackend) armEventfd() {
	s, ud := u.table.alloc(slotEventfd)
	s.buf = u.efdBuf
	q := u.sqe()
	q.PrepRead(u.efd, s.buf, 0)
	q.SetUserData(ud)
}
