package replication

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/moond-db/moond/resp"
)

// request sends a command to the master and reads its one-line reply,
// skipping the bare newlines a busy master sends to keep the link alive.
func (l *Link) request(conn net.Conn, br *bufio.Reader, args ...string) (string, error) {
	bs := make([][]byte, len(args))
	for i, a := range args {
		bs[i] = []byte(a)
	}
	if err := l.write(conn, resp.AppendCommand(nil, bs...)); err != nil {
		return "", fmt.Errorf("replication: sending %s to the master: %w", args[0], err)
	}
	if err := skipNewlines(br); err != nil {
		return "", err
	}
	line, err := readLine(br)
	if err != nil {
		return "", fmt.Errorf("replication: reading the master's reply to %s: %w", args[0], err)
	}
	return string(line), nil
}

// skipNewlines skips the bare "\n" a master sends while it prepares.
func skipNewlines(br *bufio.Reader) error {
	for {
		c, err := br.ReadByte()
		if err != nil {
			return fmt.Errorf("replication: reading from the master: %w", err)
		}
		if c != '\n' {
			return br.UnreadByte()
		}
	}
}

// handshake runs Redis 7.0's replica handshake: PING, AUTH, REPLCONF
// listening-port, REPLCONF ip-address (with replica-announce-ip), REPLCONF
// capa.
func (l *Link) handshake(conn net.Conn, br *bufio.Reader) error {
	r, err := l.request(conn, br, "PING")
	if err != nil {
		return err
	}
	if strings.HasPrefix(r, "-") && !strings.HasPrefix(r, "-NOAUTH") && !strings.HasPrefix(r, "-NOPERM") &&
		!strings.HasPrefix(r, "-ERR operation not permitted") {
		return fmt.Errorf("replication: error reply to PING from the master: %s", r)
	}
	var user, password string
	if l.cfg.Credentials != nil {
		user, password = l.cfg.Credentials()
	}
	if password != "" {
		args := []string{"AUTH", password}
		if user != "" {
			args = []string{"AUTH", user, password}
		}
		if r, err = l.request(conn, br, args...); err != nil {
			return err
		}
		if strings.HasPrefix(r, "-") {
			return fmt.Errorf("replication: unable to AUTH to the master: %s", r)
		}
	}
	if r, err = l.request(conn, br, "REPLCONF", "listening-port", strconv.Itoa(l.cfg.ListeningPort)); err != nil {
		return err
	}
	if strings.HasPrefix(r, "-") {
		l.cfg.Log.Info("replica: the master does not take REPLCONF listening-port", "reply", r)
	}
	if l.cfg.AnnounceIP != "" {
		if r, err = l.request(conn, br, "REPLCONF", "ip-address", l.cfg.AnnounceIP); err != nil {
			return err
		}
		if strings.HasPrefix(r, "-") {
			l.cfg.Log.Info("replica: the master does not take REPLCONF ip-address", "reply", r)
		}
	}
	if r, err = l.request(conn, br, "REPLCONF", "capa", "eof", "capa", "psync2"); err != nil {
		return err
	}
	if strings.HasPrefix(r, "-") {
		l.cfg.Log.Info("replica: the master does not take REPLCONF capa", "reply", r)
	}
	return nil
}

// psync asks for a partial resync when the link followed this master
// before, a full one otherwise, and runs the full sync when that is the
// answer.
func (l *Link) psync(conn net.Conn, br *bufio.Reader, end <-chan struct{}) error {
	id, off := *l.replID.Load(), "-1"
	if id == "" {
		id = "?"
	} else {
		off = strconv.FormatInt(l.readOff.Load()+1, 10)
	}
	r, err := l.request(conn, br, "PSYNC", id, off)
	if err != nil {
		return err
	}
	f := strings.Fields(r)
	switch {
	case len(f) == 3 && f[0] == "+FULLRESYNC":
		start, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || len(f[1]) != 40 {
			return fmt.Errorf("%w: bad FULLRESYNC reply %q", ErrProtocol, r)
		}
		return l.fullSync(conn, br, f[1], start, end)
	case len(f) >= 1 && f[0] == "+CONTINUE":
		if len(f) == 2 {
			l.setReplID(f[1])
		}
		l.cfg.Log.Info("replica: partial resync accepted by the master", "master", l.addr(), "offset", l.readOff.Load())
		l.setState(StateConnected, false)
		return nil
	}
	return fmt.Errorf("replication: unexpected reply to PSYNC from the master: %q", r)
}

