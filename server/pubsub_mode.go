package server

import (
	"strings"

	"github.com/moond-db/moond/resp"
)

// RESP2 subscribed mode: a connection subscribed to anything over RESP2
// may run only the commands below, as in Redis; over RESP3 any command
// runs, and messages arrive as pushes between the replies.

// subscribedModeError returns the error for a command a RESP2 connection
// in Pub/Sub mode may not run, or "" when it may run it.
func (c *conn) subscribedModeError(cmd *command, args [][]byte) string {
	if c.out.Proto != 2 || !c.subscribed() {
		return ""
	}
	switch cmd.name {
	case "ping", "subscribe", "ssubscribe", "psubscribe", "unsubscribe", "sunsubscribe", "punsubscribe",
		"quit", "reset":
		return ""
	}
	return "ERR Can't execute '" + fullName(cmd, args) +
		"': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
}

// containerCmds are the server commands that Redis knows as containers of
// subcommands: their full name is "name|subcommand".
var containerCmds = map[string]bool{
	"client": true, "config": true, "command": true, "pubsub": true, "function": true,
	"memory": true, "latency": true, "slowlog": true, "acl": true, "object": true, "script": true,
	"cluster": true, "module": true, "xinfo": true, "xgroup": true,
}

// fullName is a command's name as Redis's errors spell it: with its
// subcommand for a container ("client|info").
func fullName(cmd *command, args [][]byte) string {
	if len(args) < 2 {
		return cmd.name
	}
	if cmd.server == nil && cmd.spec != nil && cmd.spec.Subcommands != nil {
		if sub := cmd.spec.Subcommand(args[1]); sub != nil {
			return cmd.name + "|" + strings.ToLower(string(args[1]))
		}
		return cmd.name
	}
	if containerCmds[cmd.name] {
		return cmd.name + "|" + strings.ToLower(string(args[1]))
	}
	return cmd.name
}

// pingSubscribed is PING's reply in RESP2 subscribed mode: ["pong", msg].
func (c *conn) pingSubscribed(args [][]byte) bool {
	if c.out.Proto != 2 || !c.subscribed() {
		return false
	}
	var msg []byte
	if len(args) == 2 {
		msg = args[1]
	}
	c.replyLocal(func(w *resp.Writer) {
		w.ArrayHeader(2)
		w.BulkString("pong")
		w.Bulk(append([]byte{}, msg...))
	})
	return true
}
