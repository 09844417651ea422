//go:build linux

package vfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync is fdatasync(2), retried on EINTR. It goes through SyscallConn so
// that a concurrent Close cannot recycle the descriptor under it.
func datasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	var serr error
	cerr := rc.Control(func(fd uintptr) {
		for {
			serr = unix.Fdatasync(int(fd))
			if serr != unix.EINTR {
				return
			}
		}
	})
	if cerr != nil {
		serr = cerr
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}
