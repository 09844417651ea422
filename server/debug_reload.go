package server

import (
	"errors"
	"fmt"
	"strings"
)

// debugReloadNoflush refuses DEBUG RELOAD NOFLUSH: Redis loads its RDB
// file into the data set it did not empty, which moond cannot do, since a
// shard's heap and WAL are its whole data set, not an addition to it.
const debugReloadNoflush = "ERR DEBUG RELOAD NOFLUSH is not supported: moond rebuilds each shard's keyspace " +
	"from its heap and WAL, which hold the whole data set, so there is nothing to load into a keyspace kept in memory"

// debugReload is DEBUG RELOAD [MERGE|NOSAVE ...], Redis's save, empty
// and load of the data set, while the server stays up: with every shard
// held (a txn over all of them, as FLUSHALL's), each shard runs a
// checkpoint and closes its storage (retireShard), then every shard boots
// again on its loop from its heap and WAL through the boot's code
// (rebootShard), before the hold ends. NOSAVE skips the checkpoint: the
// boot then replays the WAL above the last redo point, which holds every
// write (the close seals it). MERGE without NOFLUSH is, as in Redis, a
// plain reload. With appendonly no moond keeps no data set on disk, so
// there is nothing to reload from.
func debugReload(c *conn, opts [][]byte) {
	save := true
	for _, o := range opts {
		switch strings.ToLower(string(o)) {
		case "merge":
		case "nosave":
			save = false
		case "noflush":
			c.errorReply(debugReloadNoflush)
			return
		default:
			c.errorReply("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
			return
		}
	}
	if !c.w.srv.checkpointsOn() {
		c.errorReply("ERR DEBUG RELOAD needs appendonly yes: with appendonly no moond keeps no data set on disk to reload")
		return
	}
	p := c.newPending(1, nil)
	c.w.reloadAll(save, func(err error) {
		if c.state == connClosed {
			return
		}
		if err != nil {
			c.w.srv.log.Error("DEBUG RELOAD failed", "err", err)
			p.fill(0, []byte("-ERR Error trying to load the RDB dump, check server logs: "+
				strings.ReplaceAll(err.Error(), "\n", " ")+"\r\n"))
		} else {
			p.fill(0, []byte("+OK\r\n"))
		}
		c.delivered()
	})
}

// reloadAll runs DEBUG RELOAD's txn over every shard, coordinated by w:
// every shard retires its storage, then (once all did, so that the
// decision on txns across shards reads sealed logs) every shard boots
// again; done runs on w with the first errors.
func (w *worker) reloadAll(save bool, done func(error)) {
	srv := w.srv
	n := srv.nshards
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	w.beginTxnAlone(all, func(t *txn) {
		var errs []error
		phase := func(run func(sw *worker, back func(error)), then func()) {
			left := n
			for s := range n {
				sw := srv.workers[s]
				t.send(s, func() {
					run(sw, func(err error) {
						answer := func() {
							if err != nil {
								errs = append(errs, err)
							}
							if left--; left == 0 {
								then()
							}
						}
						if sw == w {
							answer()
							return
						}
						sw.send(w, answer)
					})
				})
			}
		}
		phase(func(sw *worker, back func(error)) { sw.retireShard(save, back) }, func() {
			if n > 1 {
				srv.startDecidingTxns(n, srv.shardOptions)
			}
			phase(func(sw *worker, back func(error)) { sw.rebootShard(back) }, func() {
				for s := range n {
					t.release(s)
				}
				done(errors.Join(errs...))
			})
		})
	})
}

// retireShard closes w's shard for the reload (shard.Retire), with a
// checkpoint first when save is set. The checkpoint runs though the
// reload's txn holds the shard: that txn has no part to keep out of the
// heap (see Options.Held).
func (w *worker) retireShard(save bool, done func(error)) {
	w.reloading = true
	w.sh.Retire(save, func(err error) {
		w.sh, w.ks = nil, nil // what runs meanwhile sees a shard that loads
		if err != nil {
			err = fmt.Errorf("shard %d: close its storage: %w", w.id, err)
		}
		done(err)
	})
}

// rebootShard boots w's shard again from its directory, as the server's
// boot does, and gives it the replicas' feed the retired one had. A boot
// that fails stops the server, as a failed boot at start does: the shard
// has no keyspace to serve.
func (w *worker) rebootShard(done func(error)) {
	w.boot(w.srv.shardOptions(w.id), func(err error) {
		w.reloading = false
		if err != nil {
			err = fmt.Errorf("shard %d: load: %w", w.id, err)
			w.srv.log.Error("DEBUG RELOAD could not load a shard's data; the server stops", "err", err)
			w.srv.requestShutdown()
			done(err)
			return
		}
		w.srv.refeed(w)
		done(nil)
	})
}

// refeed sets the replicas' feed on w's new shard when the shards feed
// replicas.
func (s *Server) refeed(w *worker) {
	m := &s.master
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.feeding {
		w.sh.SetFeed(w.replFeed(m.backlog, m.backlog.Epoch()))
	}
}
