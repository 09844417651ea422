package server

import (
	"sync/atomic"
	"time"
)

// The master's settings (docs/DESIGN.md §3, "moond as a master"):
// repl-timeout and repl-ping-replica-period as the replicas' goroutines
// read them, and min-replicas-to-write / min-replicas-max-lag, which make
// a master refuse writes while too few replicas acknowledged recently, as
// Redis 7.0 does (NOREPLICAS).

// noReplicasError is Redis 7.0's reply to a write refused for want of
// good replicas.
const noReplicasError = "NOREPLICAS Not enough good replicas to write."

// masterSettings caches the settings in atomics: the command path reads
// refuse, the replicas' goroutines the durations.
type masterSettings struct {
	timeout    atomic.Int64 // repl-timeout, nanoseconds
	pingPeriod atomic.Int64 // repl-ping-replica-period, nanoseconds
	toWrite    atomic.Int64 // min-replicas-to-write
	maxLag     atomic.Int64 // min-replicas-max-lag, seconds
	// good is the number of online replicas whose last ACK is at most
	// maxLag seconds old, as last counted (INFO min_slaves_good_slaves);
	// refuse is on while good < toWrite with both settings above 0.
	good   atomic.Int64
	refuse atomic.Bool
}

// cacheMasterConfig copies the master's settings from the configuration
// (at the boot and after CONFIG SET) and counts the good replicas again,
// so that a CONFIG SET min-replicas-to-write applies to the next command.
func (s *Server) cacheMasterConfig() {
	m := &s.master.cfg
	s.cfgMu.RLock()
	timeoutChanged := m.timeout.Swap(int64(s.cfg.ReplTimeout)) != int64(s.cfg.ReplTimeout)
	m.pingPeriod.Store(int64(s.cfg.ReplPingPeriod))
	m.toWrite.Store(int64(s.cfg.MinReplicasToWrite))
	m.maxLag.Store(int64(s.cfg.MinReplicasMaxLag))
	s.cfgMu.RUnlock()
	if timeoutChanged {
		s.rearmAckDeadlines()
	}
	s.refreshGoodReplicas()
}

// rearmAckDeadlines applies a new repl-timeout to the reads of the online
// replicas' ACKs now, from their last ACK: a read already waiting would
// otherwise keep the deadline of the old setting (60 s by default).
func (s *Server) rearmAckDeadlines() {
	d := s.replTimeout()
	for _, r := range s.replicasNow() {
		if r.online.Load() {
			_ = r.conn.SetReadDeadline(time.Unix(r.ackTime.Load(), 0).Add(d))
		}
	}
}

// replTimeout is repl-timeout: a replica that takes longer to take a
// write, or sends no ACK for as long, is disconnected.
func (s *Server) replTimeout() time.Duration {
	return time.Duration(s.master.cfg.timeout.Load())
}

// replPingPeriod is repl-ping-replica-period.
func (s *Server) replPingPeriod() time.Duration {
	return time.Duration(s.master.cfg.pingPeriod.Load())
}

// minReplicasOn reports whether min-replicas-to-write applies: both
// settings above 0, as Redis requires.
func (m *masterSettings) minReplicasOn() bool {
	return m.toWrite.Load() > 0 && m.maxLag.Load() > 0
}

// refreshGoodReplicas counts the good replicas: online, with an ACK at
// most min-replicas-max-lag seconds old. Redis counts them once a second
// (replicationCron), when a replica comes online or goes, and when the
// settings change; so does moond (master.go's ticker, replica.follow and
// stop, cacheMasterConfig).
func (s *Server) refreshGoodReplicas() {
	m := &s.master.cfg
	now, lag := time.Now().Unix(), m.maxLag.Load()
	good := int64(0)
	for _, r := range s.replicasNow() {
		if r.online.Load() && now-r.ackTime.Load() <= lag {
			good++
		}
	}
	m.good.Store(good)
	m.refuse.Store(m.minReplicasOn() && good < m.toWrite.Load())
}

// refusesWrites reports whether a write is refused with NOREPLICAS now:
// a master (a replica ignores min-replicas-to-write, as Redis) with too
// few good replicas.
func (s *Server) refusesWrites() bool {
	return s.master.cfg.refuse.Load() && !s.repl.gate.Load()
}

// refuseNoReplicas answers NOREPLICAS to a write command of an ordinary
// client (not the master's) while refusesWrites, and reports whether it
// did; inside MULTI the refusal makes EXEC answer EXECABORT, as in Redis.
func (c *conn) refuseNoReplicas(cmd *command, args [][]byte) bool {
	if c.replMaster || !c.authed || !arityOK(cmd.tableArity(), len(args)) {
		return false
	}
	stat := cmd.statEntry(args)
	if !commandWrites(stat) {
		return false
	}
	c.w.stats.cmdCalls[stat.id].rejected++
	if c.multi != nil {
		c.multi.aborted = true
	}
	c.errorReply(noReplicasError)
	return true
}

// writesQueued reports whether a queued transaction holds a write
// command (Redis's EXEC with the write flag).
func writesQueued(cmds []queuedCmd) bool {
	for _, q := range cmds {
		if commandWrites(q.cmd.statEntry(q.args)) {
			return true
		}
	}
	return false
}

// tableArity is a dispatched command's arity, as its table gives it.
func (cmd *command) tableArity() int {
	if cmd.server != nil {
		return cmd.server.arity
	}
	return cmd.spec.Arity
}
