package server

import (
	"bufio"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/replication"
	"github.com/moond-db/moond/resp"
)

// replState is the server's side of replication as a replica: the master
// it follows, if any (package replication runs the link), and what the
// command path reads on every command, cached in atomics.
type replState struct {
	mu sync.Mutex // serializes REPLICAOF, the boot's start and Stop; held while a link drains
	// shut is set (under mu) once Stop stopped the link: no REPLICAOF
	// starts another between that and the server's stopping flag.
	shut bool
	// cur is the master followed, nil for none; read without mu (INFO,
	// ROLE, the MASTERDOWN rule run on the shards' threads).
	cur atomic.Pointer[replTarget]

	// secret is what the link's local connection presents
	// (MOOND.MASTERLINK) to become the master's client.
	secret string

	// gate: a master is configured, so the replica's rules (read-only,
	// stale data) apply; the command path reads only this while off.
	gate       atomic.Bool
	readOnly   atomic.Bool // replica-read-only
	serveStale atomic.Bool // replica-serve-stale-data

	// promoted is the master's replication id and offset when REPLICAOF
	// NO ONE promoted this server (INFO's master_replid2,
	// second_repl_offset; ROLE's offset).
	promoted atomic.Pointer[promotion]
	// masterID is the replid served as a master since the last
	// promotion, feeds' stop or restart that continued the history, nil
	// for the run id (master_history.go, master_restart.go).
	masterID atomic.Pointer[string]

	// bootResume is the position the last clean shutdown saved, for the
	// link the configuration starts at the boot (under mu).
	bootResume replication.Position
}

// replTarget is a master and the link that follows it.
type replTarget struct {
	link *replication.Link
	host string
	port int
}

// promotion is where a promoted replica's link had got to.
type promotion struct {
	id  string
	off int64
}

