package server

import (
	"strconv"
	"strings"

	"github.com/moond-db/moond/resp"
)

func init() {
	register(
		&serverCmd{name: "replicaof", arity: 3, run: cmdReplicaOf},
		&serverCmd{name: "slaveof", arity: 3, run: cmdReplicaOf},
		&serverCmd{name: "role", arity: 1, run: cmdRole},
		&serverCmd{name: "moond.masterlink", arity: 2, noAuth: true, run: cmdMasterLink},
	)
}

// The replica's refusals, in Redis 7.0's words.
const (
	readOnlyError   = "READONLY You can't write against a read only replica."
	masterDownError = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
)

// cmdReplicaOf is REPLICAOF host port and REPLICAOF NO ONE (SLAVEOF is
// the same). Changing the master stops the old link, which waits for the
// commands it read to be applied: that runs off the shard's thread, and
// the reply comes back to it; meanwhile the connection runs none of its
// later commands (a pipelined REPLICAOF NO ONE, SET must find a master).
func cmdReplicaOf(c *conn, args [][]byte) {
	host, port := string(args[1]), 0
	if strings.EqualFold(host, "no") && strings.EqualFold(string(args[2]), "one") {
		host = ""
	} else {
		p, err := strconv.ParseInt(string(args[2]), 10, 64)
		if err != nil || p < 0 || p > 65535 {
			c.errorReply("ERR Invalid master port")
			return
		}
		port = int(p)
	}
	w, proto, srv := c.w, c.out.Proto, c.w.srv
	// The configuration names the new master at once: a CONFIG REWRITE
	// queued after REPLICAOF in a MULTI (Sentinel's failover) runs before
	// the change completes, and must write it, as in Redis.
	srv.setReplicaOfConfig(replicaOfSetting(host, port))
	reply := c.newPending(1, nil)
	c.blockWait = reply // the connection's next command runs after the change, as in Redis
	go func() {
		msg := srv.replicaOf(host, port)
		_ = w.loop.Post(func() {
			out := resp.Writer{Proto: proto}
			out.SimpleString(msg)
			reply.fill(0, out.Buf)
			c.txnReplied(reply)
		})
	}()
}

// cmdRole is ROLE: ["master", offset, []] or ["slave", host, port,
// state, offset].
func cmdRole(c *conn, _ [][]byte) {
	st, host, port, ok := c.w.srv.replStatus()
	c.replyLocal(func(w *resp.Writer) {
		if !ok {
			c.w.srv.roleMaster(w)
			return
		}
		w.ArrayHeader(5)
		w.BulkString("slave")
		w.BulkString(host)
		w.Int(int64(port))
		w.BulkString(st.State)
		off := int64(-1)
		if st.ReplID != "" {
			off = st.Offset
		}
		w.Int(off)
	})
}

// roleMaster is ROLE on a master: its offset and, per online replica,
// [ip, port, acknowledged offset] (bulk strings, as Redis sends them).
func (s *Server) roleMaster(w *resp.Writer) {
	w.ArrayHeader(3)
	w.BulkString("master")
	_, off := s.repl.promotedFrom()
	if b := s.master.backlogNow(); b != nil {
		off = b.Offset()
	}
	w.Int(off)
	var online []*replica
	for _, r := range s.replicasNow() {
		if r.online.Load() {
			online = append(online, r)
		}
	}
	w.ArrayHeader(len(online))
	for _, r := range online {
		w.ArrayHeader(3)
		w.BulkString(r.ip)
		w.BulkString(strconv.Itoa(r.port))
		w.BulkString(strconv.FormatInt(r.ackOff.Load(), 10))
	}
}

// replicaRefusal is the error a replica answers an ordinary client's cmd
// with: READONLY for a write while replica-read-only is on, LOADING while
// a snapshot from the master loads (as Redis while it loads the RDB it
// received), MASTERDOWN for a command without Redis's "stale" flag while
// the link is down and replica-serve-stale-data is off; "" to run it.
func (c *conn) replicaRefusal(cmd *command) string {
	r := &c.w.srv.repl
	if cmd.name == "moond.masterlink" {
		// The link's own local connection becoming the master's client:
		// refusing it (MASTERDOWN before the link is up, LOADING after a
		// load broke off) would keep the link from ever syncing. Without
		// the secret it is an unknown command anyway.
		return ""
	}
	if r.readOnly.Load() && commandWrites(cmd) {
		return readOnlyError
	}
	t := r.cur.Load()
	if t == nil {
		return ""
	}
	if t.link.Loading() && !allowedWhileLoading(cmd) {
		return loadingError
	}
	if !r.serveStale.Load() && !t.link.Up() && !allowedWhileStale(cmd) {
		return masterDownError
	}
	return ""
}

// commandWrites reports whether cmd has Redis's "write" flag: a data
// command's spec says so, a server command's (MIGRATE) is in serverSpecs.
func commandWrites(cmd *command) bool {
	if cmd.spec != nil {
		return cmd.spec.Writes()
	}
	spec := cmd.flagSpec() // a subcommand's own (FUNCTION FLUSH)
	return spec != nil && hasFlag(spec, "write")
}

// allowedWhileStale reports whether cmd runs on a replica whose link is
// down: Redis 7.0's "stale" flag. CLIENT and CONFIG are containers whose
// every subcommand has it. PING has not.
func allowedWhileStale(cmd *command) bool {
	switch cmd.name {
	case "client", "config":
		return true
	}
	spec := cmd.flagSpec() // a subcommand's own (SLOWLOG GET)
	return spec != nil && hasFlag(spec, "stale")
}

// refuseOnReplica answers cmd's refusal on a replica (a container's call
// is judged and counted by its subcommand's entry, as Redis does), and
// reports whether there was one. A refused command inside MULTI makes EXEC fail, as in
// Redis.
func (c *conn) refuseOnReplica(cmd *command) bool {
	msg := c.replicaRefusal(cmd)
	if msg == "" {
		return false
	}
	c.w.stats.cmdCalls[cmd.id].rejected++
	if c.multi != nil {
		c.multi.aborted = true
	}
	c.errorReply(msg)
	return true
}

// replicaOfSetting is the replicaof directive's value for host and port:
// "" for none (REPLICAOF NO ONE).
func replicaOfSetting(host string, port int) string {
	if host == "" {
		return ""
	}
	return host + " " + strconv.Itoa(port)
}
