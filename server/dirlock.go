package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moond-db/moond/shard"
)

// lockDir makes sure one process at a time owns the data directory (a lock
// file held for the life of the process), finishes or discards what an
// interrupted reshard left (shard.FinishReshard), and reads the number of
// shards the directory was written with. Keys live in the shard their
// slot maps to, so a count other than --shards means the boot must move
// them first: reshardFrom is then the count on disk (reshard.go).
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
	if err := shard.FinishReshard(s.cfg.Dir, s.log); err != nil {
		release()
		return fmt.Errorf("data directory %s: %w", s.cfg.Dir, err)
	}
	meta := filepath.Join(s.cfg.Dir, shard.ShardCountFile)
	b, err := os.ReadFile(meta)
	switch {
	case err == nil:
		n, perr := strconv.Atoi(strings.TrimSpace(string(b)))
		if perr != nil || n < 1 {
			release()
			return fmt.Errorf("%s is damaged: %q", meta, b)
		}
		if n != s.nshards {
			s.reshardFrom = n
		}
	case os.IsNotExist(err):
		if err := shard.WriteShardCount(s.cfg.Dir, s.nshards); err != nil {
			release()
			return fmt.Errorf("data directory: %w", err)
		}
	default:
		release()
		return fmt.Errorf("data directory: %w", err)
	}
	return nil
}
