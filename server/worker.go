package server

import (
	"fmt"
	"net"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/replication"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/shard"
)

// worker is the server's side of one shard: its loop, its listeners, the
// connections it accepted and the messages it exchanges with the other
// shards. The shard itself (keyspace and storage) is sh. Everything in it
// but loop and id is touched only on the loop's thread.
type worker struct {
	srv  *Server
	id   int
	loop *runtime.Loop
	be   runtime.Backend
	sh   *shard.Shard
	ks   *keyspace.Keyspace // sh's keyspace

	listeners   []runtime.FD
	listenAddrs []net.Addr
	conns       map[int64]*conn
	prefetched  int64 // keys read ahead of pipelines (prefetchWindow)
	// replWake is the backlog the shard's feed added to in this loop
	// iteration, whose readers wakeReplicas wakes before the loop waits;
	// nil when it added nothing.
	replWake *replication.Backlog

	// Built during one loop iteration, posted before the loop waits.
	outgoing   []*batch
	outTargets []int
	// Messages to other shards whose mailbox was full, in order per target.
	blocked    [][]func()
	retryTimer *runtime.Timer

	// Blocking commands (block.go): the ones this shard owns, by the key
	// they wait on; the keys written since the last serve; how many this
	// shard's connections wait for (INFO's blocked_clients), and how many
	// of those with a timeout (clients_in_timeout_table).
	waits          map[waitKey]waitQueue
	ready          []waitKey
	serving        bool
	serve          serveScratch
	blockedClients int
	timedBlocked   int

	// Transactions across shards (txn.go): the txn that holds this shard,
	// the txns waiting to hold it in the order they asked, and the work
	// that came while it was held, to run at the release in that order.
	holder      *txnGroup
	reloading   bool // DEBUG RELOAD closes and boots the shard (debug_reload.go)
	holdQ       []*txnGroup
	heldWork    []func()
	pendingTxns []*txn // begun, not in a group yet (startTxns)
	// acquiring counts the groups w started that do not hold all their
	// shards yet; pendingTxns wait until it is 0 (startTxns).
	acquiring int
	// closing: stop ran; the shard closes, and runs no command another
	// shard sends (their batches and txn steps answer shutdownError).
	closing   bool
	heldSince time.Time

	// pubsub holds this shard's connections' subscriptions (pubsub_local.go).
	pubsub localPubsub
	// pause is this shard's copy of CLIENT PAUSE and the connections it
	// holds (pause.go).
	pause workerPause
	// track is this shard's side of CLIENT TRACKING (tracking_table.go).
	track shardTracking
	// mem is the shard's share of maxmemory (evict.go).
	mem shardMemory
	// notify is this shard's side of keyspace notifications (notify.go).
	notify notifyState
	// pushed are the idle connections that got pushes in this iteration,
	// sent before the loop waits (flushPushed).
	pushed []*conn

	// ran is the command dispatch marked as run, for runInput to time
	// (cmd_timing.go); pending the last reply newPending queued meanwhile.
	ran     *command
	pending *pendingReply
	// slowlog holds the slow log entries of this shard's connections.
	slowlog slowRing

	scratch resp.Writer
	stats   workerStats
	ticker  *runtime.Timer
	hz      int

	// coldQ are the batches that wait for cold values, the first one
	// reading them, the others behind it in order (cold.go).
	coldQ []*batch
}

// workerStats are counters INFO sums over the shards.
type workerStats struct {
	connectionsReceived int64
	rejectedConnections int64
	commands            int64
	netInputBytes       int64
	netOutputBytes      int64
	protocolErrors      int64
	errorReplies        int64
	errorsByPrefix      map[string]int64
	cmdCalls            []cmdStat      // by command id
	hists               []*latencyHist // by command id; nil until called (latency-tracking)
	txns                int64          // txns coordinated here (txn.go)
	txnsAcross          int64          // of which over more than one shard
	txnGroups           int64          // groups of txns that held their shards together
	execs               int64          // EXECs that ran their queue
	heldNanos           int64          // time txns held this shard
	// obufLimitDisconnections: subscribers closed at the output buffer
	// limit (pubsub_limit.go).
	obufLimitDisconnections int64
}

type cmdStat struct {
	calls, failed, rejected int64
	nanos                   int64 // time spent running them (cmd_timing.go)
}

func newWorker(srv *Server, id int, loop *runtime.Loop) *worker {
	w := &worker{
		srv:      srv,
		id:       id,
		loop:     loop,
		conns:    make(map[int64]*conn),
		outgoing: make([]*batch, srv.nshards),
		blocked:  make([][]func(), srv.nshards),
	}
	w.stats.errorsByPrefix = make(map[string]int64)
	w.track.init(w)
	w.stats.cmdCalls = make([]cmdStat, len(commandList))
	w.stats.hists = make([]*latencyHist, len(commandList))
	return w
}

