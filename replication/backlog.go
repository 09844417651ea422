package replication

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/moond-db/moond/resp"
)

// Backlog is a master's replication stream: one sequence of RESP commands
// for the whole server, counted in bytes from the master's offset 0, of
// which the last Size bytes are kept (Redis's repl-backlog-size; the ring
// grows to that size as the stream does) for the replicas to read at
// their own pace. Every shard feeds it on its own
// thread (Add, under the mutex), and the assembler (assemble.go) makes the
// stream one interleaving of the shards' units in which each shard keeps
// its order and each txn over several shards is one MULTI/EXEC; a
// replica's sender goroutine waits for bytes past its position (Read).
type Backlog struct {
	mu     sync.Mutex
	more   *sync.Cond
	buf    []byte // ring of len(buf) bytes, at most limit
	limit  int    // the size the ring may grow to
	off    int64  // bytes ever appended: the master's replication offset
	hist   int64  // bytes held, at most len(buf)
	lastDB int    // the database the stream last selected, -1 for none
	closed bool
	enc    []byte // scratch for a command's encoding
	asm    *assembler
	// epoch counts Resets: a unit fed for an older epoch (a shard that
	// loaded its feed before the feeds were unset) is dropped, so that no
	// part of a txn cut by the gap parks for good.
	epoch uint64
	// cursors are the attached replicas' places (cursor.go), each once:
	// the ring spills to them before it overwrites what they have not
	// read. A slice, not a map: every append walks it, and it holds one
	// cursor per replica.
	cursors []*Cursor
}

// MinSize is the smallest ring (Redis's CONFIG_REPL_BACKLOG_MIN_SIZE).
const MinSize = 16 << 10

// ErrBehind is a replica's position that fell out of the backlog: it must
// sync again from a snapshot.
var ErrBehind = errors.New("replication: the replica fell behind the backlog")

// ErrClosed is Read's error once the backlog is closed.
var ErrClosed = errors.New("replication: the backlog is closed")

// initialRing is the ring's size until the stream outgrows it.
const initialRing = 64 << 10

// NewBacklog returns an empty backlog of size bytes (at least MinSize).
func NewBacklog(size int) *Backlog {
	size = max(size, MinSize)
	b := &Backlog{buf: make([]byte, min(size, initialRing)), limit: size, lastDB: -1}
	b.more = sync.NewCond(&b.mu)
	b.asm = newAssembler(b.emitLocked)
	return b
}

// NewBacklogAt returns an empty backlog of size bytes whose stream
// continues at offset off: a promoted replica's, whose history goes on
// from where its link had got to (PSYNC2).
func NewBacklogAt(size int, off int64) *Backlog {
	b := NewBacklog(size)
	b.off = off
	return b
}

// Epoch is the backlog's epoch, for a feed set now (Add).
func (b *Backlog) Epoch() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.epoch
}

// Add takes a shard's unit (a record's commands, or its part of a txn)
// for the stream, as a feed of epoch set it; a unit of an older epoch is
// dropped. An error is a unit the shards' invariants rule out (a part its
// own END does not name, a part twice): it is dropped too.
func (b *Backlog) Add(epoch uint64, u *Unit) error {
	err := b.AddQuiet(epoch, u)
	b.Notify()
	return err
}

// AddQuiet is Add without waking the readers: the caller calls Notify
// before it waits for anything (a shard, once per loop iteration), so
// that a pipeline of writes costs the readers one wakeup, not one each.
// The bytes are in the stream, and in Offset, when it returns.
func (b *Backlog) AddQuiet(epoch uint64, u *Unit) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if epoch != b.epoch {
		return nil
	}
	return b.asm.add(u)
}

// Notify wakes the readers waiting for bytes (after AddQuiet). A reader
// checks for bytes and starts waiting under the mutex, and AddQuiet
// appends under it, so no reader sleeps through bytes added before
// Notify.
func (b *Backlog) Notify() { b.more.Broadcast() }

// TxnClosed says that txn txid's coordinator closed it: every part of it
// a shard fed is in, and one that is not never comes (it is empty).
func (b *Backlog) TxnClosed(txid uint64) {
	b.mu.Lock()
	b.asm.close(txid)
	b.mu.Unlock()
	b.more.Broadcast()
}

// Parked is how many units wait in the assembler.
func (b *Backlog) Parked() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.asm.parkedLen()
}

// Feed appends one command of database db, with a SELECT first when the
// stream's database changes, and wakes the senders.
func (b *Backlog) Feed(db int, args [][]byte) {
	b.mu.Lock()
	b.feedLocked(db, args)
	b.mu.Unlock()
	b.more.Broadcast()
}

