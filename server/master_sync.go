package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/runtime"
)

func init() {
	register(
		&serverCmd{name: "replconf", arity: -1, run: cmdReplconf},
		&serverCmd{name: "psync", arity: -3, run: cmdSync},
		&serverCmd{name: "sync", arity: 1, run: cmdSync},
	)
}

// cmdReplconf is REPLCONF as a master hears it before PSYNC: the
// replica's listening-port and ip-address (INFO and ROLE show them; the
// ip-address in place of the connection's), and capa (eof: the replica
// takes the snapshot in the diskless $EOF: form, master_snapshot.go). ACK
// and GETACK come on a replica's stream, which the replica's goroutine
// reads (master_replica.go); from any other client ACK gets no reply, as
// in Redis.
func cmdReplconf(c *conn, args [][]byte) {
	if len(args)%2 == 0 {
		c.errorReply("ERR wrong number of arguments for 'replconf' command")
		return
	}
	for i := 1; i < len(args); i += 2 {
		opt := strings.ToLower(string(args[i]))
		switch opt {
		case "listening-port":
			p, err := strconv.ParseInt(string(args[i+1]), 10, 64)
			if err != nil {
				c.errorReply("ERR value is not an integer or out of range")
				return
			}
			c.replPort = int(p)
		case "ip-address":
			c.replIP = string(args[i+1])
		case "capa":
			if strings.EqualFold(string(args[i+1]), "eof") {
				c.replEOF = true
			}
		case "rdb-only", "rdb-filter-only":
		case "ack", "getack":
			return // no reply, as Redis answers a client that is no replica
		default:
			c.errorReply("ERR Unrecognized REPLCONF option: " + string(args[i]))
			return
		}
	}
	c.replyLocal(func(w *resp.Writer) { w.SimpleString("OK") })
}

// cmdSync is PSYNC replid offset and SYNC: the connection becomes a
// replica. Its socket leaves the shard's loop (a duplicate goes to the
// replica's goroutines, master_replica.go), and a txn over every shard
// takes the snapshot: with every shard held, the stream's start is taken
// and each shard serializes its keys, so that the snapshot holds every
// write before that offset and the stream every write after it. A PSYNC
// with this master's replid (or the old master's, up to the promotion:
// master_history.go) at an offset the backlog still holds is a partial
// resync instead (+CONTINUE, the stream from there).
func cmdSync(c *conn, args [][]byte) {
	if t := c.w.srv.repl.cur.Load(); t != nil && !t.link.Up() {
		c.errorReply("NOMASTERLINK Can't SYNC while not connected with my master")
		return
	}
	r, err := c.takeForReplica(len(args) == 1)
	if err != nil {
		c.w.srv.log.Error("replication: cannot serve a replica", "addr", c.addr, "err", err)
		c.close()
		return
	}
	srv := c.w.srv
	srv.log.Info("replica asks for synchronization", "addr", r.addr, "cmd", strings.ToUpper(string(args[0])))
	if len(args) == 3 {
		if pos, ok := srv.psyncPosition(string(args[1]), string(args[2])); ok && srv.continueReplica(r, pos) {
			srv.master.syncPartialOK.Add(1)
			srv.log.Info("partial resynchronization request accepted", "addr", r.addr, "offset", pos+1)
			go r.resume(pos)
			return
		}
	}
	if len(args) == 3 && string(args[1]) != "?" {
		srv.master.syncPartialErr.Add(1)
	}
	srv.master.syncFull.Add(1)
	c.w.snapshotFor(r)
}

// takeForReplica hands the connection's socket to a replica: the loop
// gives up its descriptor (runtime.Detacher) for a duplicate that becomes
// a net.Conn, and the connection closes on its shard (what it had read
// past PSYNC is dropped: a replica sends nothing before the snapshot).
func (c *conn) takeForReplica(oldSync bool) (*replica, error) {
	d, ok := c.w.be.(runtime.Detacher)
	if !ok {
		return nil, errors.New("the I/O backend cannot hand a socket over on this system")
	}
	dup, err := d.Detach(c.fd)
	if err != nil {
		return nil, fmt.Errorf("take the replica's socket: %w", err)
	}
	c.detached = true
	f := os.NewFile(uintptr(dup), "replica")
	nc, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		return nil, fmt.Errorf("take the replica's socket: %w", err)
	}
	r := &replica{srv: c.w.srv, conn: nc, addr: c.addr, port: c.replPort, oldSync: oldSync, eof: c.replEOF && !oldSync}
	r.gone, r.firstAck, r.pumped = make(chan struct{}), make(chan struct{}), make(chan struct{})
	r.ip, _, _ = net.SplitHostPort(c.addr)
	if c.replIP != "" {
		r.ip = c.replIP
	}
	c.rpos = c.rend
	c.close()
	return r, nil
}

// snapshotFor runs the snapshot's txn over every shard (see cmdSync) and
// starts the replica's sender as soon as the stream's offset is taken, so
// that it sends the shards' chunks while they are written
// (master_snapshot.go).
func (w *worker) snapshotFor(r *replica) {
	srv := w.srv
	n := srv.nshards
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	snap := newSnapshotStream(n)
	w.beginTxnAlone(all, func(t *txn) {
		start := srv.attachReplica(r)
		go r.serve(start, snap)
		for s := range n {
			t.step(s, 2, func(sw *worker, _ *resp.Writer) uint64 {
				writeSnapshot(sw, &snap.parts[s])
				return 0
			}, true, func([]byte) {})
		}
	})
}
