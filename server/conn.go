package server

import (
	"errors"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/runtime"
)

// Initial and steady-state sizes of a connection's input buffer. The buffer
// grows for big commands up to the query buffer limit and shrinks back when
// it empties.
const (
	readBufSize    = 16 << 10
	maxIdleReadBuf = 64 << 10
	maxIdleOutBuf  = 64 << 10
)

// connState is where a connection is in its read → run → send cycle.
type connState uint8

const (
	connReading connState = iota // a recv is in flight
	connRunning                  // commands parsed, replies from other shards awaited
	connSending                  // a send is in flight
	connClosed
)

// conn is one client connection, owned by the worker (loop) that accepted it.
type conn struct {
	w     *worker
	fd    runtime.FD
	id    int64
	state connState

	addr, laddr string
	created     time.Time
	lastActive  time.Time
	lastCommand lastCommand // what the last command name resolved to (CLIENT LIST's cmd)

	rbuf       []byte // rbuf[rpos:rend] is received and not yet parsed
	rpos, rend int
	parser     resp.Parser

	out     resp.Writer // replies ready to go, in order
	sending []byte      // the buffer of the send in flight
	queue   replyQueue  // replies behind one that waits for another shard

	client          keyspace.Client // selected DB and flags the keyspace needs
	name            string
	authed          bool
	closeAfterReply bool      // QUIT, a protocol error, CLIENT KILL
	reply           replyMode // CLIENT REPLY (client_reply.go)
	noEvict         bool      // CLIENT NO-EVICT ON: flag e in CLIENT LIST
	replyForced     bool      // CLIENT REPLY ON ran: its OK goes even when silenced
	// replMaster: the replication link's connection, on which the
	// master's commands run (repl.go); the replica's refusals skip it.
	replMaster bool
	replPort   int    // REPLCONF listening-port, for when it becomes a replica (master_sync.go)
	replIP     string // REPLCONF ip-address (a replica's replica-announce-ip), "" for none
	replEOF    bool   // REPLCONF capa eof: the replica takes a diskless snapshot
	detached   bool   // its socket went to a replica's goroutines (master_sync.go)

	// waitLSN is the highest WAL record this connection's pending replies
	// depend on; they leave only once the WAL holds it (see ackedLSN).
	waitLSN uint64
	holding bool // registered with the worker to be released at waitLSN
	// barrierMet: the replies in out waited for the shard's read barrier
	// (shard.ReadBarrier) already; cleared when they are sent.
	barrierMet bool
	paused     bool // not reading: the WAL is too far behind, or full (readsPaused)

	// recvBusy: a recv is in flight. Usually that is connReading, but a
	// connection that waits for a blocked command keeps one posted
	// (watch), which may still be in flight when the reply is sent.
	recvBusy bool
	// unprocessed: the input buffer may hold whole commands that have not
	// run, because they came in while the connection waited.
	unprocessed bool
	// blockWait is the pending reply of a blocking command in progress:
	// until it is filled the connection runs none of its later input, as
	// Redis does. blocked is that command's wait, once it blocked (see
	// block.go), for cancelling it.
	blockWait *pendingReply
	blocked   *blocked
	// coldWait: blockWait is a command's wait for its cold values
	// (cold.go), which ends without the client: the replies before it
	// stay until the rest of the pipeline ran, to leave in one send.
	coldWait bool
	// blockedTimed: blocked waits with a timeout (INFO's
	// clients_in_timeout_table).
	blockedTimed bool
	// heldParked: the connection's input waits for a txn to release the
	// shard (txn.go).
	heldParked bool
	// pauseHeld: a CLIENT PAUSE holds the command pauseArgs (pause_conn.go);
	// once it lets it go, pauseArgs runs before the rest of the input.
	pauseHeld bool
	pauseArgs [][]byte
	pauseCmd  *command
	// multi is the transaction being queued between MULTI and EXEC.
	multi *multiState
	// watches are the keys WATCH watches (watch.go).
	watches []*connWatch
	// subs are its Pub/Sub subscriptions (pubsub.go); nil before the first.
	subs *connSubs
	// track is its CLIENT TRACKING mode (tracking.go); nil while off.
	track *connTracking
	// flushQueued: in worker.pushed, to be sent before the loop waits.
	flushQueued bool
	// softLimitSince is when its pending output last reached the soft
	// output buffer limit (pubsub_limit.go); zero while it is under.
	softLimitSince time.Time

	// recvDone and sentDone are c.onRecv and c.onSent, bound once: a
	// method value passed to the backend escapes, and binding it per call
	// would allocate twice per request.
	recvDone, sentDone, watchDone func(n int, err error)
	watchBuf                      []byte

	// ahead parses the input ahead of parser, for prefetchWindow;
	// aheadKeys holds the keys it found, aheadElemKeys and aheadElems the
	// hash or set keys and elements of the commands that name one,
	// aheadCommand what their commands' names resolved to.
	ahead         resp.Parser
	aheadKeys     [][]byte
	aheadElemKeys [][]byte
	aheadElems    [][]byte
	aheadCommand  lastCommand
	// window is how many commands at rbuf[rpos:] prefetchWindow looked at
	// and have not run yet. It outlives runCommands: a command that parks
	// the connection (a cold value, a block) resumes the input, and the
	// commands behind it were looked at already.
	window int
}

