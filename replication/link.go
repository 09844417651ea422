package replication

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moond-db/moond/resp"
)

// Config says which master to follow and how.
type Config struct {
	Host string
	Port int
	// Credentials returns masteruser and masterauth ("" for none), read
	// at each connection, as Redis does, so that CONFIG SET masterauth
	// takes effect at the next one. Nil for none.
	Credentials func() (user, password string)
	// ListeningPort is this server's port, told to the master (REPLCONF
	// listening-port), which shows it in its INFO.
	ListeningPort int
	// AnnounceIP, when not "", is told to the master (REPLCONF
	// ip-address) to show instead of the connection's address.
	AnnounceIP string
	// Timeout is repl-timeout: the longest the master may stay silent.
	Timeout time.Duration
	Log     *slog.Logger
	// Local opens a connection to this server on which the master's
	// commands run, as the master's client (writes allowed on a replica).
	Local func() (net.Conn, error)
	// Resume is where the local data stands in a history (the link
	// before this one's Position): the first PSYNC asks to continue
	// there, as Redis's replica does on a new master. Empty for none.
	Resume Position
	// Shards and ShardOf are the local server's routing: ShardOf(key) is
	// the shard, below Shards, that owns key. A full sync sends each
	// shard's keys in batches of their own (MOOND.LOAD), which the server
	// runs on the shard of a batch's first key. ShardOf nil: one shard.
	Shards  int
	ShardOf func(key []byte) int
}

// The link's states, as ROLE names them.
const (
	StateConnect    = "connect"    // waiting to (re)connect
	StateConnecting = "connecting" // dialing
	StateHandshake  = "handshake"  // PING, AUTH, REPLCONF, PSYNC: waiting for the master
	StateSync       = "sync"       // receiving or loading the snapshot
	StateConnected  = "connected"  // following the stream
)

// Status is a snapshot of the link, for INFO and ROLE.
type Status struct {
	State string
	// SyncInProgress: a snapshot is being received and loaded.
	SyncInProgress bool
	// LastIO is when the master last sent something (zero before).
	LastIO time.Time
	// DownSince is when the link went down (zero while it is up).
	DownSince time.Time
	// ReadOffset is the offset of the stream read and handed on
	// (slave_read_repl_offset); Offset the offset the local WAL holds
	// (slave_repl_offset), the one acknowledged to the master.
	ReadOffset, Offset int64
	// ReplID is the master's replication id (empty before a sync).
	ReplID string
}

// Link follows one master: it connects, syncs and follows the stream, and
// reconnects with a backoff whenever the link drops, until Stop.
type Link struct {
	cfg  Config
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	conn  net.Conn // the master connection of the session in progress
	state string
	sync  bool
	down  time.Time
	// up and loads hold state for the command path's checks (Up,
	// Loading), which must not take mu.
	up atomic.Bool
	// loads is the snapshot loads' state: the number of loads begun,
	// shifted left by one, and in bit 0 whether the last is not yet
	// answered whole by the local server (from its FLUSHALL on).
	loads atomic.Int64

	lastIO  atomic.Int64 // unix nanoseconds
	readOff atomic.Int64
	replID  atomic.Pointer[string]
	app     *applier // the local connection; kept across sessions for a partial resync
	// inMulti: the stream handed on a MULTI and not yet its EXEC or
	// DISCARD (the link's goroutine only); a full sync discards it.
	inMulti bool
	// db is the database of the stream's last SELECT (the link's
	// goroutine only): a new local connection resumes in it.
	db int
	// resumed: the replid and offset come from Config.Resume and hold
	// for the first local connection.
	resumed bool
	cur     atomic.Pointer[applier] // app, for Status
	wmu     sync.Mutex
}

// Backoff bounds between two connection attempts.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 2 * time.Second
)

// Start starts following the master cfg names.
func Start(cfg Config) *Link {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	l := &Link{cfg: cfg, stop: make(chan struct{}), done: make(chan struct{}), state: StateConnect, down: time.Now()}
	empty := ""
	l.replID.Store(&empty)
	l.resumeFrom(cfg.Resume)
	go l.run()
	return l
}

// Stop ends the link: the master connection closes, the commands already
// read are applied (5 s at most) and the local connection closes.
func (l *Link) Stop() {
	l.mu.Lock()
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	if l.conn != nil {
		l.conn.Close()
	}
	l.mu.Unlock()
	<-l.done
}

// Status returns where the link is.
func (l *Link) Status() Status {
	l.mu.Lock()
	st := Status{State: l.state, SyncInProgress: l.sync, DownSince: l.down}
	l.mu.Unlock()
	if ns := l.lastIO.Load(); ns != 0 {
		st.LastIO = time.Unix(0, ns)
	}
	st.ReadOffset = l.readOff.Load()
	st.Offset = st.ReadOffset
	if a := l.cur.Load(); a != nil {
		st.Offset = a.acked.Load()
	}
	st.ReplID = *l.replID.Load()
	return st
}

// setState records a state change.
func (l *Link) setState(state string, syncing bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if state == StateConnected && l.state != StateConnected {
		l.down = time.Time{}
	} else if state != StateConnected && l.state == StateConnected {
		l.down = time.Now()
	}
	l.state, l.sync = state, syncing
	l.up.Store(state == StateConnected)
}

// Up reports whether the link is up (master_link_status:up).
func (l *Link) Up() bool { return l.up.Load() }

// Loading reports whether a snapshot is being loaded, or its load broke
// off: the data is partly there until a load completes, and the server
// answers LOADING, as Redis does while it loads.
func (l *Link) Loading() bool { return l.loads.Load()&1 != 0 }

