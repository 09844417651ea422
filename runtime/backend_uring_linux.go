package runtime

import (
	"errors"
	"fmt"
	"net"
	"strings"
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

// --- sockets ---

func (u *uringBackend) Listen(network, addr string) (FD, net.Addr, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return -1, nil, fmt.Errorf("runtime: listen %s %s: %w", network, addr, syscall.EAFNOSUPPORT)
	}
	ta, err := net.ResolveTCPAddr(network, addr)
	if err != nil {
		return -1, nil, err
	}
	fd, err := listenTCP(network, ta)
	if err != nil {
		return -1, nil, fmt.Errorf("runtime: listen %s %s: %w", network, addr, err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return -1, nil, err
	}
	u.open[FD(fd)] = &fdState{sock: true}
	return FD(fd), sockaddrToTCP(sa), nil
}

// listenTCP creates, binds and listens on a socket for ta. An address with
// no IP (":6379", "[::]:6379") on "tcp" listens dual-stack where the host
// has IPv6, like Go's net package; an IPv4 address listens on IPv4.
func listenTCP(network string, ta *net.TCPAddr) (int, error) {
	ip4 := ta.IP.To4()
	wildcard := ta.IP == nil || ta.IP.Equal(net.IPv6unspecified) && ip4 == nil
	switch {
	case network == "tcp4" || (network == "tcp" && ip4 != nil):
		if ta.IP != nil && ip4 == nil {
			return -1, syscall.EAFNOSUPPORT
		}
		sa := &unix.SockaddrInet4{Port: ta.Port}
		copy(sa.Addr[:], ip4)
		return bindListen(unix.AF_INET, sa, false)
	case network == "tcp" && wildcard:
		fd, err := bindListen(unix.AF_INET6, &unix.SockaddrInet6{Port: ta.Port}, false)
		if errors.Is(err, unix.EAFNOSUPPORT) {
			return bindListen(unix.AF_INET, &unix.SockaddrInet4{Port: ta.Port}, false)
		}
		return fd, err
	default:
		sa := &unix.SockaddrInet6{Port: ta.Port}
		copy(sa.Addr[:], ta.IP.To16())
		return bindListen(unix.AF_INET6, sa, network == "tcp6")
	}
}

func bindListen(family int, sa unix.Sockaddr, v6only bool) (int, error) {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	opts := [][2]int{{unix.SOL_SOCKET, unix.SO_REUSEADDR}, {unix.SOL_SOCKET, unix.SO_REUSEPORT}}
	for _, o := range opts {
		if err := unix.SetsockoptInt(fd, o[0], o[1], 1); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	if family == unix.AF_INET6 {
		v := 0
		if v6only {
			v = 1
		}
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, v); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Listen(fd, 4096); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

func sockaddrToTCP(sa unix.Sockaddr) net.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]).To16(), Port: a.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}
	}
	return nil
}

func (u *uringBackend) LocalAddr(fd FD) net.Addr {
	if st := u.open[fd]; st == nil || !st.sock {
		return nil
	}
	sa, err := unix.Getsockname(int(fd))
	if err != nil {
		return nil
	}
	return sockaddrToTCP(sa)
}

func (u *uringBackend) RemoteAddr(fd FD) net.Addr {
	if st := u.open[fd]; st == nil || !st.sock {
		return nil
	}
	sa, err := unix.Getpeername(int(fd))
	if err != nil {
		return nil
	}
	return sockaddrToTCP(sa)
}

func (u *uringBackend) Accept(l FD, cb func(c FD, err error)) {
	if u.closing {
		u.later(func() { cb(-1, syscall.ECANCELED) })
		return
	}
	s, ud := u.table.alloc(slotAccept)
	s.fd, s.cbFD = l, cb
	u.track(s)
	q := u.sqe()
	q.PrepAccept(int(l), unix.SOCK_CLOEXEC)
	q.SetUserData(ud)
}

func (u *uringBackend) Recv(c FD, buf []byte, cb func(n int, err error)) {
	if u.closing {
		u.later(func() { cb(0, syscall.ECANCELED) })
		return
	}
	s, ud := u.table.alloc(slotRecv)
	s.fd, s.buf, s.cbN = c, buf, cb
	u.track(s)
	q := u.sqe()
	q.PrepRecv(int(c), buf, 0)
	q.SetUserData(ud)
}

// RecvMulti arms one multishot recv on c that takes its buffers from the
// loop's provided buffer ring. Without such a ring (kernels before 5.19) or
// multishot recv (before 6.0) it loops one-shot Recvs into a buffer of c's
// own, like the pool backend.
func (u *uringBackend) RecvMulti(c FD, cb func(data []byte, err error, done bool)) {
	if u.closing {
		u.later(func() { cb(nil, syscall.ECANCELED, true) })
		return
	}
	if u.noMultishot || u.bufRing() == nil {
		u.recvByReads(c, cb)
		return
	}
	s, _ := u.table.alloc(slotRecvMulti)
	s.fd, s.cbData = c, cb
	u.track(s)
	u.armRecvMulti(s)
}

// bufRing registers the provided buffer ring at its first use, so that
// loops that never call RecvMulti pay nothing for it. It returns nil when
// the kernel refused one; bufsErr says why.
func (u *uringBackend) bufRing() *uring.BufRing {
	if u.bufs == nil && u.bufsErr == nil {
		u.bufs, u.bufsErr = u.r.RegisterBufRing(recvBufGroup, u.bufCount, u.bufSize)
	}
	return u.bufs
}

