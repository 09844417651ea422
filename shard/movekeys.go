package shard

import (
	"errors"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/runtime"
)

// The shard's side of a reshard (docs/DESIGN.md §7): an old shard is
// recovered as at any boot and hands over its keys (ExportKeys); a new one,
// booted on an empty directory in the staging area, takes them as logged
// writes (ImportKey) and ends with a checkpoint that holds them all.

// ExportKeys recovers the shard in o.Dir (heap load, then WAL replay, as
// Boot's recovery) without starting its log or its checkpoints, calls fn
// for every key that has not expired, and releases the shard's files. It
// runs on the caller's goroutine; loop only lends the shard what it is
// built with, and nothing runs on it. It returns how many keys fn took.
func ExportKeys(loop *runtime.Loop, o Options, fn func(keyspace.MovedKey) error) (int, error) {
	s := newShard(loop, o)
	b, err := s.recoverData()
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := b.st.Heap.Close(); cerr != nil {
			s.log.Warn("closing heap files", "shard", s.id, "err", cerr)
		}
	}()
	n := 0
	err = s.ks.ExportKeys(time.Now().UnixMilli(), func(k keyspace.MovedKey) error {
		n++
		return fn(k)
	})
	return n, err
}

// ImportKey stores a moved key and logs it (MOOND.APPLY PUT). It refuses,
// changing nothing, while the shard cannot log. Loop thread only.
func (s *Shard) ImportKey(k keyspace.MovedKey) error {
	if s.wal == nil {
		return errors.New("shard: keys are moved into a shard with persistence on only")
	}
	if s.refusing || s.canLog() != nil {
		return errors.New(s.Misconf())
	}
	return s.ks.ImportKey(k)
}

// PutKey stores k as a command's effect (a cross-shard command's result
// for a key of this shard) and logs it (MOOND.APPLY PUT) when the shard
// logs. It returns the LSN of its record (0 when the WAL is off), and
// refuses, changing nothing, while the shard cannot log. Loop thread only.
func (s *Shard) PutKey(k keyspace.MovedKey) (uint64, error) {
	if s.refusing || s.canLog() != nil {
		return 0, errors.New(s.Misconf())
	}
	before := s.LastLSN()
	if err := s.ks.ImportKey(k); err != nil {
		return 0, err
	}
	if after := s.LastLSN(); after != before {
		return after, nil
	}
	return 0, nil
}
