package server

import (
	"errors"
	"fmt"
	"sync"
)

// A replica's output buffer: its pump goroutine copies the backlog from
// the replica's position into it from the moment the replica attaches,
// and its sender writes it out once the snapshot is sent. So a replica
// does not fall out of the 1 MB backlog while its snapshot travels, or
// while it is slow: its buffer grows instead, up to Redis's
// client-output-buffer-limit replica hard limit (256 MB), past which it
// is disconnected, as Redis does.

// replicaOutputLimit is Redis's client-output-buffer-limit replica hard
// limit.
const replicaOutputLimit = 256 << 20

// errOutputLimit is a replica whose buffer reached the limit.
var errOutputLimit = errors.New("the replica's output buffer reached its limit (256 MB)")

// outBuf is a replica's output buffer.
type outBuf struct {
	mu     sync.Mutex
	more   *sync.Cond
	chunks [][]byte
	size   int64
	done   bool // the replica is stopping
}

// init makes the buffer ready.
func (b *outBuf) init() { b.more = sync.NewCond(&b.mu) }

// put appends a chunk, or fails when the buffer would pass its limit.
func (b *outBuf) put(p []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.size+int64(len(p)) > replicaOutputLimit {
		return errOutputLimit
	}
	b.chunks = append(b.chunks, p)
	b.size += int64(len(p))
	b.more.Broadcast()
	return nil
}

// take waits for chunks and returns them all; nil once the replica stops.
func (b *outBuf) take() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.chunks) == 0 && !b.done {
		b.more.Wait()
	}
	if b.done {
		return nil
	}
	c := b.chunks
	b.chunks, b.size = nil, 0
	return c
}

// close wakes take for good.
func (b *outBuf) close() {
	b.mu.Lock()
	b.done = true
	b.more.Broadcast()
	b.mu.Unlock()
}

// pump copies the backlog from r's cursor (attached where r's stream
// starts) into r's buffer until r stops: the cursor keeps every byte for
// it, however long the pump is kept from running (replication.Cursor).
func (r *replica) pump() {
	c := r.cursor
	defer r.backlog.Detach(c)
	for {
		buf, err := r.backlog.ReadCursor(c, nil, streamChunk, &r.quit)
		if err == nil {
			err = r.out.put(buf)
		}
		if err != nil {
			r.end(err)
			return
		}
	}
}

// drain writes r's buffer out until r stops.
func (r *replica) drain() error {
	for {
		chunks := r.out.take()
		if chunks == nil {
			return errors.New("stopped")
		}
		for _, c := range chunks {
			if err := r.write(c); err != nil {
				return fmt.Errorf("send the stream: %w", err)
			}
		}
	}
}