func (u *uringBackend) armRecvMulti(s *slot) {
	q := u.sqe()
	q.PrepRecvMultishot(int(s.fd), u.bufs.Group(), 0)
	q.SetUserData(s.userData())
}

// recvByReads is RecvMulti without multishot recv: one-shot Recvs into a
// buffer of the connection's own.
func (u *uringBackend) recvByReads(c FD, cb func(data []byte, err error, done bool)) {
	u.multiFallback++
	st := u.open[c]
	open := func() bool { return !u.closing && u.open[c] == st }
	recvByReads(u, c, make([]byte, u.bufSize), open, cb)
}

// recvMultiDone handles one CQE of a RecvMulti: it hands the chunk to the
// callback and recycles its buffer at once; when the kernel ended the
// multishot it re-arms it while the stream goes on (it ran out of buffers,
// or ended after data for reasons of its own, like a CQ overflow), and
// otherwise makes the done callback and releases the slot.
func (u *uringBackend) recvMultiDone(s *slot, c uring.CQE) {
	bid, hasBuf := c.Buffer()
	if hasBuf {
		if c.Res > 0 && !s.cut {
			s.gotData = true
			s.cbData(u.bufs.Buf(bid)[:c.Res], nil, false) // may Close the connection: s.cut
		}
		u.bufs.Recycle(bid)
	}
	if c.More() {
		return
	}
	switch {
	case s.cut || u.closing:
		u.recvMultiEnd(s, syscall.ECANCELED)
	case c.Res > 0 || c.Res == -int32(unix.ENOBUFS):
		u.multiRearms++
		u.armRecvMulti(s)
	case c.Res == -int32(unix.EINVAL) && !s.gotData:
		// A kernel with buffer rings but no multishot recv (5.19): serve
		// this connection and every later one with one-shot Recvs.
		u.noMultishot = true
		fd, cb := s.fd, s.cbData
		u.settle(s)
		u.table.release(s)
		u.recvByReads(fd, cb)
	case c.Res == 0:
		u.recvMultiEnd(s, nil)
	default:
		u.recvMultiEnd(s, errno(c.Res))
	}
}

// recvMultiEnd releases a RecvMulti's slot and makes its done callback.
func (u *uringBackend) recvMultiEnd(s *slot, err error) {
	cb := s.cbData
	u.settle(s)
	u.table.release(s)
	cb(nil, err, true)
}

func (u *uringBackend) Send(c FD, buf []byte, cb func(n int, err error)) {
	if u.closing {
		u.later(func() { cb(0, syscall.ECANCELED) })
		return
	}
	s, _ := u.table.alloc(slotSend)
	s.fd, s.buf, s.cbN = c, buf, cb
	u.track(s)
	u.sendMore(s)
}

func (u *uringBackend) sendMore(s *slot) {
	q := u.sqe()
	q.PrepSend(int(s.fd), s.buf[s.sent:], unix.MSG_NOSIGNAL)
	q.SetUserData(s.userData())
}

// sendDone continues a send until every byte went out: the slot (and buf)
// stays in the table across the resubmissions.
func (u *uringBackend) sendDone(s *slot, res int32) {
	if res > 0 {
		s.sent += int(res)
		if s.sent < len(s.buf) && !u.closing && !s.cut {
			u.sendMore(s)
			return
		}
	}
	cb, sent, want, cut := s.cbN, s.sent, len(s.buf), u.settle(s)
	u.table.release(s)
	switch {
	case cut && sent < want:
		cb(sent, syscall.ECANCELED)
	case res < 0:
		cb(sent, errno(res))
	case sent < want && u.closing:
		cb(sent, syscall.ECANCELED)
	case sent < want: // res == 0: the socket took nothing
		cb(sent, syscall.EPIPE)
	default:
		cb(sent, nil)
	}
}

// fdState is what the backend knows of a descriptor it produced.
type fdState struct {
	sock    bool
	pending []*slot // socket operations in flight on it
}

// track lists a socket operation under its descriptor, so Close can cut it.
func (u *uringBackend) track(s *slot) {
	if st := u.open[s.fd]; st != nil && st.sock {
		st.pending = append(st.pending, s)
		s.owner = st
	}
}

// settle takes a completed socket operation off its descriptor's list and
// reports whether Close cut it.
func (u *uringBackend) settle(s *slot) bool {
	if st := s.owner; st != nil {
		for i, p := range st.pending {
			if p == s {
				last := len(st.pending) - 1
				st.pending[i] = st.pending[last]
				st.pending[last] = nil
				st.pending = st.pending[:last]
				break
			}
		}
	}
	return s.cut
}

func (u *uringBackend) Close(fd FD, cb func(err error)) {
	if st, ok := u.open[fd]; ok {
		delete(u.open, fd)
		for _, p := range st.pending {
			p.cut = true
			if p.kind == slotRecvMulti {
				// The shutdown below would end it too (as an EOF), but a
				// cancel ends it whatever the socket makes of a shutdown.
				q := u.sqe()
				q.PrepCancel(p.userData(), 0)
				q.SetUserData(udIgnore)
			}
		}
		if st.sock {
			// Pending accept, recv and send on the socket finish now.
			_ = unix.Shutdown(int(fd), unix.SHUT_RDWR)
		}
	}
	s, ud := u.table.alloc(slotClose)
	s.fd, s.cbErr = fd, cb
	q := u.sqe()
	q.PrepClose(int(fd))
	q.SetUserData(ud)
}

// --- files ---

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