// boot runs on the loop's thread once the shard listens: it starts the
// shard's recovery, which goes on while the loop serves its connections
// (commands that need the data answer LOADING), and sets sh once the shard
// opened. done runs on the loop's thread with the boot's error.
func (w *worker) boot(o shard.Options, done func(error)) {
	shard.Boot(w.loop, o, func(sh *shard.Shard, err error) {
		if err != nil {
			done(err)
			return
		}
		w.sh, w.ks = sh, sh.Keyspace()
		w.ks.Tracker = &w.track
		w.track.updateGate()
		w.ks.Notifier = w
		w.setNotify(w.srv.notifyClasses())
		w.srv.txnAbove(sh.TxnMark())
		// CONFIG SET appendfsync or appendonly while the shard loaded reached the
		// configuration, not the shard.
		if err := sh.SetFsyncPolicy(w.srv.appendFsync()); err != nil {
			w.srv.log.Error("appendfsync not applied", "shard", w.id, "err", err)
		}
		sh.SetAppendOnly(w.srv.checkpointsOn())
		sh.SetEviction(w.srv.evictionSettings().eviction)
		w.ks.SetExpiryPaused(w.paused())
		done(nil)
	})
}

// listen runs on the loop's thread: listeners, accept, tick.
func (w *worker) listen(addrs []string) error {
	w.be = w.loop.Backend()
	for _, a := range addrs {
		fd, addr, err := w.be.Listen("tcp", a)
		if err != nil {
			return fmt.Errorf("shard %d: listen on %s: %w", w.id, a, err)
		}
		w.listeners = append(w.listeners, fd)
		w.listenAddrs = append(w.listenAddrs, addr)
		w.accept(fd)
	}
	// Everything every connection sent to other shards in one iteration
	// leaves as one message per target shard.
	w.loop.BeforeWait(w.flushNotes) // first: its mailbox messages go with the batches
	w.loop.BeforeWait(w.postBatches)
	w.loop.BeforeWait(w.track.flush)
	w.loop.BeforeWait(w.flushPushed) // after track.flush: its pushes go too
	w.loop.BeforeWait(w.wakeReplicas)
	w.hz = w.srv.hz()
	w.ticker = w.loop.Every(time.Second/time.Duration(w.hz), w.tick)
	return nil
}

func (w *worker) accept(l runtime.FD) {
	w.be.Accept(l, func(c runtime.FD, err error) {
		if err != nil {
			if w.srv.stopping.Load() {
				return
			}
			w.srv.log.Warn("accept failed", "shard", w.id, "err", err)
			w.loop.AfterFunc(10*time.Millisecond, func() { w.accept(l) })
			return
		}
		if w.srv.stopping.Load() {
			// An accept that completed after stop closed the listener:
			// no connection may start once the shards stop serving.
			w.be.Close(c, nil)
			return
		}
		w.accept(l)
		w.onAccept(c)
	})
}

func (w *worker) onAccept(fd runtime.FD) {
	w.stats.connectionsReceived++
	if w.srv.clients.Add(1) > w.srv.maxClients() {
		w.srv.clients.Add(-1)
		w.stats.rejectedConnections++
		msg := []byte("-ERR max number of clients reached\r\n")
		w.be.Send(fd, msg, func(int, error) { w.be.Close(fd, nil) })
		return
	}
	addr, laddr := w.addrs(fd)
	c := newConn(w, fd, w.srv.nextClientID.Add(1), addr, laddr)
	if w.srv.protectedModeRefuses(addr) {
		w.srv.clients.Add(-1)
		w.stats.rejectedConnections++
		w.be.Send(fd, []byte(protectedModeMsg), func(int, error) { w.be.Close(fd, nil) })
		return
	}
	w.conns[c.id] = c
	w.srv.tracking.homes.Store(c.id, w.id)
	c.startRecv()
}

// addrs returns the peer and local address of a connection, as CLIENT LIST
// shows them.
func (w *worker) addrs(fd runtime.FD) (string, string) {
	return addrString(w.be.RemoteAddr(fd)), addrString(w.be.LocalAddr(fd))
}

func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}

func (w *worker) removeConn(c *conn) {
	if _, ok := w.conns[c.id]; ok {
		delete(w.conns, c.id)
		w.srv.tracking.homes.Delete(c.id)
		w.srv.clients.Add(-1)
	}
}

// tick runs hz times a second: the shard's periodic work, with Redis's
// budget for the active expire cycle (25% of each tick at most).
func (w *worker) tick() {
	if hz := w.srv.hz(); hz != w.hz { // CONFIG SET hz
		w.hz = hz
		w.ticker.Stop()
		w.ticker = w.loop.Every(time.Second/time.Duration(hz), w.tick)
	}
	var budget time.Duration
	if w.srv.activeExpire.Load() && w.holder == nil && !w.paused() { // a txn's keys do not expire under it, nor during a pause
		budget = time.Second / time.Duration(w.hz) / 4
	}
	if w.sh != nil { // nil while the shard loads
		w.sh.Tick(budget)
		if w.mayEvict() {
			w.enforceMemory()
		}
	}
	if len(w.track.keys) > 0 {
		w.track.limit()
	}
}

// execData runs a data command on this shard and returns the LSN of the
// last WAL record it produced (0 for none). spec is Lookup(args[0]), or
// the spec of a command no client names (keyspace.LoadSpec).
func (w *worker) execData(cl *keyspace.Client, spec *keyspace.CommandSpec, args [][]byte, out *resp.Writer) uint64 {
	if w.sh == nil { // the dispatch refuses while any shard loads; never reached
		out.Error(loadingError)
		return 0
	}
	return w.exec(cl, spec, args, out)
}

// stop closes listeners and connections; runs on the loop's thread.
func (w *worker) stop() {
	for _, l := range w.listeners {
		w.be.Close(l, nil)
	}
	w.listeners = nil
	for _, c := range w.conns {
		c.close()
	}
	if w.ticker != nil {
		w.ticker.Stop()
	}
}
