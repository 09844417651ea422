package server

import (
	"strings"
	"time"

	"github.com/moond-db/moond/resp"
)

// SAVE, BGSAVE, BGREWRITEAOF and LASTSAVE map onto moond's checkpoints: a
// checkpoint is what bounds the WAL (the AOF rewrite's job in Redis) and
// what a restart starts from (the RDB's). A save is done when every shard
// finalized a checkpoint that began after the request.

func init() {
	register(
		&serverCmd{name: "save", arity: 1, run: cmdSave},
		&serverCmd{name: "bgsave", arity: -1, run: cmdBgsave},
		&serverCmd{name: "bgrewriteaof", arity: 1, run: cmdBgrewriteaof},
		&serverCmd{name: "lastsave", arity: 1, run: cmdLastsave},
	)
}

const errNoCheckpoints = "ERR moond saves through its WAL: SAVE, BGSAVE and BGREWRITEAOF need appendonly yes"

// checkpointsOn reports whether the shards run checkpoints (appendonly yes).
func (s *Server) checkpointsOn() bool {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg.AppendOnly
}

// cmdSave starts a checkpoint on every shard and replies once all of them
// finalized it, as Redis's SAVE replies once the RDB is written.
func cmdSave(c *conn, _ [][]byte) {
	if !c.w.srv.checkpointsOn() {
		c.errorReply(errNoCheckpoints)
		return
	}
	c.requestCheckpoints(true, func(errs []string, w *resp.Writer) {
		if len(errs) > 0 {
			w.Error("ERR checkpoint failed: " + strings.Join(errs, "; "))
			return
		}
		w.SimpleString("OK")
	})
}

// cmdBgsave starts a checkpoint on every shard and replies at once.
func cmdBgsave(c *conn, args [][]byte) {
	if len(args) > 2 || (len(args) == 2 && !strings.EqualFold(string(args[1]), "schedule")) {
		c.errorReply("ERR syntax error")
		return
	}
	if !c.w.srv.checkpointsOn() {
		c.errorReply(errNoCheckpoints)
		return
	}
	c.requestCheckpoints(false, func(_ []string, w *resp.Writer) {
		w.SimpleString("Background saving started")
	})
}

// cmdBgrewriteaof: moond's WAL is never rewritten; a checkpoint lets the
// WAL below its redo point be recycled, which is what a rewrite is for.
func cmdBgrewriteaof(c *conn, _ [][]byte) {
	if !c.w.srv.checkpointsOn() {
		c.errorReply(errNoCheckpoints)
		return
	}
	c.w.srv.aofRewrites.Add(1)
	c.requestCheckpoints(false, func(_ []string, w *resp.Writer) {
		w.SimpleString("Background append only file rewriting started")
	})
}

// cmdLastsave is the time of the last save every shard took part in: the
// oldest of the shards' last finalized checkpoints (the server's start
// when a shard has none yet, as Redis reports its start before any save).
func cmdLastsave(c *conn, _ [][]byte) {
	times := make([]time.Time, c.w.srv.nshards)
	c.fanoutCollect(func(w *worker, i int) {
		times[i] = w.srv.started // a shard still loading has saved nothing since
		if w.sh != nil {
			times[i] = w.sh.LastSave()
		}
	}, func(w *resp.Writer) {
		oldest := times[0]
		for _, t := range times[1:] {
			if t.Before(oldest) {
				oldest = t
			}
		}
		w.Int(oldest.Unix())
	})
}

// requestCheckpoints asks every shard for a checkpoint. With wait, reply
// runs once every shard's checkpoint finalized or failed (errs holds the
// failures); without, once every shard took the request.
func (c *conn) requestCheckpoints(wait bool, reply func(errs []string, w *resp.Writer)) {
	origin := c.w
	n := origin.srv.nshards
	errs := make([]string, n)
	p := c.newPending(n, func(_ [][]byte, w *resp.Writer) {
		var failed []string
		for _, e := range errs {
			if e != "" {
				failed = append(failed, e)
			}
		}
		reply(failed, w)
	})
	answer := func(i int) func(error) {
		return func(err error) {
			if err != nil {
				errs[i] = err.Error()
			}
			p.fill(i, nil)
			c.delivered()
		}
	}
	for i, target := range origin.srv.workers {
		done := answer(i)
		if target == origin {
			origin.sh.RequestCheckpoint(wait, done)
			continue
		}
		origin.send(target, func() {
			target.sh.RequestCheckpoint(wait, func(err error) {
				target.send(origin, func() { done(err) })
			})
		})
	}
}
