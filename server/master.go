package server

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moond-db/moond/replication"
)

// moond as a replication master (docs/DESIGN.md §3, "Replication"): the
// server's replicas, the one backlog every shard feeds while there are
// any, and the PING of repl-ping-replica-period.

// masterState is what the server keeps of its replicas.
type masterState struct {
	mu       sync.Mutex
	backlog  *replication.Backlog                // made with the first replica, kept after
	live     atomic.Pointer[replication.Backlog] // backlog while the feeds are set
	replicas []*replica                          // attached: syncing or online
	feeding  bool                                // the shards' feeds are set
	pinger   chan struct{}                       // closed to stop the PINGs
	acked    chan struct{}                       // closed at the next ACK (master_wait.go)
	cfg      masterSettings                      // master_settings.go
	// hold keeps the feeds on with no replica attached, for a while after
	// a promotion (master_history.go); holdGen tells a stale timer.
	hold    bool
	holdGen uint64

	// INFO stats: full syncs served, PSYNCs continued and PSYNCs of a
	// replid and offset that could not be.
	syncFull, syncPartialOK, syncPartialErr atomic.Int64
}

// backlogNow returns the backlog, nil before the first replica.
func (m *masterState) backlogNow() *replication.Backlog {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.backlog
}

// attachReplica adds r and returns the offset its stream starts at. It runs
// while a txn holds every shard (master_sync.go), so no record is appended
// between the snapshot the shards take and this offset; the shards' feeds
// are set here if they were not.
func (s *Server) attachReplica(r *replica) int64 {
	m := &s.master
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.backlog == nil {
		m.backlog = replication.NewBacklog(ringSize(s.backlogSize()))
	}
	r.backlog = m.backlog
	m.replicas = append(m.replicas, r)
	s.startFeedsLocked()
	start := m.backlog.Start()
	// No shard appends while the txn holds them all: the cursor is at
	// start, and from here the backlog keeps every byte for r.
	r.cursor, _ = m.backlog.Attach(start)
	return start
}

// startFeedsLocked sets the shards' feeds to the backlog, and starts the
// cron, unless they are set (under m.mu).
func (s *Server) startFeedsLocked() {
	m := &s.master
	if m.feeding {
		return
	}
	m.feeding = true
	epoch := m.backlog.Epoch()
	for _, w := range s.workers {
		w.sh.SetFeed(w.replFeed(m.backlog, epoch))
	}
	m.live.Store(m.backlog)
	m.pinger = make(chan struct{})
	go s.replicationCron(m.pinger, m.backlog)
}

// stopFeedsLocked unsets the feeds when nothing needs them any more (no
// replica, no promotion hold); the backlog forgets its bytes: the stream
// has a gap from there on (under m.mu). The writes in the gap are counted
// in no offset, so the history so far ends here: the server takes a new
// replid and forgets replid2, as Redis does when it frees its backlog
// (changeReplicationId, clearReplicationId2). No replica, and no demoted
// master (ownPosition), can then continue a history the data left.
func (s *Server) stopFeedsLocked() {
	m := &s.master
	if len(m.replicas) > 0 || m.hold || !m.feeding {
		return
	}
	m.feeding = false
	id := newRunID()
	s.repl.masterID.Store(&id)
	s.repl.promoted.Store(nil)
	m.live.Store(nil)
	for _, w := range s.workers {
		w.sh.SetFeed(nil)
	}
	close(m.pinger)
	m.backlog.Reset()
}

// continueReplica adds r at pos, the offset it already has, when the
// backlog holds the stream from there (a partial resync): only while the
// shards feed it, i.e. while another replica is attached or a promotion
// holds the feeds (master_history.go), since the feeds stop with the last.
func (s *Server) continueReplica(r *replica, pos int64) bool {
	m := &s.master
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.feeding {
		return false
	}
	c, err := m.backlog.Attach(pos)
	if err != nil {
		return false
	}
	r.backlog, r.cursor = m.backlog, c
	m.replicas = append(m.replicas, r)
	return true
}

