//go:build !unix

package main

import (
	"errors"
	"log/slog"
)

// newSyslogHandler: there is no system log to write to here.
func newSyslogHandler(ident, facility, addr string, level slog.Leveler) (slog.Handler, error) {
	return nil, errors.New("syslog-enabled: no syslog on this system")
}
