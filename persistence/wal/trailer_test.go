package wal

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/moond-db/moond/runtime"
)

// dataFile opens a file for the trailers' writes, through the backend.
func (e *writerEnv) dataFile() (runtime.FD, string) {
	path := filepath.Join(filepath.Dir(e.dir), "data")
	ch := make(chan runtime.FD, 1)
	e.on(func() {
		e.be.Open(path, os.O_RDWR|os.O_CREATE, 0o644, func(fd runtime.FD, err error) {
			if err != nil {
				e.t.Errorf("open: %v", err)
			}
			ch <- fd
		})
	})
	return <-ch, path
}

type trailerResult struct {
	res  []runtime.Result
	err  error
	done bool
}

func (e *writerEnv) writeAfter(lsn uint64, fd runtime.FD, data string) *trailerResult {
	r := &trailerResult{}
	e.on(func() {
		e.w.WriteAfterDurable(lsn, []runtime.Op{{Kind: runtime.OpPwrite, FD: fd, Buf: []byte(data)}},
			func(res []runtime.Result, err error) { r.res, r.err, r.done = res, err, true })
	})
	return r
}

var syncThenData = []runtime.OpKind{runtime.OpFdatasync, runtime.OpPwrite}

// TestDataWritesAreLinkedAfterAnFdatasyncOfTheirRecords: under appendfsync
// no, a data write waiting on records goes out as one chain: an fdatasync
// of the segment, then the write; the group's own chain (whose completion
// releases the clients' replies) is left alone.
func TestDataWritesAreLinkedAfterAnFdatasyncOfTheirRecords(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newWriterEnv(t, kind, FsyncNo, 0)
		fd, path := e.dataFile()
		var last uint64
		var r *trailerResult
		e.on(func() {
			lsn, err := e.w.Appender().AppendCommand(0, [][]byte{[]byte("SET"), []byte("k"), []byte("v")})
			if err != nil {
				t.Fatal(err)
			}
			last = lsn
			r = &trailerResult{}
			e.w.WriteAfterDurable(last, []runtime.Op{{Kind: runtime.OpPwrite, FD: fd, Buf: []byte("page")}},
				func(res []runtime.Result, err error) { r.res, r.err, r.done = res, err, true })
		})
		var durable uint64
		e.waitUntil("the data write", func() bool { durable = e.w.Appender().DurableLSN(); return r.done })
		if r.err != nil || len(r.res) != 1 || r.res[0].N != 4 {
			t.Fatalf("data write: %+v, %v", r.res, r.err)
		}
		if durable < last {
			t.Fatalf("durable LSN %d when the data write completed, want >= %d", durable, last)
		}
		var chains [][]runtime.OpKind
		e.on(func() { chains = e.be.chains })
		if !slices.ContainsFunc(chains, func(c []runtime.OpKind) bool { return slices.Equal(c, syncThenData) }) {
			t.Fatalf("no chain fdatasync -> data write among %v", chains)
		}
		for _, c := range chains {
			if c[0] == runtime.OpPwrite && slices.Contains(c[1:], runtime.OpPwrite) {
				t.Fatalf("a group's chain carries other steps: %v", c)
			}
		}
		if b, _ := os.ReadFile(path); string(b) != "page" {
			t.Fatalf("data file holds %q", b)
		}
	})
}

// TestDataWritesWaitWhileTheWALWriteFails: the WAL write fails (ENOSPC);
// the data write waits, and goes out only once the retried write made the
// records durable.
func TestDataWritesWaitWhileTheWALWriteFails(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newWriterEnv(t, kind, FsyncAlways, 0)
		fd, path := e.dataFile()
		e.be.Add(failWrites(1))
		last := e.appendN(0, 3)
		r := e.writeAfter(last, fd, "page")
		var durable uint64
		var errs int64
		e.waitUntil("the data write", func() bool {
			durable, errs = e.w.Appender().DurableLSN(), e.w.Stats().WriteErrors
			return r.done
		})
		if errs != 1 || r.err != nil || durable < last {
			t.Fatalf("write errors %d, data write err %v, durable %d (want >= %d)", errs, r.err, durable, last)
		}
		if b, _ := os.ReadFile(path); string(b) != "page" {
			t.Fatalf("data file holds %q", b)
		}
	})
}

// TestDataWritesAreCancelledWhenTheirFdatasyncFails: the fdatasync in
// front of a data write fails: the write never runs, reports why, and the
// log is poisoned.
func TestDataWritesAreCancelledWhenTheirFdatasyncFails(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newWriterEnv(t, kind, FsyncNo, 0)
		fd, path := e.dataFile()
		last := e.appendN(0, 3)
		e.waitUntil("written", func() bool { return e.w.Appender().WrittenLSN() >= last })
		e.be.Add(failSyncs(1))
		r := e.writeAfter(last, fd, "page")
		e.waitUntil("the data write's answer", func() bool { return r.done })
		if r.err == nil || len(r.res) != 1 || r.res[0].Err != syscall.ECANCELED {
			t.Fatalf("data write after a failed fdatasync: %+v, %v", r.res, r.err)
		}
		var poisoned error
		e.on(func() { poisoned = e.w.Appender().Poisoned() })
		if poisoned == nil {
			t.Fatal("a failed fdatasync did not poison the log")
		}
		if st, _ := os.Stat(path); st.Size() != 0 {
			t.Fatalf("the data file was written (%d bytes) although its fdatasync failed", st.Size())
		}
	})
}

// TestDataWriteOnWrittenRecordsGetsItsOwnFdatasync: the records went out
// without an fdatasync (appendfsync no) and nothing else is queued: one
// chain of an fdatasync and the data write.
func TestDataWriteOnWrittenRecordsGetsItsOwnFdatasync(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newWriterEnv(t, kind, FsyncNo, 0)
		fd, _ := e.dataFile()
		last := e.appendN(0, 3)
		e.waitUntil("written", func() bool { return e.w.Appender().WrittenLSN() >= last })
		r := e.writeAfter(last, fd, "page")
		e.waitUntil("the data write", func() bool { return r.done })
		var chains [][]runtime.OpKind
		var durable uint64
		e.on(func() { chains, durable = e.be.chains, e.w.Appender().DurableLSN() })
		if r.err != nil || durable < last || !slices.Equal(chains[len(chains)-1], syncThenData) {
			t.Fatalf("err %v, durable %d (want >= %d), last chain %v", r.err, durable, last, chains[len(chains)-1])
		}
	})
}

// TestDataWriteOnDurableRecordsGoesOutAtOnce: nothing to wait for.
func TestDataWriteOnDurableRecordsGoesOutAtOnce(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind runtime.Kind) {
		e := newWriterEnv(t, kind, FsyncAlways, 0)
		fd, _ := e.dataFile()
		last := e.appendN(0, 3)
		e.waitUntil("durable", func() bool { return e.w.Appender().DurableLSN() >= last })
		var before int
		e.on(func() { before = len(e.be.chains) })
		r := e.writeAfter(last, fd, "page")
		e.waitUntil("the data write", func() bool { return r.done })
		var chains [][]runtime.OpKind
		e.on(func() { chains = e.be.chains[before:] })
		if r.err != nil || len(chains) != 1 || !slices.Equal(chains[0], []runtime.OpKind{runtime.OpPwrite}) {
			t.Fatalf("err %v, chains %v: want the data write alone", r.err, chains)
		}
	})
}
