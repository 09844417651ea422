package shard

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/moond-db/moond/persistence/checkpoint"
)

// CrashPoint is where the test-only hook (moond --test-crash-at) kills the
// process: Step of the Checkpoint-th checkpoint a shard begins (1 for its
// first).
type CrashPoint struct {
	Step       checkpoint.Step
	Checkpoint int
}

// checkpointStep is the checkpoint's step hook: at the crash point the
// process kills itself with SIGKILL, as kill -9 would, so that the
// end-to-end tests reach each crash point inside a checkpoint on purpose.
func (s *Shard) checkpointStep(step checkpoint.Step) {
	at := s.o.CrashAt
	if at.Step == "" || at.Step != step || s.ckpt.begun < at.Checkpoint {
		return
	}
	s.log.Warn("test hook: killing the process at a checkpoint step", "shard", s.id, "step", string(step), "checkpoint", s.ckpt.begun)
	killSelf()
}

// ParseCrashPoint parses STEP[@N]: checkpoint step STEP (one of
// checkpoint.Steps) of the N-th checkpoint a shard begins (default 1).
func ParseCrashPoint(v string) (CrashPoint, error) {
	step, n, hasN := strings.Cut(v, "@")
	cp := CrashPoint{Step: checkpoint.Step(step), Checkpoint: 1}
	if hasN {
		k, err := strconv.Atoi(n)
		if err != nil || k < 1 {
			return CrashPoint{}, fmt.Errorf("%q: bad checkpoint number", v)
		}
		cp.Checkpoint = k
	}
	if !slices.Contains(checkpoint.Steps, cp.Step) {
		return CrashPoint{}, fmt.Errorf("%q: unknown step (one of %v)", v, checkpoint.Steps)
	}
	return cp, nil
}
