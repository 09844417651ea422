//go:build unix

package runtime

import (
	"os"
	"syscall"
)

// reusePortControl sets SO_REUSEADDR and SO_REUSEPORT on a socket before it
// binds, so every loop can listen on the same port.
func reusePortControl(network, address string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		if serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); serr != nil {
			return
		}
		serr = setReusePort(int(fd))
	})
	if err != nil {
		return err
	}
	return serr
}

// unlink removes a file, never a directory (unlink(2), like unlinkat with no
// flags on io_uring).
func unlink(path string) error {
	return syscall.Unlink(path)
}

// syncDir fsyncs a directory so that entries renamed or removed in it are
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return serr
	}
	return cerr
}