func newConn(w *worker, fd runtime.FD, id int64, addr, laddr string) *conn {
	now := w.loop.Now()
	c := &conn{w: w, fd: fd, id: id, addr: addr, laddr: laddr, created: now, lastActive: now}
	c.out.Proto = 2
	c.client.ID = id
	c.parser.Limits = w.srv.limits()
	c.authed = w.srv.requirePass() == ""
	c.parser.Unauthenticated = !c.authed
	c.recvDone, c.sentDone, c.watchDone = c.onRecv, c.onSent, c.onWatch
	return c
}

// startRecv reads more input, making room in the buffer first.
func (c *conn) startRecv() {
	if c.state == connClosed {
		return
	}
	c.state = connReading
	if c.recvBusy {
		return // the read posted while the connection waited (watch)
	}
	if c.paused {
		return // resumeReading reads once the shard lets readers go
	}
	if c.w.sh != nil && c.w.sh.ReadsPaused() { // nil while the shard loads
		c.paused = true
		c.w.sh.WhenReadable(c.resumeReading)
		return
	}
	if c.rpos == c.rend {
		c.rpos, c.rend = 0, 0
		if cap(c.rbuf) > maxIdleReadBuf || c.rbuf == nil {
			c.rbuf = make([]byte, readBufSize)
		}
	}
	if c.rend == len(c.rbuf) {
		c.makeRoom()
	}
	c.recvBusy = true
	c.w.be.Recv(c.fd, c.rbuf[c.rend:], c.recvDone)
}

// watch keeps a read posted while the connection waits for a blocked
// command, so that a client that hangs up is noticed (its wait is
// cancelled when the connection closes); what it reads runs after the
// wait. The read goes to a buffer of its own (watchBuf), so that rbuf may
// change under it once the wait is over and the read is still posted. It
// ignores the WAL's pause: nothing read here runs now.
func (c *conn) watch() {
	c.state = connReading
	if c.recvBusy {
		return
	}
	if c.watchBuf == nil {
		c.watchBuf = make([]byte, watchBufSize)
	}
	c.recvBusy = true
	c.w.be.Recv(c.fd, c.watchBuf, c.watchDone)
}

// watchBufSize is the size of a waiting connection's read buffer.
const watchBufSize = 4 << 10

// onWatch takes what the watch read: held while the connection still
// waits, run once it does not.
func (c *conn) onWatch(n int, err error) {
	if !c.received(n, err) {
		return
	}
	if c.rpos == c.rend {
		c.rpos, c.rend = 0, 0
	}
	for c.rend+n > len(c.rbuf) {
		c.makeRoom()
	}
	c.rend += copy(c.rbuf[c.rend:], c.watchBuf[:n])
	switch {
	case c.blockWait != nil || c.pauseHeld:
		c.heldInput()
	case c.state == connReading: // the reply went; this read was the next
		c.process()
	default: // the reply is going: afterSend runs it
		c.unprocessed = true
	}
}

