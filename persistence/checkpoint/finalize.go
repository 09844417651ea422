package checkpoint

import (
	"errors"
	"fmt"
	"time"

	"github.com/moond-db/moond/persistence/checkpoint/record"
	"github.com/moond-db/moond/persistence/control"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/persistence/wal"
)

// finalStep runs the finalize steps in order (finalizeStep); a failed one
// is retried.
func (m *Manager) finalStep() bool {
	switch m.fin {
	case finSyncDir: // new heap files' directory entries before the manifest names them
		if !m.created {
			m.fin = finManifest
			return true
		}
		gen := m.await(waitSyncDir)
		m.be.SyncDir(m.heapDir, func(err error) {
			m.resume(waitSyncDir, gen)
			if err != nil {
				m.poison(&vfs.SyncError{Err: fmt.Errorf("checkpoint: fsync directory %s: %w", m.heapDir, err)})
				return
			}
			m.created = false
			m.fin = finManifest
			m.advance()
		})
	case finManifest:
		gen := m.await(waitManifest)
		m.o.Manifest.Prepare(m.o.ShardDir).Start(m.be, func(err error) {
			m.resume(waitManifest, gen)
			if m.finishedStep(err) {
				m.fin = finEndRecord
				m.advance()
			}
		})
	case finEndRecord:
		if m.ckptLSN == 0 {
			lsn, err := m.o.WAL.Append(wal.RecordCheckpoint, record.AppendEnd(nil, m.redo))
			if err != nil {
				m.retryLater(fmt.Errorf("checkpoint: append checkpoint record: %w", err))
				return false
			}
			m.ckptLSN = lsn
		}
		gen := m.await(waitEndDurable)
		m.o.WAL.Barrier(m.ckptLSN, func(err error) {
			m.resume(waitEndDurable, gen)
			if err != nil {
				m.retryLater(fmt.Errorf("checkpoint: checkpoint record %d not durable: %w", m.ckptLSN, err))
				return
			}
			m.fin = finControl
			m.advance()
		})
	case finControl:
		next := min(m.o.Manifest.NextID(), uint64(^uint32(0)))
		c := control.Control{
			Shard:         m.o.Shard,
			RedoLSN:       m.redo,
			CheckpointLSN: m.ckptLSN,
			Time:          time.Now(),
			NextFileID:    uint32(next),
		}
		if err := c.Validate(); err != nil {
			m.retryLater(fmt.Errorf("checkpoint: control file: %w", err))
			return false
		}
		gen := m.await(waitControl)
		control.Prepare(m.o.ShardDir, c).Start(m.be, func(err error) {
			m.resume(waitControl, gen)
			if m.finishedStep(err) && m.state != Poisoned {
				m.publish(c.Time)
			}
		})
	default:
		panic(fmt.Sprintf("checkpoint: finalize step %v", m.fin))
	}
	return false
}

// finishedStep sorts a finalize step's outcome: success, a failure to
// retry, or a failed fsync that poisons.
func (m *Manager) finishedStep(err error) bool {
	switch {
	case err == nil:
		m.succeeded()
		return true
	case vfs.IsSyncFailure(err):
		m.poison(err)
	default:
		m.retryLater(err)
	}
	return false
}

// publish moves the in-memory redo point, once the control file holds it.
func (m *Manager) publish(at time.Time) {
	m.published = m.redo
	m.stats.Completed++
	m.stats.LastFinalized = at
	m.enter(Idle)
	// From the clock reading that ended the last phase, so that the
	// phases' times (PhaseSeconds) never add up to more.
	m.stats.LastDurationMs = m.phaseSince.Sub(m.began).Milliseconds()
	// Handles are opened again by the next checkpoint, so that a file
	// that vanished meanwhile is found (ENOENT) rather than written
	// through a stale handle.
	m.Close()
	m.step(StepControlWritten)
	var cold []heap.PageID
	seen := make(map[heap.PageID]bool)
	for _, id := range m.deferred.Release(m.redo, nil) {
		if err := m.o.Heap.Free(id, 0); err != nil {
			var nr *heap.NotResidentError
			if !errors.As(err, &nr) {
				m.stats.LastError = fmt.Sprintf("checkpoint: deferred free of %v: %v", id, err)
				continue
			}
			// Freed by the next checkpoint, once the page is loaded.
			m.deferred.Add(m.redo, id)
			m.stats.DeferredFreeRetries++
			if !seen[nr.Page] {
				seen[nr.Page] = true
				cold = append(cold, nr.Page)
			}
		}
	}
	if len(cold) > 0 && m.o.LoadPages != nil {
		// Nothing waits for these: a failure leaves the free to the next
		// checkpoint, which loads the page again.
		m.o.LoadPages(cold, func(error) {})
	}
	if m.o.OnPublished != nil {
		m.o.OnPublished(m.redo)
	}
	ws := m.waiters
	m.waiters = nil
	for _, w := range ws {
		w(nil)
	}
	if sw := m.shutdown; sw != nil {
		m.shutdown = nil
		sw.timer.Stop()
		next := m.nextWaiters
		m.nextWaiters = nil
		for _, w := range next {
			w(ErrShuttingDown)
		}
		sw.done(nil)
		return
	}
	if m.requested {
		m.requested = false
		m.waiters, m.nextWaiters = m.nextWaiters, nil
		m.begin()
	}
}
