package server

import (
	"strconv"
	"strings"
	"time"

	"github.com/moond-db/moond/resp"
)

func init() {
	register(
		&serverCmd{name: "time", arity: 1, run: cmdTime},
		&serverCmd{name: "function", arity: -2, run: cmdFunction},
		&serverCmd{name: "shutdown", arity: -1, run: cmdShutdown},
		&serverCmd{name: "wait", arity: 3, run: cmdWait},
	)
}

func cmdTime(c *conn, _ [][]byte) {
	now := time.Now()
	c.replyLocal(func(w *resp.Writer) {
		w.ArrayHeader(2)
		w.BulkString(strconv.FormatInt(now.Unix(), 10))
		w.BulkString(strconv.FormatInt(int64(now.Nanosecond()/1000), 10))
	})
}

func cmdFunction(c *conn, args [][]byte) {
	switch sub := strings.ToLower(string(args[1])); {
	case sub == "flush" && len(args) <= 3:
		c.ok()
	case sub == "list":
		c.replyLocal(func(w *resp.Writer) { w.ArrayHeader(0) })
	case sub == "help" && len(args) == 2:
		c.replyLocal(func(w *resp.Writer) { writeHelp(w, functionHelp) })
	default:
		c.errorReply("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try FUNCTION HELP.")
	}
}

// cmdShutdown asks the process to stop; like Redis, the client gets no reply
// when it succeeds, only a closed connection. The options are Redis 7.0's,
// refused in the same combinations (ABORT with another, NOSAVE with SAVE).
// moond's stop always seals every WAL, so every acknowledged write is on
// disk whatever they say, and runs the shutdown checkpoint, which only
// shortens the next boot; it never waits for replicas, so NOW and FORCE
// change nothing and ABORT never finds a shutdown to abort.
func cmdShutdown(c *conn, args [][]byte) {
	var save, nosave, abort, other bool
	for _, a := range args[1:] {
		switch strings.ToLower(string(a)) {
		case "nosave":
			nosave = true
		case "save":
			save = true
		case "now", "force":
			other = true
		case "abort":
			abort = true
		default:
			c.errorReply("ERR syntax error")
			return
		}
	}
	if (abort && (save || nosave || other)) || (save && nosave) {
		c.errorReply("ERR syntax error")
		return
	}
	if abort {
		c.errorReply("ERR No shutdown in progress.")
		return
	}
	c.w.srv.log.Warn("user requested shutdown", "client", c.addr)
	c.closeAfterReply = true
	c.w.srv.requestShutdown()
}

// cmdWait is WAIT numreplicas timeout (master_wait.go); a replica refuses
// it, as Redis does.
func cmdWait(c *conn, args [][]byte) {
	want, err := strconv.ParseInt(string(args[1]), 10, 64)
	if err != nil {
		c.errorReply("ERR value is not an integer or out of range")
		return
	}
	t, err := strconv.ParseInt(string(args[2]), 10, 64)
	if err != nil || t < 0 {
		c.errorReply("ERR timeout is not an integer or out of range")
		return
	}
	if c.w.srv.repl.cur.Load() != nil {
		c.errorReply("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	c.waitReplicas(want, time.Duration(t)*time.Millisecond)
}

// functionHelp is FUNCTION HELP, Redis 7.0's text (moond has no
// functions: FUNCTION LIST is empty, FUNCTION FLUSH has nothing to flush).
var functionHelp = []string{
	"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"LOAD [REPLACE] <FUNCTION CODE>",
	"    Create a new library with the given library name and code.",
	"DELETE <LIBRARY NAME>",
	"    Delete the given library.",
	"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
	"    Return general information on all the libraries:",
	"    * Library name",
	"    * The engine used to run the Library",
	"    * Library description",
	"    * Functions list",
	"    * Library code (if WITHCODE is given)",
	"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
	"STATS",
	"    Return information about the current function running:",
	"    * Function name",
	"    * Command used to run the function",
	"    * Duration in MS that the function is running",
	"    If no function is running, return nil",
	"    In addition, returns a list of available engines.",
	"KILL",
	"    Kill the current running function.",
	"FLUSH [ASYNC|SYNC]",
	"    Delete all the libraries.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the libraries.",
	"    * SYNC: Synchronously flush the libraries.",
	"DUMP",
	"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
	"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
	"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
	"    control how to handle existing libraries (default APPEND):",
	"    * FLUSH: delete all existing libraries.",
	"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
	"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
	"      libraries with the new libraries (notice that even on this option there is a chance of failure",
	"      in case of functions name collision with another library).",
	"HELP",
	"    Prints this help.",
}
