package server

import (
	"slices"
	"strings"
	"sync"

	"github.com/moond-db/moond/keyspace"
)

// A connection held by a pause (pause.go): the command it was about to
// run is kept (pauseArgs, owned) with its input behind it, and nothing
// of it runs until the pause no longer holds that command. Meanwhile a
// read stays posted (watch), so that a client that hangs up is noticed
// and its command never runs, as Redis frees a postponed client.

// holdForPause holds the command args when the worker's pause holds it
// and reports whether it did. Commands Redis refuses before its pause
// check (unknown, wrong arity, NOAUTH) are not held: they answer now.
func (c *conn) holdForPause(cmd *command, args [][]byte) bool {
	if cmd == nil || !c.pauseHolds(cmd, args) {
		return false
	}
	arity, noAuth := 0, false
	if cmd.server != nil {
		arity, noAuth = cmd.server.arity, cmd.server.noAuth
	} else {
		arity = cmd.spec.Arity
	}
	if !arityOK(arity, len(args)) || !c.authed && !noAuth || !subcommandOK(cmd, args) {
		return false
	}
	c.pauseCmd, c.pauseArgs, c.pauseHeld = cmd, copyArgs(args), true
	c.w.pause.held = append(c.w.pause.held, c)
	return true
}

// subcommandOK reports whether a container command's subcommand exists
// and has its arity, which Redis checks before its pause as well (CLIENT
// with the subcommands it checks, OBJECT, MEMORY, ...).
func subcommandOK(cmd *command, args [][]byte) bool {
	if len(args) < 2 {
		return true
	}
	if cmd.name == "client" {
		a, ok := clientSubArity[strings.ToLower(string(args[1]))]
		return !ok || arityOK(a, len(args))
	}
	if cmd.spec == nil || cmd.spec.Subcommands == nil {
		return true
	}
	sub := cmd.spec.Subcommand(args[1])
	return sub != nil && arityOK(sub.Arity, len(args))
}

// pauseHolds reports whether the worker's pause holds cmd: ALL holds
// every command, WRITE those that write or may replicate, and an EXEC
// whose queue holds one of those.
func (c *conn) pauseHolds(cmd *command, args [][]byte) bool {
	switch c.w.pause.kind {
	case pauseAll:
		return true
	case pauseWrite:
		if cmd.name == "exec" && c.multi != nil {
			for _, q := range c.multi.cmds {
				if writesOrReplicates(q.cmd) {
					return true
				}
			}
			return false
		}
		return writesOrReplicates(cmd)
	}
	return false
}

// runPaused runs the command a pause held, once the pause let it go (at
// the start of runInput, before the input that came after it).
func (c *conn) runPaused() {
	if c.pauseHeld {
		return
	}
	if c.w.holder != nil {
		c.parkWhileHeld()
		return
	}
	args := c.pauseArgs
	c.pauseCmd, c.pauseArgs = nil, nil
	c.dispatch(args)
}

// resumePaused lets a held connection go on: its held command runs, then
// its input.
func (c *conn) resumePaused() {
	c.pauseHeld = false
	c.resumeInput()
}

// mayReplicate are the commands that do not write keys but that Redis
// 7.0 flags may-replicate, which CLIENT PAUSE WRITE holds too.
var mayReplicate = map[string]bool{
	"publish": true, "spublish": true, "pfcount": true,
	"eval": true, "evalsha": true, "fcall": true, "script": true,
}

var (
	serverWritesOnce sync.Once
	serverWrites     map[string]bool // server commands with the "write" flag
)

// writesOrReplicates reports whether cmd has Redis's "write" or
// "may_replicate" flag.
func writesOrReplicates(cmd *command) bool {
	if mayReplicate[cmd.name] {
		return true
	}
	if cmd.server == nil {
		return cmd.spec.Writes()
	}
	serverWritesOnce.Do(func() {
		serverWrites = map[string]bool{}
		// MOOND.LOAD (the link's load, a server command) writes as the
		// RESTOREs it stands for do: a pause holds it too.
		specs := append(append([]*keyspace.CommandSpec(nil), serverSpecs...), keyspace.Specs()...)
		for _, s := range append(specs, keyspace.LoadSpec) {
			if s.Writes() || slices.Contains(s.Flags, "write") {
				serverWrites[s.Name] = true
			}
		}
	})
	return serverWrites[cmd.name]
}
