package server

import (
	"bufio"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
// [AUTH password] [AUTH2 username password] [KEYS key ...]
//
// As Redis's (cluster.c migrateCommand): the keys that exist are sent to
// the target as RESTORE key ttl payload [REPLACE] after AUTH and SELECT,
// in one pipeline; each key the target restored is deleted here (unless
// COPY); the first error the target answered is the reply, prefixed with
// "Target instance replied with error: ". MIGRATE is atomic as Redis's:
// a txn holds the keys' shards from the DUMPs to the DELs, so no command
// runs on those shards meanwhile, for at most the timeout per network
// step. The network I/O runs off the shard's thread, which goes on
// running its loop. Unlike Redis, moond keeps no cached connection to the
// target: each MIGRATE connects anew (and so never retries on a closed
// cached socket).

func init() {
	register(&serverCmd{name: "migrate", arity: -6, run: cmdMigrate})
}

// migrateReq is a parsed MIGRATE.
type migrateReq struct {
	addr               string
	db                 int64
	timeout            time.Duration
	copy, replace      bool
	username, password string
	auth               bool
	keys               [][]byte
	proto, clientDB    int
}

// migrateItem is one key MIGRATE found: its payload and TTL, then what the
// target answered.
type migrateItem struct {
	key     []byte
	shard   int
	payload []byte
	ttl     int64
	found   bool
	ok      bool // the target restored it
}

// parseMigrate parses MIGRATE's arguments in Redis's order of checks; the
// string is the error reply, "" when the request is good.
func parseMigrate(args [][]byte) (*migrateReq, string) {
	r := &migrateReq{addr: net.JoinHostPort(string(args[1]), string(args[2]))}
	keys := [][]byte{args[3]}
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch strings.ToLower(string(args[j])) {
		case "copy":
			r.copy = true
		case "replace":
			r.replace = true
		case "auth":
			if more < 1 {
				return nil, "ERR syntax error"
			}
			j++
			r.auth, r.password = true, string(args[j])
		case "auth2":
			if more < 2 {
				return nil, "ERR syntax error"
			}
			r.auth, r.username, r.password = true, string(args[j+1]), string(args[j+2])
			j += 2
		case "keys":
			if len(args[3]) != 0 {
				return nil, "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
			}
			keys = args[j+1:]
			j = len(args)
		default:
			return nil, "ERR syntax error"
		}
	}
	timeout, ok1 := keyspace.ParseInt(args[5])
	db, ok2 := keyspace.ParseInt(args[4])
	if !ok1 || !ok2 {
		return nil, "ERR value is not an integer or out of range"
	}
	if timeout <= 0 {
		timeout = 1000
	}
	r.timeout, r.db = time.Duration(timeout)*time.Millisecond, db
	for _, k := range keys {
		r.keys = append(r.keys, slices.Clone(k))
	}
	return r, ""
}

func cmdMigrate(c *conn, args [][]byte) {
	r, msg := parseMigrate(args)
	if msg != "" {
		c.errorReply(msg)
		return
	}
	r.proto, r.clientDB = c.out.Proto, c.client.DB
	items := make([]*migrateItem, len(r.keys))
	var shards []int
	for i, k := range r.keys {
		items[i] = &migrateItem{key: k, shard: c.w.srv.shardOf(k)}
		shards = append(shards, items[i].shard)
	}
	slices.Sort(shards)
	shards = slices.Compact(shards)
	reply := c.newPending(1, nil)
	c.blockWait = reply
	finish := func(b []byte) {
		reply.fill(0, b)
		c.txnReplied(reply)
	}
	t := c.w.beginTxnAlone(shards, func(t *txn) {
		left := len(t.shards)
		for _, s := range t.shards {
			t.readStep(s, r.proto, func(w *worker, _ *resp.Writer) uint64 {
				for _, it := range items {
					if it.shard == w.id {
						it.payload, it.ttl, it.found = w.ks.DumpForMigrate(r.clientDB, it.key)
					}
				}
				return 0
			}, func([]byte) {
				if left--; left == 0 {
					c.migrateSend(t, r, items, finish)
				}
			})
		}
	})
	t.writes = !r.copy
	t.onRefused = func(msg string) { finish(errorReply(r.proto, msg)) }
}

// migrateSend sends the keys found to the target off the shard's thread,
// then, back on it, deletes those the target restored and replies.
func (c *conn) migrateSend(t *txn, r *migrateReq, items []*migrateItem, finish func([]byte)) {
	var found []*migrateItem
	for _, it := range items {
		if it.found {
			found = append(found, it)
		}
	}
	if len(found) == 0 {
		for _, s := range t.shards {
			t.release(s)
		}
		finish([]byte("+NOKEY\r\n"))
		return
	}
	w := c.w
	go func() {
		failure := migrateTo(r, found)
		if err := w.loop.Post(func() { c.migrateDone(t, r, found, failure, finish) }); err != nil {
			w.srv.log.Error("MIGRATE: the shard stopped before the transfer ended", "err", err)
		}
	}()
}

