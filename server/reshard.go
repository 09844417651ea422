package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/shard"
)

// Resharding (docs/DESIGN.md §7): a boot with --shards M on a directory
// written with N shards moves every key to the shard its slot maps to
// under M before the shards boot, while the server answers LOADING. The
// old shards are recovered one at a time (heap load, WAL replay) and
// hand their keys over; M new shards, booted on empty directories in the
// staging area on loops of their own, take them as logged writes
// (MOOND.APPLY PUT) and each end with a checkpoint; then the directory
// switches to them (shard.CommitReshard), and the boot goes on as usual.

// moveBatchKeys and moveBatchBytes bound the keys handed to a new shard in
// one message to its loop.
const (
	moveBatchKeys  = 1024
	moveBatchBytes = 4 << 20
)

// errStoppedResharding ends a reshard the server's shutdown interrupted.
var errStoppedResharding = errors.New("shutdown while resharding: the shards in place are untouched")

// reshard moves the keys of the directory's reshardFrom shards to
// nshards new ones and switches the directory to them.
func (s *Server) reshard() error {
	from, to := s.reshardFrom, s.nshards
	start := time.Now()
	s.log.Info("resharding: the data directory holds another number of shards than --shards", "from", from, "to", to)
	staging := shard.StagingDir(s.cfg.Dir)
	m, err := s.openStaging(staging, to)
	if err != nil {
		return err
	}
	s.log.Info("resharding: new shards open, moving the keys", "staging", staging)
	old := func(j int) shard.Options {
		o := s.shardOptions(j)
		o.Dir = filepath.Join(s.cfg.Dir, shard.DirName(j))
		return o
	}
	s.startDecidingTxns(from, old)
	moved, err := m.moveFrom(s, from)
	if err == nil {
		err = m.checkpoint()
	}
	if cerr := m.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("resharding %d -> %d: %w", from, to, err)
	}
	s.log.Info(fmt.Sprintf("resharding %d -> %d: moved %d keys", from, to, moved),
		"elapsed", time.Since(start).Round(time.Millisecond).String())
	if err := shard.CommitReshard(s.cfg.Dir, from, to, s.CrashAt, s.log); err != nil {
		return fmt.Errorf("resharding %d -> %d: %w", from, to, err)
	}
	return nil
}

// mover is the new shards of a reshard, each on a loop of its own.
type mover struct {
	loops    []*runtime.Loop
	shards   []*shard.Shard
	tickers  []*runtime.Timer
	batches  [][]keyspace.MovedKey
	bytes    []int
	inFlight []chan error // the batch each new shard is applying, nil for none
	stopped  <-chan struct{}
}

// openStaging boots n empty shards in staging, with persistence on
// whatever appendonly says: they must end with a checkpoint.
func (s *Server) openStaging(staging string, n int) (*mover, error) {
	m := &mover{loops: make([]*runtime.Loop, n), shards: make([]*shard.Shard, n), tickers: make([]*runtime.Timer, n),
		batches: make([][]keyspace.MovedKey, n), bytes: make([]int, n), inFlight: make([]chan error, n), stopped: s.stopped}
	errs := make(chan error, n)
	for i := range m.loops {
		loop := runtime.NewLoop(runtime.Config{ID: i, Backend: s.backend, CPU: -1, RingFlags: s.ringFlags()})
		if err := loop.Start(); err != nil {
			m.close()
			return nil, fmt.Errorf("resharding: shard %d: %w", i, err)
		}
		m.loops[i] = loop
		o := s.shardOptions(i)
		o.Dir = filepath.Join(staging, shard.DirName(i))
		o.AppendOnly, o.CrashAt, o.BootHold, o.WrapBackend, o.Progress = true, shard.CrashPoint{}, nil, nil, nil
		o.Txns, o.Held = nil, nil // empty, and no txn runs on them
		o.Log = s.log.With("reshard", "new")
		every := time.Second / time.Duration(s.hz())
		err := loop.Post(func() {
			shard.Boot(loop, o, func(sh *shard.Shard, err error) {
				if err == nil {
					m.shards[i] = sh
					m.tickers[i] = loop.Every(every, func() { sh.Tick(0) })
				}
				errs <- err
			})
		})
		if err != nil {
			errs <- err
		}
	}
	var first error
	for range m.loops {
		if err := <-errs; err != nil && first == nil {
			first = fmt.Errorf("resharding: new shard: %w", err)
		}
	}
	if first != nil {
		m.close()
		return nil, first
	}
	return m, nil
}

