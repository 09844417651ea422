//go:build unix

package main

import (
	"context"
	"fmt"
	"log/slog"
	"log/syslog"
	"strings"
	"sync"
)

// syslogFacilities are syslog-facility's values.
var syslogFacilities = map[string]syslog.Priority{
	"user": syslog.LOG_USER, "local0": syslog.LOG_LOCAL0, "local1": syslog.LOG_LOCAL1,
	"local2": syslog.LOG_LOCAL2, "local3": syslog.LOG_LOCAL3, "local4": syslog.LOG_LOCAL4,
	"local5": syslog.LOG_LOCAL5, "local6": syslog.LOG_LOCAL6, "local7": syslog.LOG_LOCAL7,
}

// newSyslogHandler is a handler that sends each record to the system log
// (or, for tests, to addr, "network:address"), under ident and facility,
// with the severity of the record's level, as Redis's syslog-* settings
// do.
func newSyslogHandler(ident, facility, addr string, level slog.Leveler) (slog.Handler, error) {
	prio := syslogFacilities[facility] | syslog.LOG_NOTICE
	var w *syslog.Writer
	var err error
	if network, address, ok := strings.Cut(addr, ":"); ok {
		w, err = syslog.Dial(network, address, prio, ident)
	} else {
		w, err = syslog.New(prio, ident)
	}
	if err != nil {
		return nil, fmt.Errorf("syslog: %w", err)
	}
	sw := &severityWriter{w: w}
	return &syslogHandler{inner: slog.NewTextHandler(sw, &slog.HandlerOptions{Level: level}), sw: sw}, nil
}

// syslogHandler formats records as the log file does and hands each to
// the system log with its level's severity.
type syslogHandler struct {
	inner slog.Handler
	sw    *severityWriter
}

func (h *syslogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *syslogHandler) Handle(ctx context.Context, r slog.Record) error {
	h.sw.mu.Lock()
	defer h.sw.mu.Unlock()
	h.sw.level = r.Level
	return h.inner.Handle(ctx, r)
}

func (h *syslogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &syslogHandler{inner: h.inner.WithAttrs(as), sw: h.sw}
}

func (h *syslogHandler) WithGroup(name string) slog.Handler {
	return &syslogHandler{inner: h.inner.WithGroup(name), sw: h.sw}
}

// severityWriter sends each line written to it as one syslog message, at
// the severity of the record being written (set under mu by Handle).
type severityWriter struct {
	mu    sync.Mutex
	w     *syslog.Writer
	level slog.Level
}

func (s *severityWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSuffix(string(p), "\n")
	var err error
	switch {
	case s.level >= slog.LevelError:
		err = s.w.Err(msg)
	case s.level >= slog.LevelWarn:
		err = s.w.Warning(msg)
	case s.level >= slog.LevelInfo:
		err = s.w.Notice(msg)
	default:
		err = s.w.Debug(msg)
	}
	return len(p), err
}
