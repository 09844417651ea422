package server

import (
	"github.com/moond-db/moond/resp"
)

// pendingReply is the reply of one command that cannot go into the output
// yet: it waits for other shards, or it stands behind a reply that does.
// A command split across shards has one part per shard; merge turns the
// parts into the command's reply once the last one arrived.
type pendingReply struct {
	data  []byte
	parts [][]byte
	left  int
	merge func(parts [][]byte, w *resp.Writer)
	proto int
	// onReady, when set, runs once the reply is complete (EXEC waits so
	// for the replies of the server commands it captured).
	onReady func()
	// timing, when set, times the command from its start to this reply
	// (cmd_timing.go).
	timing *pendingTiming
	// drop: CLIENT REPLY suppresses it; it leaves the queue unsent.
	drop bool
}

func (p *pendingReply) ready() bool { return p.left == 0 }

// fill stores one part's reply; with the last part the reply is complete.
func (p *pendingReply) fill(part int, b []byte) {
	if p.merge == nil {
		p.data = b
	} else {
		p.parts[part] = b
	}
	p.left--
	if p.left == 0 && p.merge != nil {
		w := resp.Writer{Proto: p.proto}
		p.merge(p.parts, &w)
		p.data, p.parts = w.Buf, nil
	}
	if p.left == 0 && p.timing != nil {
		p.timing.done()
		p.timing = nil
	}
	if p.left == 0 && p.onReady != nil {
		f := p.onReady
		p.onReady = nil
		f()
	}
}

// replyQueue holds pending replies in request order.
type replyQueue struct {
	items []*pendingReply
	head  int
}

func (q *replyQueue) empty() bool { return q.head == len(q.items) }

func (q *replyQueue) push(p *pendingReply) { q.items = append(q.items, p) }

// popReady moves every ready reply at the front of the queue into out.
func (q *replyQueue) popReady(out *resp.Writer) {
	for q.head < len(q.items) && q.items[q.head].ready() {
		if !q.items[q.head].drop {
			out.Raw(q.items[q.head].data)
		}
		q.items[q.head] = nil
		q.head++
	}
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
}

// replyLocal writes a reply produced on this shard now: straight into the
// output when nothing is queued before it, else as a ready queue entry.
func (c *conn) replyLocal(f func(w *resp.Writer)) {
	if c.queue.empty() {
		f(&c.out)
		return
	}
	w := &c.w.scratch
	w.Reset()
	w.Proto = c.out.Proto
	f(w)
	c.queue.push(&pendingReply{data: append([]byte(nil), w.Buf...)})
}

// newPending queues a reply that will be filled by parts from shards.
func (c *conn) newPending(parts int, merge func([][]byte, *resp.Writer)) *pendingReply {
	p := &pendingReply{left: parts, merge: merge, proto: c.out.Proto}
	if merge != nil {
		p.parts = make([][]byte, parts)
	}
	c.queue.push(p)
	c.w.pending = p
	return p
}

// delivered is called when parts of this connection's pending replies came
// back: move what is ready to the output, and send once nothing waits.
func (c *conn) delivered() {
	if c.state == connClosed {
		return
	}
	c.queue.popReady(&c.out)
	if c.state == connReading && c.blockWait == nil && (len(c.out.Buf) > 0 || c.unprocessed) {
		// A blocking command's reply, while the read its wait posted
		// (watch) is still in flight: the reply goes now, the read
		// completes later. (While sending, afterSend sends it.) A reply
		// CLIENT REPLY dropped leaves nothing to send: the input that
		// came behind it runs.
		c.state = connRunning
	}
	c.maybeFlush()
}
