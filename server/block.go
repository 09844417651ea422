package server

import (
	"math"
	"time"
	"unsafe"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/runtime"
)

// Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN,
// BZPOPMAX, BZMPOP) wait here, never on a shard's thread.
//
// A blocking command runs on its keys' shard like any other; when none of
// its keys holds data the keyspace replies nothing and sets
// Client.WouldBlock, and the command becomes a *blocked, with a *waiter
// registered on that shard under each key it waits on, in a FIFO per key.
// One shard, the blocked command's owner, alone decides what becomes of
// it, so that it is served, times out or is cancelled exactly once:
//
//   - After every write command a shard runs (w.exec), the keys it wrote
//     that have waiters are ready; before the next command runs, each
//     ready key serves its waiters in the order they blocked, each by
//     running its command again for that key alone (BlockSpec.ServeArgs,
//     Client.Serving), until the key has no more data or waiters.
//   - A timer on the owner's loop answers the timeout's null reply.
//   - The connection's shard (home) asks the owner to cancel it when the
//     connection closes; CLIENT UNBLOCK asks it to answer at once.
//
// When all its keys are on one shard, that shard owns it and serves it
// without asking anyone. When its keys are on several (BLPOP a b, a and b
// on two shards), the connection's shard owns it and each key shard holds
// a waiter for its keys. At first each key shard reports what its keys
// hold, and the owner decides as Redis does when the command is called:
// the first key in the command's order that exists is served if it holds
// the kind popped, or answers WRONGTYPE. After that, a key shard with
// data for the waiter at the head
// of a key's queue asks the owner for the grant (keeping that key's later
// waiters behind it, first blocked first served), and serves only when
// granted; the owner grants one shard at a time, and a shard whose data
// went away before the grant arrived releases it to the next that asked.
// So whichever shard gets data first serves it, and only one does.
//
// The reply leaves once the WAL of the shard that popped holds the pop
// (the acknowledgement rule, as for a batch) and fills the connection's
// pending reply. While a connection waits it runs none of its later
// input, as in Redis, but keeps a read posted so that a client that hangs
// up is noticed and its wait cancelled (conn.watch).

// waitKey is a key in a logical database, as clients name it.
type waitKey struct {
	db  int
	key string
}

// blockState is a blocked command's state; only its owner changes it.
type blockState uint8

const (
	blockWaiting  blockState = iota
	blockGranted             // keys on several shards: one of them serves it now
	blockDone                // served, timed out, unblocked or cancelled
	blockStarting            // keys on several shards: not every shard reported yet
)

// blockEnd is what ends a wait whose grant is out: it ends so once the
// grant comes back unused.
type blockEnd uint8

const (
	endNone blockEnd = iota
	endTimeout
	endCancel
)

// blocked is one client's blocking command waiting for data.
type blocked struct {
	// Fixed at creation; read by every shard it waits on.
	conn    *conn // touched only on home's thread
	reply   *pendingReply
	home    *worker
	owner   *worker
	spec    *keyspace.CommandSpec
	args    [][]byte // owned copy, never changed: the waitKeys' strings point into it
	db      int
	proto   int
	waiters []*waiter // one per shard it waits on

	// The storage of the common wait, all its keys on one shard: its
	// waiter and the slice of it, so that blocking allocates neither.
	waiter1  waiter
	waiters1 [1]*waiter
	// args' storage when the command is short (BLPOP key 0): ownArgs.
	argv     [4][]byte
	argBytes [64]byte
	// keyPos is the indexes in args of the keys it waits on
	// (BlockSpec.WaitKeys), in keyPos1 when they fit.
	keyPos  []int
	keyPos1 [4]int

	// A cross-shard BLMOVE's wait (block_move.go): data wakes it
	// (woken) rather than serving it, and its timeout ends at deadline.
	wake, woken bool
	deadline    time.Time

	// The owner's.
	state   blockState
	timer   *runtime.Timer
	asks    []*waiter // shards that asked for the grant while another held it
	pending blockEnd
	// While starting (block_multi.go): the shards yet to report, and the
	// first key in the command's order that exists among those reported.
	unreported int
	first      keyReport
}

