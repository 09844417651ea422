package checkpoint

import (
	"errors"
	"fmt"
	"time"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/wal"
)

func (m *Manager) begin() {
	if m.held() {
		m.requested = true // the next Tick tries again
		return
	}
	redo := m.o.WAL.NextLSN()
	if m.o.BeginRecord != nil {
		if p := m.o.BeginRecord(); p != nil {
			lsn, err := m.o.WAL.Append(wal.RecordCheckpoint, p)
			if err != nil {
				m.stats.LastError = fmt.Sprintf("checkpoint: append the record at the redo point: %v", err)
				m.requested = true // the next Tick tries again
				return
			}
			if lsn != redo {
				panic(fmt.Sprintf("checkpoint: the record at the redo point got LSN %d, want %d", lsn, redo))
			}
		}
	}
	m.requested = false  // a request that waited for this begin is served by it
	m.began = time.Now() // before the Writing phase's clock: the duration covers every phase
	m.enter(Writing)
	m.gen++
	m.redo = redo
	m.beginTake()
	m.cache.BeginCycle()
	m.lastBegin = m.began
	m.retryAt = time.Time{}
	m.retryGap = 0
	m.pass = nil
	m.spill = nil
	m.spillIdle = false
	clear(m.fileGen)
	clear(m.verify)
	m.fin = finSyncDir
	m.ckptLSN = 0
	m.rewrite = false
	if m.o.OnBegin != nil {
		m.o.OnBegin(m.redo)
	}
	m.advance()
}

// heapFailed handles an error of the heap during Writing, and reports
// whether the machine goes on at once. A page that is not cached is
// loaded, with the others the next keys need (load.go), and the step goes
// on once they are read; when dirty pages leave the cache no room for
// them, some are written first (spill.go). Any other failure is retried
// after a backoff.
func (m *Manager) heapFailed(err error) bool {
	var nr *heap.NotResidentError
	if errors.As(err, &nr) && m.o.LoadPages != nil {
		if m.needSpill() {
			m.beginSpill()
			return true
		}
		m.loadFor(nr.Page)
		return false
	}
	m.retryLater(err)
	return false
}

// beginTake starts taking the dirty keys from the Source (at the redo
// point): writeSome takes them a chunk at a time.
func (m *Manager) beginTake() {
	m.o.Source.BeginTake()
	m.keys = nil
	m.keyIdx = 0
	m.taken = false
}

// writeSome writes up to WriteChunk keys' versions into pages, for at most
// StepBudget. When the keys taken are written it takes the next chunk
// from the Source, in a step of its own (TakeSome's work is bounded as a
// step's is), until the take is done; the checkpoint then flushes.
//
// Before a step, and before cold pages are read, a spill writes the oldest
// dirty pages when they fill the page cache (spill.go): a dirty page
// cannot be evicted, and pages read into a cache with no room evict one
// another before the keys that need them are written.
func (m *Manager) writeSome() bool {
	if m.spill != nil {
		return m.spillStep()
	}
	if m.needSpill() {
		m.beginSpill()
		return true
	}
	start := time.Now()
	for n := 0; ; n++ {
		if m.keyIdx == len(m.keys) {
			if m.taken {
				break
			}
			if n > 0 {
				m.yield()
				return false
			}
			m.keys, m.taken = m.o.Source.TakeSome(m.o.WriteChunk)
			m.keyIdx = 0
			continue
		}
		if n >= m.o.WriteChunk || (n%32 == 31 && time.Since(start) >= m.o.StepBudget) {
			m.yield()
			return false
		}
		if err := m.writeKey(m.keys[m.keyIdx]); err != nil {
			return m.heapFailed(err)
		}
		m.keyIdx++
		m.stats.KeysWritten++
		m.spillIdle = false
	}
	m.keys = nil
	m.succeeded()
	m.enter(Flushing)
	return true
}

// writeKey writes the current version of key: its parts, then its record,
// and files the records it supersedes; a deleted key's record is freed
// at once. On an error nothing of the version counts as written: the
// parts inserted already are freed again, and the key is taken again
// with a new Version once the error is dealt with.
func (m *Manager) writeKey(k []byte) error {
	v := m.o.Source.Version(k)
	if !v.Live {
		if v.HasOld {
			if err := m.o.Heap.Free(v.Old, v.DelLSN); err != nil {
				return fmt.Errorf("checkpoint: free deleted key's record %v: %w", v.Old, err)
			}
		}
		m.deferParts(v.OldParts)
		m.o.Source.Placed(k, heap.RecordID{}, nil, false)
		return nil
	}
	parts := m.partIDs[:0]
	for _, r := range v.Parts {
		id, err := m.o.Heap.Insert(r)
		if err != nil {
			m.undoParts(parts, v.Parts)
			return fmt.Errorf("checkpoint: write a part of a key version: %w", err)
		}
		parts = append(parts, id)
	}
	m.partIDs = parts[:0]
	id, err := m.o.Heap.Insert(v.Record)
	if err != nil {
		m.undoParts(parts, v.Parts)
		return fmt.Errorf("checkpoint: write key version: %w", err)
	}
	if v.HasOld {
		m.deferred.Add(m.redo, v.Old)
	}
	m.deferParts(v.OldParts)
	m.stats.PartsWritten += int64(len(parts))
	m.o.Source.Placed(k, id, parts, true)
	return nil
}

// deferParts files the records of earlier versions that the version just
// written no longer uses, to be freed once this checkpoint finalizes.
func (m *Manager) deferParts(ids []heap.RecordID) {
	for _, id := range ids {
		m.deferred.Add(m.redo, id)
	}
}

// undoParts frees the parts of a version whose writing failed: inserted
// in this cycle, their pages are cached, so the frees do not fail but
// for a broken heap, which the error of the insert reports already.
func (m *Manager) undoParts(ids []heap.RecordID, recs []heap.Record) {
	for i, id := range ids {
		if err := m.o.Heap.Free(id, recs[i].KeyLSN); err != nil {
			m.stats.LastError = fmt.Sprintf("checkpoint: free part %v of a version not written: %v", id, err)
		}
	}
}

// yield ends a Writing step: the loop serves its clients, and the next
// iteration goes on.
func (m *Manager) yield() {
	gen := m.await(waitYield)
	m.o.Loop.AfterFunc(0, func() {
		m.resume(waitYield, gen)
		m.advance()
	})
}
