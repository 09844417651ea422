package server

import (
	"context"
)

// Syncs of every shard's WAL for txns across shards (shard/txnsync.go):
// before a checkpoint writes a page or publishes a redo point that may
// hold a part of a txn, every shard fsyncs what its WAL holds, so that a
// power loss cannot take another part of that txn.

// syncPeersFrom is shard from's shard.Options.SyncPeers: every shard makes
// its WAL durable through what it holds, then done runs on from with the
// first failure.
func (s *Server) syncPeersFrom(from *worker) func(done func(error)) {
	return func(done func(error)) {
		left := len(s.workers)
		var first error
		answer := func(err error) {
			if err != nil && first == nil {
				first = err
			}
			if left--; left == 0 {
				done(first)
			}
		}
		for _, w := range s.workers {
			if w == from {
				w.syncLog(answer)
				continue
			}
			from.send(w, func() {
				w.syncLog(func(err error) { w.send(from, func() { answer(err) }) })
			})
		}
	}
}

// syncLog makes w's WAL durable through every record it holds and calls
// done on w. A shard that loads holds no part; one that closes seals (and
// so fsyncs) its log, and the shutdown synced every log before.
func (w *worker) syncLog(done func(error)) {
	if w.sh == nil || w.closing {
		done(nil)
		return
	}
	w.sh.SyncLog(done)
}

// syncForStop makes every shard's WAL durable once the last txn ended, at
// shutdown, and tells the shards: their shutdown checkpoints need no sync
// of each other's logs, which may be closing by then.
func (s *Server) syncForStop(ctx context.Context) {
	errs, _ := s.onEveryShard(ctx, func(w *worker, done func(error)) {
		w.syncLog(func(err error) {
			if err == nil && w.sh != nil {
				w.sh.PeersSynced()
			}
			done(err)
		})
	})
	for _, err := range errs {
		s.log.Error("shutdown: a WAL could not be made durable", "err", err)
	}
}
