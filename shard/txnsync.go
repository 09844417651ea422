package shard

import (
	"github.com/moond-db/moond/persistence/checkpoint"
	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/runtime"
)

// Under appendfsync everysec or no, a txn across shards lets its shards go
// once every part is written to the kernel, not yet fsynced: a power loss
// may still take another shard's part. Before this shard's checkpoint
// writes a heap page, or publishes a redo point, that may hold a part of
// such a txn, every shard's WAL is fsynced through what it holds
// (Options.SyncPeers): a txn whose part the heap holds is then whole in
// the logs, which recovery's decision requires (persistence/txnlog). The
// checkpoint takes keys only while no txn holds the shard, so the txns
// whose parts it places were let go, and their parts written everywhere,
// before the sync it asks for.

// txnWAL is the checkpoint's WAL with that sync before page writes and the
// redo point's barrier.
type txnWAL struct {
	*checkpoint.LogBarrier
	s *Shard
}

// Barrier implements checkpoint.WAL.
func (t txnWAL) Barrier(lsn uint64, done func(error)) {
	t.s.afterPeerSync(func(err error) {
		if err != nil {
			done(err)
			return
		}
		t.LogBarrier.Barrier(lsn, done)
	})
}

// WriteAfter implements checkpoint.WAL.
func (t txnWAL) WriteAfter(lsn uint64, ops []runtime.Op, done func([]runtime.Result, error)) {
	t.s.afterPeerSync(func(err error) {
		if err != nil {
			done(nil, err)
			return
		}
		t.LogBarrier.WriteAfter(lsn, ops, done)
	})
}

// afterPeerSync calls then once every shard's WAL is durable through the
// parts of txns this shard holds: at once when no part ended here since the
// last such sync began, or when the policy makes every part durable before
// its txn lets go (always).
func (s *Shard) afterPeerSync(then func(error)) {
	mark := s.txn.mark
	if mark <= s.txn.synced || s.o.SyncPeers == nil || s.policy == wal.FsyncAlways {
		then(nil)
		return
	}
	s.o.SyncPeers(func(err error) {
		if err == nil {
			s.txn.synced = max(s.txn.synced, mark)
			s.txn.peerSyncs++
		}
		then(err)
	})
}

// SyncLog calls done on the loop's thread once this shard's WAL is durable
// through every record appended so far (forcing an fdatasync), or with the
// log's failure; at once with appendonly no.
func (s *Shard) SyncLog(done func(error)) {
	if s.wal == nil || s.ckpt == nil || s.ckpt.barrier == nil {
		s.loop.AfterFunc(0, func() { done(nil) })
		return
	}
	s.ckpt.barrier.Barrier(s.wal.Appender().NextLSN()-1, done)
}

// PeersSynced records that every shard's WAL was made durable after the
// last txn ended (the server's shutdown does so before the shards close):
// the shutdown checkpoint needs no sync of its own.
func (s *Shard) PeersSynced() { s.txn.synced = s.txn.mark }