// migrateDone deletes, unless COPY, the keys the target restored (one
// step on each shard of the txn, which ends its part there) and answers
// failure, or OK.
func (c *conn) migrateDone(t *txn, r *migrateReq, found []*migrateItem, failure string, finish func([]byte)) {
	out := resp.Writer{Proto: r.proto}
	if failure != "" {
		out.Error(failure)
	} else {
		out.SimpleString("OK")
	}
	anyOK := slices.ContainsFunc(found, func(it *migrateItem) bool { return it.ok })
	if r.copy || !anyOK {
		for _, s := range t.shards {
			t.release(s)
		}
		finish(out.Buf)
		return
	}
	left := len(t.shards)
	for _, s := range t.shards {
		del := [][]byte{[]byte("DEL")}
		for _, it := range found {
			if it.ok && it.shard == s {
				del = append(del, it.key)
			}
		}
		t.step(s, r.proto, func(w *worker, _ *resp.Writer) uint64 {
			if len(del) == 1 {
				return 0 // nothing restored from this shard: its END alone
			}
			var scratch resp.Writer
			cl := keyspace.Client{DB: r.clientDB}
			return w.execData(&cl, keyspace.Lookup(del[0]), del, &scratch)
		}, true, func([]byte) {
			if left--; left == 0 {
				finish(out.Buf)
			}
		})
	}
}

// migrateTo connects to the target and restores the items there, marking
// those it restored; it returns the error reply, "" when all went well.
func migrateTo(r *migrateReq, items []*migrateItem) string {
	conn, err := net.DialTimeout("tcp", r.addr, r.timeout)
	if err != nil {
		// Redis's connect waits for the socket to be writable and takes
		// a refused connection as made: it fails at the first write.
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return "IOERR error or timeout connecting to the client"
		}
		return "IOERR error or timeout writing to target instance"
	}
	defer conn.Close()
	if err := migrateWrite(conn, r.timeout, migrateRequest(r, items)); err != nil {
		return "IOERR error or timeout writing to target instance"
	}
	br := bufio.NewReader(conn)
	var authReply, selectReply string
	if r.auth {
		if authReply, err = migrateReadLine(conn, br, r.timeout); err != nil {
			return "IOERR error or timeout reading to target instance"
		}
	}
	if selectReply, err = migrateReadLine(conn, br, r.timeout); err != nil {
		return "IOERR error or timeout reading to target instance"
	}
	failure := ""
	for _, it := range items {
		line, err := migrateReadLine(conn, br, r.timeout)
		if err != nil {
			if failure == "" {
				failure = "IOERR error or timeout reading to target instance"
			}
			break
		}
		var targetErr string
		switch {
		case strings.HasPrefix(authReply, "-"):
			targetErr = authReply
		case strings.HasPrefix(selectReply, "-"):
			targetErr = selectReply
		case strings.HasPrefix(line, "-"):
			targetErr = line
		}
		if targetErr == "" {
			it.ok = true
		} else if failure == "" {
			failure = "ERR Target instance replied with error: " + targetErr[1:]
		}
	}
	return failure
}

// migrateRequest is the pipeline MIGRATE sends: AUTH when asked, SELECT,
// then one RESTORE per item.
func migrateRequest(r *migrateReq, items []*migrateItem) []byte {
	var w resp.Writer
	if r.auth {
		if r.username != "" {
			writeCommand(&w, []byte("AUTH"), []byte(r.username), []byte(r.password))
		} else {
			writeCommand(&w, []byte("AUTH"), []byte(r.password))
		}
	}
	writeCommand(&w, []byte("SELECT"), strconv.AppendInt(nil, r.db, 10))
	for _, it := range items {
		args := [][]byte{[]byte("RESTORE"), it.key, strconv.AppendInt(nil, it.ttl, 10), it.payload}
		if r.replace {
			args = append(args, []byte("REPLACE"))
		}
		writeCommand(&w, args...)
	}
	return w.Buf
}

// writeCommand appends a command as a RESP array of bulk strings.
func writeCommand(w *resp.Writer, args ...[]byte) {
	w.ArrayHeader(len(args))
	for _, a := range args {
		w.Bulk(a)
	}
}

// migrateWrite writes b in chunks of 64 KiB, each within timeout, as
// Redis does.
func migrateWrite(conn net.Conn, timeout time.Duration, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), 64<<10)
		if err := conn.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
			return err
		}
		if _, err := conn.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// migrateReadLine reads one reply line (without CRLF) within timeout. A
// reply that is not a line (a bulk, an array) is read as its first line,
// which is all MIGRATE looks at.
func migrateReadLine(conn net.Conn, br *bufio.Reader, timeout time.Duration) (string, error) {
	if err := conn.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	line, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply line")
	}
	return line, nil
}
