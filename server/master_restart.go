package server

import (
	"context"
	"fmt"
	"time"

	"github.com/moond-db/moond/replication"
)

// A master's history across a clean restart (docs/DESIGN.md §3, "A
// master's restart continues its history"). Redis 7.0 restores its replid
// and offset from the RDB only when it starts as a replica, so its
// replicas full-sync after their master restarts. moond's data after a
// clean shutdown is exactly its stream up to master_repl_offset (every
// WAL sealed), so when every write up to that offset went into the
// stream (the feeds were on), the restarted master keeps its replid and
// offset, and a replica that had read the stream to its end continues
// with +CONTINUE. The position travels in the replication-position file
// (repl_position.go) with the file's take-once rule, so a crash after
// the boot never finds it.

// replStopWait bounds how long a shutdown waits for its online replicas
// to acknowledge the stream to its end (Redis 7.0's shutdown-timeout, 10 s
// there and configurable; fixed here, within the shutdown's own 10 s).
// A replica ACKs once a second, so a healthy one needs about that.
const replStopWait = 3 * time.Second

// awaitReplicasAtStop waits, once the shards stopped serving and every
// txn ended (nothing more goes into the stream but the cron's PINGs),
// until every online replica acknowledged the master's offset, or
// replStopWait or ctx passed; the caller disconnects the replicas then.
// As Redis 7.0's SHUTDOWN waits for lagging replicas: a replica that has
// the whole stream continues after the restart (the saved offset is its
// own), one that has less needs a full sync.
func (s *Server) awaitReplicasAtStop(ctx context.Context) {
	b := s.master.backlogNow()
	if b == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, replStopWait)
	defer cancel()
	for {
		changed := s.master.ackChanged()
		if s.ackedAtLeast(b.Offset()) == s.onlineReplicas() {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			s.log.Warn("shutdown: replicas did not acknowledge the stream's end in time; they will need a full sync",
				"offset", b.Offset(), "acknowledged", s.ackedAtLeast(b.Offset()), "online", s.onlineReplicas())
			return
		}
	}
}

// onlineReplicas counts the replicas whose snapshot was sent.
func (s *Server) onlineReplicas() int {
	n := 0
	for _, r := range s.replicasNow() {
		if r.online.Load() {
			n++
		}
	}
	return n
}

// historyAtStop is this master's own position for the shutdown to save,
// once every shard stopped writing: ok only when the server follows no
// master (a replica's position is its link's, and a chained replica's own
// offsets are no point of the history its data follows), no txn is open
// (a part fed to the stream whose txn never committed would make the
// stream hold what the WAL does not), and the history is sound
// (ownPosition: the feeds are on, so every write up to the offset is in
// the stream), with nothing parked in the assembler (every unit fed is in
// the offset).
func (s *Server) historyAtStop() (replication.Position, bool) {
	if s.repl.cur.Load() != nil || s.txnsLive.Load() > 0 {
		return replication.Position{}, false
	}
	p, ok := s.ownPosition()
	if !ok || s.master.backlogNow().Parked() > 0 {
		return replication.Position{}, false
	}
	return p, true
}

// positionAtStop is what a clean shutdown saves, once every WAL is
// sealed: the link's position on a replica (atPoint: its link stopped at
// a clean point), or the master's own history; ok is false when neither
// is sound, or when a shard's WAL refused a record since the boot (the
// data may then lack a write the stream holds: walRefused).
func (s *Server) positionAtStop(ctx context.Context, link replication.Position, atPoint bool) (savedPosition, bool) {
	if s.walRefused(ctx) {
		s.log.Warn("a WAL refused records since the boot: no replication position saved, a restart will need a full sync")
		return savedPosition{}, false
	}
	if atPoint {
		return savedPosition{Position: link}, true
	}
	if p, ok := s.historyAtStop(); ok {
		return savedPosition{Position: p, own: true}, true
	}
	return savedPosition{}, false
}

// walRefused reports whether a shard's WAL refused a record since the
// boot (MISCONF): a record applied and fed to the stream, or answered to
// a replica's link, may then be missing from the log, so the data after a
// restart need not be the stream up to the offset. A shard that does not
// answer counts as one that refused.
func (s *Server) walRefused(ctx context.Context) bool {
	errs, done := s.onEveryShard(ctx, func(w *worker, answer func(error)) {
		if w.sh == nil || w.sh.Refused() {
			answer(fmt.Errorf("shard %d: the WAL refused a record", w.id))
			return
		}
		answer(nil)
	})
	return len(errs) > 0 || !done
}

// continueHistory makes the boot's master go on with its own history as
// the last clean shutdown saved it (p): its replid, a backlog whose
// offset continues from p.Offset, and the shards' feeds on at once, held
// for promotionHold as after a promotion, so that the writes clients make
// before the replicas come back are in the stream they continue with.
// It runs before the boot lets anything write.
func (s *Server) continueHistory(p replication.Position) {
	m := &s.master
	m.mu.Lock()
	defer m.mu.Unlock()
	id := p.ReplID
	s.repl.masterID.Store(&id)
	m.backlog = replication.NewBacklogAt(ringSize(s.backlogSize()), p.Offset)
	s.holdFeedsLocked()
	s.startFeedsLocked()
	s.log.Info("continuing this master's replication history from the last shutdown", "replid", p.ReplID, "offset", p.Offset)
}

// bootPosition takes the position the last clean shutdown saved and
// returns the one the configured link (if any) starts from. A master's
// own history goes on here when the server boots as a master; when it
// boots as a replica, that position is its link's first PSYNC, as a
// master made a replica offers its own (ownPosition). A replica's
// position on a server that boots as a master is not used: its data
// holds its old master's history, not one of its own.
func (s *Server) bootPosition() replication.Position {
	p, ok := s.takeReplPosition()
	if !ok {
		return replication.Position{}
	}
	s.cfgMu.RLock()
	replica := s.cfg.ReplicaOf != ""
	s.cfgMu.RUnlock()
	if p.own && !replica {
		s.continueHistory(p.Position)
	}
	return p.Position
}
