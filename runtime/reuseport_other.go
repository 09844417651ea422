//go:build aix || solaris || illumos

package runtime

// setReusePort is a no-op where SO_REUSEPORT does not balance connections;
// one loop then owns the port.
func setReusePort(fd int) error { return nil }
