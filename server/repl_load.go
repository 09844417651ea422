package server

import (
	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/rdb"
)

// A replica's full sync loads its master's snapshot in batches
// (replication.Link): the link groups the snapshot's keys by the shard
// that owns them (shardOf, handed to it in its Config) and sends each
// group as one MOOND.LOAD on its connection, which runs on that shard as
// one step (keyspace.LoadSpec): one dispatch, one reply and one journal
// record for a few hundred keys instead of a RESTORE each. It goes
// through the connection like any command of the master, so its order
// with the FLUSHALL before it and the stream after it is the
// connection's, and its reply, like any write's, waits for the WAL.

func init() {
	register(&serverCmd{name: "moond.load", arity: 4, masterOnly: true, run: cmdLoad})
}

// cmdLoad is MOOND.LOAD keys expires batch: it runs the batch on the shard
// of its first key, as a data command's single-shard path does; the link
// put only that shard's keys in it.
func cmdLoad(c *conn, args [][]byte) {
	var e rdb.LoadEntry
	if _, err := rdb.NextLoadEntry(args[3], &e); err != nil {
		c.errorReply("ERR MOOND.LOAD: " + err.Error())
		return
	}
	home := c.w.srv.shardOf(e.Key)
	if home == c.w.id {
		c.execLocalSpec(keyspace.LoadSpec, args)
		return
	}
	p := c.newPending(1, nil)
	timed := c.w.ran // the shard that runs it times it (runBatch)
	c.w.ran = nil
	c.w.queueRemote(home, batchItem{conn: c, reply: p, db: c.client.DB, proto: c.out.Proto,
		args: copyArgs(args), spec: keyspace.LoadSpec, timed: timed})
}
