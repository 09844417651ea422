//go:build !linux

package runtime

import "github.com/moond-db/moond/uring"

// newUringBackend fails outside Linux: io_uring exists only there.
func newUringBackend(l *Loop) (driver, error) {
	_, err := uring.New(l.cfg.RingEntries, uring.DefaultSetupFlags)
	if err == nil {
		err = &uring.UnavailableError{Reason: "io_uring exists only on Linux"}
	}
	return nil, err
}
