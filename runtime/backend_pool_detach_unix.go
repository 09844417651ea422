//go:build unix

package runtime

import (
	"fmt"
	"syscall"
)

// Detach implements Detacher: the socket's descriptor is duplicated
// (close-on-exec), the handle leaves the table and its net.Conn is closed,
// which closes one descriptor and does not shut the socket down, so the
// duplicate goes on with the connection. An operation pending on fd ends
// with ECANCELED, as after Close.
func (p *poolBackend) Detach(fd FD) (int, error) {
	e := p.table.get(fd)
	if e == nil || e.conn == nil {
		return -1, fmt.Errorf("detach socket %d: %w", fd, syscall.EBADF)
	}
	sc, ok := e.conn.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("detach socket %d: %T has no descriptor", fd, e.conn)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("detach socket %d: %w", fd, err)
	}
	dup, derr := -1, error(nil)
	if err := raw.Control(func(s uintptr) {
		syscall.ForkLock.RLock()
		defer syscall.ForkLock.RUnlock()
		if dup, derr = syscall.Dup(int(s)); derr == nil {
			syscall.CloseOnExec(dup)
		}
	}); err != nil {
		return -1, fmt.Errorf("detach socket %d: %w", fd, err)
	}
	if derr != nil {
		return -1, fmt.Errorf("dup socket %d: %w", fd, derr)
	}
	p.table.remove(fd)
	// Closed here, not by a goroutine: a read pending on conn must end
	// before the caller's duplicate takes the socket's next bytes. Close of
	// a TCP connection without SO_LINGER does not block.
	_ = e.conn.Close()
	return dup, nil
}
