//go:build !unix

package runtime

import (
	"os"
	"syscall"
)

// reusePortControl does nothing here: Windows has no SO_REUSEPORT, so the
// first loop to listen owns the port.
func reusePortControl(network, address string, c syscall.RawConn) error { return nil }

// unlink removes a file.
func unlink(path string) error { return os.Remove(path) }

// syncDir is a no-op: Windows cannot fsync a directory; NTFS journals its
// metadata.
func syncDir(dir string) error { return nil }
