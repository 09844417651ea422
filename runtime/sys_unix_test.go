//go:build unix

package runtime

import (
	"syscall"
	"testing"
)

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }

// needFiles raises the soft RLIMIT_NOFILE to at least n (Go raises it to the
// hard limit at start already; this is for hosts where that is still low).
func needFiles(tb testing.TB, n uint64) {
	tb.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		tb.Skipf("RLIMIT_NOFILE hard limit %d is below the %d descriptors this test needs", lim.Max, n)
	}
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Fatal(err)
	}
}