// fullSync receives the snapshot and has it loaded: a FLUSHALL, then one
// RESTORE per key, through the local connection. The link is up once the
// local server answered them all (they are in its WAL); the master starts
// the stream at the first ACK, sent then.
func (l *Link) fullSync(conn net.Conn, br *bufio.Reader, id string, start int64, end <-chan struct{}) error {
	l.setState(StateSync, true)
	// Until this load completes the data follows no replication id: a
	// session that breaks off must be followed by a full sync again,
	// never by a partial one from the old id and offset.
	l.setReplID("")
	l.cfg.Log.Info("replica: full resync from the master", "master", l.addr(), "replid", id, "offset", start)
	if err := skipNewlines(br); err != nil {
		return err
	}
	hdr, err := readLine(br)
	if err != nil {
		return fmt.Errorf("replication: reading the snapshot's header: %w", err)
	}
	var keys int
	gen := l.beginLoad()
	switch {
	case bytes.HasPrefix(hdr, []byte("$EOF:")) && len(hdr) == 5+40:
		if keys, err = l.load(br); err != nil {
			return err
		}
		mark := make([]byte, 40)
		if _, err := io.ReadFull(br, mark); err != nil {
			return fmt.Errorf("replication: reading the snapshot's end mark: %w", err)
		}
		if !bytes.Equal(mark, hdr[5:]) {
			return fmt.Errorf("%w: the snapshot's end mark %q is not %q", ErrProtocol, mark, hdr[5:])
		}
	case len(hdr) > 1 && hdr[0] == '$':
		n, perr := strconv.ParseInt(string(hdr[1:]), 10, 64)
		if perr != nil || n < 0 {
			return fmt.Errorf("%w: bad snapshot header %q", ErrProtocol, clip(hdr))
		}
		lr := &io.LimitedReader{R: br, N: n}
		fbr := bufio.NewReaderSize(lr, 64<<10)
		if keys, err = l.load(fbr); err != nil {
			return err
		}
		if lr.N != 0 || fbr.Buffered() != 0 {
			return fmt.Errorf("%w: %d bytes after the snapshot's end", ErrProtocol, lr.N+int64(fbr.Buffered()))
		}
	default:
		return fmt.Errorf("%w: bad snapshot header %q", ErrProtocol, clip(hdr))
	}
	if err := l.app.send(resp.AppendCommand(nil, []byte("SELECT"), []byte("0")), item{off: -1, what: "select"}); err != nil {
		return err
	}
	l.readOff.Store(start)
	l.db = 0
	l.setReplID(id)
	loaded, err := l.app.barrier(start)
	if err != nil {
		return err
	}
	go l.endLoadWhen(gen, loaded, l.app)
	go l.whenLoaded(conn, loaded, end, keys)
	return nil
}

// whenLoaded marks the link up once the snapshot is loaded and sends the
// first ACK, which tells the master to start the stream.
func (l *Link) whenLoaded(conn net.Conn, loaded <-chan struct{}, end <-chan struct{}, keys int) {
	if !awaitSession(loaded, end) {
		return
	}
	l.setState(StateConnected, false)
	l.cfg.Log.Info("replica: MASTER <-> REPLICA sync finished with success", "master", l.addr(), "keys", keys)
	l.ack(conn)
}

// awaitSession waits for done and reports whether it came while the
// session that waits is still on (end not closed).
func awaitSession(done, end <-chan struct{}) bool {
	select {
	case <-done:
	case <-end:
		return false
	}
	select {
	case <-end:
		return false
	default:
		return true
	}
}

// load reads the RDB file from r and sends FLUSHALL, then the keys in
// MOOND.LOAD batches (loader), to the local server. It returns the number
// of keys.
func (l *Link) load(r *bufio.Reader) (int, error) {
	f := NewFileReader(r)
	f.Reuse = true // the loader copies each entry into its batch
	if err := f.Header(); err != nil {
		return 0, err
	}
	if l.inMulti { // the old stream broke off inside a transaction
		l.inMulti = false
		if err := l.app.send(resp.AppendCommand(nil, []byte("DISCARD")), item{off: -1, what: "discard"}); err != nil {
			return 0, err
		}
	}
	if err := l.app.send(resp.AppendCommand(nil, []byte("FLUSHALL")), item{off: -1, what: "flushall"}); err != nil {
		return 0, err
	}
	ld := newLoader(l.app, l.cfg.Shards, l.cfg.ShardOf)
	db, keys, skipped := -1, 0, 0
	for {
		e, err := f.Next()
		if err == io.EOF {
			if skipped > 0 {
				l.cfg.Log.Warn("replica: keys of the master's snapshot skipped", "streams", skipped)
			}
			return keys, ld.flush()
		}
		if err != nil {
			return keys, err
		}
		if e.DB != db {
			db = e.DB
			if err := ld.database(f.DBKeys, f.DBExpires); err != nil {
				return keys, err
			}
			sel := resp.AppendCommand(nil, []byte("SELECT"), []byte(strconv.Itoa(db)))
			if err := l.app.send(sel, item{off: -1, what: "select"}); err != nil {
				return keys, err
			}
		}
		if t := e.Value[0]; t == TypeStream || t == TypeStream2 {
			skipped++
			l.cfg.Log.Warn("replica: a stream in the master's snapshot skipped: moond has no streams", "db", e.DB, "key", string(e.Key))
			continue
		}
		if err := ld.add(e); err != nil {
			return keys, err
		}
		keys++
	}
}

// stream follows the master's commands: each is handed to the local
// server in order, except PING and REPLCONF, which become a PING there so
// that every command has a reply that says when it is through.
func (l *Link) stream(conn net.Conn, br *bufio.Reader) error {
	for {
		if br.Buffered() == 0 {
			if err := l.app.flush(); err != nil {
				return err
			}
		}
		c, err := readCommand(br)
		if err != nil {
			return fmt.Errorf("replication: reading the master's stream: %w", err)
		}
		off := l.readOff.Load() + int64(len(c.raw))
		name := strings.ToLower(string(c.args[0]))
		it := item{off: off, what: name}
		raw := c.raw
		switch {
		case name == "replconf" && len(c.args) >= 2 && strings.EqualFold(string(c.args[1]), "getack"):
			raw, it.then = pingCmd, func() { l.ack(conn) }
		case name == "ping" || name == "replconf":
			raw = pingCmd
		case name == "select" && len(c.args) == 2:
			if db, err := strconv.Atoi(string(c.args[1])); err == nil {
				l.db = db
			}
		case name == "multi":
			l.inMulti = true
		case name == "exec" || name == "discard":
			l.inMulti = false
		}
		if err := l.app.send(raw, it); err != nil {
			return err
		}
		l.readOff.Store(off)
		l.lastIO.Store(time.Now().UnixNano())
	}
}
