package server

import (
	"fmt"
	"strings"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

func init() {
	register(&serverCmd{name: "client", arity: -2, run: cmdClient})
}

// clientHelp is CLIENT HELP, Redis 7.0's text.
var clientHelp = []string{
	"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CACHING (YES|NO)",
	"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
	"GETREDIR",
	"    Return the client ID we are redirecting to when tracking is enabled.",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are:",
	"    * ADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made from the specified address",
	"    * LADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made to specified local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Kill connections by type.",
	"    * USER <username>",
	"      Kill connections authenticated by <username>.",
	"    * SKIPME (YES|NO)",
	"      Skip killing current connection (default: yes).",
	"LIST [options ...]",
	"    Return information about client connections. Options:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Return clients of specified type.",
	"UNPAUSE",
	"    Stop the current client pause, resuming traffic.",
	"PAUSE <timeout> [WRITE|ALL]",
	"    Suspend all, or just write, clients for <timeout> milliseconds.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"UNBLOCK <clientid> [TIMEOUT|ERROR]",
	"    Unblock the specified blocked client.",
	"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
	"         [OPTIN] [OPTOUT] [NOLOOP]",
	"    Control server assisted client side caching.",
	"TRACKINGINFO",
	"    Report tracking status for the current connection.",
	"NO-EVICT (ON|OFF)",
	"    Protect current client connection from eviction.",
	"HELP",
	"    Prints this help.",
}

// clientSubArity is the arity of Redis 7.0's CLIENT subcommands, checked
// before the subcommand runs, as Redis checks a container's subcommands.
var clientSubArity = map[string]int{
	"caching": 3, "getname": 2, "getredir": 2, "help": 2, "id": 2, "info": 2, "kill": -3, "list": -2,
	"no-evict": 3, "pause": -3, "reply": 3, "setname": 3, "tracking": -3, "trackinginfo": 2, "unblock": -3,
	"unpause": 2,
}

func cmdClient(c *conn, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	if a, ok := clientSubArity[sub]; ok && !arityOK(a, len(args)) {
		c.errorReply("ERR wrong number of arguments for 'client|" + sub + "' command")
		return
	}
	switch {
	case sub == "id" && len(args) == 2:
		id := c.id
		c.replyLocal(func(w *resp.Writer) { w.Int(id) })
	case sub == "getname" && len(args) == 2:
		name := c.name
		c.replyLocal(func(w *resp.Writer) {
			if name == "" {
				w.Null()
			} else {
				w.BulkString(name)
			}
		})
	case sub == "setname" && len(args) == 3:
		if msg := validClientName(args[2]); msg != "" {
			c.errorReply(msg)
			return
		}
		c.name = string(args[2])
		c.ok()
	case sub == "info" && len(args) == 2:
		line := c.describe(c.w.loop.Now()) + "\n"
		c.replyLocal(func(w *resp.Writer) { w.Verbatim("txt", []byte(line)) })
	case sub == "list":
		clientList(c, args)
	case sub == "kill":
		clientKill(c, args)
	case sub == "unblock" && (len(args) == 3 || len(args) == 4):
		clientUnblock(c, args)
	case sub == "tracking":
		clientTracking(c, args)
	case sub == "caching" && len(args) == 3:
		clientCaching(c, args)
	case sub == "getredir" && len(args) == 2:
		clientGetRedir(c)
	case sub == "trackinginfo" && len(args) == 2:
		clientTrackingInfo(c)
	case (sub == "no-evict" || sub == "no-touch") && len(args) == 3:
		on := strings.ToLower(string(args[2]))
		if on != "on" && on != "off" {
			c.errorReply("ERR syntax error")
			return
		}
		if sub == "no-touch" {
			c.client.NoTouch = on == "on"
		} else {
			c.noEvict = on == "on" // shown in CLIENT LIST; moond evicts no clients
		}
		c.ok()
	case sub == "reply" && len(args) == 3:
		clientReply(c, args)
	case sub == "pause":
		clientPause(c, args)
	case sub == "unpause" && len(args) == 2:
		clientUnpause(c)
	case sub == "help" && len(args) == 2:
		c.replyLocal(func(w *resp.Writer) { writeHelp(w, clientHelp) })
	default:
		c.errorReply("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try CLIENT HELP.")
	}
}

func writeHelp(w *resp.Writer, lines []string) {
	w.ArrayHeader(len(lines))
	for _, l := range lines {
		w.SimpleString(l)
	}
}

// describe is the connection's CLIENT LIST line, with Redis 7's fields.
func (c *conn) describe(now time.Time) string {
	flags := c.flags()
	qbuf := c.rend - c.rpos
	var sub, psub, ssub int
	if s := c.subs; s != nil {
		sub, psub, ssub = len(s.channels), len(s.patterns), len(s.shardChannels)
	}
	// Redis shows the first 16 KiB of pending output as its static
	// buffer (obl) and the rest as its reply list (omem).
	obl := min(c.pendingOutput(), 16<<10)
	omem := c.pendingOutput() - obl
	multi := -1
	if c.multi != nil {
		multi = len(c.multi.cmds)
	}
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=%d sub=%d psub=%d ssub=%d multi=%d "+
		"qbuf=%d qbuf-free=%d argv-mem=0 multi-mem=0 rbs=%d rbp=%d obl=%d oll=0 omem=%d tot-mem=%d events=r cmd=%s user=default "+
		"redir=%d resp=%d",
		c.id, c.addr, c.laddr, c.fd, c.name, int64(now.Sub(c.created)/time.Second), int64(now.Sub(c.lastActive)/time.Second),
		flags, c.client.DB, sub, psub, ssub, multi, qbuf, len(c.rbuf)-c.rend, len(c.rbuf), qbuf, obl, omem,
		len(c.rbuf)+cap(c.out.Buf)+cap(c.sending),
		cmdOrNull(c.lastCommand.name()), c.redir(), c.out.Proto)
}

