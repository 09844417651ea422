package uring

import "errors"

// UnavailableError reports that io_uring cannot be used on this machine or in
// this process, and why (old kernel, kernel.io_uring_disabled, a seccomp filter,
// a non-Linux build, ...). Callers fall back to a portable backend on it.
type UnavailableError struct {
	Reason string // human-readable cause, e.g. "kernel.io_uring_disabled=2"
	Err    error  // the underlying error, often a unix.Errno
}

func (e *UnavailableError) Error() string {
	if e.Err == nil {
		return "io_uring unavailable: " + e.Reason
	}
	return "io_uring unavailable: " + e.Reason + ": " + e.Err.Error()
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// IsUnavailable reports whether err says io_uring cannot be used here.
func IsUnavailable(err error) bool {
	var ue *UnavailableError
	return errors.As(err, &ue)
}
