package server

import (
	"math"

	"github.com/moond-db/moond/server/config"
)

// repl-backlog-size (docs/DESIGN.md §3, "moond as a master"): the size the
// backlog is made with, and its resize when CONFIG SET changes it.

// backlogSize is repl-backlog-size in bytes, as the backlog takes it.
func (s *Server) backlogSize() int64 {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg.ReplBacklogSize
}

// applyBacklogSize applies repl-backlog-size after CONFIG SET: raised to
// the least size first, as Redis's resizeReplicationBacklog (CONFIG GET
// then shows that), then the backlog, if there is one, keeps that many
// bytes from now on.
func (s *Server) applyBacklogSize() {
	s.cfgMu.Lock()
	s.cfg.ReplBacklogSize = max(s.cfg.ReplBacklogSize, config.ReplBacklogMinSize)
	size := s.cfg.ReplBacklogSize
	s.cfgMu.Unlock()
	if b := s.master.backlogNow(); b != nil {
		b.Resize(ringSize(size))
	}
}

// ringSize is a backlog size as an int (a 32-bit int cannot hold them all).
func ringSize(n int64) int {
	return int(min(n, math.MaxInt))
}
