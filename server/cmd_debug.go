package server

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

func init() {
	register(&serverCmd{name: "debug", arity: -2, run: cmdDebug})
}

var debugHelp = []string{
	"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CHANGE-REPL-ID", "    Accepted; moond has no replication IDs to change yet.",
	"DIGEST", "    Output a hex signature representing the current DB content.",
	"DIGEST-VALUE <key> [<key> ...]", "    Output a hex signature of the values of all the specified keys.",
	"ERROR <string>", "    Return a Redis protocol error with <string> as message.",
	"LOG <message>", "    Write <message> to the server log.",
	"OBJECT <key>", "    Show low level info about `key` and associated value.",
	"PROTOCOL <type>", "    Reply with a test value of the specified type. <type> can be: string,",
	"    integer, double, bignum, null, array, set, map, attrib, push, verbatim,", "    true, false.",
	"RELOAD [MERGE|NOFLUSH|NOSAVE ...]", "    Checkpoint every shard, then rebuild every keyspace from its heap and WAL.",
	"    NOSAVE: no checkpoint first. NOFLUSH is not supported.",
	"SLEEP <seconds>", "    Delay this client's reply by <seconds> (the server keeps serving).",
	"SET-ACTIVE-EXPIRE <0|1>", "    Switch the active expire cycle off or on.",
	"HELP", "    Print this help.",
}

// cmdDebug implements the DEBUG subcommands Redis's test suite and tools
// use that mean something in moond. DEBUG SLEEP delays only this client's
// reply: moond's shards do not stop for it.
func cmdDebug(c *conn, args [][]byte) {
	switch sub := strings.ToLower(string(args[1])); {
	case sub == "sleep" && len(args) == 3:
		debugSleep(c, args[2])
	case sub == "set-active-expire" && len(args) == 3:
		c.w.srv.activeExpire.Store(string(args[2]) != "0")
		c.ok()
	case sub == "object" && len(args) == 3:
		debugObject(c, args[2])
	case sub == "digest" && len(args) == 2:
		debugDigest(c)
	case sub == "digest-value":
		debugDigestValue(c, args[2:])
	case sub == "protocol" && len(args) == 3:
		debugProtocol(c, args[2])
	case sub == "reload":
		debugReload(c, args[2:])
	case sub == "error" && len(args) == 3:
		debugError(c, args[2])
	case sub == "log" && len(args) == 3:
		c.w.srv.log.Warn("DEBUG LOG: " + string(args[2]))
		c.ok()
	case sub == "jmap" || sub == "quicklist-packed-threshold" || sub == "stringmatch-len" || sub == "change-repl-id":
		c.ok()
	case sub == "help" && len(args) == 2:
		c.replyLocal(func(w *resp.Writer) { writeHelp(w, debugHelp) })
	default:
		c.errorReply("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try DEBUG HELP.")
	}
}

// debugError is DEBUG ERROR text: "-text" with its newlines made spaces,
// written as Redis writes it, as plain reply bytes, so that it counts in
// neither INFO errorstats nor failed_calls.
func debugError(c *conn, text []byte) {
	line := strings.NewReplacer("\n", " ", "\r", " ").Replace(string(text))
	c.replyLocal(func(w *resp.Writer) { w.Raw([]byte("-" + line + "\r\n")) })
}

// debugSleep is DEBUG SLEEP seconds.
func debugSleep(c *conn, arg []byte) {
	secs := debugSleepSeconds(arg)
	p := c.newPending(1, nil)
	c.w.loop.AfterFunc(time.Duration(secs*float64(time.Second)), func() {
		if c.state == connClosed {
			return
		}
		p.fill(0, []byte("+OK\r\n"))
		c.delivered()
	})
}

// maxDebugSleep bounds DEBUG SLEEP, whose Redis time has no bound.
const maxDebugSleep = float64(time.Hour / time.Second)

// debugSleepSeconds is DEBUG SLEEP's argument as Redis reads it: strtod's
// number at its start, never refused, so that "abc" sleeps no time; a
// negative time sleeps none either. Only its first bytes are read: no
// number worth sleeping is longer.
func debugSleepSeconds(arg []byte) float64 {
	s := strings.TrimLeft(string(arg[:min(len(arg), 64)]), " \t\n\v\f\r")
	for n := len(s); n > 0; n-- {
		f, err := strconv.ParseFloat(s[:n], 64)
		if err == nil || errors.Is(err, strconv.ErrRange) {
			if !(f > 0) { // NaN too
				return 0
			}
			return min(f, maxDebugSleep)
		}
	}
	return 0
}

// debugObject is DEBUG OBJECT key, answered by the key's shard.
func debugObject(c *conn, key []byte) {
	db, k := c.client.DB, append([]byte(nil), key...)
	run := func(w *worker, out *resp.Writer) {
		if w.ks == nil {
			out.Error(loadingError)
			return
		}
		line, ok := w.ks.DebugObject(db, k)
		if !ok {
			out.Error("ERR no such key")
			return
		}
		out.SimpleString(line)
	}
	home := c.w.srv.shardOf(key)
	if home == c.w.id {
		c.replyLocal(func(out *resp.Writer) { run(c.w, out) })
		return
	}
	p := c.newPending(1, nil)
	c.w.queueRemote(home, batchItem{conn: c, reply: p, proto: c.out.Proto, fn: run})
}

// debugDigest is DEBUG DIGEST: each shard XORs its keys' digests per
// database, and the databases' sums are combined in database order.
func debugDigest(c *conn) {
	n := c.w.srv.nshards
	sums, some := make([][]keyspace.Digest, n), make([][]bool, n)
	c.fanoutCollect(func(w *worker, i int) {
		if w.ks != nil {
			sums[i], some[i] = w.ks.DigestDatabases()
		}
	}, func(w *resp.Writer) {
		var final keyspace.Digest
		for db := 0; db < c.w.srv.databases(); db++ {
			var dbSum keyspace.Digest
			keys := false
			for i := range sums {
				if db < len(sums[i]) && some[i][db] {
					keys = true
					dbSum.Xor(sums[i][db])
				}
			}
			if keys {
				final.MixDB(db)
				final.Xor(dbSum)
			}
		}
		w.SimpleString(hex.EncodeToString(final[:]))
	})
}

// debugDigestValue is DEBUG DIGEST-VALUE key...: each key's value digest,
// from the shard that holds it.
func debugDigestValue(c *conn, keys [][]byte) {
	db := c.client.DB
	owned := copyArgs(keys)
	digests := make([]keyspace.Digest, len(owned))
	c.fanoutCollect(func(w *worker, _ int) {
		if w.ks == nil {
			return
		}
		for j, k := range owned {
			if w.srv.shardOf(k) == w.id {
				digests[j] = w.ks.DigestValue(db, k)
			}
		}
	}, func(w *resp.Writer) {
		w.ArrayHeader(len(digests))
		for _, d := range digests {
			w.SimpleString(hex.EncodeToString(d[:]))
		}
	})
}
