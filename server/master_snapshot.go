package server

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/moond-db/moond/rdb"
)

// The snapshot of a full sync as it travels (docs/DESIGN.md §3, "moond as
// a master"): each shard writes its keys in the RDB file's form, in
// chunks, on its own thread while the snapshot's txn holds it; the
// replica's sender writes them to the socket as they come, shard after
// shard, so the replica loads while the master still serializes. A
// replica that said REPLCONF capa eof gets the file in the diskless form
// ($EOF:<mark>), one that did not (SYNC, or an old replica) the $<len>
// form, for which the sender waits for every chunk to know the length.

// snapshotChunk is about how many bytes a shard hands the sender at once.
const snapshotChunk = 256 << 10

// snapshotStream is the chunks of every shard: shard s's go in parts[s].
type snapshotStream struct {
	parts []snapshotQueue
}

// snapshotQueue is one shard's chunks, in order. The shard never waits on
// it (a slow replica must not stall a shard's thread): the queue grows
// instead, up to the shard's whole snapshot, as the whole file was kept
// before chunks.
type snapshotQueue struct {
	mu     sync.Mutex
	more   *sync.Cond
	chunks [][]byte
	done   bool
}

func newSnapshotStream(n int) *snapshotStream {
	s := &snapshotStream{parts: make([]snapshotQueue, n)}
	for i := range s.parts {
		s.parts[i].more = sync.NewCond(&s.parts[i].mu)
	}
	return s
}

// put appends a chunk (the shard's thread).
func (q *snapshotQueue) put(b []byte) {
	q.mu.Lock()
	q.chunks = append(q.chunks, b)
	q.mu.Unlock()
	q.more.Signal()
}

// close says the shard wrote its last chunk.
func (q *snapshotQueue) close() {
	q.mu.Lock()
	q.done = true
	q.mu.Unlock()
	q.more.Signal()
}

// next waits for the shard's next chunk; ok is false after its last.
func (q *snapshotQueue) next() (b []byte, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.chunks) == 0 && !q.done {
		q.more.Wait()
	}
	if len(q.chunks) == 0 {
		return nil, false
	}
	b = q.chunks[0]
	q.chunks[0] = nil
	q.chunks = q.chunks[1:]
	return b, true
}

// writeSnapshot writes shard w's databases to q (on its thread).
func writeSnapshot(w *worker, q *snapshotQueue) {
	for db := range w.ks.NumDBs() {
		w.ks.SnapshotDB(db, snapshotChunk, q.put)
	}
	q.close()
}

// fileHead is the RDB file's header and AUX fields.
func (s *Server) fileHead(start int64) []byte {
	f := rdb.AppendFileHeader(nil)
	f = rdb.AppendAux(f, "redis-ver", RedisVersion)
	f = rdb.AppendAux(f, "redis-bits", "64")
	f = rdb.AppendAux(f, "ctime", strconv.FormatInt(time.Now().Unix(), 10))
	f = rdb.AppendAux(f, "used-mem", "0")
	f = rdb.AppendAux(f, "repl-stream-db", "0")
	f = rdb.AppendAux(f, "repl-id", s.masterReplID())
	f = rdb.AppendAux(f, "repl-offset", strconv.FormatInt(start, 10))
	return rdb.AppendAux(f, "aof-base", "0")
}

// sendSnapshot writes +FULLRESYNC (not for SYNC) and the snapshot: the
// file's head, every shard's chunks, EOF and the CRC-64 of it all.
func (r *replica) sendSnapshot(start int64, snap *snapshotStream) error {
	var head []byte
	if !r.oldSync {
		head = fmt.Appendf(head, "+FULLRESYNC %s %d\r\n", r.srv.masterReplID(), start)
	}
	file := r.srv.fileHead(start)
	if !r.eof {
		file = appendChunks(file, snap)
		file = rdb.AppendFileEnd(file)
		head = fmt.Appendf(head, "$%d\r\n", len(file))
		if err := r.write(head); err != nil {
			return fmt.Errorf("send FULLRESYNC: %w", err)
		}
		if err := r.write(file); err != nil {
			return fmt.Errorf("send the snapshot: %w", err)
		}
		return nil
	}
	mark := eofMark()
	head = append(append(append(head, "$EOF:"...), mark...), "\r\n"...)
	if err := r.write(append(head, file...)); err != nil {
		return fmt.Errorf("send FULLRESYNC: %w", err)
	}
	crc := rdb.CRC64(0, file)
	for i := range snap.parts {
		for {
			b, ok := snap.parts[i].next()
			if !ok {
				break
			}
			crc = rdb.CRC64(crc, b)
			if err := r.write(b); err != nil {
				return fmt.Errorf("send the snapshot: %w", err)
			}
		}
	}
	end := []byte{rdb.OpEOF}
	crc = rdb.CRC64(crc, end)
	end = binary.LittleEndian.AppendUint64(end, crc)
	if err := r.write(append(end, mark...)); err != nil {
		return fmt.Errorf("send the snapshot's end: %w", err)
	}
	return nil
}

// appendChunks appends every shard's chunks to dst, waiting for them.
func appendChunks(dst []byte, snap *snapshotStream) []byte {
	for i := range snap.parts {
		for {
			b, ok := snap.parts[i].next()
			if !ok {
				break
			}
			dst = append(dst, b...)
		}
	}
	return dst
}

// eofMark is the 40 random characters that end a diskless snapshot, as
// Redis's replication marks it.
func eofMark() []byte {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		panic("server: no randomness for the snapshot's end mark: " + err.Error())
	}
	return []byte(hex.EncodeToString(b))
}
