package checkpoint

// Spills. Writing dirties pages (a key's new version inserted, a deleted
// key's record freed), and a dirty page cannot be evicted until it is
// written. When the dirty pages of the cycle do not fit the page cache,
// Writing would hold them all at once: the cold pages the next frees need
// have no room, each round of reads evicts the pages it has just read, and
// the checkpoint reads the same pages forever (issue 14). So while
// Writing, when dirty pages leave the cache less room than a round of
// reads needs, the checkpoint writes the oldest of them first, as
// PostgreSQL's checkpointer writes buffers as it goes: a spill.
//
// A spill is a flushPass, written batch by batch exactly as the Flushing
// phase writes (flushBatch: the full-page images of pages first written
// in this cycle, one WAL barrier through the batch's highest page LSN and
// image LSN, the page writes linked after it), so log before data holds
// for every write. A page written by a spill is clean and evictable; if
// the cycle changes it again it is dirty again and Flushing writes it
// once more, after the image already logged in this cycle (the rule is
// one image per page per cycle: a torn write can only happen before the
// cycle's fsync, so before its redo point is published, and recovery then
// replays the WAL from the previous redo point on top of the image). Its
// file's write generation moves on with each write (pageWritten), so
// Syncing fsyncs it after its last write, and the redo point is published
// only over durable pages. A page a spill failed to write stays dirty:
// Flushing writes it, and its pass does not end before every page is
// written. Deferred frees are untouched: a spill writes pages, it frees
// nothing.

// lowWater is the room (Cache.Room) below which Writing spills: a round
// of cold page reads, or a quarter of a small cache.
func (m *Manager) lowWater() int {
	return min(loadBatch, max(1, m.cache.Budget()/4))
}

// spillTarget is the room a spill stops at: enough for several rounds of
// reads before the next spill.
func (m *Manager) spillTarget() int {
	return max(2*m.lowWater(), m.cache.Budget()/4)
}

// needSpill reports whether Writing must write dirty pages before it goes
// on: they leave the cache less room than lowWater, and the last spill
// since a key was written did not find itself with nothing to write.
func (m *Manager) needSpill() bool {
	return !m.spillIdle && m.cache.DirtyPages() > 0 && m.cache.Room() < m.lowWater()
}

// beginSpill starts a spill over the dirty pages, oldest first.
func (m *Manager) beginSpill() {
	m.spill = &flushPass{open: waitSpillOpen, writes: waitSpillWrites, frames: m.cache.AppendDirty(nil)}
	m.stats.Spills++
}

// spillStep writes the next batch of the spill, or ends it once the cache
// has spillTarget room or the spill has no page left. A spill that left
// pages unwritten while the cache still has no room is retried after a
// backoff; Writing goes on otherwise (Flushing writes what failed).
func (m *Manager) spillStep() bool {
	p := m.spill
	if m.cache.Room() < m.spillTarget() {
		more, done := m.passStep(p)
		if !done {
			return more
		}
	}
	m.spill = nil
	m.stats.PagesSpilled += int64(p.res.Flushed)
	if p.res.Flushed == 0 && p.res.Failed == 0 {
		m.spillIdle = true // nothing it could write: go on without
	}
	if p.res.Failed > 0 && m.cache.Room() < m.lowWater() {
		m.retryLater(p.failure())
		return false
	}
	return true
}
