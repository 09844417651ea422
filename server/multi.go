package server

import (
	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// MULTI, EXEC and DISCARD (Redis 7.0's tests/unit/multi.tcl). Between
// MULTI and EXEC a connection queues its commands (+QUEUED); a command
// refused while queueing (unknown, wrong arity, not allowed in a
// transaction) makes EXEC answer EXECABORT. EXEC runs the queue as one
// unit (exec_run.go): nothing of another client runs on any shard the
// transaction touches between its first and its last command.

// multiState is a connection's transaction being queued.
type multiState struct {
	cmds    []queuedCmd
	aborted bool // a command was refused while queueing
}

// queuedCmd is one queued command, its arguments owned.
type queuedCmd struct {
	cmd  *command
	args [][]byte
}

func init() {
	register(
		&serverCmd{name: "multi", arity: 1, run: cmdMulti},
		&serverCmd{name: "exec", arity: 1, run: cmdExec},
		&serverCmd{name: "discard", arity: 1, run: cmdDiscard},
	)
}

func cmdMulti(c *conn, _ [][]byte) {
	c.multi = &multiState{}
	c.ok()
}

func cmdDiscard(c *conn, _ [][]byte) {
	if c.multi == nil {
		c.errorReply("ERR DISCARD without MULTI")
		return
	}
	c.multi = nil
	c.unwatchAll()
	c.ok()
}

func cmdExec(c *conn, _ [][]byte) {
	m := c.multi
	if m == nil {
		c.errorReply("ERR EXEC without MULTI")
		return
	}
	c.multi = nil
	if c.w.srv.refusesWrites() && writesQueued(m.cmds) { // before the queue's errors, as in Redis
		c.unwatchAll()
		c.errorReply("EXECABORT Transaction discarded because of: " + noReplicasError)
		return
	}
	if m.aborted {
		c.unwatchAll()
		c.errorReply("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	if c.w.srv.refusesData() && denyOOMQueued(m.cmds) {
		c.unwatchAll()
		c.errorReply("EXECABORT Transaction discarded because of: " + oomError)
		return
	}
	c.execQueued(m.cmds)
}

// inMulti handles a command that arrives while the connection queues a
// transaction, and reports whether it did: everything but EXEC, DISCARD,
// QUIT and RESET is queued or refused here.
func (c *conn) inMulti(cmd *command, args [][]byte) bool {
	if cmd == nil {
		c.multi.aborted = true
		c.errorReply(keyspace.UnknownCommandError(args))
		return true
	}
	switch cmd.name {
	case "exec", "discard", "quit", "reset":
		return false
	case "multi":
		c.errorReply("ERR MULTI calls can not be nested")
		return true
	case "watch":
		c.errorReply("ERR WATCH inside MULTI is not allowed")
		return true
	}
	arity, name := 0, cmd.name
	if cmd.server != nil {
		arity = cmd.server.arity
	} else {
		arity = cmd.spec.Arity
	}
	if !arityOK(arity, len(args)) {
		c.multi.aborted = true
		c.errorReply("ERR wrong number of arguments for '" + name + "' command")
		return true
	}
	stat := cmd
	if cmd.subs != nil {
		stat = cmd.statEntry(args)
		c.lastCommand.ranContainer(cmd, stat, len(args))
		if msg := subcommandError(cmd, stat, args); msg != "" {
			c.multi.aborted = true
			c.errorReply(msg)
			return true
		}
	}
	if !c.authed {
		c.multi.aborted = true
		c.errorReply("NOAUTH Authentication required.")
		return true
	}
	if msg := notInMulti(cmd); msg != "" {
		c.multi.aborted = true
		c.errorReply(msg)
		return true
	}
	if c.w.srv.refusesData() { // queueing takes memory too: Redis refuses any command
		c.multi.aborted = true
		c.errorReply(oomError)
		return true
	}
	if c.w.srv.loading.Load() && !allowedWhileLoading(stat) { // MULTI runs while loading: what it queues may not
		c.multi.aborted = true
		c.errorReply(loadingError)
		return true
	}
	c.multi.cmds = append(c.multi.cmds, queuedCmd{cmd: cmd, args: copyArgs(args)})
	c.replyLocal(func(w *resp.Writer) { w.SimpleString("QUEUED") })
	return true
}

// notInMulti returns the error of a command a transaction may not hold:
// Redis 7.0's no-multi commands (SAVE, SHUTDOWN, SYNC, PSYNC), REPLCONF,
// and MIGRATE, which Redis runs in a transaction but moond would run when
// EXEC plans it, before the commands queued ahead of it (see below).
// (P|S)SUBSCRIBE have no such flag: queued, EXEC runs them and leaves the
// connection subscribed, as in Redis.
// Every other server command is queued; EXEC runs it when it plans the
// transaction, before the data commands (multi_exec.go, capture).
func notInMulti(cmd *command) string {
	if cmd.server == nil {
		return ""
	}
	switch cmd.name {
	case "save", "shutdown", "sync", "psync", "replconf", "migrate":
		return "ERR Command not allowed inside a transaction"
	}
	return ""
}
