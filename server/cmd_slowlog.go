package server

import (
	"strings"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

func init() {
	register(&serverCmd{name: "slowlog", arity: -2, run: cmdSlowlog})
}

var slowlogHelp = []string{
	"SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GET [<count>]",
	"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
	"    Entries are made of:",
	"    id, timestamp, time in microseconds, arguments array, client IP and port,",
	"    client name",
	"LEN",
	"    Return the length of the slowlog.",
	"RESET",
	"    Reset the slowlog.",
	"HELP",
	"    Prints this help.",
}

// slowlogArity is each SLOWLOG subcommand's arity, as Redis 7.0 checks it
// (GET takes at most one argument more).
var slowlogArity = map[string]int{"get": -2, "len": 2, "reset": 2, "help": 2}

// cmdSlowlog is SLOWLOG GET, LEN, RESET and HELP over every shard's ring
// (slowlog.go), with Redis 7.0's replies and errors.
func cmdSlowlog(c *conn, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	arity, known := slowlogArity[sub]
	switch {
	case !known:
		c.errorReply("ERR unknown subcommand '" + string(args[1]) + "'. Try SLOWLOG HELP.")
	case !arityOK(arity, len(args)) || sub == "get" && len(args) > 3:
		c.errorReply("ERR wrong number of arguments for 'slowlog|" + sub + "' command")
	case sub == "get":
		slowlogGet(c, args[2:])
	case sub == "len":
		slowlogLen(c)
	case sub == "reset":
		c.fanoutCollect(func(w *worker, _ int) { w.slowlog.entries = nil }, func(w *resp.Writer) { w.SimpleString("OK") })
	default:
		c.replyLocal(func(w *resp.Writer) { writeHelp(w, slowlogHelp) })
	}
}

// slowlogMaxLen is slowlog-max-len as the shards apply it.
func (s *Server) slowlogMaxLen() int { return s.timing.Load().slowlogMax }

func slowlogLen(c *conn) {
	lens := make([]int, c.w.srv.nshards)
	max := c.w.srv.slowlogMaxLen()
	c.fanoutCollect(func(w *worker, i int) { lens[i] = w.slowlog.len(max) }, func(w *resp.Writer) {
		n := 0
		for _, l := range lens {
			n += l
		}
		w.Int(int64(min(n, max)))
	})
}

// slowlogGet answers SLOWLOG GET [count]: the count newest entries (10 by
// default, -1 for all), newest first.
func slowlogGet(c *conn, args [][]byte) {
	count := 10
	if len(args) == 1 {
		n, ok := keyspace.ParseInt(args[0])
		if !ok || n < -1 {
			c.errorReply("ERR count should be greater than or equal to -1")
			return
		}
		count = int(min(n, 1<<30))
	}
	max := c.w.srv.slowlogMaxLen()
	if count < 0 || count > max {
		count = max
	}
	parts := make([][]*slowEntry, c.w.srv.nshards)
	c.fanoutCollect(func(w *worker, i int) { parts[i] = w.slowlog.newest(count) }, func(w *resp.Writer) {
		entries := mergeSlow(parts, count)
		w.ArrayHeader(len(entries))
		for _, e := range entries {
			writeSlowEntry(w, e)
		}
	})
}

// writeSlowEntry writes one entry as Redis does: id, unix time, duration
// in µs, the arguments, the client's address and name.
func writeSlowEntry(w *resp.Writer, e *slowEntry) {
	w.ArrayHeader(6)
	w.Int(e.id)
	w.Int(e.unix)
	w.Int(e.usec)
	w.ArrayHeader(len(e.argv))
	for _, a := range e.argv {
		w.BulkString(a)
	}
	w.BulkString(e.addr)
	w.BulkString(e.name)
}
