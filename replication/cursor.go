package replication

import (
	"slices"
	"sync/atomic"
)

// A Cursor is an attached replica's place in the stream. While it is
// attached the backlog never loses a byte it has not read: before the ring
// overwrites bytes a cursor has not taken (a replica's goroutine starved
// for longer than the ring's size of writes, or a ring smaller than a
// burst), the backlog copies them to the cursor's spill, which its next
// Reads return first. So repl-backlog-size bounds only what a replica that
// comes back may continue from, as in Redis, where an attached replica
// has its own output buffer; the copying costs nothing while every cursor
// keeps up.
type Cursor struct {
	pos    int64  // the stream's offset of the next byte to take from the ring
	spill  []byte // the bytes before pos the ring overwrote untaken
	behind bool   // the spill passed MaxSpill: the replica must sync again
}

// MaxSpill bounds a cursor's spill, as Redis's client-output-buffer-limit
// replica hard limit (256 MB) bounds a replica's output buffer.
const MaxSpill = 256 << 20

// Attach returns a cursor at pos, which the backlog must hold (ErrBehind
// otherwise).
func (b *Backlog) Attach(pos int64) (*Cursor, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if pos < b.off-b.hist || pos > b.off {
		return nil, ErrBehind
	}
	c := &Cursor{pos: pos}
	b.cursors = append(b.cursors, c)
	return c, nil
}

// Detach forgets c; a cursor detached already is left alone.
func (b *Backlog) Detach(c *Cursor) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := slices.Index(b.cursors, c); i >= 0 {
		b.cursors = slices.Delete(b.cursors, i, i+1)
	}
}

// ReadCursor waits until c has bytes to take and appends up to max of them
// to dst: its spill first, then the ring's. It fails with ErrBehind when
// c's spill passed MaxSpill (or a Reset cut the stream), and with
// ErrClosed once Close was called or quit is set (then Wake).
func (b *Backlog) ReadCursor(c *Cursor, dst []byte, max int, quit *atomic.Bool) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(c.spill) == 0 && c.pos == b.off && !c.behind && !b.closed && !quit.Load() {
		b.more.Wait()
	}
	switch {
	case b.closed || quit.Load():
		return dst, ErrClosed
	case c.behind:
		return dst, ErrBehind
	case len(c.spill) > 0:
		n := min(len(c.spill), max)
		dst = append(dst, c.spill[:n]...)
		if c.spill = c.spill[n:]; len(c.spill) == 0 {
			c.spill = nil
		}
		return dst, nil
	}
	n := min(b.off-c.pos, int64(max))
	dst = b.copyLocked(dst, c.pos, n)
	c.pos += n
	return dst, nil
}

// spillLocked copies to its spill, for every cursor below low, the bytes
// from its position up to low, which the ring is about to overwrite (or
// drop); it runs under the mutex before the ring changes.
func (b *Backlog) spillLocked(low int64) {
	for _, c := range b.cursors {
		if c.pos >= low || c.behind {
			continue
		}
		if int64(len(c.spill))+low-c.pos > MaxSpill {
			c.behind, c.spill = true, nil
			continue
		}
		c.spill = b.copyLocked(c.spill, c.pos, low-c.pos)
		c.pos = low
	}
}

// cutCursorsLocked marks every cursor behind: the stream has a gap (Reset).
func (b *Backlog) cutCursorsLocked() {
	for _, c := range b.cursors {
		c.behind, c.spill = true, nil
	}
}
