package server

import (
	"strings"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/replication"
	"github.com/moond-db/moond/shard"
)

// The shards' side of the master's stream (docs/DESIGN.md §3, "Order and
// transactions"): each shard's feed translates its records into commands
// a redis-server runs and hands them to the backlog, whose assembler
// (replication/assemble.go) makes each txn over several shards one
// MULTI/EXEC; the coordinator says when a txn closed (txnClosed), so that
// the assembler never waits for a part that does not come.

// replFeed is shard w's feed (shard.Feed) for the backlog's epoch:
// MOOND.APPLY becomes its commands (inside MULTI/EXEC when it has several,
// all or nothing as on this side); a txn's part goes to the assembler
// whole, with the shards its END names. The stream's order is the order
// the shards append in: each shard's order, hence each key's.
func (w *worker) replFeed(b *replication.Backlog, epoch uint64) shard.Feed {
	return &shardFeed{w: w, b: b, epoch: epoch}
}

// shardFeed is a shard's shard.Feed.
type shardFeed struct {
	w     *worker
	b     *replication.Backlog
	epoch uint64
	u     replication.Unit // scratch: the backlog copies what it keeps
}

// unit returns the scratch unit, emptied, for txn txid (0 for none).
func (f *shardFeed) unit(txid uint64, shards []int) *replication.Unit {
	f.u = replication.Unit{Shard: f.w.id, Txid: txid, Shards: shards, DBs: f.u.DBs[:0], Cmds: f.u.Cmds[:0]}
	return &f.u
}

// Record implements shard.Feed. SWAPDB, which every shard logs for one
// command, is sent by shard 0 alone when it comes outside a txn (a
// one-shard server).
func (f *shardFeed) Record(db int, args [][]byte) {
	if !keyspace.IsApply(args) && !f.keep(args) {
		return
	}
	u := f.unit(0, nil)
	f.add(u, db, args)
	if len(u.Cmds) > 0 {
		f.give(u)
	}
}

// Part implements shard.Feed: the part goes to the assembler even when it
// is empty, so that it does not wait for it.
func (f *shardFeed) Part(txid uint64, shards []int, dbs []int, recs [][][]byte) {
	u := f.unit(txid, shards)
	for i, rec := range recs {
		f.add(u, dbs[i], rec)
	}
	f.give(u)
}

// give hands u to the backlog, logging a unit it refuses. The replicas'
// goroutines are woken once the loop iteration ends (wakeReplicas), not
// per record: under a pipeline each wakeup costs the shard's CPU a
// scheduler round trip, and they read the whole iteration's bytes at once.
func (f *shardFeed) give(u *replication.Unit) {
	f.w.replWake = f.b
	if err := f.b.AddQuiet(f.epoch, u); err != nil {
		f.w.srv.log.Error("replication: a record not sent to the replicas", "shard", f.w.id, "err", err)
	}
	clear(u.Cmds) // no value stays reachable from the scratch
}

// add appends the commands of one record to u (args as they are: the
// backlog copies what it keeps past Add).
func (f *shardFeed) add(u *replication.Unit, db int, args [][]byte) {
	if !keyspace.IsApply(args) {
		u.DBs, u.Cmds = append(u.DBs, db), append(u.Cmds, args)
		return
	}
	err := f.w.ks.ReplicaCommands(args, func(d int, cmd [][]byte) {
		u.DBs, u.Cmds = append(u.DBs, d), append(u.Cmds, copyArgs(cmd))
	})
	if err != nil {
		f.w.srv.log.Error("replication: a record not sent to the replicas", "shard", f.w.id, "err", err)
	}
}

// keep reports whether a record outside a txn goes to the replicas:
// SWAPDB from shard 0 only.
func (f *shardFeed) keep(args [][]byte) bool {
	return f.w.id == 0 || len(args) != 3 || !strings.EqualFold(string(args[0]), "swapdb")
}

// wakeReplicas wakes the readers of the backlog this shard's feed added
// to in this loop iteration (a BeforeWait hook: it runs before the loop
// sleeps, so bytes never wait in the backlog for the next iteration).
func (w *worker) wakeReplicas() {
	if b := w.replWake; b != nil {
		w.replWake = nil
		b.Notify()
	}
}

// txnClosed tells the stream's assembler, while replicas are fed, that
// txn txid closed: every part of it the shards fed is in.
func (s *Server) txnClosed(txid uint64) {
	if b := s.master.live.Load(); b != nil && txid != 0 {
		b.TxnClosed(txid)
	}
}
