//go:build !linux

package runtime

import "os"

// pwritev writes bufs at off one after another (no pwritev(2) here).
func pwritev(f *os.File, bufs [][]byte, off int64) (int, error) {
	n := 0
	for _, b := range bufs {
		m, err := f.WriteAt(b, off+int64(n))
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// fdatasync is a full Sync where fdatasync(2) is missing or weaker (on
// darwin, Sync is F_FULLFSYNC, the only call that reaches the platter).
func fdatasync(f *os.File) error { return f.Sync() }
