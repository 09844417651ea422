package server

import (
	"path/filepath"
	"testing"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/runtime/looptest"
	"github.com/moond-db/moond/shard"
)

// TestReadOnlyTxnOfAGroupAnswersAfterTheWritingTxnBeforeIt: in one group,
// a writing txn over shards 0 and 1 runs, then a read-only txn reads its
// write on shard 0. While shard 1's fdatasync hangs, the writing txn is
// not whole in the logs (a crash would drop it), so the reader must not
// get the value yet, though shard 0's own log holds everything; it gets
// it once shard 1's disk answers.
func TestReadOnlyTxnOfAGroupAnswersAfterTheWritingTxnBeforeIt(t *testing.T) {
	s, f := startFaulty(t, "uring", 2)
	k0, k1 := keyOnShard(t, 0, 2), keyOnShard(t, 1, 2)
	gate := make(chan struct{})
	opened := false
	release := f.add(vfs.Rule{Op: vfs.OpDatasync, Path: filepath.Join(s.cfg.Dir, shard.DirName(1), "wal", walFiles),
		Fault: vfs.FaultHang, Gate: gate})
	defer func() {
		release()
		if !opened {
			close(gate)
		}
	}()
	run := func(args ...string) stepFunc {
		return func(w *worker, out *resp.Writer) uint64 {
			a := make([][]byte, len(args))
			for i, x := range args {
				a[i] = []byte(x)
			}
			return w.execData(&keyspace.Client{}, keyspace.Lookup(a[0]), a, out)
		}
	}
	w := s.workers[0]
	read := make(chan string, 1)
	looptest.On(t, w.loop, func() {
		writer := w.beginTxn([]int{0, 1}, func(t *txn) {
			t.step(0, 2, run("SET", k0, "new"), true, func([]byte) {})
			t.step(1, 2, run("SET", k1, "new"), true, func([]byte) {})
		})
		writer.writes = true
		w.beginTxn([]int{0}, func(t *txn) {
			t.step(0, 2, run("GET", k0), true, func(r []byte) { read <- string(r) })
		})
	})
	// Shard 0's log holds the writer's part and its END: without the
	// group's rule the reader's reply would be out by now.
	if !looptest.Until(t, w.loop, func() bool { return w.sh.LastLSN() > 0 && w.sh.ReadBarrier() == 0 }) {
		t.Fatal("shard 0's log never caught up")
	}
	looptest.On(t, w.loop, func() {})
	select {
	case r := <-read:
		t.Fatalf("the read-only txn answered %q while the txn it read was not in shard 1's log", r)
	default:
	}
	opened = true
	close(gate)
	if r := <-read; r != "$3\r\nnew\r\n" {
		t.Fatalf("the read-only txn answered %q, want the writer's value", r)
	}
}
