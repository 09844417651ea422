package server

import (
	"context"
	"strconv"
	"time"

	"github.com/moond-db/moond/replication"
)

// The replication history across a failover (Redis's PSYNC2, docs/
// DESIGN.md §3 "Partial resync after a failover"): a promoted replica
// takes a new replid, keeps its old master's as replid2 up to the offset
// its link had applied, and its stream goes on from that offset, so that
// the other replicas of the old master continue from it.

// promotionHold is how long a promotion keeps the shards' feeds on with no
// replica attached: the other replicas (repointed by Sentinel within
// seconds) find the stream from the promotion on in the backlog.
const promotionHold = 60 * time.Second

// masterReplID is the replication id this server serves as a master: the
// run id until a promotion (or the feeds' stop), a new id from each on, or
// the id of the history a clean restart continues (master_restart.go).
func (s *Server) masterReplID() string {
	if p := s.repl.masterID.Load(); p != nil {
		return *p
	}
	return s.runID
}

// promote starts this server's own history after REPLICAOF NO ONE: a new
// replid and, when the link left a clean position p (ok) and no replica
// of this server is attached, a backlog whose offset continues from p.Offset,
// fed from now on (promotionHold). A replica attached (chained) keeps the
// backlog it reads, and this server's history then starts anew (its
// offsets go on from that backlog's). It reports whether the history
// continues.
func (s *Server) promote(p replication.Position, ok bool) bool {
	m := &s.master
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hold && ok && len(m.replicas) == 0 { // an earlier promotion's: its stream is no longer this one
		m.hold = false
		s.stopFeedsLocked()
	}
	id := newRunID() // after stopFeedsLocked, which takes one of its own
	s.repl.masterID.Store(&id)
	if !ok || len(m.replicas) > 0 {
		return false
	}
	if m.feeding { // cannot be: no replica, no hold
		return false
	}
	m.backlog = replication.NewBacklogAt(ringSize(s.backlogSize()), p.Offset)
	s.holdFeedsLocked()
	s.startFeedsLocked()
	return true
}

// releaseHold ends promotion gen's hold: with no replica attached by then,
// the feeds stop.
func (s *Server) releaseHold(gen uint64) {
	m := &s.master
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hold && m.holdGen == gen {
		m.hold = false
		s.stopFeedsLocked()
	}
}

// endHold ends a promotion's hold when the server becomes a replica
// again: the history it held the stream for is over.
func (s *Server) endHold() {
	m := &s.master
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hold {
		m.hold = false
		s.stopFeedsLocked()
	}
}

// psyncPosition is the backlog position PSYNC replid offset asks to
// continue from, ok when the replid is this master's, or the old master's
// (replid2) at an offset up to second_repl_offset: past it the old
// history is not this server's (Redis's masterTryPartialResynchronization).
// Whether the backlog still holds it is continueReplica's check.
func (s *Server) psyncPosition(replid, offset string) (int64, bool) {
	off, err := strconv.ParseInt(offset, 10, 64)
	if err != nil {
		return 0, false
	}
	if replid == s.masterReplID() {
		return off - 1, true
	}
	if id, at := s.repl.promotedFrom(); id != "" && replid == id && off <= at+1 {
		return off - 1, true
	}
	return 0, false
}

// ownPosition is where this master's data stands in its own history, for
// the first PSYNC of a link started when it is made a replica (Redis's
// replicationCacheMasterUsingMyself): its replid and offset, ok only while
// the shards feed the backlog, since only then every write is counted in
// the offset (stopFeedsLocked gives the history a new replid when the
// feeds stop). The new master continues it only if the offset is within
// its own history of that replid (psyncPosition): a demoted master that
// acknowledged writes its successor never received asks past that and
// gets a full sync. Call it once client writes are refused (the replica's
// gate) and the shards ran what was dispatched before.
func (s *Server) ownPosition() (replication.Position, bool) {
	m := &s.master
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.feeding {
		return replication.Position{}, false
	}
	off, db := m.backlog.Position()
	return replication.Position{ReplID: s.masterReplID(), Offset: off, DB: db}, true
}

// settleShards waits for every shard to run what its loop was given
// before: a write dispatched before the replica's gate went on is then
// applied, and fed.
func (s *Server) settleShards() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.onEveryShard(ctx, func(_ *worker, done func(error)) { done(nil) })
}
