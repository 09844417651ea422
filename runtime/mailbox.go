package runtime

import (
	"errors"
	"sync"
)

// ErrMailboxFull is returned by Post when the target loop's mailbox holds
// MailboxSize messages that it has not yet run: the sender must back off,
// retry later, or use PostWait.
var ErrMailboxFull = errors.New("runtime: mailbox full")

// ErrStopped is returned by Post and friends once the loop has begun to stop.
var ErrStopped = errors.New("runtime: loop stopped")

// mailbox is a bounded multi-producer, single-consumer FIFO of functions.
//
// Invariants:
//   - len(q) <= size at all times; a producer that finds it full gets
//     ErrMailboxFull and the queue is unchanged (back-pressure, bounded memory).
//   - Messages run in the order their Posts took the lock, so the messages of
//     any one producer run in the order it posted them.
//   - Once closed, nothing more is accepted; what was accepted before still
//     runs (the loop drains it on the way out).
//   - spare is touched only by the consumer, outside the lock.
type mailbox struct {
	mu     sync.Mutex
	q      []func()
	size   int
	closed bool
	// space is closed (and replaced) when the consumer takes messages out
	// while a producer found the mailbox full (waiters), waking producers
	// blocked in PostWait.
	space   chan struct{}
	waiters bool

	spare []func()
}

func newMailbox(size int) *mailbox {
	return &mailbox{
		q:     make([]func(), 0, min(size, 1024)),
		size:  size,
		space: make(chan struct{}),
	}
}

// put appends f. When the mailbox is full it returns ErrMailboxFull and a
// channel that is closed once room may have appeared (or the mailbox closed).
func (m *mailbox) put(f func()) (<-chan struct{}, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrStopped
	}
	if len(m.q) >= m.size {
		m.waiters = true
		return m.space, ErrMailboxFull
	}
	m.q = append(m.q, f)
	return nil, nil
}

// take removes every queued message and returns them in order. Only the
// consumer calls it; the returned slice is handed back with recycle.
func (m *mailbox) take() []func() {
	m.mu.Lock()
	batch := m.q
	if len(batch) == 0 {
		m.mu.Unlock()
		return nil
	}
	m.q = m.spare[:0]
	m.spare = nil
	var space chan struct{}
	if m.waiters {
		space, m.space, m.waiters = m.space, make(chan struct{}), false
	}
	m.mu.Unlock()
	if space != nil {
		close(space)
	}
	return batch
}

// recycle returns a batch from take for reuse, dropping its references so
// the functions (and what they captured) can be collected.
func (m *mailbox) recycle(batch []func()) {
	clear(batch)
	m.spare = batch[:0]
}

// pending reports whether any message is queued.
func (m *mailbox) pending() bool {
	m.mu.Lock()
	n := len(m.q)
	m.mu.Unlock()
	return n > 0
}

// close refuses every later put and wakes producers blocked on space.
func (m *mailbox) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.closed = true
	close(m.space)
	m.space = make(chan struct{})
}