// resumeReading reads again after the shard paused its readers.
func (c *conn) resumeReading() {
	c.paused = false
	c.startRecv()
}

// makeRoom moves unparsed input to the front of the buffer, or grows it
// (to at least what the argument in progress still needs).
func (c *conn) makeRoom() {
	if c.rpos > 0 {
		n := copy(c.rbuf, c.rbuf[c.rpos:c.rend])
		c.rpos, c.rend = 0, n
		if c.rend < len(c.rbuf) {
			return
		}
	}
	// Grow at most twofold per step, even when the argument in progress
	// announces more: the announcement is the client's claim, the bytes
	// that arrive are not.
	want := 2 * len(c.rbuf)
	if p := c.parser.Pending(); p > 0 && c.rend+p > len(c.rbuf) && c.rend+p < want {
		want = c.rend + p
	}
	nb := make([]byte, want)
	copy(nb, c.rbuf[:c.rend])
	c.rbuf = nb
}

func (c *conn) onRecv(n int, err error) {
	if !c.received(n, err) {
		return
	}
	c.rend += n
	if c.state == connSending {
		// The read completed while a Pub/Sub message the connection
		// received (push) was being sent: afterSend runs the input.
		c.unprocessed = true
		return
	}
	c.process()
}

// received is the common part of a recv's completion: it reports whether
// n bytes came in (counted), or the connection is closed (an error or the
// client's EOF closes it).
func (c *conn) received(n int, err error) bool {
	c.recvBusy = false
	if c.state == connClosed {
		return false
	}
	if err != nil || n == 0 {
		c.close()
		return false
	}
	c.w.stats.netInputBytes += int64(n)
	c.lastActive = c.w.loop.Now()
	return true
}

// heldInput keeps input that came while the connection waits (for a
// blocked command, or for the send of its reply): it runs once the wait
// is over (afterSend).
func (c *conn) heldInput() {
	c.unprocessed = true
	if c.parser.ExceedsQueryBuffer(c.rend - c.rpos) {
		c.w.srv.log.Warn("closing client that reached max query buffer length",
			"id", c.id, "addr", c.addr, "qbuf", c.rend-c.rpos)
		c.close()
		return
	}
	if (c.blockWait != nil || c.pauseHeld) && c.state == connReading {
		c.watch()
	}
}

// process runs every whole command in the input buffer, then sends the
// replies once none of them waits for another shard.
func (c *conn) process() {
	c.runInput()
	c.maybeFlush() // nothing to do if runInput closed the connection
}

// runInput runs every whole command in the input buffer and moves the
// replies that are ready to c.out. It is the hot path without the network
// (parse, dispatch, execute, encode), which BenchmarkHotPath measures.
// A connection's input may run inside another's command (a txn's release
// resumes parked connections): the command timing of the outer one is
// kept aside meanwhile.
func (c *conn) runInput() {
	w := c.w
	ran, pending := w.ran, w.pending
	w.ran, w.pending = nil, nil
	c.runCommands()
	w.ran, w.pending = ran, pending
}

// runCommands is runInput's loop.
func (c *conn) runCommands() {
	c.state = connRunning
	c.unprocessed = false
	t := monotonicNanos() // the start of the next command (cmd_timing.go)
	if c.pauseArgs != nil {
		args := c.pauseArgs
		c.runPaused()
		if c.pauseArgs == nil && !c.pauseHeld {
			t = c.cmdDone(args, t) // the held command ran: timed from its release
		}
	}
	for c.rpos < c.rend && !c.closeAfterReply && c.blockWait == nil && !c.pauseHeld {
		if c.w.holder != nil {
			c.parkWhileHeld()
			break
		}
		if c.window == 0 && c.authed && c.parser.AtCommandStart() {
			c.window = c.prefetchWindow()
		}
		args, n, err := c.parser.Parse(c.rbuf[c.rpos:c.rend])
		if err != nil {
			var pe *resp.ProtocolError
			if errors.As(err, &pe) {
				c.w.stats.protocolErrors++
				c.replyLocal(func(w *resp.Writer) { w.Error(pe.Msg) })
			}
			c.closeAfterReply = true
			c.rpos = c.rend
			break
		}
		if n == 0 {
			if c.parser.ExceedsQueryBuffer(c.rend - c.rpos) {
				// Redis closes such a client without a reply.
				c.w.srv.log.Warn("closing client that reached max query buffer length",
					"id", c.id, "addr", c.addr, "qbuf", c.rend-c.rpos)
				c.close()
				return
			}
			break
		}
		c.rpos += n
		c.window = max(c.window-1, 0)
		if len(args) > 0 {
			c.dispatch(args)
			t = c.cmdDone(args, t)
		}
	}
	if c.rpos == c.rend {
		c.rpos, c.rend = 0, 0
		c.window = 0
	} else if c.blockWait != nil || c.heldParked || c.pauseHeld {
		c.unprocessed = true
	}
	c.queue.popReady(&c.out)
}

