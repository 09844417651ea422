package server

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// infoReplication writes INFO's replication section with Redis 7.0's
// fields: a replica's link first, then what a master shows too: its
// replicas (master.go) and its backlog.
func (s *Server) infoReplication(kv func(string, any)) {
	st, host, port, replica := s.replStatus()
	replID, replID2, offset, second := s.masterReplID(), strings.Repeat("0", 40), int64(0), int64(-1)
	if replica {
		kv("role", "slave")
		kv("master_host", host)
		kv("master_port", port)
		up := st.State == "connected"
		kv("master_link_status", map[bool]string{true: "up", false: "down"}[up])
		kv("master_last_io_seconds_ago", secondsSince(st.LastIO))
		kv("master_sync_in_progress", boolInt(st.SyncInProgress))
		kv("slave_read_repl_offset", st.ReadOffset)
		kv("slave_repl_offset", st.Offset)
		if !up {
			kv("master_link_down_since_seconds", secondsSince(st.DownSince))
		}
		priority, announced := s.announcement()
		kv("slave_priority", priority)
		kv("slave_read_only", boolInt(s.repl.readOnly.Load()))
		kv("replica_announced", boolInt(announced))
		if st.ReplID != "" {
			replID = st.ReplID
		}
		offset = st.Offset
	} else {
		kv("role", "master")
		if id, off := s.repl.promotedFrom(); id != "" {
			replID2, offset, second = id, off, off+1
		}
	}
	b := s.master.backlogNow()
	if b != nil && !replica {
		offset = b.Offset()
	}
	s.infoReplicas(kv)
	kv("master_failover_state", "no-failover")
	kv("master_replid", replID)
	kv("master_replid2", replID2)
	kv("master_repl_offset", offset)
	kv("second_repl_offset", second)
	var first, hist int64
	if b != nil {
		_, first, hist = b.Stats()
	}
	kv("repl_backlog_active", boolInt(b != nil))
	kv("repl_backlog_size", s.backlogSize())
	kv("repl_backlog_first_byte_offset", first)
	kv("repl_backlog_histlen", hist)
}

// infoReplicas writes connected_slaves and a slaveN line per replica.
func (s *Server) infoReplicas(kv func(string, any)) {
	rs := s.replicasNow()
	kv("connected_slaves", len(rs))
	if m := &s.master.cfg; m.minReplicasOn() {
		kv("min_slaves_good_slaves", m.good.Load())
	}
	now := time.Now().Unix()
	for i, r := range rs {
		state, lag := "send_bulk", int64(0)
		if r.online.Load() {
			state, lag = "online", now-r.ackTime.Load()
		}
		kv("slave"+strconv.Itoa(i), fmt.Sprintf("ip=%s,port=%d,state=%s,offset=%d,lag=%d",
			r.ip, r.port, state, r.ackOff.Load(), lag))
	}
}

// secondsSince is the whole seconds since t, -1 for the zero time (as
// Redis prints a time that never was).
func secondsSince(t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return int64(time.Since(t) / time.Second)
}

// promotedFrom is the master's replication id and offset when REPLICAOF NO
// ONE promoted this server ("" if it never was a replica).
func (r *replState) promotedFrom() (string, int64) {
	if p := r.promoted.Load(); p != nil {
		return p.id, p.off
	}
	return "", 0
}

// announcement is what a replica tells Sentinel of itself:
// replica-priority (0: never promoted) and replica-announced (no: left
// out of Sentinel's replies).
func (s *Server) announcement() (int, bool) {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg.ReplicaPriority, s.cfg.ReplicaAnnounced
}
