package checkpoint

import (
	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/runtime"
)

// LogBarrier implements WAL over the shard's wal.Appender and wal.Writer.
// Wire it as: Writer.OnProgress calls Progress (besides whatever else the
// shard does there).
//
// Under appendfsync always, a group's write and fdatasync are one chain,
// so the durable LSN follows the written one and Force may be nil. Under
// everysec and no, Force must make the writer fdatasync what is written
// now (wal.Writer.Sync): without it, a barrier waits for the everysec
// tick, and under appendfsync no it never completes.
type LogBarrier struct {
	App    *wal.Appender
	Writer *wal.Writer // WriteAfter links page writes into its chains
	Loop   *runtime.Loop
	Force  func()

	waiters []barrierWaiter
}

type barrierWaiter struct {
	lsn  uint64
	done func(error)
}

// NextLSN implements WAL.
func (b *LogBarrier) NextLSN() uint64 { return b.App.NextLSN() }

// Append implements WAL.
func (b *LogBarrier) Append(typ wal.RecordType, payload []byte) (uint64, error) {
	return b.App.Append(typ, payload)
}

// Barrier implements WAL.
func (b *LogBarrier) Barrier(lsn uint64, done func(error)) {
	b.waiters = append(b.waiters, barrierWaiter{lsn, done})
	b.Loop.AfterFunc(0, b.Progress)
}

// WriteAfter implements WAL: the writer links ops after the fdatasync that
// makes lsn durable.
func (b *LogBarrier) WriteAfter(lsn uint64, ops []runtime.Op, done func([]runtime.Result, error)) {
	b.Writer.WriteAfterDurable(lsn, ops, done)
}

// Progress completes the barriers the log's state allows: those through
// the durable LSN, or all of them with the error that poisoned the log.
// It forces an fdatasync when a barrier waits on records that are
// written but not durable.
func (b *LogBarrier) Progress() {
	if len(b.waiters) == 0 {
		return
	}
	err := b.App.Poisoned()
	durable := b.App.DurableLSN()
	var ready []barrierWaiter
	keep := b.waiters[:0]
	force := false
	for _, w := range b.waiters {
		switch {
		case err != nil || w.lsn <= durable:
			ready = append(ready, w)
		default:
			keep = append(keep, w)
			force = force || w.lsn <= b.App.WrittenLSN()
		}
	}
	clear(b.waiters[len(keep):])
	b.waiters = keep
	for _, w := range ready {
		w.done(err)
	}
	if force && b.Force != nil {
		b.Force()
	}
}
