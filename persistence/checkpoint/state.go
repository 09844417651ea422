package checkpoint

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
