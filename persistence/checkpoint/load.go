package checkpoint

import (
	"fmt"

	"github.com/moond-db/moond/persistence/heap"
)

// Cold pages. After a restart the heap's pages are on disk only (boot reads
// them bypassing the cache), and freeing a deleted key's record needs its
// page. Writing does not retry one miss at a time: at the first miss it
// looks ahead over the keys still to write, collects every page their
// frees need that is not cached, has the shard read them all at once
// (Options.LoadPages, reads on the ring), and goes on when they are in.
// A checkpoint over N cold pages then takes N / LoadBatch round trips to
// the disk, each as long as the disk takes to answer LoadBatch reads.
// Overflow chain pages are found as the frees walk the chains, a round
// per link at worst.

const (
	// loadBatch bounds the pages one round reads: a fraction of any
	// reasonable page cache, so that the round's pages are not evicted
	// before the keys that need them are written.
	loadBatch = 256
	// loadLookahead bounds the keys one round looks ahead over.
	loadLookahead = 4 * loadBatch
)

// loadFor reads first, the page the key at keyIdx needs, and the cold
// pages of the keys after it, then resumes Writing.
func (m *Manager) loadFor(first heap.PageID) {
	// The round fits in the cache's room, so that its pages do not evict
	// one another before the keys that need them are written; it reads
	// the page the next key needs even when there is none.
	limit := max(1, min(loadBatch, m.cache.Room()))
	pages := []heap.PageID{first}
	seen := map[heap.PageID]bool{first: true}
	end := min(len(m.keys), m.keyIdx+loadLookahead)
	peek, _ := m.o.Source.(DeadPeeker)
	for i := m.keyIdx + 1; i < end && len(pages) < limit; i++ {
		var old heap.RecordID
		var dead bool
		if peek != nil {
			old, dead = peek.DeadOld(m.keys[i])
		} else {
			v := m.o.Source.Version(m.keys[i])
			old, dead = v.Old, !v.Live && v.HasOld
		}
		if !dead {
			continue // an insert needs no page; a superseded free is deferred
		}
		id := old.PageID()
		if gone, _ := m.cache.Vanished(id.File); gone || m.cache.Resident(id) || seen[id] {
			continue
		}
		seen[id] = true
		pages = append(pages, id)
	}
	m.stats.PageLoads++
	m.stats.PagesLoaded += int64(len(pages))
	gen := m.await(waitLoad)
	m.o.LoadPages(pages, func(err error) {
		m.resume(waitLoad, gen)
		if err != nil {
			m.retryLater(fmt.Errorf("checkpoint: load %d heap pages: %w", len(pages), err))
			return
		}
		m.advance()
	})
}