// newSecret returns 20 random bytes in hex.
func newSecret() string {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		panic("server: no randomness for the replication secret: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// cacheReplConfig copies the replication settings the command path and
// the replicas' goroutines read: the replica's here, the master's in
// cacheMasterConfig.
func (s *Server) cacheReplConfig() {
	s.cfgMu.RLock()
	s.repl.readOnly.Store(s.cfg.ReplicaReadOnly)
	s.repl.serveStale.Store(s.cfg.ReplicaServeStaleData)
	s.cfgMu.RUnlock()
	s.cacheMasterConfig()
}

// startConfiguredReplication starts following the master the
// configuration names (replicaof), once the shards loaded, from resume
// when the last shutdown saved a position (repl_position.go).
func (s *Server) startConfiguredReplication(resume replication.Position) {
	s.cfgMu.RLock()
	ro := s.cfg.ReplicaOf
	s.cfgMu.RUnlock()
	host, port, ok := strings.Cut(ro, " ")
	if !ok {
		return
	}
	p, _ := strconv.Atoi(port)
	s.repl.mu.Lock()
	s.repl.bootResume = resume
	s.repl.mu.Unlock()
	s.replicaOf(host, p)
}

// replicaOf makes the server a replica of host:port, or a master when
// host is "" (REPLICAOF NO ONE: the link stops, the data stays). It
// returns REPLICAOF's reply. It blocks while an old link drains, so it
// never runs on a shard's thread.
func (s *Server) replicaOf(host string, port int) string {
	r := &s.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.stopping.Load() || r.shut {
		return "OK"
	}
	old := r.cur.Load()
	if host == "" {
		if old != nil {
			old.link.Stop()
			pos, ok := old.link.Position()
			if s.promote(pos, ok) {
				r.promoted.Store(&promotion{id: pos.ReplID, off: pos.Offset})
			} else {
				r.promoted.Store(nil)
			}
			r.cur.Store(nil)
			s.log.Info("MASTER MODE enabled (user request)", "replid2", pos.ReplID, "offset", pos.Offset)
		}
		r.gate.Store(false)
		s.setReplicaOfConfig("")
		return "OK"
	}
	if old != nil && old.host == host && old.port == port {
		return "OK Already connected to specified master"
	}
	r.gate.Store(true)
	resume := r.bootResume // the last shutdown's, for the first link only
	r.bootResume = replication.Position{}
	if old == nil && resume.ReplID == "" {
		// A master made a replica offers its own history (PSYNC replid
		// offset+1), as Redis 7.0: with client writes now refused, once
		// the shards ran what was dispatched before.
		s.settleShards()
		resume, _ = s.ownPosition() // the zero Position when not clean
	}
	s.endHold()
	if old != nil {
		old.link.Stop()
		resume, _ = old.link.Position() // the zero Position when not clean
	}
	s.setReplicaOfConfig(replicaOfSetting(host, port))
	s.cfgMu.RLock()
	announcePort := s.port
	if s.cfg.ReplicaAnnouncePort != 0 {
		announcePort = s.cfg.ReplicaAnnouncePort
	}
	cfg := replication.Config{Host: host, Port: port, Credentials: s.masterCredentials,
		ListeningPort: announcePort, AnnounceIP: s.cfg.ReplicaAnnounceIP, Timeout: s.cfg.ReplTimeout,
		Log: s.log, Local: s.masterClientConn, Resume: resume, Shards: s.nshards, ShardOf: s.shardOf}
	s.cfgMu.RUnlock()
	s.log.Info("REPLICAOF: connecting to the master", "host", host, "port", port)
	r.cur.Store(&replTarget{link: replication.Start(cfg), host: host, port: port})
	return "OK"
}

// masterCredentials are masteruser and masterauth as configured now.
func (s *Server) masterCredentials() (string, string) {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg.MasterUser, s.cfg.MasterAuth
}

// setReplicaOfConfig records the master in the configuration, for CONFIG
// GET and CONFIG REWRITE.
func (s *Server) setReplicaOfConfig(v string) {
	s.cfgMu.Lock()
	s.cfg.ReplicaOf = v
	s.cfgMu.Unlock()
}

// stopReplication ends the link before the shards stop, so that the
// commands it already read are applied, and returns where the data then
// stands in the master's history (ok false: no clean point, or no link).
func (s *Server) stopReplication() (replication.Position, bool) {
	r := &s.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	r.shut = true
	if t := r.cur.Load(); t != nil {
		t.link.Stop()
		return t.link.Position()
	}
	return replication.Position{}, false
}

// replStatus returns the link's status and the master it follows; ok is
// false when the server is a master.
func (s *Server) replStatus() (st replication.Status, host string, port int, ok bool) {
	t := s.repl.cur.Load()
	if t == nil {
		return st, "", 0, false
	}
	return t.link.Status(), t.host, t.port, true
}

// masterClientConn opens the connection the link runs the master's
// commands on: a TCP connection to this server, made the master's client
// by MOOND.MASTERLINK, so that they go through the ordinary dispatch,
// WAL and acknowledgement rule.
func (s *Server) masterClientConn() (net.Conn, error) {
	addr := loopbackOf(s.Addr())
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("dialing %s: %w", addr, err)
	}
	cmd := fmt.Sprintf("*2\r\n$16\r\nMOOND.MASTERLINK\r\n$%d\r\n%s\r\n", len(s.repl.secret), s.repl.secret)
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(cmd)); err != nil {
		c.Close()
		return nil, fmt.Errorf("writing to %s: %w", addr, err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "+OK\r\n" {
		c.Close()
		return nil, fmt.Errorf("becoming the master's client on %s: %q %v", addr, line, err)
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// loopbackOf turns a wildcard listen address into the loopback one.
func loopbackOf(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	switch host {
	case "0.0.0.0", "":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}

// cmdMasterLink is MOOND.MASTERLINK secret: the link's local connection
// becomes the master's client (writes allowed on a read-only replica).
// With a wrong secret it is an unknown command, as for any client.
func cmdMasterLink(c *conn, args [][]byte) {
	if subtle.ConstantTimeCompare(args[1], []byte(c.w.srv.repl.secret)) != 1 {
		c.errorReply(keyspace.UnknownCommandError(args))
		return
	}
	c.replMaster = true
	c.authed = true
	c.parser.Unauthenticated = false
	c.replyLocal(func(w *resp.Writer) { w.SimpleString("OK") })
}
