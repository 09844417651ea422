package server

import (
	"github.com/moond-db/moond/persistence/checkpoint"
)

// checkpointStep is the test-only crash hook (--test-crash-at): the
// process kills itself with SIGKILL at the named step of the named
// checkpoint, as kill -9 would.
func (w *worker) checkpointStep(step checkpoint.Step) {
	at := w.srv.CrashAt
	if at.Step == "" || at.Step != step || w.ckpt.begun < at.Checkpoint {
		return
	}
	w.srv.log.Warn("test hook: killing the process at a checkpoint step", "shard", w.id, "step", string(step), "checkpoint", w.ckpt.begun)
	killSelf()
}

// CrashPoint is where the test-only hook kills the process: Step of the
// Checkpoint-th checkpoint a shard begins (1 for its first).
type CrashPoint struct {
	Step       checkpoint.Step
	Checkpoint int
}
