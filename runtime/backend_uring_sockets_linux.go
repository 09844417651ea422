package runtime

// The uring backend's socket operations: listen, accept, recv (one-shot
// and multishot over provided buffers), send, and the bookkeeping that lets
// Close cut what is pending on a socket.

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/moond-db/moond/uring"
	"golang.org/x/sys/unix"
)

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