// moveFrom recovers the old shards one after the other and moves their
// keys to the new shards, returning how many it moved.
func (m *mover) moveFrom(s *Server, from int) (int, error) {
	total := 0
	for j := 0; j < from; j++ {
		o := s.shardOptions(j)
		o.Dir = filepath.Join(s.cfg.Dir, shard.DirName(j))
		// --test-hold-boot holds each old shard's recovery too: a test
		// sees the LOADING state of a reshard.
		o.CrashAt, o.WrapBackend = shard.CrashPoint{}, nil
		o.ColdLoadAbove = 0 // every value loads: each is exported at once
		o.Log = s.log.With("reshard", "old")
		o.Progress = s.progress[len(s.workers)+j]
		n, err := shard.ExportKeys(m.loops[0], o, func(k keyspace.MovedKey) error { return m.add(k) })
		if err == nil {
			err = m.flushAll()
		}
		if err != nil {
			return total, fmt.Errorf("old shard %d: %w", j, err)
		}
		s.log.Info("resharding: old shard moved", "shard", j, "keys", n)
		total += n
	}
	return total, nil
}

// add queues a copy of k for the new shard its slot maps to.
func (m *mover) add(k keyspace.MovedKey) error {
	i := shardOfSlot(KeySlot(k.Key), len(m.shards))
	b := make([]byte, len(k.Key)+len(k.Value))
	n := copy(b, k.Key)
	copy(b[n:], k.Value)
	k.Key, k.Value = b[:n:n], b[n:]
	m.batches[i] = append(m.batches[i], k)
	m.bytes[i] += len(k.Key) + len(k.Value)
	if len(m.batches[i]) >= moveBatchKeys || m.bytes[i] >= moveBatchBytes {
		return m.flush(i)
	}
	return nil
}

func (m *mover) flushAll() error {
	for i := range m.batches {
		if err := m.flush(i); err != nil {
			return err
		}
	}
	for i := range m.inFlight {
		if err := m.wait(i); err != nil {
			return err
		}
	}
	return nil
}

// flush hands new shard i its queued keys. One batch per shard is in
// flight at a time, so that the old shard's walk and the new shards'
// writes overlap: flush first waits until the previous batch was applied
// and, when the shard's unwritten WAL was over its back-pressure mark,
// until the log caught up.
func (m *mover) flush(i int) error {
	if err := m.wait(i); err != nil {
		return err
	}
	batch := m.batches[i]
	m.batches[i], m.bytes[i] = nil, 0
	if len(batch) == 0 {
		return nil
	}
	sh, done := m.shards[i], make(chan error, 1)
	err := m.loops[i].Post(func() {
		for _, k := range batch {
			if err := sh.ImportKey(k); err != nil {
				done <- fmt.Errorf("new shard %d: %w", i, err)
				return
			}
		}
		if sh.ReadsPaused() {
			sh.WhenReadable(func() { done <- nil })
			return
		}
		done <- nil
	})
	if err != nil {
		return err
	}
	m.inFlight[i] = done
	return nil
}

// wait waits for new shard i's batch in flight, if any.
func (m *mover) wait(i int) error {
	done := m.inFlight[i]
	if done == nil {
		select {
		case <-m.stopped:
			return errStoppedResharding
		default:
			return nil
		}
	}
	select {
	case err := <-done:
		m.inFlight[i] = nil
		return err
	case <-m.stopped:
		return errStoppedResharding
	}
}

// checkpoint runs a checkpoint on every new shard and waits until each
// published: the new shards' heaps then hold every key.
func (m *mover) checkpoint() error {
	errs := make(chan error, len(m.shards))
	for i, sh := range m.shards {
		if err := m.loops[i].Post(func() {
			sh.RequestCheckpoint(true, func(err error) {
				if err != nil {
					err = fmt.Errorf("new shard %d: checkpoint: %w", i, err)
				}
				errs <- err
			})
		}); err != nil {
			errs <- err
		}
	}
	var first error
	for range m.shards {
		select {
		case err := <-errs:
			if err != nil && first == nil {
				first = err
			}
		case <-m.stopped:
			return errStoppedResharding
		}
	}
	return first
}

// close closes the new shards (their shutdown checkpoint, the seal of
// their WAL) and stops their loops; it returns the first seal error.
func (m *mover) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var first error
	for i, loop := range m.loops {
		if loop == nil {
			continue
		}
		sh, done := m.shards[i], make(chan error, 1)
		err := loop.Call(ctx, func() {
			if m.tickers[i] != nil {
				m.tickers[i].Stop()
			}
			if sh == nil {
				done <- nil
				return
			}
			sh.Close(func(err error) { done <- err })
		})
		if err == nil {
			select {
			case err = <-done:
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
		if err != nil && first == nil {
			first = fmt.Errorf("new shard %d: close: %w", i, err)
		}
		loop.Stop()
	}
	return first
}