// readAhead turns prefetchWindow on; BenchmarkHotPath turns it off to
// measure what it gains.
var readAhead = true

// prefetchWindow reads ahead of a pipeline: it parses up to
// keyspace.PrefetchMax whole commands at rbuf[rpos:] with a parser of its own
// (the connection's parser is left alone) and has the keyspace read the
// memory their keys (those on this shard) will need, all at once
// (see keyspace.Keyspace.Prefetch), and for the commands that name an
// element of a large hash or set (HGET, SADD, ...), the element's too
// (keyspace.Keyspace.PrefetchElements). It returns how many commands it
// looked at, for the caller to run before it looks again; it stops at an
// inline command, whose arguments the parser may rewrite on the next
// Parse. When the database is too small for the keys to be worth reading
// ahead, the window goes on only if its first command names an element
// of a table large enough.
func (c *conn) prefetchWindow() int {
	if !readAhead || c.w.ks == nil {
		return keyspace.PrefetchMax // look again after as many commands
	}
	ks, db := c.w.ks, c.client.DB
	keysToo := ks.WantsPrefetch(db)
	p := &c.ahead
	p.Limits = c.parser.Limits
	p.Reset()
	keys, ekeys, elems := c.aheadKeys[:0], c.aheadElemKeys[:0], c.aheadElems[:0]
	buf := c.rbuf[c.rpos:c.rend]
	n := 0
	for len(buf) > 0 && buf[0] == '*' && n < keyspace.PrefetchMax && len(keys) < keyspace.PrefetchMax {
		args, m, err := p.Parse(buf)
		if err != nil || m == 0 {
			break
		}
		buf = buf[m:]
		n++
		cmd := c.aheadCommand.lookup(args[0])
		if cmd == nil || cmd.server != nil || len(args) < 2 {
			if !keysToo && n == 1 {
				return keyspace.PrefetchMax
			}
			continue
		}
		if keysToo {
			keys = c.aheadKeysOf(cmd.spec, args, keys)
		}
		if cmd.spec.PrefetchesElement() && len(args) > 2 && c.w.srv.shardOf(args[1]) == c.w.id {
			if n == 1 && !keysToo {
				if len(buf) == 0 || buf[0] != '*' {
					return n // nothing to read ahead for (-P 1): look again at the next command
				}
				if !ks.WantsPrefetchElement(db, args[1]) {
					return keyspace.PrefetchMax
				}
			}
			ekeys, elems = append(ekeys, args[1]), append(elems, args[2])
		} else if !keysToo && n == 1 {
			return keyspace.PrefetchMax
		}
	}
	if len(keys) > 1 {
		ks.Prefetch(db, keys)
		c.w.prefetched += int64(len(keys))
	}
	if len(elems) > 1 {
		ks.PrefetchElements(db, ekeys, elems)
		c.w.prefetched += int64(len(elems))
	}
	// They point into rbuf.
	clear(keys)
	clear(ekeys)
	clear(elems)
	c.aheadKeys, c.aheadElemKeys, c.aheadElems = keys[:0], ekeys[:0], elems[:0]
	return n
}

