package checkpoint

import "fmt"

// State is where the checkpoint state machine is.
type State uint8

const (
	Idle       State = iota // no checkpoint running
	Writing                 // writing the dirty keys' versions into pages
	Flushing                // FPI → WAL barrier → pwrite, batch by batch
	Syncing                 // waiting for the heap files' fsyncs
	Finalizing              // manifest, checkpoint record, control file
	Poisoned                // an fsync failed: never again (fsyncgate)
)

func (s State) String() string {
	return [...]string{"idle", "writing", "flushing", "syncing", "finalizing", "poisoned"}[s]
}

// Step names a point inside a checkpoint that tests crash at on purpose.
// Options.OnStep reports the ones the process passes. StepBarrier and
// StepMidPwrite lie inside a batch's linked chain (WAL write, fdatasync,
// page writes), which the kernel runs without returning to the process:
// a test reaches them by holding the chain's page writes in the backend
// (vfs.FaultyBackend, as the shard's crash hook does), which runs the
// steps before the held one as a real chain.
type Step string

// The steps, in the order a checkpoint passes them.
const (
	StepFPIAppended    Step = "after-fpi"     // a batch's full-page images appended, barrier not yet asked
	StepBarrier        Step = "after-barrier" // the batch's WAL barrier is durable, no page written yet
	StepMidPwrite      Step = "mid-pwrite"    // a page of a batch written while others of it are not yet
	StepPwritten       Step = "after-pwrite"  // every page written, no heap fsync yet
	StepFsynced        Step = "after-fsync"   // heap files durable, manifest and control file not yet written
	StepControlWritten Step = "after-control" // control file published, WAL not yet recycled
)

// Steps lists every Step.
var Steps = []Step{StepFPIAppended, StepBarrier, StepMidPwrite, StepPwritten, StepFsynced, StepControlWritten}

func (m *Manager) step(s Step) {
	if m.o.OnStep != nil {
		m.o.OnStep(s)
	}
}

// finalizeStep is where Finalizing is. Its steps run in this order; a
// failed one is retried (after a backoff) from where it failed, so the
// published redo point moves only once all four succeeded.
type finalizeStep uint8

const (
	// finSyncDir fsyncs the heap directory when the checkpoint created
	// files: their directory entries are durable before the manifest
	// names them.
	finSyncDir finalizeStep = iota
	// finManifest commits the manifest (atomic replacement).
	finManifest
	// finEndRecord appends the checkpoint-end record (once) and waits
	// until it is durable.
	finEndRecord
	// finControl writes the control file atomically, then publishes.
	finControl
)

func (s finalizeStep) String() string {
	return [...]string{"sync-dir", "manifest", "end-record", "control"}[s]
}

// wait is the operation the machine waits for: the step that started it
// returned, and only its completion moves the machine on (advance does
// nothing meanwhile). Every wait belongs to one State, and a finalize wait
// to one finalizeStep; its completion asserts both (see await, resume).
type wait uint8

const (
	waitNone        wait = iota // nothing in flight: advance may run the next step
	waitYield                   // Writing: the loop's turn between two chunks of keys
	waitLoad                    // Writing: the cold pages the next keys need, reading (Options.LoadPages)
	waitSpillOpen               // Writing, spilling: the heap files of the next batch opening
	waitSpillWrites             // Writing, spilling: the batch's page writes
	waitOpen                    // Flushing: the heap files of the next batch opening
	waitWrites                  // Flushing: the batch's page writes
	waitVerify                  // Syncing: the fsynced files' paths opened again (verify.go)
	waitSyncDir                 // Finalizing, finSyncDir: the heap directory's fsync
	waitManifest                // Finalizing, finManifest: the manifest's replacement
	waitEndDurable              // Finalizing, finEndRecord: the end record's WAL barrier
	waitControl                 // Finalizing, finControl: the control file's replacement
)

func (w wait) String() string {
	return [...]string{"none", "yield", "load", "spill-open", "spill-writes", "open", "writes", "verify", "sync-dir", "manifest", "end-durable", "control"}[w]
}

// phase is the State a wait belongs to, and for a finalize wait the
// finalizeStep.
func (w wait) phase() (State, finalizeStep) {
	switch w {
	case waitYield, waitLoad, waitSpillOpen, waitSpillWrites:
		return Writing, 0
	case waitOpen, waitWrites:
		return Flushing, 0
	case waitVerify:
		return Syncing, 0
	case waitSyncDir:
		return Finalizing, finSyncDir
	case waitManifest:
		return Finalizing, finManifest
	case waitEndDurable:
		return Finalizing, finEndRecord
	case waitControl:
		return Finalizing, finControl
	}
	panic(fmt.Sprintf("checkpoint: wait %v has no phase", w))
}

// await records that the current step started w and returns the
// checkpoint generation its completion hands to resume. The machine must
// be idle in w's phase: one operation at a time.
func (m *Manager) await(w wait) uint64 {
	state, fin := w.phase()
	if m.wait != waitNone || m.state != state || (state == Finalizing && m.fin != fin) {
		panic(fmt.Sprintf("checkpoint: start %v in %v (finalize %v) waiting for %v", w, m.state, m.fin, m.wait))
	}
	m.wait = w
	return m.gen
}

// resume is the first thing the completion of w does: it asserts that the
// machine is where await left it (waiting for w, in checkpoint gen, in
// w's phase and finalize step) and clears the wait. The one legitimate
// change meanwhile is Poisoned (an outstanding heap fsync failed): the
// completion then runs on, and advance does nothing. A mismatch is a
// programming error.
func (m *Manager) resume(w wait, gen uint64) {
	state, fin := w.phase()
	ok := m.wait == w && m.gen == gen
	if ok && m.state != Poisoned {
		ok = m.state == state && (state != Finalizing || m.fin == fin)
	}
	if !ok {
		panic(fmt.Sprintf("checkpoint: completion of %v (checkpoint %d) found %v (finalize %v) waiting for %v (checkpoint %d)",
			w, gen, m.state, m.fin, m.wait, m.gen))
	}
	m.wait = waitNone
}