// waiter is a blocked command's registration on one shard, touched only by
// that shard.
type waiter struct {
	b          *blocked
	w          *worker
	keys       []waitKey  // the distinct keys it waits on there, in order
	keys1      [1]waitKey // keys' storage for one key
	registered bool
	dropped    bool // the wait is over: never registered again
	asking     bool // its grant request is out (the owner is another shard)
}

// waitQueue is a key's waiters, first blocked first.
type waitQueue []*waiter

// newBlocked makes the wait of a blocking command owned by owner, with a
// waiter on each shard that holds one of the keys it waits on. It arms the
// timeout. args are b's to keep when owned, else copied (ownArgs).
func newBlocked(c *conn, reply *pendingReply, home, owner *worker, spec *keyspace.CommandSpec, args [][]byte, owned bool, db, proto int) *blocked {
	b := &blocked{conn: c, reply: reply, home: home, owner: owner, spec: spec, args: args, db: db, proto: proto}
	if !owned {
		b.ownArgs(args)
		args = b.args
	}
	b.waiters = b.waiters1[:0]
	// Into b's storage: a stack buffer handed to a function value would
	// escape, an allocation of its own.
	b.keyPos = spec.Block.WaitKeys(args, b.keyPos1[:0])
	for _, p := range b.keyPos {
		sw := owner.srv.workers[owner.srv.shardOf(args[p])]
		var wt *waiter
		for _, x := range b.waiters {
			if x.w == sw {
				wt = x
			}
		}
		if wt == nil {
			if len(b.waiters) == 0 {
				wt = &b.waiter1
			} else {
				wt = &waiter{}
			}
			wt.b, wt.w = b, sw
			wt.keys = wt.keys1[:0]
			b.waiters = append(b.waiters, wt)
		}
		// The key's string is args' bytes: args is owned and never
		// changes while b lives, and b outlives its registrations.
		if k := (waitKey{db, bytesString(args[p])}); !containsKey(wt.keys, k) {
			wt.keys = append(wt.keys, k)
		}
	}
	// A timeout past what a Duration holds (292 years) never fires, as a
	// Redis 7.0 deadline past the int64 range never does.
	if ms, _ := keyspace.ParseBlockTimeout(spec.Block.Timeout(args)); ms > 0 && ms <= maxTimerMillis {
		b.timer = owner.loop.AfterFunc(time.Duration(ms)*time.Millisecond, func() { owner.timeoutBlocked(b) })
	}
	return b
}

