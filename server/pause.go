package server

import (
	"math"
	"strings"
	"sync"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/runtime"
)

// CLIENT PAUSE and CLIENT UNPAUSE, as Redis 7.0 has them: while a pause
// is on, the connections of every shard hold (do not refuse) the commands
// of its kind, and run them in order once it ends by its timeout or
// UNPAUSE. WRITE holds the commands that write or may replicate (PUBLISH,
// PFCOUNT, an EXEC that queued one of those); ALL holds every command.
// Both stop active expiry and eviction; a read of an expired key finds
// it missing but leaves it in place (keyspace.SetExpiryPaused).
//
// The server holds the pause as decided (Server.pause, under its mutex);
// every worker holds a copy (worker.pause) that its connections consult,
// updated on the worker's own thread. CLIENT PAUSE answers once every
// worker has its copy, so nothing of the held kind starts anywhere after
// the OK. Copies carry a generation: a worker ignores an older state
// that comes after a newer one.

// pauseKind is what a pause holds. The order matters: a stronger pause
// wins over a weaker one.
type pauseKind uint8

const (
	pauseOff pauseKind = iota
	pauseWrite
	pauseAll
)

// pauseState is a pause: its kind, its end, and the generation that
// orders the server's decisions.
type pauseState struct {
	kind pauseKind
	end  time.Time
	gen  uint64
}

// serverPause is the pause the server decided.
type serverPause struct {
	mu    sync.Mutex
	state pauseState
}

// pause merges a new pause into the current one as Redis does: the
// stronger kind and the later end win, each on its own; a pause that has
// ended is replaced.
func (p *serverPause) pause(kind pauseKind, end, now time.Time) pauseState {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.state
	if cur.kind == pauseOff || !cur.end.After(now) {
		cur.kind, cur.end = kind, end
	} else {
		cur.kind = max(cur.kind, kind)
		if end.After(cur.end) {
			cur.end = end
		}
	}
	cur.gen++
	p.state = cur
	return cur
}

// unpause ends the pause.
func (p *serverPause) unpause() pauseState {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state = pauseState{gen: p.state.gen + 1}
	return p.state
}

// workerPause is a worker's copy of the pause and the connections it
// holds, in the order they were held.
type workerPause struct {
	pauseState
	timer *runtime.Timer
	held  []*conn
}

// clientPause is CLIENT PAUSE timeout [WRITE|ALL].
func clientPause(c *conn, args [][]byte) {
	if len(args) > 4 {
		c.errorReply("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try CLIENT HELP.")
		return
	}
	kind := pauseAll
	if len(args) == 4 {
		switch strings.ToLower(string(args[3])) {
		case "write":
			kind = pauseWrite
		case "all":
		default:
			c.errorReply("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	}
	ms, ok := keyspace.ParseInt(args[2])
	if !ok {
		c.errorReply("ERR timeout is not an integer or out of range")
		return
	}
	if ms < 0 {
		c.errorReply("ERR timeout is negative")
		return
	}
	// Redis accepts any timeout (its end overflows past LLONG_MAX); here
	// one longer than a Duration holds (292 years) is as long as that.
	d := time.Duration(math.MaxInt64)
	if ms < int64(d/time.Millisecond) {
		d = time.Duration(ms) * time.Millisecond
	}
	now := time.Now()
	st := c.w.srv.pause.pause(kind, now.Add(d), now)
	c.spreadPause(st)
}

// clientUnpause is CLIENT UNPAUSE.
func clientUnpause(c *conn) {
	c.spreadPause(c.w.srv.pause.unpause())
}

// spreadPause gives every worker the pause st and answers OK once all
// have it.
func (c *conn) spreadPause(st pauseState) {
	c.fanoutCollect(func(w *worker, _ int) { w.setPause(st) },
		func(w *resp.Writer) { w.SimpleString("OK") })
}

// setPause takes the server's pause st on w's thread, unless w already
// has a newer one: it holds or releases, and arms the end's timer.
func (w *worker) setPause(st pauseState) {
	p := &w.pause
	if st.gen <= p.gen {
		return
	}
	p.pauseState = st
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if st.kind == pauseOff {
		w.endPause()
		return
	}
	if w.ks != nil {
		w.ks.SetExpiryPaused(true)
	}
	p.timer = w.loop.AfterFunc(time.Until(st.end), w.pauseTimedOut)
	if st.kind == pauseWrite {
		w.releaseHeld() // a pause ALL weakened to WRITE lets reads go
	}
}

// pauseTimedOut ends the pause when its end has come; a timer that fired
// early (the loop's clock is coarse) waits again for the rest.
func (w *worker) pauseTimedOut() {
	w.pause.timer = nil
	if w.pause.kind == pauseOff {
		return
	}
	if left := time.Until(w.pause.end); left > 0 {
		w.pause.timer = w.loop.AfterFunc(left, w.pauseTimedOut)
		return
	}
	w.pause.kind = pauseOff
	w.endPause()
}

// endPause lets expiry and eviction go again and runs the held
// connections' commands, in the order they were held.
func (w *worker) endPause() {
	if w.ks != nil {
		w.ks.SetExpiryPaused(false)
	}
	w.releaseHeld()
	if w.mayEvict() {
		w.enforceMemory()
	}
}

// releaseHeld resumes every held connection whose command the pause no
// longer holds; the others stay held, in their order.
func (w *worker) releaseHeld() {
	held := w.pause.held
	w.pause.held = nil
	for _, c := range held {
		if c.state == connClosed || c.pauseArgs == nil {
			continue
		}
		if w.pause.kind != pauseOff && c.pauseHolds(c.pauseCmd, c.pauseArgs) {
			w.pause.held = append(w.pause.held, c)
			continue
		}
		c.resumePaused()
	}
}

// paused reports whether a pause is on on this worker (expiry and
// eviction wait).
func (w *worker) paused() bool { return w.pause.kind != pauseOff }

// heldClients is how many of w's connections a pause holds (INFO's
// blocked_clients counts them, as Redis does).
func (w *worker) heldClients() int {
	n := 0
	for _, c := range w.pause.held {
		if c.state != connClosed && c.pauseArgs != nil {
			n++
		}
	}
	return n
}
