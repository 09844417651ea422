package runtime

import (
	"os"

	"golang.org/x/sys/unix"
)

// pwritev writes bufs at off with one pwritev(2); a short count is returned
// as is, like the kernel's.
func pwritev(f *os.File, bufs [][]byte, off int64) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		n, werr = unix.Pwritev(int(fd), bufs, off)
		return werr != unix.EAGAIN
	})
	if err != nil {
		return n, err
	}
	return n, werr
}

// fdatasync flushes f's data with fdatasync(2).
func fdatasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		for {
			serr = unix.Fdatasync(int(fd))
			if serr != unix.EINTR {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	return serr
}