// ownArgs makes b.args a copy of args: in b's own storage when they fit,
// as a blocking command's arguments mostly do, else as copyArgs copies.
func (b *blocked) ownArgs(args [][]byte) {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	if len(args) > len(b.argv) || n > len(b.argBytes) {
		b.args = copyArgs(args)
		return
	}
	buf := b.argBytes[:0]
	for i, a := range args {
		buf = append(buf, a...)
		b.argv[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	b.args = b.argv[:len(args)]
}

// maxTimerMillis is the longest timeout a timer is armed for.
const maxTimerMillis = math.MaxInt64 / int64(time.Millisecond)

// blockOn makes the wait of a blocking command (args owned) that found no
// data on this shard, which holds all its keys and owns it.
func (w *worker) blockOn(c *conn, reply *pendingReply, home *worker, spec *keyspace.CommandSpec, args [][]byte, db, proto int) *blocked {
	return w.blockOnArgs(c, reply, home, spec, args, true, db, proto)
}

// blockOnArgs is blockOn for args that are b's to keep when owned, else
// copied.
func (w *worker) blockOnArgs(c *conn, reply *pendingReply, home *worker, spec *keyspace.CommandSpec, args [][]byte, owned bool, db, proto int) *blocked {
	b := newBlocked(c, reply, home, w, spec, args, owned, db, proto)
	w.addWaiter(b.waiters[0])
	return b
}

func containsKey(keys []waitKey, k waitKey) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// addWaiter registers wt on this shard under each of its keys.
func (w *worker) addWaiter(wt *waiter) {
	if w.waits == nil {
		w.waits = make(map[waitKey]waitQueue)
	}
	for _, k := range wt.keys {
		w.waits[k] = append(w.waits[k], wt)
	}
	wt.registered = true
}

// removeWaiter takes wt out of its keys' queues.
func (w *worker) removeWaiter(wt *waiter) {
	if !wt.registered {
		return
	}
	wt.registered = false
	for _, k := range wt.keys {
		q := w.waits[k]
		for i, x := range q {
			if x == wt {
				q = append(q[:i], q[i+1:]...)
				break
			}
		}
		if len(q) == 0 {
			delete(w.waits, k)
		} else {
			w.waits[k] = q
		}
	}
}

// finishBlocked, on b's owner, ends b's wait with reply, once the WAL of
// this shard holds record lsn (0: none), and sends the reply to b's
// connection; b's waiters on other shards are dropped.
func (w *worker) finishBlocked(b *blocked, reply []byte, lsn uint64) {
	if b.state == blockDone {
		panic("server: a blocked command finished twice")
	}
	b.state = blockDone
	b.asks = nil
	if b.timer != nil {
		b.timer.Stop()
	}
	for _, wt := range b.waiters {
		if wt.w == w {
			w.dropWaiter(wt)
		} else {
			w.send(wt.w, func() { wt.w.dropWaiter(wt) })
		}
	}
	w.deliverWhenDurable(b, reply, lsn)
}

// deliverWhenDurable sends reply to b's connection once this shard's WAL
// holds record lsn (0: at once); a record that can never be made durable
// turns it into the MISCONF error.
func (w *worker) deliverWhenDurable(b *blocked, reply []byte, lsn uint64) {
	if lsn == 0 {
		w.deliverBlocked(b, reply)
		return
	}
	w.whenDurable(lsn, b.proto, reply, func(reply []byte) { w.deliverBlocked(b, reply) })
}

// deliverBlocked sends reply to b's connection, as a message to its home shard:
// it never lands inside the command that served it. The replies to this
// shard's own connections queue up (serveScratch.local) and go as one
// message, which saves a closure and a mailbox entry per delivery (a
// producer's pipelined pushes serve a reply each).
func (w *worker) deliverBlocked(b *blocked, reply []byte) {
	if b.home != w {
		w.send(b.home, func() { b.home.blockedReply(b, reply) })
		return
	}
	sc := &w.serve
	sc.local = append(sc.local, localReply{b, reply})
	if len(sc.local) == 1 && !sc.flushing {
		if sc.flushLocal == nil {
			sc.flushLocal = w.flushLocalReplies
		}
		w.send(w, sc.flushLocal)
	}
}

// localReply is a reply deliverBlocked queued for one of this shard's
// connections.
type localReply struct {
	b     *blocked
	reply []byte
}

// flushLocalReplies hands the queued replies to their connections, in the
// order they were served, with those queued meanwhile (a connection that
// gets its reply may run its next command, which serves others).
func (w *worker) flushLocalReplies() {
	sc := &w.serve
	sc.flushing = true
	for i := 0; i < len(sc.local); i++ {
		r := sc.local[i]
		sc.local[i] = localReply{}
		w.blockedReply(r.b, r.reply)
	}
	sc.local = sc.local[:0]
	sc.flushing = false
}

// timeoutBlocked answers b's timeout, if it still waits.
func (w *worker) timeoutBlocked(b *blocked) {
	b.timer = nil
	switch b.state {
	case blockWaiting, blockStarting:
		w.finishBlocked(b, timeoutReply(b), 0)
	case blockGranted:
		b.pending = endTimeout
	}
}

// timeoutReply is the reply of b's command on timeout (and CLIENT
// UNBLOCK TIMEOUT): a null array for every blocking command, BLMOVE and
// BRPOPLPUSH included, as Redis 7.0's replyToBlockedClientTimedOut
// answers (*-1 in RESP2, where their non-blocking forms answer $-1).
func timeoutReply(b *blocked) []byte {
	out := resp.Writer{Proto: b.proto}
	out.NullArray()
	return out.Buf
}

// cancelBlocked drops b, if it still waits: its connection closed.
func (w *worker) cancelBlocked(b *blocked) {
	switch b.state {
	case blockWaiting, blockStarting:
		w.finishBlocked(b, nil, 0) // the closed connection ignores it
	case blockGranted:
		b.pending = endCancel
	}
}

// unblock is CLIENT UNBLOCK on the owner: b answers the timeout's reply
// (or the UNBLOCKED error) at once. It reports whether b was waiting.
func (w *worker) unblock(b *blocked, withError bool) bool {
	if b.state != blockWaiting && b.state != blockStarting {
		return false
	}
	reply := timeoutReply(b)
	if withError {
		out := resp.Writer{Proto: b.proto}
		out.Error("UNBLOCKED client unblocked via CLIENT UNBLOCK")
		reply = out.Buf
	}
	w.finishBlocked(b, reply, 0)
	return true
}

// exec runs a data command on this shard and returns the LSN of its last
// WAL record (0 for none). After a write, the keys it wrote that blocked
// commands wait on serve them, before anything else runs.
func (w *worker) exec(cl *keyspace.Client, spec *keyspace.CommandSpec, args [][]byte, out *resp.Writer) uint64 {
	w.track.caller = cl.ID
	lsn := w.sh.Exec(cl, spec, args, out)
	w.track.caller = 0
	if spec.Writes() && w.mayEvict() {
		// The reply waits for the deletions its write caused, so that an
		// acknowledged write's evictions survive a crash with it.
		lsn = max(lsn, w.enforceMemory())
	}
	if len(w.waits) > 0 && spec.Writes() {
		w.signal(cl.DB, spec, args)
		if w.holder == nil { // else at the release (unhold), as Redis serves after EXEC
			w.serveReady()
		}
	}
	if len(w.notify.targets) > 0 {
		w.flushNotes() // before the reply can leave (notify.go)
	}
	return lsn
}

// signal marks the keys of a write command that have waiters ready.
// Commands that write keys other than their arguments (MOVE and COPY into
// another database, SWAPDB) make every waited-on key ready.
func (w *worker) signal(db int, spec *keyspace.CommandSpec, args [][]byte) {
	switch spec.Name {
	case "move", "copy", "swapdb":
		for k := range w.waits {
			w.markReady(k)
		}
		return
	}
	var posBuf [16]int
	for _, p := range keyPositions(spec, args, posBuf[:0]) {
		if k, ok := w.waitedKey(db, args[p]); ok {
			w.markReady(k)
		}
	}
}

// waitedKey returns the waitKey of key in db as the waits hold it, if a
// blocked command waits on it. The lookup allocates nothing (the write
// that calls it runs at every command's rate); the key returned holds
// the string a waiter registered, which it may keep.
func (w *worker) waitedKey(db int, key []byte) (waitKey, bool) {
	q := w.waits[waitKey{db, bytesString(key)}] // not kept: key's bytes are the caller's
	if len(q) == 0 {
		return waitKey{}, false
	}
	for _, k := range q[0].keys {
		if k.db == db && k.key == string(key) {
			return k, true
		}
	}
	panic("server: a waiter queued under a key it does not wait on")
}

// bytesString is b's bytes as a string, without a copy: for b that no
// one changes while the string is in use.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func (w *worker) markReady(k waitKey) {
	if !containsKey(w.ready[w.serve.readyAt:], k) { // among those not served yet
		w.ready = append(w.ready, k)
	}
}

// serveReady serves the waiters of every ready key, in the order the keys
// became ready; serving one (BLMOVE) may make another key ready.
func (w *worker) serveReady() {
	if w.serving {
		return
	}
	w.serving = true
	// By index, not by reslicing: the array is reused from one serve to
	// the next, where w.ready[1:] would leave markReady none to append to.
	// A key made ready again while it is served is served again after.
	sc := &w.serve
	for sc.readyAt < len(w.ready) {
		k := w.ready[sc.readyAt]
		sc.readyAt++
		w.serveKey(k)
	}
	clear(w.ready)
	w.ready, sc.readyAt = w.ready[:0], 0
	w.serving = false
}

// serveKey serves k's waiters for the kind k holds, first blocked first,
// while k has data; waiters for another kind are passed over, as Redis
// 7.0 serves a key's clients of the key's type only. A waiter whose owner
// is another shard needs that shard's grant first: the key's later
// waiters wait behind it until the answer comes (onGrant).
func (w *worker) serveKey(k waitKey) {
	for {
		kind, ok := w.ks.PeekKind(k.db, []byte(k.key))
		if !ok {
			return
		}
		wt := w.firstWaiter(k, kind)
		if wt == nil {
			return
		}
		b := wt.b
		if b.owner != w || b.state != blockWaiting {
			// Another shard owns it, or holds its grant: ask, and keep the
			// key's later waiters behind it until the answer.
			if !wt.asking {
				wt.asking = true
				w.toOwner(b, func() { b.owner.onAsk(wt) })
			}
			return
		}
		if b.wake {
			// A cross-shard move: its connection moves it (block_move.go).
			// The key's next waiter waits for that move (or its retry).
			b.woken = true
			w.finishBlocked(b, nil, 0)
			return
		}
		reply, lsn, ok := w.tryServe(b, k)
		if !ok {
			return // k holds no data of the kind waited for
		}
		w.finishBlocked(b, reply, lsn)
	}
}

// firstWaiter returns the first of k's waiters that pops kind, or nil.
func (w *worker) firstWaiter(k waitKey, kind keyspace.Kind) *waiter {
	for _, wt := range w.waits[k] {
		if wt.b.spec.Block.Pops() == kind {
			return wt
		}
	}
	return nil
}

// tryServe runs b's command again for key k alone; ok is false when k has
// no data for it. The reply is a copy, b's to keep: the client, writer and
// arguments the command runs with are the shard's, reused (serveScratch).
func (w *worker) tryServe(b *blocked, k waitKey) (reply []byte, lsn uint64, ok bool) {
	sc := &w.serve
	sc.cl = keyspace.Client{DB: b.db, Serving: true, ID: b.conn.id}
	sc.out.Reset()
	sc.out.Proto = b.proto
	sc.args = b.spec.Block.ServeArgs(b.args, b.posOf(k.key), sc.args[:0])
	w.track.caller = sc.cl.ID
	lsn = w.sh.Exec(&sc.cl, b.spec, sc.args, &sc.out)
	w.track.caller = 0
	clear(sc.args) // keeps no served command's arguments alive
	if len(w.notify.targets) > 0 {
		w.flushNotes() // the pop's events leave before its reply
	}
	if sc.cl.WouldBlock {
		return nil, 0, false
	}
	// A served BLMOVE wrote its destination: a key that may have waiters
	// of its own.
	w.signal(b.db, b.spec, b.args)
	return append([]byte(nil), sc.out.Buf...), lsn, true
}

// serveScratch is what a shard serves blocked commands with, reused from
// one to the next; tryServe does not nest (nothing the command runs
// serves another).
type serveScratch struct {
	cl   keyspace.Client
	out  resp.Writer
	args [][]byte
	// The replies to this shard's connections not yet handed over, the
	// message that hands them (made once) and whether it runs now.
	local      []localReply
	flushLocal func()
	flushing   bool
	// readyAt is the first key of worker.ready that serveReady has not
	// served yet.
	readyAt int
}

// posOf is the index in b.args of key, one of the keys b waits on.
func (b *blocked) posOf(key string) int {
	for _, p := range b.keyPos {
		if string(b.args[p]) == key {
			return p
		}
	}
	panic("server: a blocked command served from a key it does not wait on")
}
