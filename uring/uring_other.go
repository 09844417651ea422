//go:build !linux

package uring

import "errors"

// Ring is not available outside Linux; New always fails.
type Ring struct{}

// New reports that io_uring does not exist on this operating system.
func New(entries uint32, flags uint32) (*Ring, error) {
	return nil, &UnavailableError{Reason: "io_uring exists only on Linux", Err: errors.ErrUnsupported}
}

// Close does nothing.
func (r *Ring) Close() error { return nil }

// Describe reports that io_uring does not exist on this operating system.
func Describe() (Info, error) {
	_, err := New(0, 0)
	return Info{}, err
}
