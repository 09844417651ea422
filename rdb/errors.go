package rdb

import (
	"errors"
	"fmt"
)

// ErrFormat is the error every decoder returns (wrapped, with the detail)
// for input that is not a well-formed RDB encoding.
var ErrFormat = errors.New("rdb: bad data format")

// formatErr returns an error wrapping ErrFormat with a detail.
func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
}
