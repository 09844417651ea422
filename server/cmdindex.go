package server

import (
	"slices"

	"github.com/moond-db/moond/keyspace"
)

// command is one entry of the dispatch index: the server command or the
// shard's data command a name runs (a server command wins where both
// exist), and the slot its call counters take in every worker's stats.
type command struct {
	name   string
	server *serverCmd
	spec   *keyspace.CommandSpec
	id     int
	// fast: a data command with the "fast" flag, whose slow runs the
	// latency monitor counts as "fast-command" rather than "command".
	fast bool
	// masterOnly: the replication link's command (serverCmd.masterOnly).
	masterOnly bool
	// noSlowlog: the slow log leaves it out (EXEC, whose commands are
	// logged one by one, as in Redis).
	noSlowlog bool
	// subs are a container's subcommands by lower-case name, and parent a
	// subcommand's container (cmd_subcommands.go): entries for figures
	// only, never dispatched.
	subs   map[string]*command
	parent *command
	// arity is a subcommand's Redis arity, counting the container's name,
	// and info its COMMAND entry, whose flags LOADING and MASTERDOWN read.
	arity int
	info  *keyspace.CommandSpec
}

// flagSpec is the spec whose flags say what cmd may do: a subcommand's
// own, a data command's, or a server command's in serverSpecs; nil for
// none.
func (cmd *command) flagSpec() *keyspace.CommandSpec {
	switch {
	case cmd.info != nil:
		return cmd.info
	case cmd.spec != nil:
		return cmd.spec
	}
	return serverSpec(cmd.name)
}

// commands indexes every command by lower-case name; commandList holds the
// same entries by id. Both are filled by package initialisation only
// (register and the init below) and read-only afterwards.
var (
	commands    = map[string]*command{}
	commandList []*command
)

// maxCommandName bounds the names lookupCommand folds on the stack; no
// command name is longer.
const maxCommandName = 32

func commandEntry(name string) *command {
	if len(name) > maxCommandName {
		panic("server: command name too long: " + name)
	}
	e := commands[name]
	if e == nil {
		e = &command{name: name, id: len(commandList)}
		commands[name] = e
		commandList = append(commandList, e)
	}
	return e
}

func init() {
	for _, s := range keyspace.Specs() {
		e := commandEntry(s.Name)
		e.spec = s
		e.fast = slices.Contains(s.Flags, "fast")
	}
	commandEntry("exec").noSlowlog = true
}

// lookupCommand finds a command by name, ignoring case, without allocating.
func lookupCommand(name []byte) *command {
	if len(name) > maxCommandName {
		return nil
	}
	var buf [maxCommandName]byte
	return commands[string(foldLower(buf[:0], name))]
}

// lastCommand remembers the name a connection sent last, byte for byte,
// and what it resolved to: clients repeat the same few commands, and an
// exact match of a few bytes is much cheaper than folding and hashing.
type lastCommand struct {
	raw [maxCommandName]byte
	n   int
	cmd *command
	// sub is the last container call's entry (dispatch's containerEntry):
	// its subcommand's, or the container's own when it had none.
	sub *command
}

// name is the last command's name, or "" before the first known command:
// a container's with its subcommand ("client|list"), as Redis 7.0 names it.
func (l *lastCommand) name() string {
	switch {
	case l.cmd == nil:
		return ""
	case l.sub != nil && (l.sub == l.cmd || l.sub.parent == l.cmd):
		return l.sub.name
	}
	return l.cmd.name
}

func (l *lastCommand) lookup(name []byte) *command {
	if l.cmd != nil && len(name) == l.n && string(name) == string(l.raw[:l.n]) {
		return l.cmd
	}
	cmd := lookupCommand(name)
	if cmd == nil {
		l.forget() // Redis shows no command after an unknown one (cmd=NULL)
		return nil
	}
	l.n = copy(l.raw[:], name)
	l.cmd = cmd
	return cmd
}

// forget drops what the last command resolved to.
func (l *lastCommand) forget() { l.n, l.cmd, l.sub = 0, nil, nil }

// ranContainer notes what a call of the container cmd resolved to: stat,
// its subcommand's entry or its own without a subcommand (nargs < 2); or,
// for an unknown subcommand, no command, as Redis shows it.
func (l *lastCommand) ranContainer(cmd, stat *command, nargs int) {
	if stat == cmd && nargs >= 2 {
		l.forget()
		return
	}
	l.sub = stat
}