// detachReplica removes r; the last one to go unsets the feeds
// (stopFeedsLocked).
func (s *Server) detachReplica(r *replica) {
	m := &s.master
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range m.replicas {
		if x == r {
			m.replicas = append(m.replicas[:i], m.replicas[i+1:]...)
			break
		}
	}
	if r.cursor != nil {
		r.backlog.Detach(r.cursor) // its pump may never have run
	}
	if len(m.replicas) == 0 && m.feeding && !m.hold {
		s.holdFeedsLocked()
		return
	}
	s.stopFeedsLocked()
}

// holdFeedsLocked keeps the feeds on for promotionHold with no replica
// attached (under m.mu): after a promotion, for the old master's other
// replicas, and after the last replica goes, for it to come back and
// continue, or for this server, demoted by a failover, to continue its
// history on the promoted replica (ownPosition). Redis keeps its backlog
// for repl-backlog-ttl (an hour); here the writes pay for the stream
// only for the minute a failover or a reconnect takes.
func (s *Server) holdFeedsLocked() {
	m := &s.master
	m.hold = true
	m.holdGen++
	gen := m.holdGen
	time.AfterFunc(promotionHold, func() { s.releaseHold(gen) })
}

// replicasNow is a copy of the attached replicas.
func (s *Server) replicasNow() []*replica {
	s.master.mu.Lock()
	defer s.master.mu.Unlock()
	return append([]*replica(nil), s.master.replicas...)
}

// stopReplicas disconnects every replica (shutdown).
func (s *Server) stopReplicas() {
	for _, r := range s.replicasNow() {
		r.stop()
	}
}

// replicationCron runs once a second while the feeds are set, until stop
// is closed: it PINGs the stream every repl-ping-replica-period (read at
// each tick, so that CONFIG SET applies) while a replica is attached (as
// Redis: a promotion's hold adds nothing to the stream) and counts the good replicas
// (min-replicas-max-lag), as Redis's replicationCron.
func (s *Server) replicationCron(stop <-chan struct{}, b *replication.Backlog) {
	lastPing := time.Now()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			// No PING once the server stops: the shutdown waits for the
			// replicas to acknowledge the stream's end and saves that
			// offset (master_restart.go); a PING after the wait would put
			// the saved offset past every replica's, and each would need
			// a full sync after the restart.
			if now.Sub(lastPing) >= s.replPingPeriod() && len(s.replicasNow()) > 0 && !s.stopping.Load() {
				b.Ping()
				lastPing = now
			}
			s.refreshGoodReplicas()
		case <-stop:
			return
		}
	}
}

// replica is one replica connection: its socket, taken from its shard
// (master_sync.go), served by two goroutines: one sends the snapshot then
// the stream, one reads REPLCONF ACKs.
type replica struct {
	srv      *Server
	conn     net.Conn
	addr     string // ip:port of the connection
	ip       string
	port     int  // REPLCONF listening-port
	oldSync  bool // SYNC, not PSYNC: no +FULLRESYNC line
	eof      bool // the snapshot goes in the diskless $EOF: form (REPLCONF capa eof)
	backlog  *replication.Backlog
	cursor   *replication.Cursor // r's place in the backlog, kept from its attach on
	online   atomic.Bool         // the snapshot was sent
	ackOff   atomic.Int64        // the last REPLCONF ACK's offset
	ackTime  atomic.Int64        // unix seconds of the last ACK
	out      outBuf              // what the pump read and the sender did not send yet
	quit     atomic.Bool
	pumpQuit atomic.Bool   // the pump stops: r stops, or its sender took the cursor over
	pumped   chan struct{} // closed when the pump returned
	stopOnce sync.Once
	gone     chan struct{} // closed by stop
	firstAck chan struct{} // closed at the first REPLCONF ACK
	ackOnce  sync.Once
}

// stop disconnects r (either goroutine, or shutdown).
func (r *replica) stop() {
	r.stopOnce.Do(func() {
		r.quit.Store(true)
		r.pumpQuit.Store(true)
		close(r.gone)
		_ = r.conn.Close()
		if r.backlog != nil {
			r.backlog.Wake()
		}
		r.srv.detachReplica(r)
		r.srv.refreshGoodReplicas()
	})
}
