package server

import (
	"crypto/subtle"
	"strings"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

func init() {
	register(
		&serverCmd{name: "ping", arity: -1, run: cmdPing},
		&serverCmd{name: "echo", arity: 2, run: cmdEcho},
		&serverCmd{name: "select", arity: 2, run: cmdSelect},
		&serverCmd{name: "quit", arity: -1, noAuth: true, run: cmdQuit},
		&serverCmd{name: "reset", arity: 1, noAuth: true, run: cmdReset},
		&serverCmd{name: "auth", arity: -2, noAuth: true, run: cmdAuth},
		&serverCmd{name: "hello", arity: -1, noAuth: true, run: cmdHello},
	)
}

func cmdPing(c *conn, args [][]byte) {
	if len(args) <= 2 && c.pingSubscribed(args) {
		return
	}
	switch len(args) {
	case 1:
		c.replyLocal(func(w *resp.Writer) { w.SimpleString("PONG") })
	case 2:
		c.replyLocal(func(w *resp.Writer) { w.Bulk(args[1]) })
	default:
		c.errorReply("ERR wrong number of arguments for 'ping' command")
	}
}

func cmdEcho(c *conn, args [][]byte) {
	c.replyLocal(func(w *resp.Writer) { w.Bulk(args[1]) })
}

func cmdSelect(c *conn, args [][]byte) {
	n, ok := keyspace.ParseInt(args[1])
	if !ok {
		c.errorReply("ERR value is not an integer or out of range")
		return
	}
	if n != int64(int32(n)) { // Redis reads a C int
		c.errorReply("ERR value is out of range, value must between -2147483648 and 2147483647")
		return
	}
	if n < 0 || n >= int64(c.w.srv.databases()) {
		c.errorReply("ERR DB index is out of range")
		return
	}
	c.client.DB = int(n)
	c.ok()
}

func (c *conn) ok() { c.replyLocal(func(w *resp.Writer) { w.SimpleString("OK") }) }

func cmdQuit(c *conn, _ [][]byte) {
	c.ok()
	c.closeAfterReply = true
}

func cmdReset(c *conn, _ [][]byte) {
	c.multi = nil // RESET discards a transaction being queued, as in Redis
	c.unwatchAll()
	c.unsubscribeAll()
	c.disableTracking()
	c.client.DB = 0
	c.client.NoTouch = false
	c.name = ""
	c.authed = c.w.srv.requirePass() == ""
	c.parser.Unauthenticated = !c.authed
	c.out.Proto = 2
	c.replyLocal(func(w *resp.Writer) { w.SimpleString("RESET") })
}

// checkAuth validates a username/password pair for the default user.
// It returns the error reply, or "" when the pair is good.
func (c *conn) checkAuth(user, pass []byte) string {
	want := c.w.srv.requirePass()
	if string(user) != "default" {
		return "WRONGPASS invalid username-password pair or user is disabled."
	}
	if want == "" {
		return "" // the default user has nopass: any password works
	}
	if subtle.ConstantTimeCompare(pass, []byte(want)) != 1 {
		return "WRONGPASS invalid username-password pair or user is disabled."
	}
	return ""
}

func (c *conn) setAuthed() {
	c.authed = true
	c.parser.Unauthenticated = false
}

func cmdAuth(c *conn, args [][]byte) {
	if len(args) > 3 {
		c.errorReply("ERR syntax error")
		return
	}
	user, pass := []byte("default"), args[1]
	if len(args) == 3 {
		user, pass = args[1], args[2]
	} else if c.w.srv.requirePass() == "" {
		c.errorReply("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
		return
	}
	if msg := c.checkAuth(user, pass); msg != "" {
		c.errorReply(msg)
		return
	}
	c.setAuthed()
	c.ok()
}

// cmdHello: HELLO [protover [AUTH username password] [SETNAME clientname]].
func cmdHello(c *conn, args [][]byte) {
	proto := c.out.Proto
	if len(args) >= 2 {
		v, ok := keyspace.ParseInt(args[1])
		if !ok {
			c.errorReply("ERR Protocol version is not an integer or out of range")
			return
		}
		if v < 2 || v > 3 {
			c.errorReply("NOPROTO unsupported protocol version")
			return
		}
		proto = int(v)
	}
	authed := false
	var name []byte
	setName := false
	for i := 2; i < len(args); i++ {
		opt := strings.ToLower(string(args[i]))
		more := len(args) - i - 1
		switch {
		case opt == "auth" && more >= 2:
			if msg := c.checkAuth(args[i+1], args[i+2]); msg != "" {
				c.errorReply(msg)
				return
			}
			authed = true
			i += 2
		case opt == "setname" && more >= 1:
			name, setName = args[i+1], true
			i++
		default:
			c.errorReply("ERR Syntax error in HELLO option '" + string(args[i]) + "'")
			return
		}
	}
	if !c.authed && !authed {
		c.errorReply("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if setName {
		if msg := validClientName(name); msg != "" {
			c.errorReply(msg)
			return
		}
	}
	if authed {
		c.setAuthed()
	}
	if setName {
		c.name = string(name)
	}
	c.out.Proto = proto
	id := c.id
	c.replyLocal(func(w *resp.Writer) {
		w.MapHeader(7)
		w.BulkString("server")
		w.BulkString("redis")
		w.BulkString("version")
		w.BulkString(RedisVersion)
		w.BulkString("proto")
		w.Int(int64(proto))
		w.BulkString("id")
		w.Int(id)
		w.BulkString("mode")
		w.BulkString("standalone")
		w.BulkString("role")
		w.BulkString("master")
		w.BulkString("modules")
		w.ArrayHeader(0)
	})
}

// validClientName applies Redis's rule: no spaces, newlines or other
// characters outside '!'..'~'.
func validClientName(name []byte) string {
	for _, ch := range name {
		if ch < '!' || ch > '~' {
			return "ERR Client names cannot contain spaces, newlines or special characters."
		}
	}
	return ""
}
