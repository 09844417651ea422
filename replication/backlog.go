package replication

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
)

// Backlog is a master's replication stream: one sequence of RESP commands
// for the whole server, counted in bytes from the master's offset 0, of
// which the last Size bytes are kept (Redis's repl-backlog-size) for the
// replicas to read at their own pace. Every shard appends to it on its own
// thread (Feed, under the mutex), so the stream is one interleaving of the
// shards' records in which each shard keeps its order; a replica's sender
// goroutine waits for bytes past its position (Read).
type Backlog struct {
	mu     sync.Mutex
	more   *sync.Cond
	buf    []byte // ring of len(buf) bytes
	off    int64  // bytes ever appended: the master's replication offset
	hist   int64  // bytes held, at most len(buf)
	lastDB int    // the database the stream last selected, -1 for none
	closed bool
	enc    []byte // scratch for a command's encoding
}

// ErrBehind is a replica's position that fell out of the backlog: it must
// sync again from a snapshot.
var ErrBehind = errors.New("replication: the replica fell behind the backlog")

// ErrClosed is Read's error once the backlog is closed.
var ErrClosed = errors.New("replication: the backlog is closed")

// NewBacklog returns an empty backlog of size bytes.
func NewBacklog(size int) *Backlog {
	b := &Backlog{buf: make([]byte, max(size, 16<<10)), lastDB: -1}
	b.more = sync.NewCond(&b.mu)
	return b
}

// Feed appends one command of database db, with a SELECT first when the
// stream's database changes, and wakes the senders.
func (b *Backlog) Feed(db int, args [][]byte) {
	b.mu.Lock()
	b.feedLocked(db, args)
	b.mu.Unlock()
	b.more.Broadcast()
}

// FeedAtomic appends cmds[i] of database dbs[i] as one MULTI/EXEC (or the
// command alone when there is one), with nothing of another shard between.
func (b *Backlog) FeedAtomic(db int, dbs []int, cmds [][][]byte) {
	b.mu.Lock()
	if len(cmds) > 1 {
		b.feedLocked(db, [][]byte{[]byte("MULTI")})
	}
	for i, cmd := range cmds {
		b.feedLocked(dbs[i], cmd)
	}
	if len(cmds) > 1 {
		b.feedLocked(db, [][]byte{[]byte("EXEC")})
	}
	b.mu.Unlock()
	b.more.Broadcast()
}

// feedLocked is Feed under the mutex.
func (b *Backlog) feedLocked(db int, args [][]byte) {
	if db != b.lastDB && db >= 0 {
		b.enc = appendCommand(b.enc[:0], []byte("SELECT"), strconv.AppendInt(nil, int64(db), 10))
		b.appendLocked(b.enc)
		b.lastDB = db
	}
	b.enc = appendCommand(b.enc[:0], args...)
	b.appendLocked(b.enc)
	if cap(b.enc) > 64<<10 {
		b.enc = nil // a big value's encoding is not kept
	}
}

// Ping appends a PING (repl-ping-replica-period), database-less.
func (b *Backlog) Ping() {
	b.mu.Lock()
	b.appendLocked(appendCommand(nil, []byte("PING")))
	b.mu.Unlock()
	b.more.Broadcast()
}

// appendLocked copies p into the ring.
func (b *Backlog) appendLocked(p []byte) {
	size := int64(len(b.buf))
	for len(p) > 0 {
		at := b.off % size
		n := copy(b.buf[at:], p)
		p = p[n:]
		b.off += int64(n)
		b.hist = min(b.hist+int64(n), size)
	}
}

// Start is where a new replica's stream begins: the current offset. It
// forgets the stream's database, so that the next command selects its own
// (the replica's snapshot leaves it in no particular one).
func (b *Backlog) Start() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lastDB = -1
	return b.off
}

// Reset drops what the backlog holds (its stream has a gap from here on:
// no replica may continue from before it) and keeps the offset.
func (b *Backlog) Reset() {
	b.mu.Lock()
	b.hist = 0
	b.lastDB = -1
	b.mu.Unlock()
}

// Stats returns the master offset, the offset of the first byte held
// (Redis's repl_backlog_first_byte_offset: off-hist+1) and how many bytes
// are held.
func (b *Backlog) Stats() (off, first, hist int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.off, b.off - b.hist + 1, b.hist
}

// Holds reports whether the stream from pos on is held: a replica at pos
// may continue from it (a partial resync).
func (b *Backlog) Holds(pos int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return pos >= b.off-b.hist && pos <= b.off
}

// Offset is the master's replication offset.
func (b *Backlog) Offset() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.off
}

// Read waits until the stream has bytes past pos and appends up to max of
// them to dst. It fails with ErrBehind when pos is no longer held, and
// with ErrClosed once Close was called or quit is set (then Wake).
func (b *Backlog) Read(dst []byte, pos int64, max int, quit *atomic.Bool) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for pos == b.off && !b.closed && !quit.Load() {
		b.more.Wait()
	}
	if b.closed || quit.Load() {
		return dst, ErrClosed
	}
	if pos < b.off-b.hist || pos > b.off {
		return dst, ErrBehind
	}
	size := int64(len(b.buf))
	n := min(b.off-pos, int64(max))
	for n > 0 {
		at := pos % size
		m := min(n, size-at)
		dst = append(dst, b.buf[at:at+m]...)
		pos += m
		n -= m
	}
	return dst, nil
}

// Wake wakes every Read, so that one whose quit was set returns.
func (b *Backlog) Wake() {
	b.mu.Lock() // a Read between its check of quit and its Wait is not missed
	b.more.Broadcast()
	b.mu.Unlock()
}

// Close wakes every Read for good.
func (b *Backlog) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.more.Broadcast()
}
