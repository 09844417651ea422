package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/wal"
)

// defaultWALBackpressure is how many unwritten WAL bytes a shard tolerates
// before it stops reading from its clients; reading resumes below half of
// it.
const defaultWALBackpressure = 64 << 20

// shardDir is <dir>/shard-NNN.
func (s *Server) shardDir(id int) string {
	return filepath.Join(s.cfg.Dir, fmt.Sprintf("shard-%03d", id))
}

// recoverShard restores the shard's keyspace from its heap and WAL (see
// recoverPersisted) and opens the writer that continues the log, and the
// checkpoints that bound it. It runs on the shard's loop thread before the
// shard listens; shards recover in parallel.
func (w *worker) recoverShard() error {
	s := w.srv
	dir := filepath.Join(s.shardDir(w.id), "wal")
	for _, d := range []string{dir, filepath.Join(s.shardDir(w.id), heap.DirName)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("shard %d: %w", w.id, err)
		}
	}
	res, st, superseded, err := w.recoverPersisted(dir)
	if err != nil {
		return err
	}
	for _, sk := range res.Skipped {
		s.log.Error("WAL salvage skipped damaged history", "shard", w.id, "skipped", sk.String())
	}
	if res.Truncated != nil {
		s.log.Warn("WAL torn tail truncated (the normal shape of a crash)", "shard", w.id, "truncated", fmt.Sprintf("%+v", *res.Truncated))
	}
	if res.Applied > 0 {
		s.log.Info("WAL replayed", "shard", w.id, "records", w.replayedData, "checkpoint_records", res.Applied-w.replayedData, "bytes", res.Bytes,
			"elapsed", res.Elapsed.String(), "next_lsn", res.NextLSN, "redo", st.Redo)
	}
	w.walRecovered = res.Bytes
	if !s.cfg.AppendOnly {
		return nil
	}
	policy, err := wal.ParseFsyncPolicy(s.cfg.AppendFsync)
	if err != nil {
		return err
	}
	app := wal.NewAppender(wal.AppenderOptions{Shard: uint32(w.id), SegmentSize: s.cfg.WALSegmentSize, NextLSN: res.NextLSN, Prev: res.Tail})
	be := w.be
	if s.walBackend != nil {
		be = s.walBackend(w.loop, be)
	}
	w.wal = wal.NewWriter(w.loop, be, app, dir, policy)
	w.wal.OnProgress = w.walProgress
	w.loop.BeforeWait(w.wal.Kick)
	w.startCheckpoints(st, superseded)
	return nil
}

// walAppend logs one effective write (the keyspace's journal hook) and
// remembers its LSN for the command being executed.
func (w *worker) walAppend(db int, args [][]byte) {
	if w.wal == nil {
		return
	}
	lsn, err := w.wal.Appender().AppendCommand(db, args)
	if err != nil {
		// Writes are refused while the log cannot take records, so this is
		// a record over the size limit, or the poisoning that happened in
		// this very iteration.
		w.srv.log.Error("write applied in memory but not logged", "shard", w.id, "err", err)
		w.walBlocked = true
		return
	}
	w.curLSN = lsn
}

// walProgress runs when the WAL's written or durable LSN moved or its
// error state changed: release held replies, resume paused readers, update
// whether writes are refused.
func (w *worker) walProgress() {
	app := w.wal.Appender()
	w.logWALState(app)
	w.walBlocked = app.Poisoned() != nil || app.LastError() != nil || w.heapPoisoned() != nil
	if w.ckpt != nil && w.ckpt.barrier != nil {
		w.ckpt.barrier.Progress()
	}
	acked := w.ackedLSN()
	for len(w.held) > 0 && w.held[0].lsn <= acked {
		h := w.held[0]
		w.held[0] = heldReply{}
		w.held = w.held[1:]
		h.release()
	}
	if app.Poisoned() != nil && len(w.held) > 0 {
		// These writes will never be durable: nothing may acknowledge them.
		held := w.held
		w.held = nil
		for _, h := range held {
			h.fail()
		}
	}
	w.resumeReaders()
}

// readsPaused reports whether connections must stop reading: too much WAL
// is unwritten, or the WAL reached --max-wal-size while a checkpoint runs.
func (w *worker) readsPaused() bool {
	if w.wal == nil {
		return false
	}
	return w.wal.Appender().Unwritten() > w.srv.walBackpressure || (w.ckpt != nil && w.ckpt.walFull)
}

// resumeReaders restarts the paused connections once neither reason holds
// (the unwritten WAL below half the back-pressure mark).
func (w *worker) resumeReaders() {
	if len(w.paused) == 0 || w.wal.Appender().Unwritten() >= w.srv.walBackpressure/2 || (w.ckpt != nil && w.ckpt.walFull) {
		return
	}
	paused := w.paused
	w.paused = nil
	for _, c := range paused {
		c.paused = false
		c.startRecv()
	}
}

