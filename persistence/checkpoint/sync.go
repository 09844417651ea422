package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"syscall"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/vfs"
)

// syncStep starts an fsync of every file written in this checkpoint whose
// write is not durable yet (one outstanding per file), and moves on when
// all are.
func (m *Manager) syncStep() bool {
	waiting := false
	for _, file := range slices.Sorted(maps.Keys(m.fileGen)) {
		if m.sync.Durable(file, m.fileGen[file]) {
			delete(m.fileGen, file)
			m.verify[file] = true
			continue
		}
		waiting = true
		if m.sync.Syncing(file) {
			continue
		}
		fd, ok := m.fds[file]
		if !ok {
			// Retired while waiting (FileRetired forgets it too).
			delete(m.fileGen, file)
			continue
		}
		gen := m.sync.SyncStarted(file)
		m.fsyncOut++
		m.stats.Fsyncs++
		// An fsync is not a wait of the machine: one per file may be
		// outstanding while the checkpoint moves on (the file was retired
		// meanwhile) or poisons; heap.SyncTracker's generations, not the
		// machine's state, say what its completion proves.
		m.be.Fsync(fd, func(err error) {
			if m.fsyncOut <= 0 {
				panic(fmt.Sprintf("checkpoint: fsync of %s completed with none outstanding", heap.FileName(file)))
			}
			m.fsyncOut--
			m.fsynced(file, gen, err)
		})
	}
	if waiting {
		return false
	}
	if len(m.verify) > 0 {
		m.verifyFiles()
		return false
	}
	if m.rewrite {
		m.rewrite = false
		m.beginTake()
		m.enter(Writing)
		return true
	}
	m.enter(Finalizing)
	m.step(StepFsynced)
	return true
}

// fsynced takes the completion of the fsync of file that covers
// generation gen.
//
// ECANCELED is not an fsync failure: the loop cancels what is in flight
// when it stops (shutdown), and a cancelled fsync says nothing about the
// file, good or bad. It is simply not done: the file's writes stay not
// durable, so the redo point cannot move over them, the shard is not
// poisoned, and the machine is not advanced (it would only issue the fsync
// again into a stopping loop); the next Tick, if any, retries it.
func (m *Manager) fsynced(file uint32, gen uint64, err error) {
	switch {
	case err == nil:
		m.sync.SyncDone(file, gen)
	case errors.Is(err, syscall.ECANCELED):
		m.sync.SyncFailed(file)
		return
	case errors.Is(err, fs.ErrNotExist):
		m.sync.SyncFailed(file)
		m.vanish(file)
	default:
		m.sync.SyncFailed(file)
		m.poison(&vfs.SyncError{Err: fmt.Errorf("checkpoint: fsync %s: %w", heap.FileName(file), err)})
		return
	}
	if m.state == Syncing {
		m.advance()
	}
}

// vanish handles a heap file found missing.
func (m *Manager) vanish(file uint32) {
	if v, _ := m.cache.Vanished(file); v {
		return
	}
	retired := !m.o.Manifest.IsLive(file)
	m.o.Heap.FileVanished(file, retired)
	m.sync.Forget(file)
	delete(m.fileGen, file)
	delete(m.verify, file)
	m.closeFD(file)
	if retired {
		m.stats.VanishedRetired++
	} else {
		m.stats.VanishedUnexpected++
		switch m.state {
		case Writing, Flushing, Syncing:
			m.rewrite = true
		case Idle, Finalizing:
			// Found by the page loader or an unlink between two
			// checkpoints: the next one writes the keys again and
			// commits the tombstone, and it is due now.
			m.requested = true
		}
		// Its keys are written again in this checkpoint: the manifest
		// this checkpoint commits must not list the file as live, or the
		// next boot would fail to open it.
		m.stats.LastError = fmt.Sprintf("checkpoint: heap file %s vanished while the manifest lists it", heap.FileName(file))
		if err := m.o.Manifest.Tombstone(file, m.redo); err != nil {
			// Both are news: the loss, and that the manifest still lists
			// the file (the next boot would fail to open it).
			m.stats.LastError += fmt.Sprintf("; tombstone it: %v", err)
		}
	}
	if m.o.OnVanished != nil {
		m.o.OnVanished(file, retired)
	}
}

func (m *Manager) poison(err error) {
	if m.state == Poisoned {
		return
	}
	m.endPhase()
	m.state = Poisoned
	m.poisonErr = fmt.Errorf("%w: %w", ErrPoisoned, err)
	m.stats.Poisoned = true
	m.stats.PoisonReason = err.Error()
	if m.o.OnPoison != nil {
		m.o.OnPoison(m.poisonErr)
	}
	ws := append(m.waiters, m.nextWaiters...)
	m.waiters, m.nextWaiters = nil, nil
	for _, w := range ws {
		w(m.poisonErr)
	}
	if sw := m.shutdown; sw != nil {
		m.shutdown = nil
		sw.timer.Stop()
		sw.done(m.poisonErr)
	}
}
