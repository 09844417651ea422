package server

import (
	"fmt"
	"net"
	"time"

	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/keyspace"
)

// worker is one shard of the server: its loop, its keyspace, its listeners
// and the connections it accepted. Everything in it but loop and id is
// touched only on the loop's thread.
type worker struct {
	srv  *Server
	id   int
	loop *runtime.Loop
	be   runtime.Backend
	ks   *keyspace.Keyspace

	listeners   []runtime.FD
	listenAddrs []net.Addr
	conns       map[int64]*conn
	prefetched  int64 // keys read ahead of pipelines (prefetchWindow)

	// Built during one loop iteration, posted before the loop waits.
	outgoing   []*batch
	outTargets []int
	// Messages to other shards whose mailbox was full, in order per target.
	blocked    [][]func()
	retryTimer *runtime.Timer

	scratch resp.Writer
	stats   workerStats
	ticker  *runtime.Timer
	hz      int
	changes int64 // writes since the last save (rdb_changes_since_last_save)

	// Persistence (persist.go).
	wal             *wal.Writer // nil with appendonly no
	walRecovered    int64       // WAL bytes replayed at boot
	replayFailures  int64       // records whose replay answered an error
	replayedData    int64       // data records replayed at boot
	walBlocked      bool        // the WAL refuses records: writes get MISCONF
	walLoggedErr    bool        // a write failure was logged and not yet its recovery
	walLoggedPoison bool
	curLSN          uint64      // LSN of the last record the running command logged
	held            []heldReply // replies waiting for fdatasync (appendfsync always)
	paused          []*conn     // connections not reading while the WAL is behind
	ckpt            *ckpt       // heap and checkpoints (checkpoint.go); mgr nil with appendonly no
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
	cmdCalls            []cmdStat // by command id
}

type cmdStat struct {
	calls, failed, rejected int64
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
	w.stats.cmdCalls = make([]cmdStat, len(commandList))
	return w
}

// prepare runs on the loop's thread before the shard serves: keyspace,
// WAL recovery, the WAL writer.
func (w *worker) prepare() error {
	w.be = w.loop.Backend()
	w.ks = w.srv.newKeyspace(w)
	w.ks.Journal = w.journal
	return w.recoverShard()
}

// listen runs on the loop's thread: listeners, accept, tick.
func (w *worker) listen(addrs []string) error {
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
	w.loop.BeforeWait(w.postBatches)
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
	c.startRecv()
}

// addrs returns the peer and local address of a connection, as CLIENT LIST
// shows them.
func (w *worker) addrs(fd runtime.FD) (string, string) {
	type addrer interface {
		RemoteAddr(runtime.FD) net.Addr
		LocalAddr(runtime.FD) net.Addr
	}
	if a, ok := w.be.(addrer); ok {
		r, l := a.RemoteAddr(fd), a.LocalAddr(fd)
		rs, ls := "", ""
		if r != nil {
			rs = r.String()
		}
		if l != nil {
			ls = l.String()
		}
		return rs, ls
	}
	return "", ""
}

func (w *worker) removeConn(c *conn) {
	if _, ok := w.conns[c.id]; ok {
		delete(w.conns, c.id)
		w.srv.clients.Add(-1)
	}
}

// tick runs hz times a second: active expiry within a bounded slice of time.
func (w *worker) tick() {
	if hz := w.srv.hz(); hz != w.hz { // CONFIG SET hz
		w.hz = hz
		w.ticker.Stop()
		w.ticker = w.loop.Every(time.Second/time.Duration(hz), w.tick)
	}
	// Redis gives the active expire cycle 25% of each tick at most.
	budget := time.Second / time.Duration(w.hz) / 4
	if w.srv.activeExpire.Load() {
		w.ks.ActiveExpire(budget)
	}
	if w.ckpt != nil && w.ckpt.mgr != nil {
		w.ckpt.maxWAL = w.srv.maxWALSize()
		w.ckpt.mgr.SetInterval(w.srv.checkpointTimeout())
		w.ckpt.mgr.Tick()
	}
}

// journal receives every effective write in deterministic form.
func (w *worker) journal(db int, args [][]byte) {
	w.changes++
	w.walAppend(db, args)
}

// execData runs a data command on this shard's keyspace and returns the
// LSN of the last WAL record it produced (0 for none). While the WAL cannot
// take records, write commands are refused with MISCONF, as Redis refuses
// them when its AOF cannot be written.
func (w *worker) execData(cl *keyspace.Client, args [][]byte, out *resp.Writer) uint64 {
	return w.execSpec(cl, keyspace.Lookup(args[0]), args, out)
}

// execSpec is execData for a command already looked up (spec may be nil).
func (w *worker) execSpec(cl *keyspace.Client, spec *keyspace.CommandSpec, args [][]byte, out *resp.Writer) uint64 {
	if w.walBlocked && isWriteCommand(spec) {
		out.Error(w.misconf())
		return 0
	}
	w.curLSN = 0
	w.ks.ExecSpec(cl, spec, args, out)
	return w.curLSN
}

// isWriteCommand reports whether the command may change data.
func isWriteCommand(spec *keyspace.CommandSpec) bool {
	if spec == nil {
		return false
	}
	for _, f := range spec.Flags {
		if f == "write" {
			return true
		}
	}
	return false
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