// beginLoad marks a new snapshot load begun and returns its number.
func (l *Link) beginLoad() int64 {
	gen := l.loads.Load()>>1 + 1
	l.loads.Store(gen<<1 | 1)
	return gen
}

// endLoadWhen marks load gen complete once done is closed, unless a later
// load began meanwhile; a load whose local connection died stays
// incomplete (the next sync is a full one).
func (l *Link) endLoadWhen(gen int64, done <-chan struct{}, a *applier) {
	select {
	case <-done:
		l.loads.CompareAndSwap(gen<<1|1, gen<<1)
	case <-a.dead:
	}
}

// stopped reports whether Stop was called.
func (l *Link) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// run is the link's goroutine: sessions, with a backoff between them.
func (l *Link) run() {
	defer close(l.done)
	backoff := minBackoff
	for !l.stopped() {
		err := l.session()
		l.mu.Lock()
		wasUp := l.state == StateConnected
		l.mu.Unlock()
		l.setState(StateConnect, false)
		if l.stopped() {
			break
		}
		l.cfg.Log.Warn("replica: the link with the master is down", "master", l.addr(), "err", err)
		if l.app != nil {
			select {
			case <-l.app.dead:
				l.cfg.Log.Warn("replica: the local connection failed; the next sync is a full one", "err", l.app.err)
				l.app.conn.Close()
				l.app = nil
				l.cur.Store(nil)
			default:
			}
		}
		if wasUp {
			backoff = minBackoff // the link was up: retry soon
		}
		select {
		case <-l.stop:
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
	if l.app != nil {
		l.app.drain(5 * time.Second)
	}
}

func (l *Link) addr() string { return net.JoinHostPort(l.cfg.Host, strconv.Itoa(l.cfg.Port)) }

// session connects once and follows the master until the link drops.
func (l *Link) session() error {
	l.setState(StateConnecting, false)
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.Timeout)
	go func() {
		select {
		case <-l.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", l.addr())
	cancel()
	if err != nil {
		return fmt.Errorf("replication: connecting to the master: %w", err)
	}
	l.mu.Lock()
	l.conn = conn
	l.mu.Unlock()
	if l.stopped() {
		conn.Close()
		return errors.New("replication: stopped")
	}
	defer conn.Close()
	l.setState(StateHandshake, false)
	end := make(chan struct{})
	defer close(end)
	br := bufio.NewReaderSize(&deadlineReader{conn: conn, timeout: l.cfg.Timeout, link: l}, 64<<10)
	if err := l.handshake(conn, br); err != nil {
		return err
	}
	if l.app == nil {
		lc, err := l.cfg.Local()
		if err != nil {
			return fmt.Errorf("replication: opening the local connection: %w", err)
		}
		if err := l.newLocal(lc); err != nil {
			return err
		}
	}
	go closeWhenDead(l.app, conn, end)
	if err := l.psync(conn, br, end); err != nil {
		return err
	}
	go l.acker(conn, end)
	return l.stream(conn, br)
}

// closeWhenDead closes the master's connection conn once a's local
// connection failed (or the local server refused a write of the stream),
// so that the session ends at once rather than at the master's next
// command, which may be a repl-ping-replica-period away; it returns when
// end is closed (the session ended).
func closeWhenDead(a *applier, conn net.Conn, end <-chan struct{}) {
	select {
	case <-a.dead:
		conn.Close()
	case <-end:
	}
}

// newLocal makes lc the local connection. The data it writes to follows
// no history, unless the link resumes one (Config.Resume): then the
// connection starts in the stream's database, as the old link's did.
func (l *Link) newLocal(lc net.Conn) error {
	off := int64(0)
	if l.resumed {
		off = l.readOff.Load()
	}
	l.app = newApplier(lc, l.cfg.Log, off)
	l.cur.Store(l.app)
	l.inMulti = false
	if !l.resumed {
		l.setReplID("")
		return nil
	}
	l.resumed = false
	sel := resp.AppendCommand(nil, []byte("SELECT"), []byte(strconv.Itoa(l.db)))
	return l.app.send(sel, item{off: -1, what: "select"})
}

// setReplID records the master's replication id.
func (l *Link) setReplID(id string) { l.replID.Store(&id) }

// deadlineReader reads from the master with repl-timeout as the longest
// silence, and notes when it last read.
type deadlineReader struct {
	conn    net.Conn
	timeout time.Duration
	link    *Link
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	if err := d.conn.SetReadDeadline(time.Now().Add(d.timeout)); err != nil {
		return 0, err
	}
	n, err := d.conn.Read(p)
	if n > 0 {
		d.link.lastIO.Store(time.Now().UnixNano())
	}
	return n, err
}

// write sends b to the master; the stream goroutine and the acker share
// the connection.
func (l *Link) write(conn net.Conn, b []byte) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if err := conn.SetWriteDeadline(time.Now().Add(l.cfg.Timeout)); err != nil {
		return err
	}
	_, err := conn.Write(b)
	return err
}

// ack sends REPLCONF ACK with the offset the local WAL holds.
func (l *Link) ack(conn net.Conn) {
	a := l.cur.Load()
	if a == nil {
		return
	}
	off := strconv.AppendInt(nil, a.acked.Load(), 10)
	if err := l.write(conn, resp.AppendCommand(nil, []byte("REPLCONF"), []byte("ACK"), off)); err != nil {
		conn.Close() // the stream's read fails and the session ends
	}
}

// acker sends REPLCONF ACK once a second while the link is up.
func (l *Link) acker(conn net.Conn, end <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-end:
			return
		case <-t.C:
			if l.Up() {
				l.ack(conn)
			}
		}
	}
}
