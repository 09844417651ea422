package server

import (
	"bufio"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/moond-db/moond/replication"
)

// A replica's goroutines (master.go): serve sends +FULLRESYNC, the
// snapshot (master_snapshot.go), then the backlog from the
// snapshot's offset on; readAcks reads what the replica sends (REPLCONF
// ACK). Either one's error disconnects the replica with a log line.

// streamChunk is the most a write to a replica carries.
const streamChunk = 256 << 10

// serve is the sender goroutine of r, whose stream starts at start: the
// pump fills r's buffer meanwhile (master_outbuf.go).
func (r *replica) serve(start int64, snap *snapshotStream) {
	go r.pump()
	err := r.sendSnapshot(start, snap)
	if err == nil {
		r.srv.log.Info("synchronization with replica succeeded", "addr", r.addr, "offset", start)
		err = r.follow(start)
	}
	r.end(err)
}

// resume is the sender goroutine of r after a partial resync: +CONTINUE,
// then the stream from pos, the offset r has.
func (r *replica) resume(pos int64) {
	go r.pump()
	err := r.write([]byte("+CONTINUE " + r.srv.masterReplID() + "\r\n"))
	if err == nil {
		err = r.follow(pos)
	}
	r.end(err)
}

// follow marks r online at pos, starts reading its ACKs and sends it its
// buffer until it goes. After a diskless snapshot the stream waits for
// the replica's first ACK, sent once it loaded, as Redis's master does
// (repl_start_cmd_stream_on_ack): a Redis replica finds the snapshot's
// end mark only at the end of what it read, so no byte may follow it
// before then.
func (r *replica) follow(pos int64) error {
	r.ackOff.Store(pos)
	r.ackTime.Store(time.Now().Unix())
	if r.eof {
		go r.readAcks()
		select {
		case <-r.firstAck:
		case <-r.gone:
			return errors.New("disconnected while it loaded the snapshot")
		}
	}
	r.online.Store(true)
	r.srv.refreshGoodReplicas()
	if !r.eof {
		go r.readAcks()
	}
	return r.drain()
}

// end disconnects r after its sender's error, with a log line unless it
// was stopped.
func (r *replica) end(err error) {
	if !r.quit.Load() {
		r.srv.log.Warn("replica disconnected", "addr", r.addr, "err", err)
	}
	r.stop()
}

// skipNewlines drops the bare newlines a Redis replica sends while it
// loads the snapshot (its keepalive) before the next command.
func skipNewlines(br *bufio.Reader) error {
	for {
		b, err := br.Peek(1)
		if err != nil {
			return err
		}
		if b[0] != '\n' && b[0] != '\r' {
			return nil
		}
		_, _ = br.Discard(1)
	}
}

// write sends b within repl-timeout.
func (r *replica) write(b []byte) error {
	if err := r.conn.SetWriteDeadline(time.Now().Add(r.srv.replTimeout())); err != nil {
		return err
	}
	_, err := r.conn.Write(b)
	return err
}

// readAcks reads the replica's commands: REPLCONF ACK <offset> records
// how far it got; bare newlines (a loading replica's keepalive) and
// anything else are ignored, as a master ignores a
// replica's replies. A read error or a malformed command disconnects it.
func (r *replica) readAcks() {
	br := bufio.NewReader(r.conn)
	for {
		// A replica ACKs once a second: silence for repl-timeout is a
		// replica gone.
		if err := r.conn.SetReadDeadline(time.Now().Add(r.srv.replTimeout())); err != nil {
			r.stop()
			return
		}
		err := skipNewlines(br)
		var args [][]byte
		if err == nil {
			args, err = replication.ReadCommand(br)
		}
		if err != nil {
			if !r.quit.Load() && !errors.Is(err, net.ErrClosed) {
				r.srv.log.Warn("replica disconnected", "addr", r.addr, "err", err)
			}
			r.stop()
			return
		}
		if len(args) >= 3 && strings.EqualFold(string(args[0]), "replconf") && strings.EqualFold(string(args[1]), "ack") {
			off, err := strconv.ParseInt(string(args[2]), 10, 64)
			if err != nil {
				r.srv.log.Warn("replica sent a bad ACK: disconnected", "addr", r.addr, "ack", string(args[2]))
				r.stop()
				return
			}
			r.ackOff.Store(off)
			r.ackTime.Store(time.Now().Unix())
			r.ackOnce.Do(func() { close(r.firstAck) })
			r.srv.master.noteAck()
		}
	}
}
