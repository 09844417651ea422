package server

import (
	"bytes"
	"strings"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// serverCmd is a command the server runs itself: connection state, server
// state, or data commands that span every shard (KEYS, DBSIZE, FLUSHALL...).
type serverCmd struct {
	name   string
	arity  int
	noAuth bool // may run before AUTH (AUTH, HELLO, QUIT, RESET)
	// masterOnly: only the replication link's connection (replMaster)
	// knows the command; to any other client it is unknown, uncounted.
	masterOnly bool
	run        func(c *conn, args [][]byte)
}

// register adds server commands to the dispatch index.
func register(cmds ...*serverCmd) {
	for _, c := range cmds {
		e := commandEntry(c.name)
		e.server, e.masterOnly = c, c.masterOnly
	}
}

func arityOK(arity, n int) bool {
	if arity >= 0 {
		return n == arity
	}
	return n >= -arity
}

// dispatch runs one parsed command, then sends the invalidations it
// caused on this shard (CLIENT TRACKING): right after its reply, as Redis
// sends them after the command, not when the loop next waits.
func (c *conn) dispatch(args [][]byte) {
	if c.reply == replyOn {
		c.dispatchCommand(args)
	} else {
		c.dispatchSilenced(args)
	}
	if c.w.track.due() {
		c.w.track.flush()
	}
}

// dispatchCommand runs one parsed command: authentication and arity first,
// then either a server command or a data command routed to its keys' shard.
func (c *conn) dispatchCommand(args [][]byte) {
	cmd := c.lastCommand.lookup(args[0])
	if cmd != nil && cmd.masterOnly && !c.replMaster {
		cmd = nil // an unknown command to this client
		c.lastCommand.forget()
	}
	if c.w.srv.repl.gate.Load() && cmd != nil && c.authed && !c.replMaster && c.refuseOnReplica(cmd.statEntry(args)) {
		c.w.stats.commands++
		return // a replica's READONLY or MASTERDOWN (cmd_repl.go), before a pause as in Redis
	}
	if c.w.srv.refusesWrites() && cmd != nil && c.refuseNoReplicas(cmd, args) {
		c.w.stats.commands++
		return // min-replicas-to-write (master_settings.go)
	}
	if c.w.pause.kind != pauseOff && c.holdForPause(cmd, args) {
		return
	}
	c.w.stats.commands++
	if c.multi != nil && c.inMulti(cmd, args) {
		return
	}
	if cmd == nil {
		c.errorReply(keyspace.UnknownCommandError(args))
		return
	}
	if c.track != nil {
		defer c.afterCommand(cmd)
	}
	stat := cmd
	if cmd.subs != nil { // a container counts on its subcommand's figures
		if stat = c.containerEntry(cmd, args); stat == nil {
			return
		}
	}
	st := &c.w.stats.cmdCalls[stat.id]
	if sc := cmd.server; sc != nil {
		if !arityOK(sc.arity, len(args)) {
			st.rejected++
			c.errorReply("ERR wrong number of arguments for '" + sc.name + "' command")
			return
		}
		if !c.authed && !sc.noAuth {
			st.rejected++
			c.errorReply("NOAUTH Authentication required.")
			return
		}
		if msg := c.subscribedModeError(cmd, args); msg != "" {
			st.rejected++
			c.errorReply(msg)
			return
		}
		if c.w.srv.loading.Load() && !allowedWhileLoading(stat) {
			st.rejected++
			c.errorReply(loadingError)
			return
		}
		st.calls++
		c.w.ran = stat
		sc.run(c, args)
		return
	}
	spec := cmd.spec
	if !arityOK(spec.Arity, len(args)) {
		st.rejected++
		c.errorReply("ERR wrong number of arguments for '" + spec.Name + "' command")
		return
	}
	if !c.authed {
		st.rejected++
		c.errorReply("NOAUTH Authentication required.")
		return
	}
	if msg := c.subscribedModeError(cmd, args); msg != "" {
		st.rejected++
		c.errorReply(msg)
		return
	}
	if c.w.srv.loading.Load() && !allowedWhileLoading(stat) {
		st.rejected++
		c.errorReply(loadingError)
		return
	}
	if spec.DenyOOM() && c.w.srv.refusesData() && !c.replMaster { // the master's writes go through, as in Redis
		st.rejected++
		c.errorReply(oomError)
		return
	}
	st.calls++
	c.w.ran = stat
	if c.track != nil {
		c.rememberReads(spec, args)
	}
	c.routeData(spec, args)
}

// containerEntry is the entry a call of the container cmd counts on (its
// subcommand's), remembered for CLIENT LIST's cmd; nil when the call is
// refused, as Redis 7.0 refuses an unknown subcommand or a known one with
// the wrong number of arguments before the container runs.
func (c *conn) containerEntry(cmd *command, args [][]byte) *command {
	stat := cmd.statEntry(args)
	c.lastCommand.ranContainer(cmd, stat, len(args))
	if msg := subcommandError(cmd, stat, args); msg != "" {
		if stat != cmd { // Redis counts no call of a command it did not find
			c.w.stats.cmdCalls[stat.id].rejected++
		}
		c.errorReply(msg)
		return nil
	}
	return stat
}

// errorReply writes an error reply in order and counts it.
func (c *conn) errorReply(msg string) {
	c.w.countError(msg)
	c.replyLocal(func(w *resp.Writer) { w.Error(msg) })
}

// keyPositions lists the argument indexes of args that hold keys,
// appended to dst for the commands of fixed key positions (a caller's
// stack buffer: no allocation) and in a new slice for movable keys.
func keyPositions(spec *keyspace.CommandSpec, args [][]byte, dst []int) []int {
	if spec.Subcommands != nil && len(args) >= 2 {
		// A container's keys are its subcommand's (OBJECT ENCODING key).
		if sub := spec.Subcommand(args[1]); sub != nil {
			spec = sub
		}
	}
	if spec.MovableKeys != nil {
		// Not into dst: handing it to a function value would make every
		// caller's stack buffer escape, an allocation per command for the
		// commands of fixed key positions, which are nearly all of them.
		return spec.MovableKeys(args, nil)
	}
	if spec.FirstKey <= 0 {
		return dst
	}
	n := len(args)
	last := spec.LastKey
	if last < 0 {
		last = n + last
	}
	step := spec.Step
	if step <= 0 {
		step = 1
	}
	for i := spec.FirstKey; i <= last && i < n; i += step {
		dst = append(dst, i)
	}
	return dst
}

func (s *Server) shardOf(key []byte) int {
	if s.nshards == 1 {
		return 0
	}
	return shardOfSlot(KeySlot(key), s.nshards)
}

// routeData runs a data command where its keys live: inline when that is
// this shard, as a batch item for another shard, split per shard for
// multi-key commands, or refused with CROSSSLOT.
func (c *conn) routeData(spec *keyspace.CommandSpec, args [][]byte) {
	var posBuf [16]int // MSET of 10 keys fits
	pos := keyPositions(spec, args, posBuf[:0])
	if spec.Block != nil {
		c.runBlocking(spec, args, pos)
		c.w.pending = nil // timed as far as it ran, not while it waits
		return
	}
	if len(pos) == 0 {
		c.execLocalSpec(spec, args)
		return
	}
	home := c.w.srv.shardOf(args[pos[0]])
	same := true
	for _, p := range pos[1:] {
		if c.w.srv.shardOf(args[p]) != home {
			same = false
			break
		}
	}
	switch {
	case same && home == c.w.id:
		c.execLocalSpec(spec, args)
	case same:
		p := c.newPending(1, nil)
		// The shard that runs it times it (runBatch).
		timed := c.w.ran
		c.w.ran = nil
		c.w.queueRemote(home, batchItem{conn: c, reply: p, db: c.client.DB, proto: c.out.Proto, args: copyArgs(args), timed: timed})
	case spec.Name == "msetnx":
		c.msetnxAcross(args, pos)
	default:
		if sp := splitters[spec.Name]; sp != nil {
			c.split(sp, args, pos)
			return
		}
		c.runGathered(spec, args, pos)
	}
}

// execLocal runs a data command on this shard and writes its reply in order.
func (c *conn) execLocal(args [][]byte) { c.execLocalSpec(keyspace.Lookup(args[0]), args) }

// execLocalSpec is execLocal for a command already looked up.
func (c *conn) execLocalSpec(spec *keyspace.CommandSpec, args [][]byte) {
	if c.w.ks != nil && c.w.ks.HasCold() && c.parkCold(spec, args) {
		return // it runs once its cold values are read (cold.go)
	}
	if c.queue.empty() {
		start := len(c.out.Buf)
		c.noteWrite(c.w.exec(&c.client, spec, args, &c.out))
		if c.w.noteReply(c.out.Buf[start:]) {
			c.w.noteFailed(spec, c.w.ran)
		}
		return
	}
	reply := c.execPartSpec(spec, args)
	if c.w.noteReply(reply) {
		c.w.noteFailed(spec, c.w.ran)
	}
	c.queue.push(&pendingReply{data: reply})
}

// execPart runs a data command (or this shard's part of one) here and
// returns its reply as a copy, for a reply that cannot go straight into
// the output because others are queued before it.
func (c *conn) execPart(args [][]byte) []byte { return c.execPartSpec(keyspace.Lookup(args[0]), args) }

func (c *conn) execPartSpec(spec *keyspace.CommandSpec, args [][]byte) []byte {
	w := &c.w.scratch
	w.Reset()
	w.Proto = c.out.Proto
	c.noteWrite(c.w.exec(&c.client, spec, args, w))
	return append([]byte(nil), w.Buf...)
}

// noteReply counts an error reply by its prefix (INFO errorstats) and
// reports whether reply is one.
func (w *worker) noteReply(reply []byte) bool {
	if len(reply) > 0 && reply[0] == '-' {
		end := bytes.IndexAny(reply, " \r")
		if end < 0 {
			end = len(reply)
		}
		w.stats.errorReplies++
		w.stats.errorsByPrefix[string(reply[1:end])]++
		return true
	}
	return false
}

// noteFailed counts a data command that ran and answered an error
// (commandstats failed_calls, moond_commands_failed_total): on ran, the
// entry its call counted on, when that is a subcommand of spec, else on
// spec's entry. Only error replies pay for the lookup.
func (w *worker) noteFailed(spec *keyspace.CommandSpec, ran *command) {
	if spec == nil {
		return
	}
	if ran != nil && ran.parent != nil && ran.parent.spec == spec {
		w.stats.cmdCalls[ran.id].failed++
		return
	}
	if cmd := commands[spec.Name]; cmd != nil {
		w.stats.cmdCalls[cmd.id].failed++
	}
}

func (w *worker) countError(msg string) {
	w.stats.errorReplies++
	prefix, _, _ := strings.Cut(msg, " ")
	w.stats.errorsByPrefix[prefix]++
}
