package wal

import "fmt"

// The Writer runs two pipelines side by side on the loop's thread: the
// group pipeline (groupState: at most one group taken from the Appender,
// its segment's creation, its write, a retry after a failure) and the
// standalone fdatasync of the open segment (syncState: Sync's, for
// everysec and the checkpoint's barriers, or syncForTrailers', with the
// data writes linked after it). An fdatasync may run while a group is
// written: it covers what was written before it was submitted. Each
// completion asserts the state that submitted it; a mismatch is a
// programming error. Closing (Writer.closing) and the poisoned log
// (Appender.Poisoned) are orthogonal to both.

// groupState is where the group pipeline is.
type groupState uint8

const (
	groupIdle     groupState = iota // no group taken: Kick may take one
	groupCreating                   // the group's segment being created (temp file, fsync, rename, directory fsync)
	groupWriting                    // the group's chain (pwrite, plus fdatasync under always or a seal) in flight
	groupRetry                      // a failed group waits, back in the Appender, for its retry timer
)

func (s groupState) String() string {
	return [...]string{"idle", "creating", "writing", "retry"}[s]
}

// syncState is where the standalone fdatasync is.
type syncState uint8

const (
	syncIdle     syncState = iota // none in flight
	syncRunning                   // Sync's fdatasync of the open segment
	syncTrailers                  // syncForTrailers' fdatasync, data writes linked after it
)

func (s syncState) String() string {
	return [...]string{"idle", "running", "trailers"}[s]
}

// expectGroup asserts, at a completion of the group pipeline, that it is
// in state s with group g in flight (nil: none).
func (w *Writer) expectGroup(s groupState, g *Group) {
	if w.group != s || w.inflight != g {
		panic(fmt.Sprintf("wal: group completion for %v found the writer %v (group %p, want %p)", s, w.group, w.inflight, g))
	}
}

// expectSync asserts, at an fdatasync's completion, that it is the one
// in flight.
func (w *Writer) expectSync(s syncState) {
	if w.sync != s {
		panic(fmt.Sprintf("wal: fdatasync completion for %v found %v", s, w.sync))
	}
}
