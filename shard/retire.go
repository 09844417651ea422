package shard

import (
	"errors"
	"io/fs"
	"slices"

	"github.com/moond-db/moond/persistence/checkpoint"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/wal"
)

// What a published redo point lets go: WAL segments wholly below it, and
// heap files with no live record, tombstoned by one checkpoint and unlinked
// after the next publishes over the tombstone.

// recycleSegments unlinks the WAL segments whose every record is below
// redo.
func (s *Shard) recycleSegments(redo uint64) {
	c := s.ckpt
	for _, first := range checkpoint.Recyclable(c.segs, redo) {
		path := wal.SegmentPath(s.walDir(), first)
		s.be.Unlink(path, func(err error) {
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				s.log.Warn("WAL segment not recycled", "shard", s.id, "segment", path, "err", err)
				return
			}
			c.recycled++
		})
		c.segs = slices.DeleteFunc(c.segs, func(f uint64) bool { return f == first })
	}
}

// retireEmptyFiles tombstones heap files that hold no live record, and
// unlinks those whose tombstone a finalized checkpoint committed.
func (s *Shard) retireEmptyFiles(published uint64) {
	c := s.ckpt
	for _, id := range c.man.Unlinkable(published) {
		s.be.Unlink(heap.FilePath(s.heapDir(), id), func(err error) {
			switch {
			case errors.Is(err, fs.ErrNotExist):
				// Removed from outside before its time: the retired case
				// of a vanished file (heap_vanished_retired).
				c.mgr.FileMissing(id)
			case err != nil:
				s.log.Warn("retired heap file not removed", "shard", s.id, "file", heap.FileName(id), "err", err)
				return
			}
			// Once unlinked, the manifest forgets it at its next commit.
			if ferr := c.man.Forget(id); ferr != nil {
				s.log.Warn("manifest cannot forget heap file", "shard", s.id, "file", heap.FileName(id), "err", ferr)
			}
		})
	}
	// The next checkpoint's redo point is at least the next LSN: the
	// tombstone is committed by it.
	next := s.wal.Appender().NextLSN()
	for _, id := range c.heap.EmptyFiles() {
		if !c.man.IsLive(id) {
			continue
		}
		if err := c.man.Tombstone(id, next); err != nil {
			s.log.Warn("cannot tombstone empty heap file", "shard", s.id, "file", heap.FileName(id), "err", err)
			continue
		}
		if err := c.heap.RetireFile(id); err != nil {
			s.log.Warn("cannot retire empty heap file", "shard", s.id, "file", heap.FileName(id), "err", err)
			continue
		}
		c.mgr.FileRetired(id)
		s.closeReadFD(id)
	}
}