// aheadKeysOf appends to keys those keys of the command args (of spec)
// that live on this shard, as many as fit in keyspace.PrefetchMax.
func (c *conn) aheadKeysOf(spec *keyspace.CommandSpec, args [][]byte, keys [][]byte) [][]byte {
	if spec.FirstKey <= 0 && spec.MovableKeys == nil {
		return keys
	}
	var posBuf [16]int
	for _, i := range keyPositions(spec, args, posBuf[:0]) {
		if len(keys) == keyspace.PrefetchMax {
			break
		}
		if c.w.srv.shardOf(args[i]) == c.w.id {
			keys = append(keys, args[i])
		}
	}
	return keys
}

// maybeFlush sends what is ready when nothing waits for another shard or
// for the WAL.
func (c *conn) maybeFlush() {
	if c.state != connRunning || c.holding || c.coldWait || !c.queue.empty() && !c.onlyBlockWaits() {
		return
	}
	if c.waitLSN == 0 && !c.barrierMet && len(c.out.Buf) > 0 && c.w.sh != nil {
		c.waitLSN = c.w.sh.ReadBarrier() // what the replies read must be logged
	}
	if c.waitLSN > 0 {
		lsn := c.waitLSN
		c.waitLSN = 0
		c.holding = true
		c.w.sh.WhenDurable(lsn, func() {
			c.holding = false
			c.barrierMet = true // not again for these replies: writes may keep coming
			c.maybeFlush()
		}, func() {
			// The replies queued include a write that can never be made
			// durable. They cannot be taken back, so they are not sent:
			// the client sees its connection close, not an OK.
			c.holding = false
			c.close()
		})
		return
	}
	if len(c.out.Buf) == 0 {
		c.afterSend()
		return
	}
	c.state = connSending
	c.barrierMet = false
	c.sending, c.out.Buf = c.out.Buf, c.sending[:0]
	c.w.stats.netOutputBytes += int64(len(c.sending))
	c.w.be.Send(c.fd, c.sending, c.sentDone)
}

func (c *conn) onSent(n int, err error) {
	if c.state == connClosed {
		return
	}
	if err != nil {
		c.close()
		return
	}
	if cap(c.sending) > maxIdleOutBuf {
		c.sending = nil
	}
	c.afterSend()
}

// afterSend continues the cycle: close when asked, run input that arrived
// with the last read and was not parsed yet, or read more.
func (c *conn) afterSend() {
	switch {
	case c.closeAfterReply:
		c.close()
	case len(c.out.Buf) > 0 || c.waitLSN > 0:
		// A blocked command's reply came during the send.
		c.state = connRunning
		c.maybeFlush()
	case c.blockWait != nil || c.pauseHeld:
		c.watch()
	case c.heldParked:
		c.state = connRunning // resumeHeld runs the input
	case c.unprocessed:
		c.process()
	default:
		// process consumed every whole command, so what is left in the
		// buffer is the start of the next one: read the rest.
		c.startRecv()
	}
}

// onlyBlockWaits reports whether the one reply still queued is the
// blocking command's: the replies before it may leave.
func (c *conn) onlyBlockWaits() bool {
	return c.blockWait != nil && len(c.queue.items)-c.queue.head == 1 && c.queue.items[c.queue.head] == c.blockWait
}

// noteWrite records that a reply of this connection depends on WAL record
// lsn: it leaves once the record is written (and fdatasynced, under
// appendfsync always).
func (c *conn) noteWrite(lsn uint64) {
	if lsn > c.waitLSN {
		c.waitLSN = lsn
	}
}

// close releases the connection. Replies still owed by other shards are
// dropped when they arrive.
func (c *conn) close() {
	if c.state == connClosed {
		return
	}
	c.state = connClosed
	c.unwatchAll()
	c.unsubscribeAll()
	c.disableTracking()
	if b := c.blocked; b != nil {
		c.clearBlocked()
		c.w.toOwner(b, func() { b.owner.cancelBlocked(b) })
	}
	c.w.removeConn(c)
	if c.detached {
		return // the descriptor was closed when its socket was handed over
	}
	c.w.be.Close(c.fd, nil)
}