func cmdOrNull(s string) string {
	if s == "" {
		return "NULL"
	}
	return s
}

// clientType is Redis 7.0's getClientType for the kinds moond has:
// "master" for the replication link's connection (so that Sentinel's
// CLIENT KILL TYPE normal after REPLICAOF leaves the new link alone),
// "pubsub" for a connection with a subscription, whatever its protocol
// (redis-server 7.0.15 kills a RESP3 subscriber with CLIENT KILL TYPE
// pubsub), else "normal". Replicas leave the shards (master_sync.go).
func (c *conn) clientType() string {
	if c.replMaster {
		return "master"
	}
	if c.subscribed() {
		return "pubsub"
	}
	return "normal"
}

// clientList: CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id ...],
// gathered from every shard.
func clientList(c *conn, args [][]byte) {
	var ids map[int64]bool
	onlyNone := false
	kind := "" // TYPE normal or pubsub: Redis's client types
	for i := 2; i < len(args); i++ {
		opt := strings.ToLower(string(args[i]))
		switch {
		case opt == "type" && i+1 < len(args):
			switch strings.ToLower(string(args[i+1])) {
			case "normal", "pubsub", "master":
				kind = strings.ToLower(string(args[i+1]))
			case "replica", "slave":
				onlyNone = true
			default:
				c.errorReply("ERR Unknown client type '" + string(args[i+1]) + "'")
				return
			}
			i++
		case opt == "id" && i+1 < len(args):
			ids = map[int64]bool{}
			for i++; i < len(args); i++ {
				id, ok := keyspace.ParseInt(args[i])
				if !ok || id <= 0 {
					c.errorReply("ERR Invalid client ID")
					return
				}
				ids[id] = true
			}
		default:
			c.errorReply("ERR syntax error")
			return
		}
	}
	lines := make([][]string, c.w.srv.nshards)
	c.fanoutCollect(func(w *worker, i int) {
		if onlyNone {
			return
		}
		now := w.loop.Now()
		for _, cc := range w.conns {
			if kind != "" && cc.clientType() != kind {
				continue
			}
			if ids == nil || ids[cc.id] {
				lines[i] = append(lines[i], cc.describe(now))
			}
		}
	}, func(w *resp.Writer) {
		var b strings.Builder
		for _, ls := range lines {
			for _, l := range ls {
				b.WriteString(l)
				b.WriteByte('\n')
			}
		}
		w.Verbatim("txt", []byte(b.String()))
	})
}

// clientKill: CLIENT KILL addr (old form) or CLIENT KILL <filter> <value> ...
func clientKill(c *conn, args [][]byte) {
	type filter struct {
		id          int64
		addr, laddr string
		kind        string // TYPE: "normal", "pubsub" or "master"; "" for any
		skipMe      bool
	}
	f := filter{skipMe: true}
	oldStyle := len(args) == 3
	if oldStyle {
		f.addr, f.skipMe = string(args[2]), false
	} else {
		if len(args)%2 != 0 || len(args) < 4 {
			c.errorReply("ERR syntax error")
			return
		}
		for i := 2; i < len(args); i += 2 {
			val := string(args[i+1])
			switch strings.ToLower(string(args[i])) {
			case "id":
				id, ok := keyspace.ParseInt(args[i+1])
				if !ok || id <= 0 {
					c.errorReply("ERR client-id should be greater than 0")
					return
				}
				f.id = id
			case "addr":
				f.addr = val
			case "laddr":
				f.laddr = val
			case "user":
				if val != "default" {
					c.errorReply("ERR No such user '" + val + "'")
					return
				}
			case "skipme":
				switch strings.ToLower(val) {
				case "yes":
					f.skipMe = true
				case "no":
					f.skipMe = false
				default:
					c.errorReply("ERR syntax error")
					return
				}
			case "type":
				switch kind := strings.ToLower(val); kind {
				case "normal", "pubsub", "master":
					f.kind = kind
				case "replica", "slave":
					f.id = -1 // no such clients here
				default:
					c.errorReply("ERR Unknown client type '" + val + "'")
					return
				}
			default:
				c.errorReply("ERR syntax error")
				return
			}
		}
	}
	killed := make([]int, c.w.srv.nshards)
	self := c
	c.fanoutCollect(func(w *worker, i int) {
		for _, cc := range w.conns {
			if (f.id != 0 && cc.id != f.id) || (f.addr != "" && cc.addr != f.addr) || (f.laddr != "" && cc.laddr != f.laddr) ||
				(f.kind != "" && cc.clientType() != f.kind) {
				continue
			}
			if cc == self {
				if f.skipMe {
					continue
				}
				self.closeAfterReply = true
				killed[i]++
				continue
			}
			killed[i]++
			cc.close()
		}
	}, func(w *resp.Writer) {
		n := 0
		for _, k := range killed {
			n += k
		}
		switch {
		case !oldStyle:
			w.Int(int64(n))
		case n == 0:
			w.Error("ERR No such client")
		default:
			w.SimpleString("OK")
		}
	})
}
