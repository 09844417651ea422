package keyspace

import (
	"bytes"
	"strings"
)

// Exec runs one command, args[0] being its name in any case, for client c,
// and writes the reply to w. It returns the LSN of the last record the
// command appended to the Log, 0 when it logged none. The arguments may
// alias the network buffer: whatever the keyspace keeps is copied.
//
// Like Redis's processCommand, Exec answers an unknown command or
// subcommand and a wrong number of arguments itself, with Redis's errors,
// before the command runs.
func (ks *Keyspace) Exec(c *Client, args [][]byte, w ReplyWriter) uint64 {
	return ks.ExecSpec(c, Lookup(args[0]), args, w)
}

// ExecSpec is Exec for a caller that already looked the command up:
// spec must be Lookup(args[0]) (nil for an unknown command).
func (ks *Keyspace) ExecSpec(c *Client, spec *CommandSpec, args [][]byte, w ReplyWriter) uint64 {
	ks.execLSN = 0
	if spec == nil {
		if ks.Loading && equalFold(args[0], applyLower) {
			ks.now = ks.Now()
			ks.execApply(args, w, 0)
			return 0
		}
		w.Error(errUnknownCommand(args))
		return 0
	}
	if spec.Subcommands != nil && len(args) >= 2 {
		sub := spec.subcommand(args[1])
		if sub == nil {
			w.Error(errUnknownSubcommand(args))
			return 0
		}
		spec = sub
	}
	if !spec.arityOK(len(args)) {
		w.Error(errArity(spec.Name))
		return 0
	}
	ks.now = ks.Now()
	if ks.expiryPaused {
		ks.keepExpired = !spec.write
	}
	if ks.Loading && ks.cold.keys > 0 && !ks.warmForReplay(c, spec, args, w) {
		return 0 // a cold value the replayed command needs is unreadable (cold_load.go)
	}
	spec.run(ks, c, args, w)
	return ks.execLSN
}

// UnknownCommandError is Redis 7.0's reply to an unknown command, for the
// server's commands and the keyspace's alike.
func UnknownCommandError(args [][]byte) string { return errUnknownCommand(args) }

// errUnknownCommand is Redis 7.0's reply to an unknown command: the name
// and the start of the arguments, each quoted as C's "%.*s" prints it (up
// to a NUL byte, within a 128-byte budget for all the arguments).
func errUnknownCommand(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.WriteString(cString(args[0], 128))
	b.WriteString("', with args beginning with: ")
	quoted := 0
	for _, a := range args[1:] {
		if quoted >= 128 {
			break
		}
		s := "'" + cString(a, 128-quoted) + "' "
		b.WriteString(s)
		quoted += len(s)
	}
	return noNewlines(b.String())
}

// UnknownSubcommandError is Redis 7.0's reply to a container command
// (CLIENT, OBJECT) with an unknown subcommand, for the server's containers
// and the keyspace's alike.
func UnknownSubcommandError(args [][]byte) string { return errUnknownSubcommand(args) }

// errUnknownSubcommand is the reply to a container command (OBJECT) with an
// unknown subcommand.
func errUnknownSubcommand(args [][]byte) string {
	return noNewlines("ERR unknown subcommand '" + cString(args[1], 128) + "'. Try " +
		strings.ToUpper(cString(args[0], 128)) + " HELP.")
}

// cString is b as C's "%.*s" with precision max prints it: cut at the first
// NUL byte and at max bytes.
func cString(b []byte, max int) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) > max {
		b = b[:max]
	}
	return string(b)
}

// noNewlines replaces CR and LF with spaces, as Redis does to any error
// that quotes client input, so that the reply cannot break the protocol.
func noNewlines(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if c == '\r' || c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}
