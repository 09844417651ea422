package runtime

import (
	"os"
	"sync"
)

// poolSync is how the pool backend fsyncs a file (data false) or
// fdatasyncs it (data true). It is a variable only so that a test can make
// a sync block until it says so, as a failing disk does and no real file
// does on demand; nothing else assigns it.
var poolSync = func(f *os.File, data bool) error {
	if data {
		return fdatasync(f)
	}
	return f.Sync()
}

// syncLane runs one file's standalone fsyncs and fdatasyncs, in the order
// they were asked for, one at a time, on a goroutine that lives while the
// lane has work. The shared file workers never run them: a sync that does
// not return holds up the later syncs of its own file, and nothing else
// (on the shared workers, four hung heap fsyncs took every worker, and the
// WAL's writes waited behind them). The threads syncs take stay bounded by
// the files open: one lane per file, one sync running in it at most.
//
// Invariant: running is true exactly while a goroutine owns the lane; that
// goroutine empties items before it clears running, so an item pushed is
// always taken.
type syncLane struct {
	mu      sync.Mutex
	items   []workItem
	running bool
}

// queueSync runs do in the lane of the file e (made on first use), and
// delivers the completion it returns. Loop thread.
func (p *poolBackend) queueSync(e *poolEntry, cancel func(), do func(op *poolOp) func()) {
	if e.lane == nil {
		e.lane = &syncLane{}
	}
	op := p.begin(cancel)
	l := e.lane
	l.mu.Lock()
	l.items = append(l.items, workItem{op: op, do: do})
	start := !l.running
	l.running = true
	l.mu.Unlock()
	if start {
		go p.runLane(l)
	}
}

// runLane runs the lane's items until it is empty.
func (p *poolBackend) runLane(l *syncLane) {
	for {
		l.mu.Lock()
		if len(l.items) == 0 {
			l.running = false
			l.mu.Unlock()
			return
		}
		it := l.items[0]
		l.items[0] = workItem{}
		l.items = l.items[1:]
		l.mu.Unlock()
		p.deliver(it.op, it.do(it.op))
	}
}