// emitLocked appends cmds[i] of database dbs[i] as one MULTI/EXEC (or the
// command alone when there is one), under the mutex.
func (b *Backlog) emitLocked(dbs []int, cmds [][][]byte) {
	if len(cmds) > 1 {
		b.feedLocked(dbs[0], [][]byte{[]byte("MULTI")})
	}
	for i, cmd := range cmds {
		b.feedLocked(dbs[i], cmd)
	}
	if len(cmds) > 1 {
		b.feedLocked(dbs[0], [][]byte{[]byte("EXEC")})
	}
}

// feedLocked is Feed under the mutex.
func (b *Backlog) feedLocked(db int, args [][]byte) {
	if db != b.lastDB && db >= 0 {
		b.enc = resp.AppendCommand(b.enc[:0], []byte("SELECT"), strconv.AppendInt(nil, int64(db), 10))
		b.appendLocked(b.enc)
		b.lastDB = db
	}
	b.enc = resp.AppendCommand(b.enc[:0], args...)
	b.appendLocked(b.enc)
	if cap(b.enc) > 64<<10 {
		b.enc = nil // a big value's encoding is not kept
	}
}

// Ping appends a PING (repl-ping-replica-period), database-less.
func (b *Backlog) Ping() {
	b.mu.Lock()
	b.appendLocked(resp.AppendCommand(nil, []byte("PING")))
	b.mu.Unlock()
	b.more.Broadcast()
}

// appendLocked copies p into the ring, grown first when p would overwrite
// bytes a larger ring may keep.
func (b *Backlog) appendLocked(p []byte) {
	if need := b.hist + int64(len(p)); need > int64(len(b.buf)) && len(b.buf) < b.limit {
		b.relayoutLocked(int(min(int64(b.limit), max(need, 2*int64(len(b.buf))))))
	}
	size := int64(len(b.buf))
	if len(b.cursors) > 0 {
		b.spillLocked(b.off + int64(len(p)) - size)
	}
	for len(p) > 0 {
		at := b.off % size
		n := copy(b.buf[at:], p)
		p = p[n:]
		b.off += int64(n)
		b.hist = min(b.hist+int64(n), size)
	}
}

// Start is where a new replica's stream begins: the current offset. It
// is called while a txn holds every shard, when no other txn is open, so
// every part fed so far is in and whatever is parked is emitted first (it
// is in the snapshot, which must meet the stream exactly). It forgets the
// stream's database, so that the next command selects its own (the
// replica's snapshot leaves it in no particular one).
func (b *Backlog) Start() int64 {
	b.mu.Lock()
	flushed := b.asm.flush()
	b.lastDB = -1
	off := b.off
	b.mu.Unlock()
	if flushed {
		b.more.Broadcast()
	}
	return off
}

// Reset drops what the backlog holds (its stream has a gap from here on:
// no replica may continue from before it), parked units included, and
// keeps the offset; the feeds of the epoch that ends are ignored from now
// on.
func (b *Backlog) Reset() {
	b.mu.Lock()
	b.hist = 0
	b.lastDB = -1
	b.cutCursorsLocked()
	b.asm.reset()
	b.epoch++
	b.mu.Unlock()
}

// Size is the size the ring keeps (repl-backlog-size).
func (b *Backlog) Size() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// Resize makes the backlog keep size bytes (at least MinSize): a smaller
// one keeps the last bytes it held that fit, a larger one grows as the
// stream does (as Redis 7.0 trims its backlog, or lets it grow).
func (b *Backlog) Resize(size int) {
	size = max(size, MinSize)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.limit = size
	if len(b.buf) > size {
		b.relayoutLocked(size)
	}
}

// relayoutLocked moves the ring into one of size bytes, keeping the last
// bytes held that fit, each at its offset's place.
func (b *Backlog) relayoutLocked(size int) {
	keep := min(b.hist, int64(size))
	if len(b.cursors) > 0 {
		b.spillLocked(b.off - keep)
	}
	old := b.copyLocked(nil, b.off-keep, keep)
	b.buf = make([]byte, size)
	b.off -= keep
	b.hist = 0
	for len(old) > 0 { // appendLocked without the growth: it fits
		at := b.off % int64(size)
		n := copy(b.buf[at:], old)
		old = old[n:]
		b.off += int64(n)
		b.hist += int64(n)
	}
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
	return b.copyLocked(dst, pos, min(b.off-pos, int64(max))), nil
}

// copyLocked appends the n bytes of the stream from pos on, which the ring
// holds, to dst.
func (b *Backlog) copyLocked(dst []byte, pos, n int64) []byte {
	size := int64(len(b.buf))
	for n > 0 {
		at := pos % size
		m := min(n, size-at)
		dst = append(dst, b.buf[at:at+m]...)
		pos += m
		n -= m
	}
	return dst
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

// Position is the master's replication offset and the database of the
// stream's last SELECT (0 when the stream selected none since it started).
func (b *Backlog) Position() (off int64, db int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.off, max(b.lastDB, 0)
}
