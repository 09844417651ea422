package replication

import (
	"strconv"

	"github.com/moond-db/moond/rdb"
	"github.com/moond-db/moond/resp"
)

// loader sends a snapshot's keys to the local server in MOOND.LOAD
// batches: the keys of one database bound for one shard, in the load
// batch form (rdb.LoadEntry), up to maxBatchKeys keys or maxBatchBytes
// bytes each. A batch runs on its shard as one step: one dispatch, one
// reply and one WAL record for its keys, where one RESTORE each paid for
// all of those per key. The batches of a database are all sent before
// the SELECT of the next, so each runs in its own database.
type loader struct {
	a       *applier
	shards  int
	shardOf func([]byte) int
	// keys and expires are the current database's RESIZEDB figures; the
	// first batch a shard gets of the database carries its share of
	// them, to size its empty tables by.
	keys, expires int
	pending       []loadBatch // by shard
	cmd           []byte      // the command being written, reused
	sent          int         // MOOND.LOAD commands sent
}

// loadBatch is one shard's batch being filled.
type loadBatch struct {
	buf    []byte
	n      int
	hinted bool // a batch of this database went to the shard with the hint
}

// The bounds of one MOOND.LOAD batch.
const (
	maxBatchKeys  = 512
	maxBatchBytes = 256 << 10
)

func newLoader(a *applier, shards int, shardOf func([]byte) int) *loader {
	if shardOf == nil || shards < 1 {
		shards, shardOf = 1, nil
	}
	return &loader{a: a, shards: shards, shardOf: shardOf, pending: make([]loadBatch, shards)}
}

// database starts a database whose RESIZEDB figures are keys and
// expires: what is pending goes first (it belongs to the one before).
func (ld *loader) database(keys, expires int) error {
	if err := ld.flush(); err != nil {
		return err
	}
	ld.keys, ld.expires = keys, expires
	for i := range ld.pending {
		ld.pending[i].hinted = false
	}
	return nil
}

// add queues one key of the current database, sending its shard's batch
// once it is full.
func (ld *loader) add(e *Entry) error {
	s := 0
	if ld.shardOf != nil {
		s = ld.shardOf(e.Key)
	}
	b := &ld.pending[s]
	b.buf = rdb.AppendLoadEntry(b.buf, &rdb.LoadEntry{Key: e.Key, Value: e.Value, ExpireMS: e.ExpireMS,
		Idle: e.Idle, Freq: e.Freq})
	b.n++
	if b.n >= maxBatchKeys || len(b.buf) >= maxBatchBytes {
		return ld.send(b)
	}
	return nil
}

// flush sends every batch not yet sent.
func (ld *loader) flush() error {
	for i := range ld.pending {
		if ld.pending[i].n > 0 {
			if err := ld.send(&ld.pending[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// send writes b as MOOND.LOAD keys expires batch and empties it.
func (ld *loader) send(b *loadBatch) error {
	keys, expires := 0, 0
	if !b.hinted {
		b.hinted = true
		keys = (ld.keys + ld.shards - 1) / ld.shards
		expires = (ld.expires + ld.shards - 1) / ld.shards
	}
	ld.cmd = resp.AppendCommand(ld.cmd[:0], loadName, strconv.AppendInt(nil, int64(keys), 10),
		strconv.AppendInt(nil, int64(expires), 10), b.buf)
	b.buf, b.n = b.buf[:0], 0
	if cap(b.buf) > 2*maxBatchBytes {
		b.buf = nil // nor is its batch's
	}
	ld.sent++
	err := ld.a.send(ld.cmd, item{off: -1, what: "moond.load"})
	if cap(ld.cmd) > 2*maxBatchBytes {
		ld.cmd = nil // a batch of one large value is not kept for good
	}
	return err
}

var loadName = []byte("MOOND.LOAD")
