package runtime

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Detach implements Detacher.
func (u *uringBackend) Detach(fd FD) (int, error) {
	dup, err := unix.Dup(int(fd))
	if err != nil {
		return -1, fmt.Errorf("dup socket %d: %w", fd, err)
	}
	if st, ok := u.open[fd]; ok {
		delete(u.open, fd)
		for _, p := range st.pending {
			p.cut = true
			q := u.sqe()
			q.PrepCancel(p.userData(), 0)
			q.SetUserData(udIgnore)
		}
	}
	s, ud := u.table.alloc(slotClose)
	s.fd = fd
	q := u.sqe()
	q.PrepClose(int(fd))
	q.SetUserData(ud)
	return dup, nil
}
