package shard

import (
	"errors"
	"strings"
	"syscall"
	"unicode"

	"github.com/moond-db/moond/persistence/wal"
)

// Why a shard refuses writes. While the WAL cannot take records (a write
// failed and is being retried) or after an fsync failed (the shard is
// poisoned for good: fsyncgate), write commands are answered with MISCONF,
// as Redis answers them when its AOF cannot be written; reads go on.

// Misconf is the error write commands get while the WAL cannot take them,
// or after a heap fsync failed.
func (s *Shard) Misconf() string {
	if err := s.heapPoisoned(); err != nil {
		return "MISCONF Errors writing to the data files (the shard is poisoned until restart): " + strerror(err)
	}
	var err error
	if s.wal != nil {
		app := s.wal.Appender()
		if err = app.Poisoned(); err == nil {
			err = app.LastError()
		}
	}
	if err == nil {
		err = s.appendRefused
	}
	return "MISCONF Errors writing to the AOF file: " + strerror(err)
}

// strerror renders an error like C's strerror of the errno inside it
// ("No space left on device"), which is what Redis puts in MISCONF.
func strerror(err error) string {
	if err == nil {
		return "unknown error"
	}
	msg := err.Error()
	var errno syscall.Errno
	if errors.As(err, &errno) {
		msg = errno.Error()
	} else if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	r := []rune(msg)
	if len(r) == 0 {
		return "unknown error"
	}
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// logWALState logs the WAL's error state when it changes: a failed write
// (writes refused until a retry succeeds), the recovery from it, and the
// poisoning (for good).
func (s *Shard) logWALState(app *wal.Appender) {
	switch poison, last := app.Poisoned(), app.LastError(); {
	case poison != nil && !s.walLoggedPoison:
		s.walLoggedPoison = true
		s.log.Error("WAL fsync failed: shard poisoned, writes refused until restart (fsyncgate)", "shard", s.id, "err", poison)
	case poison == nil && last != nil && !s.walLoggedErr:
		s.walLoggedErr = true
		s.log.Error("WAL write failed: writes refused (MISCONF) while it is retried", "shard", s.id, "err", last)
	case poison == nil && last == nil && s.walLoggedErr:
		s.walLoggedErr = false
		s.log.Warn("WAL write succeeded again: writes accepted", "shard", s.id)
	}
}
