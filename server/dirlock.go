package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// lockDir makes sure one process at a time owns the data directory (a lock
// file held for the life of the process) and that the directory was
// written with the same number of shards: keys live in the shard their
// slot maps to, so a different count would put recovered keys on the
// wrong shards.
func (s *Server) lockDir() error {
	s.unlock = func() {}
	if err := os.MkdirAll(s.cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	release, err := lockFile(filepath.Join(s.cfg.Dir, "moond.lock"))
	if err != nil {
		return fmt.Errorf("data directory %s is in use by another moond (lock file moond.lock): %w", s.cfg.Dir, err)
	}
	s.unlock = release
	meta := filepath.Join(s.cfg.Dir, "moond.shards")
	b, err := os.ReadFile(meta)
	switch {
	case err == nil:
		n, perr := strconv.Atoi(strings.TrimSpace(string(b)))
		if perr != nil {
			release()
			return fmt.Errorf("%s is damaged: %q", meta, b)
		}
		if n != s.nshards {
			release()
			return &ShardCountError{Dir: s.cfg.Dir, OnDisk: n, Asked: s.nshards}
		}
	case os.IsNotExist(err):
		if err := os.WriteFile(meta, []byte(strconv.Itoa(s.nshards)+"\n"), 0o644); err != nil {
			release()
			return fmt.Errorf("data directory: %w", err)
		}
	default:
		release()
		return fmt.Errorf("data directory: %w", err)
	}
	return nil
}

// ShardCountError refuses to serve a data directory written with another
// number of shards.
type ShardCountError struct {
	Dir           string
	OnDisk, Asked int
}

func (e *ShardCountError) Error() string {
	return fmt.Sprintf("data directory %s holds %d shards but --shards is %d: start with --shards %d (resharding an existing directory is not supported yet)",
		e.Dir, e.OnDisk, e.Asked, e.OnDisk)
}
