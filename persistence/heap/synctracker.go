package heap

import (
	"fmt"
	"slices"
)

// SyncTracker keeps, per heap file, which page writes an fsync has made
// durable, so that a write landing after an fsync started is never taken
// as covered by it.
//
// Every successful page write bumps its file's write generation
// (MarkWritten, called when the write completes, not when it is
// submitted: a write still in flight when the fsync starts may or may not
// be covered). SyncStarted takes the generation an fsync covers: every
// write completed before it. SyncDone records that generation as durable;
// the file needs another fsync exactly when a write completed after the
// fsync started. A checkpoint remembers the generation of each file's
// last write in its batch and finalizes only when Durable says so.
//
// Invariant (asserted): at most one fsync per file is outstanding.
type SyncTracker struct {
	files map[uint32]*fileSync
}

type fileSync struct {
	written  uint64 // generation of the last completed write
	synced   uint64 // highest generation an fsync made durable
	inflight uint64 // generation the outstanding fsync covers
	syncing  bool
}

// NewSyncTracker returns an empty tracker.
func NewSyncTracker() *SyncTracker { return &SyncTracker{files: make(map[uint32]*fileSync)} }

func (t *SyncTracker) file(id uint32) *fileSync {
	s := t.files[id]
	if s == nil {
		s = &fileSync{}
		t.files[id] = s
	}
	return s
}

// MarkWritten records a completed page write to file and returns the
// file's new write generation.
func (t *SyncTracker) MarkWritten(file uint32) uint64 {
	s := t.file(file)
	s.written++
	return s.written
}

// SyncStarted records that an fsync of file was submitted and returns the
// generation it covers. It panics when one is already outstanding.
func (t *SyncTracker) SyncStarted(file uint32) uint64 {
	s := t.file(file)
	if s.syncing {
		panic(fmt.Sprintf("heap: second fsync of file %08x while one is outstanding", file))
	}
	s.syncing, s.inflight = true, s.written
	return s.inflight
}

// SyncDone records that the fsync of file that covered gen succeeded. The
// completion of an fsync of a file the tracker forgot is ignored.
func (t *SyncTracker) SyncDone(file uint32, gen uint64) {
	s := t.files[file]
	if s == nil {
		return
	}
	if !s.syncing || s.inflight != gen {
		panic(fmt.Sprintf("heap: fsync of file %08x done for generation %d, none outstanding for it", file, gen))
	}
	s.syncing = false
	s.synced = max(s.synced, gen)
}

// SyncFailed records that the outstanding fsync of file failed: nothing it
// covered is durable (and, fsyncgate, nothing will be: the caller
// poisons).
func (t *SyncTracker) SyncFailed(file uint32) {
	if s := t.files[file]; s != nil {
		s.syncing = false
	}
}

// NeedsSync reports whether file has writes no successful fsync covers.
func (t *SyncTracker) NeedsSync(file uint32) bool {
	s := t.files[file]
	return s != nil && s.written > s.synced
}

// Syncing reports whether an fsync of file is outstanding.
func (t *SyncTracker) Syncing(file uint32) bool {
	s := t.files[file]
	return s != nil && s.syncing
}

// Durable reports whether the write of generation gen to file is durable.
// A file the tracker forgot (vanished or retired) holds nothing to wait
// for: Durable is true.
func (t *SyncTracker) Durable(file uint32, gen uint64) bool {
	s := t.files[file]
	return s == nil || s.synced >= gen
}

// Pending lists the files that need an fsync, ascending.
func (t *SyncTracker) Pending() []uint32 {
	var out []uint32
	for id, s := range t.files {
		if s.written > s.synced {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// Forget drops file: it vanished or was retired, and holds nothing back.
// An fsync of it still outstanding is ignored when it completes.
func (t *SyncTracker) Forget(file uint32) { delete(t.files, file) }
