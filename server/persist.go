package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"

	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/shard"
)

// defaultWALBackpressure is how many unwritten WAL bytes a shard tolerates
// before it stops reading from its clients; reading resumes below half of
// it.
const defaultWALBackpressure = 64 << 20

// shardDir is <dir>/shard-NNN.
func (s *Server) shardDir(id int) string {
	return filepath.Join(s.cfg.Dir, fmt.Sprintf("shard-%03d", id))
}

// recoverShard replays the shard's WAL into its keyspace and opens the
// writer that continues the log. It runs on the shard's loop thread before
// the shard listens; shards recover in parallel.
func (w *worker) recoverShard() error {
	s := w.srv
	dir := filepath.Join(s.shardDir(w.id), "wal")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("shard %d: %w", w.id, err)
	}
	var out resp.Writer
	var cl shard.Client
	var args [][]byte
	failed := int64(0)
	w.ks.Loading = true
	res, err := wal.Recover(wal.RecoverOptions{
		Dir:     dir,
		Shard:   uint32(w.id),
		Salvage: s.cfg.WALSalvage || os.Getenv(wal.SalvageEnv) == "1",
		Apply: func(lsn uint64, typ wal.RecordType, payload []byte) error {
			if typ != wal.RecordData {
				return nil
			}
			db, a, err := wal.DecodeCommandInto(args[:0], payload)
			if err != nil {
				return fmt.Errorf("record %d: %w", lsn, err)
			}
			args = a
			if db >= w.ks.NumDBs() {
				return fmt.Errorf("record %d: database %d, but the server has %d (--databases)", lsn, db, w.ks.NumDBs())
			}
			cl.DB = db
			out.Reset()
			w.ks.Exec(&cl, args, &out)
			if len(out.Buf) > 0 && out.Buf[0] == '-' {
				failed++
				if failed <= 10 {
					s.log.Error("WAL record failed to replay", "shard", w.id, "lsn", lsn, "reply", strings.TrimSpace(string(out.Buf)))
				}
			}
			return nil
		},
		Progress: func(p wal.Progress) {
			s.log.Info("recovering WAL", "shard", w.id, "segment", p.Segment, "records", p.Records,
				"MB/s", fmt.Sprintf("%.1f", p.MBPerSec()))
		},
	})
	w.ks.Loading = false
	if err != nil {
		return fmt.Errorf("shard %d: WAL recovery: %w", w.id, err)
	}
	for _, sk := range res.Skipped {
		s.log.Error("WAL salvage skipped damaged history", "shard", w.id, "skipped", sk.String())
	}
	if res.Truncated != nil {
		s.log.Warn("WAL torn tail truncated (the normal shape of a crash)", "shard", w.id, "truncated", fmt.Sprintf("%+v", *res.Truncated))
	}
	if res.Applied > 0 {
		s.log.Info("WAL replayed", "shard", w.id, "records", res.Applied, "bytes", res.Bytes,
			"elapsed", res.Elapsed.String(), "next_lsn", res.NextLSN)
	}
	w.walRecovered = res.Bytes
	w.replayFailures = failed
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
	w.walBlocked = app.Poisoned() != nil || app.LastError() != nil
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
	if len(w.paused) > 0 && app.Unwritten() < w.srv.walBackpressure/2 {
		paused := w.paused
		w.paused = nil
		for _, c := range paused {
			c.paused = false
			c.startRecv()
		}
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

// misconf is the error write commands get while the WAL cannot take them.
func (w *worker) misconf() string {
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

// closeWAL seals the log on shutdown, waiting for the writes and fsyncs in
// flight; done runs on the loop thread.
func (w *worker) closeWAL(done func(error)) {
	if w.wal == nil {
		done(nil)
		return
	}
	w.wal.Close(done)
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
