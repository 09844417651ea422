package server

import (
	"errors"
	"fmt"
	"sync"

	"github.com/moond-db/moond/replication"
)

// A replica's output buffer: its pump goroutine copies the backlog from
// the replica's position into it from the moment the replica attaches,
// while the sender writes the snapshot; so a replica does not fall out of
// the 1 MB backlog while its snapshot travels: its buffer grows instead,
// up to Redis's client-output-buffer-limit replica hard limit (256 MB),
// past which it is disconnected, as Redis does. Once the snapshot is sent
// the sender stops the pump, writes what the buffer holds, then reads the
// backlog's cursor itself (drain): one goroutine between the shards and
// the socket, not two, and the cursor's spill (bounded as the buffer is)
// keeps what a slow replica has not taken.

// replicaOutputLimit is Redis's client-output-buffer-limit replica hard
// limit.
const replicaOutputLimit = 256 << 20

// errOutputLimit is a replica whose buffer reached the limit.
var errOutputLimit = errors.New("the replica's output buffer reached its limit (256 MB)")

// outBuf is a replica's output buffer.
type outBuf struct {
	mu     sync.Mutex
	chunks [][]byte
	size   int64
}

// put appends a chunk, or fails when the buffer would pass its limit.
func (b *outBuf) put(p []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.size+int64(len(p)) > replicaOutputLimit {
		return errOutputLimit
	}
	b.chunks = append(b.chunks, p)
	b.size += int64(len(p))
	return nil
}

// rest returns the chunks the buffer holds and empties it.
func (b *outBuf) rest() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.chunks
	b.chunks, b.size = nil, 0
	return c
}

// pump copies the backlog from r's cursor (attached where r's stream
// starts) into r's buffer until the sender takes the cursor over (drain)
// or r stops: the cursor keeps every byte for it, however long the pump
// is kept from running (replication.Cursor). The cursor is r's until
// detachReplica: the pump leaves it attached for the sender.
func (r *replica) pump() {
	defer close(r.pumped)
	for {
		buf, err := r.backlog.ReadCursor(r.cursor, nil, streamChunk, &r.pumpQuit)
		if err == nil {
			err = r.out.put(buf)
		}
		if err != nil {
			if errors.Is(err, replication.ErrClosed) && r.pumpQuit.Load() && !r.quit.Load() {
				return // handed over to the sender
			}
			r.end(err)
			return
		}
	}
}

// drain sends r the stream from where its snapshot ends until r stops:
// it stops the pump, writes what the pump buffered, then reads r's cursor
// and writes each read at once, as much as the backlog holds past it (up
// to streamChunk) per write. The stream's order is the cursor's: the
// pump's reads all come before the sender's first.
func (r *replica) drain() error {
	r.pumpQuit.Store(true)
	r.backlog.Wake()
	<-r.pumped
	for _, c := range r.out.rest() {
		if err := r.write(c); err != nil {
			return fmt.Errorf("send the stream: %w", err)
		}
	}
	var buf []byte
	for {
		var err error
		if buf, err = r.backlog.ReadCursor(r.cursor, buf[:0], streamChunk, &r.quit); err != nil {
			return err
		}
		if err := r.write(buf); err != nil {
			return fmt.Errorf("send the stream: %w", err)
		}
	}
}
