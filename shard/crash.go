package shard

import (
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/moond-db/moond/persistence/checkpoint"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/runtime"
)

// The test-only crash hook (moond --test-crash-at STEP[@N]): the process
// kills itself with SIGKILL, as kill -9 would, at a named step of the N-th
// checkpoint a shard begins, so that the end-to-end tests reach each crash
// point inside a checkpoint on purpose rather than by luck.
//
// Most steps are points the checkpoint passes in the process (OnStep). Two
// lie inside a batch's linked chain — WAL write, fdatasync, page writes —
// which the kernel runs without coming back: after-barrier (the WAL is
// durable through the batch, no page written) and mid-pwrite (a page of the
// batch written, the next not). For those the shard's storage I/O runs
// through a vfs.FaultyBackend, and the N-th checkpoint arms a rule that
// holds the first (after-barrier) or second (mid-pwrite) heap page write:
// the steps before it run as a real linked chain, and the process dies
// while the held write waits. Production runs without either.

// CrashPoint is where the hook kills the process: Step of the
// Checkpoint-th checkpoint a shard begins (1 for its first).
type CrashPoint struct {
	Step       checkpoint.Step
	Checkpoint int
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
	if !slices.Contains(checkpoint.Steps, cp.Step) && !slices.Contains(ReshardSteps, cp.Step) {
		return CrashPoint{}, fmt.Errorf("%q: unknown step (one of %v %v)", v, checkpoint.Steps, ReshardSteps)
	}
	return cp, nil
}

// The crash points of a reshard's switch (reshard.go), each passed once:
// the new shards staged and closed, before the intent file; the intent
// durable, before any rename; every shard directory renamed, before
// moond.shards is rewritten.
const (
	StepReshardCopied  checkpoint.Step = "reshard-copied"
	StepReshardIntent  checkpoint.Step = "reshard-intent"
	StepReshardRenamed checkpoint.Step = "reshard-renamed"
)

// ReshardSteps are the reshard's crash points, in the order they are
// passed.
var ReshardSteps = []checkpoint.Step{StepReshardCopied, StepReshardIntent, StepReshardRenamed}

// reshardStep kills the process when the crash point is step.
func (cp CrashPoint) reshardStep(step checkpoint.Step, log *slog.Logger) {
	if cp.Step != step {
		return
	}
	log.Warn("test hook: killing the process at a reshard step", "step", string(step))
	killSelf()
}

// insideChain reports whether the crash point lies inside a linked chain.
func (cp CrashPoint) insideChain() bool {
	return cp.Step == checkpoint.StepBarrier || cp.Step == checkpoint.StepMidPwrite
}

// crashBackend wraps the storage backend for a crash point inside a
// linked chain; any other crash point, and production, use be as it is.
func (s *Shard) crashBackend(be runtime.Backend) runtime.Backend {
	if !s.o.CrashAt.insideChain() {
		return be
	}
	s.crashFaults = vfs.NewFaultyBackend(s.loop, be)
	return s.crashFaults
}

// armCrash runs as a checkpoint begins: in the crash point's checkpoint it
// holds the heap page write the crash point names, and kills the process
// once the write is held (the steps linked before it are complete then).
func (s *Shard) armCrash() {
	at := s.o.CrashAt
	if s.crashFaults == nil || s.ckpt.begun != at.Checkpoint {
		return
	}
	skip := 0 // after-barrier: the batch's first page write
	if at.Step == checkpoint.StepMidPwrite {
		skip = 1 // the second: the first one is written
	}
	entered := make(chan string)
	s.crashFaults.Add(vfs.Rule{
		Op: vfs.OpWrite, Path: heap.FilePattern, Fault: vfs.FaultHang, Skip: skip,
		Gate: make(chan struct{}), Entered: entered,
	})
	go func() {
		path := <-entered
		s.crash(at, "page write of "+path+" held")
	}()
}

// checkpointStep is the checkpoint's step hook: the crash points the
// process passes.
func (s *Shard) checkpointStep(step checkpoint.Step) {
	at := s.o.CrashAt
	if at.Step == "" || at.Step != step || s.ckpt.begun < at.Checkpoint {
		return
	}
	s.crash(at, "")
}

func (s *Shard) crash(at CrashPoint, how string) {
	s.log.Warn("test hook: killing the process at a checkpoint step", "shard", s.id, "step", string(at.Step), "checkpoint", at.Checkpoint, "how", how)
	killSelf()
}
