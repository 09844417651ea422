package server

import (
	"strings"
	"time"
)

// infoReplication writes INFO's replication section with Redis 7.0's
// fields: a replica's link first, then what a master shows too. moond
// keeps no backlog and serves no replicas of its own.
func (s *Server) infoReplication(kv func(string, any)) {
	st, host, port, replica := s.replStatus()
	replID, replID2, offset, second := s.runID, strings.Repeat("0", 40), int64(0), int64(-1)
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
		kv("slave_priority", 100)
		kv("slave_read_only", boolInt(s.repl.readOnly.Load()))
		kv("replica_announced", 1)
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
	kv("connected_slaves", 0)
	kv("master_failover_state", "no-failover")
	kv("master_replid", replID)
	kv("master_replid2", replID2)
	kv("master_repl_offset", offset)
	kv("second_repl_offset", second)
	kv("repl_backlog_active", 0)
	kv("repl_backlog_size", 1048576)
	kv("repl_backlog_first_byte_offset", 0)
	kv("repl_backlog_histlen", 0)
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
