package replication

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/moond-db/moond/resp"
)

// applier runs the master's commands through a connection to the local
// server (the "master client"), pipelined: the link writes commands as
// they come and a goroutine reads the replies, one per command, in order.
// A reply comes back only once the local WAL holds the command's writes
// (the acknowledgement rule), so the offset of the last command answered
// is the offset the replica may acknowledge.
type applier struct {
	conn  net.Conn
	w     *bufio.Writer
	log   *slog.Logger
	items chan item
	acked atomic.Int64 // the stream offset the local server holds
	errs  atomic.Int64 // error replies, for the log and the tests
	dead  chan struct{}
	err   error // why dead closed; read after it closed
}

// item is what the reply reader does with the reply to one command.
type item struct {
	off  int64         // the offset once this command ran; -1: no offset (the snapshot's)
	done chan struct{} // closed when the reply came; may be nil
	what string        // the command's name, for the log of an error reply
	// then runs when the reply came, before acked moves past this command
	// (REPLCONF GETACK's answer covers what came before it).
	then func()
}

// maxInFlight bounds the commands written and not yet answered: past it
// the link waits, and the master's socket backs up.
const maxInFlight = 1 << 14

func newApplier(conn net.Conn, log *slog.Logger, off int64) *applier {
	a := &applier{conn: conn, w: bufio.NewWriterSize(conn, 64<<10), log: log,
		items: make(chan item, maxInFlight), dead: make(chan struct{})}
	a.acked.Store(off)
	go a.readReplies()
	return a
}

// send writes one command (not flushed) and queues what its reply does.
func (a *applier) send(raw []byte, it item) error {
	select {
	case a.items <- it:
	default: // as many commands in flight as allowed: the ones buffered must go before waiting
		if err := a.flush(); err != nil {
			return err
		}
		select {
		case a.items <- it:
		case <-a.dead:
			return a.err
		}
	}
	if _, err := a.w.Write(raw); err != nil {
		return fmt.Errorf("replication: writing to the local server: %w", err)
	}
	return nil
}

// flush sends what send wrote.
func (a *applier) flush() error {
	if err := a.w.Flush(); err != nil {
		return fmt.Errorf("replication: writing to the local server: %w", err)
	}
	return nil
}

// readReplies reads one reply per queued item until the connection ends.
func (a *applier) readReplies() {
	r := bufio.NewReaderSize(a.conn, 64<<10)
	for it := range a.items {
		msg, err := readReply(r)
		if err != nil {
			a.err = fmt.Errorf("replication: reading the local server's reply: %w", err)
			close(a.dead)
			return
		}
		if msg != "" {
			if refusedWrite(msg) {
				a.refuse(it, msg)
				return
			}
			if n := a.errs.Add(1); n <= 10 || n&(n-1) == 0 { // the first ten, then fewer
				a.log.Warn("replica: a command from the master failed here", "cmd", it.what, "err", msg, "failures", n)
			}
		}
		if it.then != nil {
			it.then()
		}
		if it.off >= 0 {
			a.acked.Store(it.off)
		}
		if it.done != nil {
			close(it.done)
		}
	}
}

// refusedWrite reports whether an error reply says the local server
// refused to log a write (MISCONF: its WAL cannot be written, for a while
// or for good), so that the write is not applied here.
func refusedWrite(msg string) bool { return strings.HasPrefix(msg, "MISCONF ") }

// refuse ends the applier at a write the local server refused: the data
// here now lacks a command of the stream, so the offset acknowledged stays
// before it (a WAIT on the master never counts this replica for it), the
// commands after it are not applied on top of the gap (the local
// connection closes), and the link's next sync is a full one
// (Link.run), which succeeds once the local server takes writes again.
// Redis's replica panics here unless replica-ignore-disk-write-errors.
func (a *applier) refuse(it item, msg string) {
	a.errs.Add(1)
	a.err = fmt.Errorf("replication: the local server refused a write of the master's stream (%s), so the data here stops at offset %d: %s",
		it.what, a.acked.Load(), msg)
	a.log.Error("replica: a write from the master could not be logged here; a full sync follows", "cmd", it.what, "err", msg,
		"offset", a.acked.Load())
	close(a.dead)
	a.conn.Close()
}

// barrier sends a PING and returns a channel closed once it is answered:
// everything sent before it is applied and logged.
func (a *applier) barrier(off int64) (<-chan struct{}, error) {
	done := make(chan struct{})
	if err := a.send(pingCmd, item{off: off, done: done, what: "ping"}); err != nil {
		return nil, err
	}
	return done, a.flush()
}

var pingCmd = resp.AppendCommand(nil, []byte("PING"))

// drain waits (at most timeout) for every command sent to be answered,
// then closes the connection. Only the goroutine that sends may call it,
// once, after its last send.
func (a *applier) drain(timeout time.Duration) {
	if done, err := a.barrier(-1); err == nil {
		select {
		case <-done:
		case <-a.dead:
		case <-time.After(timeout):
			a.log.Warn("replica: the local server did not answer the master's last commands in time")
		}
	}
	a.conn.Close()
	close(a.items) // ends readReplies if it waits for an item
}
