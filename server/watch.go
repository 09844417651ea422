package server

import (
	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
)

// WATCH and UNWATCH. A watch lives on the shard of its key, in that
// shard's keyspace (keyspace/watch.go, Redis 7.0's rules of what touches
// a key); the connection remembers which shard holds each. WATCH answers
// once every shard registered its keys, so a write the client causes
// after the reply touches them. EXEC holds the shards of its watches with
// those of its commands and asks each, under the hold, whether a watch
// was touched (execChecked), so that no write slips between the check and
// the commands; each watch is dropped then. DISCARD, UNWATCH, RESET and a
// closing connection drop them too.

// connWatch is one key the connection watches. w is set and read on the
// key's shard only.
type connWatch struct {
	shard int
	db    int
	key   string
	w     *keyspace.Watch
}

func init() {
	register(
		&serverCmd{name: "watch", arity: -2, run: cmdWatch},
		&serverCmd{name: "unwatch", arity: 1, run: func(c *conn, _ [][]byte) { c.unwatchAll(); c.ok() }},
	)
}

func cmdWatch(c *conn, args [][]byte) {
	remote := map[int][]*connWatch{}
	for _, k := range args[1:] {
		if c.watching(c.client.DB, k) {
			continue // Redis ignores a key the client watches already
		}
		cw := &connWatch{shard: c.w.srv.shardOf(k), db: c.client.DB, key: string(k)}
		c.watches = append(c.watches, cw)
		if cw.shard == c.w.id {
			cw.w = c.w.ks.Watch(cw.db, k)
		} else {
			remote[cw.shard] = append(remote[cw.shard], cw)
		}
	}
	if len(remote) == 0 {
		c.ok()
		return
	}
	reply := c.newPending(len(remote), okParts)
	part := 0
	for s, list := range remote {
		c.w.queueRemote(s, batchItem{conn: c, reply: reply, part: part, proto: c.out.Proto,
			fn: func(w *worker, out *resp.Writer) {
				for _, cw := range list {
					cw.w = w.ks.Watch(cw.db, []byte(cw.key))
				}
				out.SimpleString("OK")
			}})
		part++
	}
}

// watching reports whether the connection watches key of database db.
func (c *conn) watching(db int, key []byte) bool {
	for _, cw := range c.watches {
		if cw.db == db && cw.key == string(key) {
			return true
		}
	}
	return false
}

// unwatchAll drops the connection's watches.
func (c *conn) unwatchAll() {
	if len(c.watches) > 0 {
		c.w.postBatches() // a WATCH's registrations go out first
	}
	for _, cw := range c.watches {
		c.w.onShard(cw.shard, func(w *worker) {
			if cw.w != nil { // nil: the shard stopped before it registered it
				w.ks.Unwatch(cw.w)
			}
		})
	}
	c.watches = nil
}

// onShard runs f on shard s: at once when it is this one, else as a
// message, after what this shard sent there before.
func (w *worker) onShard(s int, f func(w *worker)) {
	target := w.srv.workers[s]
	if target == w {
		f(w)
		return
	}
	w.send(target, func() { f(target) })
}

// watchShards lists the shards that hold watches of ws.
func watchShards(ws []*connWatch) []int {
	var out []int
	for _, cw := range ws {
		out = append(out, cw.shard)
	}
	return out
}

// touchedHere reports whether a watch of ws on shard w was touched, and
// drops them all (EXEC's check, on w's thread, under the txn's hold).
func touchedHere(w *worker, ws []*connWatch) bool {
	touched := false
	for _, cw := range ws {
		if cw.shard == w.id && cw.w != nil {
			touched = touched || cw.w.Touched()
			w.ks.Unwatch(cw.w)
		}
	}
	return touched
}
