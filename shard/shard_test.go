package shard

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/runtime/looptest"
)

// backends are the I/O backends every test runs on.
var backends = []runtime.Kind{runtime.KindUring, runtime.KindPool}

// startLoop starts a loop on backend kind, stopped at the end of the test.
func startLoop(t *testing.T, kind runtime.Kind) *runtime.Loop {
	t.Helper()
	l := runtime.NewLoop(runtime.Config{Backend: kind, CPU: -1})
	if err := l.Start(); err != nil {
		t.Skipf("%v backend: %v", kind, err)
	}
	t.Cleanup(l.Stop)
	return l
}

func testOptions(dir, fsync string) Options {
	return Options{
		Dir: dir, Log: slog.New(slog.DiscardHandler), Databases: 16, ProtoMaxBulkLen: 512 << 20,
		AppendOnly: fsync != "", AppendFsync: fsync, WALSegmentSize: 1 << 20, PageCacheSize: 4 << 20,
		Tunables: func() Tunables { return Tunables{CheckpointTimeout: time.Hour} },
	}
}

// open opens a shard on l.
func open(t *testing.T, l *runtime.Loop, o Options) *Shard {
	t.Helper()
	var s *Shard
	var err error
	looptest.On(t, l, func() { s, err = Open(l, o) })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// closeShard closes s and waits for it.
func closeShard(t testing.TB, l *runtime.Loop, s *Shard) {
	t.Helper()
	closed, failed := false, error(nil)
	looptest.On(t, l, func() { s.Close(func(err error) { closed, failed = true, err }) })
	if !looptest.Until(t, l, func() bool { return closed }) {
		t.Fatal("Close did not finish")
	}
	if failed != nil {
		t.Fatal(failed)
	}
}

// exec runs one command on s (on l's thread) and returns its reply and LSN.
func exec(t *testing.T, l *runtime.Loop, s *Shard, args ...string) (string, uint64) {
	t.Helper()
	var out resp.Writer
	out.Proto = 2
	var lsn uint64
	a := make([][]byte, len(args))
	for i, x := range args {
		a[i] = []byte(x)
	}
	looptest.On(t, l, func() { lsn = s.Exec(&keyspace.Client{}, keyspace.Lookup(a[0]), a, &out) })
	return string(out.Buf), lsn
}

func TestExecReturnsTheLSNAndWhenDurableWaitsForTheFdatasync(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind.String(), func(t *testing.T) {
			dir := t.TempDir() // before the loop: removed once it stopped
			l := startLoop(t, kind)
			s := open(t, l, testOptions(dir, "always"))
			defer closeShard(t, l, s)
			if reply, lsn := exec(t, l, s, "GET", "k"); reply != "$-1\r\n" || lsn != 0 {
				t.Fatalf("GET of a missing key: %q, LSN %d; want a nil and no record", reply, lsn)
			}
			reply, lsn := exec(t, l, s, "SET", "k", "v")
			if reply != "+OK\r\n" || lsn == 0 {
				t.Fatalf("SET: %q, LSN %d; want +OK and the record's LSN", reply, lsn)
			}
			released, durableThen := false, uint64(0)
			looptest.On(t, l, func() {
				s.WhenDurable(lsn, func() {
					released, durableThen = true, s.Info().WAL.DurableLSN
				}, func() { t.Error("a healthy WAL failed a held reply") })
			})
			if !looptest.Until(t, l, func() bool { return released }) {
				t.Fatal("the held reply was never released")
			}
			if durableThen < lsn {
				t.Fatalf("released at durable LSN %d, before the write's record %d", durableThen, lsn)
			}
		})
	}
}

func TestWithoutAppendOnlyNothingIsLoggedOrHeld(t *testing.T) {
	dir := t.TempDir() // before the loop: removed once it stopped
	l := startLoop(t, runtime.KindPool)
	s := open(t, l, testOptions(dir, ""))
	defer closeShard(t, l, s)
	_, lsn := exec(t, l, s, "SET", "k", "v")
	if lsn != 0 {
		t.Fatalf("SET logged record %d with appendonly no", lsn)
	}
	released := false
	looptest.On(t, l, func() {
		s.WhenDurable(lsn, func() { released = true }, func() { t.Error("failed") })
		if !released {
			t.Error("WhenDurable of LSN 0 did not release at once")
		}
		if got := s.Info().Changes; got != 1 {
			t.Errorf("rdb_changes_since_last_save %d, want 1", got)
		}
	})
}

func TestReopenedShardHasWhatTheClosedOneAcknowledged(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind.String(), func(t *testing.T) {
			dir := t.TempDir()
			l := startLoop(t, kind)
			s := open(t, l, testOptions(dir, "everysec"))
			for i := range 100 {
				exec(t, l, s, "SET", fmt.Sprint("k", i), fmt.Sprint(i))
			}
			// Half of them reach the heap through a checkpoint; the rest
			// only the WAL.
			save(t, l, s)
			for i := range 50 {
				exec(t, l, s, "DEL", fmt.Sprint("k", i))
			}
			closeShard(t, l, s)

			s = open(t, l, testOptions(dir, "everysec"))
			defer closeShard(t, l, s)
			if reply, _ := exec(t, l, s, "DBSIZE"); reply != ":50\r\n" {
				t.Fatalf("DBSIZE after reopening: %q, want 50", reply)
			}
			if reply, _ := exec(t, l, s, "GET", "k77"); reply != "$2\r\n77\r\n" {
				t.Fatalf("GET k77 after reopening: %q", reply)
			}
		})
	}
}

// TestInfoWhileAppendOnlyIsOff: once CONFIG SET appendonly no sealed the
// log, the shard has a checkpoint manager and no WAL writer; INFO must
// report it (it dereferenced the writer and crashed the server).
func TestInfoWhileAppendOnlyIsOff(t *testing.T) {
	dir := t.TempDir() // before the loop: removed once it stopped
	l := startLoop(t, runtime.KindPool)
	s := open(t, l, testOptions(dir, "always"))
	exec(t, l, s, "SET", "k", "v")
	looptest.On(t, l, func() { s.SetAppendOnly(false) })
	if !looptest.Until(t, l, func() bool { return !s.AppendOnly() && !s.busy }) {
		t.Fatal("appendonly no did not seal the log")
	}
	var info Info
	looptest.On(t, l, func() { info = s.Info() })
	if info.WAL.Enabled || info.Checkpoint.WALSince != 0 {
		t.Errorf("INFO with appendonly off: WAL enabled %v, WAL since the checkpoint %d", info.WAL.Enabled, info.Checkpoint.WALSince)
	}
	closeShard(t, l, s)
}