// logWALState logs the WAL's error state when it changes: a failed write
// (writes refused until a retry succeeds), the recovery from it, and the
// poisoning (for good).
func (w *worker) logWALState(app *wal.Appender) {
	log := w.srv.log
	switch poison, last := app.Poisoned(), app.LastError(); {
	case poison != nil && !w.walLoggedPoison:
		w.walLoggedPoison = true
		log.Error("WAL fsync failed: shard poisoned, writes refused until restart (fsyncgate)", "shard", w.id, "err", poison)
	case poison == nil && last != nil && !w.walLoggedErr:
		w.walLoggedErr = true
		log.Error("WAL write failed: writes refused (MISCONF) while it is retried", "shard", w.id, "err", last)
	case poison == nil && last == nil && w.walLoggedErr:
		w.walLoggedErr = false
		log.Warn("WAL write succeeded again: writes accepted", "shard", w.id)
	}
}

// heldReply is a reply that may leave only once the WAL holds lsn. fail
// runs instead of release when the WAL is poisoned before it does.
type heldReply struct {
	lsn     uint64
	release func()
	fail    func()
}

// ackedLSN is how far the WAL must have got before a write is acknowledged:
// under appendfsync always, durable (fdatasync returned); otherwise written
// (in the kernel's page cache, so that it survives the process being killed,
// as Redis's AOF write() before replying does; a power loss may take the
// last second under everysec).
func (w *worker) ackedLSN() uint64 {
	app := w.wal.Appender()
	if w.wal.Policy == wal.FsyncAlways {
		return app.DurableLSN()
	}
	return app.WrittenLSN()
}

// holdUntilAcked runs release once the WAL holds every record up to lsn
// (see ackedLSN): at once when it already does. LSNs only grow, so the
// queue stays sorted.
func (w *worker) holdUntilAcked(lsn uint64, release, fail func()) {
	if w.wal == nil || lsn <= w.ackedLSN() {
		release()
		return
	}
	if w.wal.Appender().Poisoned() != nil {
		fail()
		return
	}
	w.held = append(w.held, heldReply{lsn: lsn, release: release, fail: fail})
}

// repliesWaitForWAL says whether replies to writes wait for the WAL.
func (w *worker) repliesWaitForWAL() bool { return w.wal != nil }

// misconf is the error write commands get while the WAL cannot take them,
// or after a heap fsync failed.
func (w *worker) misconf() string {
	if err := w.heapPoisoned(); err != nil {
		return "MISCONF Errors writing to the data files (the shard is poisoned until restart): " + strerror(err)
	}
	app := w.wal.Appender()
	err := app.Poisoned()
	if err == nil {
		err = app.LastError()
	}
	return "MISCONF Errors writing to the AOF file: " + strerror(err)
}

// strerror renders an error like C's strerror of the errno inside it
// ("No space left on device"), which is what Redis puts in MISCONF.
func strerror(err error) string {
	if err == nil {
		return "unknown error"
	}
	msg := err.Error()
	var errno syscall.Errno
	if errors.As(err, &errno) {
		msg = errno.Error()
	} else if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	r := []rune(msg)
	if len(r) == 0 {
		return "unknown error"
	}
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// shutdownCheckpoint runs the shutdown checkpoint (waiting for an
// outstanding heap fsync at most 5 s), then calls done on the loop thread.
func (w *worker) shutdownCheckpoint(done func()) {
	if w.ckpt == nil || w.ckpt.mgr == nil {
		done()
		return
	}
	start := time.Now()
	w.ckpt.mgr.Shutdown(func(err error) {
		if err != nil {
			w.srv.log.Error("shutdown checkpoint did not finish; the next start replays the WAL above the last one",
				"shard", w.id, "err", err)
		} else {
			w.srv.log.Info("shutdown checkpoint done", "shard", w.id, "elapsed", time.Since(start).String())
		}
		done()
	})
}

// closeWAL seals the log on shutdown, waiting for the writes and fsyncs in
// flight; done runs on the loop thread.
func (w *worker) closeWAL(done func(error)) {
	if w.wal == nil {
		w.closeHeap()
		done(nil)
		return
	}
	w.wal.Close(func(err error) {
		w.closeHeap()
		done(err)
	})
}

// walInfo is one shard's WAL figures for INFO persistence.
type walInfo struct {
	enabled        bool
	nextLSN        uint64
	durableLSN     uint64
	stats          wal.WriterStats
	lastErr        error
	poison         error
	unwritten      int
	recoveredBytes int64
	policy         string
}

func (w *worker) collectWAL() walInfo {
	wi := walInfo{recoveredBytes: w.walRecovered}
	if w.wal == nil {
		return wi
	}
	app := w.wal.Appender()
	wi.enabled = true
	wi.nextLSN, wi.durableLSN = app.NextLSN(), app.DurableLSN()
	wi.stats = w.wal.Stats()
	wi.lastErr, wi.poison = app.LastError(), app.Poisoned()
	wi.unwritten = app.Unwritten()
	wi.policy = w.wal.Policy.String()
	return wi
}

// setFsyncPolicy applies CONFIG SET appendfsync on this shard.
func (w *worker) setFsyncPolicy(p wal.FsyncPolicy) {
	if w.wal != nil {
		w.wal.Policy = p
		w.walProgress() // replies held for an fdatasync may only need the write now
	}
}
