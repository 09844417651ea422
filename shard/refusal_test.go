package shard

import (
	"math"
	"strings"
	"testing"

	"github.com/moond-db/moond/persistence/control"
	"github.com/moond-db/moond/persistence/manifest"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/runtime/looptest"
)

// A write whose record the WAL cannot take is refused before it runs: it
// changes nothing in memory, its client gets MISCONF, and INFO keeps the
// refusal (latched) until restart. The WAL is made to refuse the way that
// needs no timing: a shard whose LSNs are spent (its control file puts the
// redo point at the end of the LSN space).
func TestAWriteTheWALCannotTakeChangesNothing(t *testing.T) {
	for _, kind := range backends {
		t.Run(kind.String(), func(t *testing.T) {
			dir := t.TempDir()
			redo := uint64(math.MaxUint64 - 1 - 1<<32)
			if err := control.Write(vfs.Default, dir, control.Control{RedoLSN: redo, NextFileID: 1}); err != nil {
				t.Fatal(err)
			}
			if err := manifest.New(0).Prepare(dir).Run(vfs.Default); err != nil {
				t.Fatal(err)
			}
			l := startLoop(t, kind)
			// Not closed: its shutdown checkpoint could not log either and
			// would wait out its 5 s; the loop's stop releases it.
			s := open(t, l, testOptions(dir, "always"))
			reply, lsn := exec(t, l, s, "SET", "k", "v")
			if !strings.HasPrefix(reply, "-MISCONF ") || lsn != 0 {
				t.Fatalf("SET the WAL cannot log: %q, LSN %d; want MISCONF and no record", reply, lsn)
			}
			if reply, _ := exec(t, l, s, "GET", "k"); reply != "$-1\r\n" {
				t.Fatalf("GET after the refused SET: %q, want nil: the write changed memory", reply)
			}
			looptest.On(t, l, func() {
				if s.Info().WAL.AppendRefused == nil {
					t.Error("INFO does not report the refused append")
				}
			})
			if reply, _ := exec(t, l, s, "GET", "other"); reply != "$-1\r\n" {
				t.Fatalf("reads must go on: %q", reply)
			}
		})
	}
}
