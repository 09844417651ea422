package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/moond-db/moond/persistence/checkpoint/record"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/wal"
	"github.com/moond-db/moond/runtime"
)

func (m *Manager) flushable(f *heap.Frame) bool {
	if m.cache.Peek(f.ID()) != f || !f.Dirty() {
		return false
	}
	v, _ := m.cache.Vanished(f.ID().File)
	return !v
}

// flushPass is one walk over the dirty pages, a batch at a time: the
// Flushing phase's pass over all of them, or a spill's while Writing
// (spill.go). Both write a batch the same way (flushBatch: FPIs, one WAL
// barrier, linked page writes); they differ in the waits they use and in
// what they do when the pass ends.
type flushPass struct {
	open, writes wait          // the waits its operations use
	frames       []*heap.Frame // the dirty pages when the pass began, oldest first
	idx          int           // the next of frames to look at
	res          FlushResult
	err          string // the pass's last page failure (pagesFailed)
}

// failure is the error of a pass that left pages unwritten.
func (p *flushPass) failure() error {
	err := fmt.Errorf("%w: %d of %d pages failed", ErrNotFlushed, p.res.Failed, p.res.Failed+p.res.Flushed)
	if p.err != "" {
		// The summary keeps the cause, which it replaces in LastError.
		err = fmt.Errorf("%w (last: %s)", err, p.err)
	}
	return err
}

// flushStep starts the next batch of the pass, or ends the pass.
func (m *Manager) flushStep() bool {
	if m.pass == nil {
		m.pass = &flushPass{open: waitOpen, writes: waitWrites, frames: m.cache.AppendDirty(nil)}
	}
	p := m.pass
	more, done := m.passStep(p)
	if !done {
		return more
	}
	m.pass = nil
	m.stats.LastFlush = p.res
	if p.res.Failed > 0 {
		m.retryLater(p.failure())
		return false
	}
	m.succeeded()
	m.enter(Syncing)
	m.step(StepPwritten)
	return true
}

// passStep starts the next batch of p: it opens the files the batch needs
// first, or writes it. done reports that p has no page left to write.
func (m *Manager) passStep(p *flushPass) (more, done bool) {
	var batch []*heap.Frame
	var missing []uint32
	j := p.idx
	for j < len(p.frames) && len(batch) < m.o.BatchPages {
		f := p.frames[j]
		j++
		if !m.flushable(f) {
			continue
		}
		batch = append(batch, f)
		if file := f.ID().File; !slices.Contains(missing, file) {
			if _, ok := m.fds[file]; !ok {
				missing = append(missing, file)
			}
		}
	}
	if len(batch) == 0 {
		return false, true
	}
	if len(missing) > 0 {
		m.openFiles(missing, p.open)
		return false, false
	}
	p.idx = j
	return m.flushBatch(p, batch), false
}

// openFiles opens (or creates, for new files) the heap files a batch
// needs; the batch is collected again once they are all answered. w is
// the pass's wait for it.
func (m *Manager) openFiles(ids []uint32, w wait) {
	gen := m.await(w)
	pending := len(ids)
	var failed error
	for _, id := range ids {
		flag := os.O_RDWR
		if !m.onDisk[id] {
			flag |= os.O_CREATE | os.O_EXCL
		}
		path := heap.FilePath(m.heapDir, id)
		m.be.Open(path, flag, 0o644, func(fd runtime.FD, err error) {
			switch {
			case err == nil:
				m.fds[id] = fd
				if !m.onDisk[id] {
					m.onDisk[id] = true
					m.created = true
				}
			case errors.Is(err, fs.ErrExist) && !m.onDisk[id]:
				// Created by an earlier try whose answer was lost: open it.
				m.onDisk[id] = true
				m.created = true
				failed = fmt.Errorf("checkpoint: create %s: %w", path, err)
			case errors.Is(err, fs.ErrNotExist) && m.onDisk[id]:
				m.vanish(id)
			default:
				failed = fmt.Errorf("checkpoint: open %s: %w", path, err)
			}
			if pending--; pending > 0 {
				return
			}
			m.resume(w, gen)
			if failed != nil {
				m.retryLater(failed)
				return
			}
			m.advance()
		})
	}
}

// flushBatch logs the FPIs of batch, takes one WAL barrier through its
// highest LSN, then writes its pages.
func (m *Manager) flushBatch(p *flushPass, batch []*heap.Frame) bool {
	var through uint64
	fpis := false
	write := batch[:0]
	for _, f := range batch {
		if f.FPIPending() {
			fpis = true
			lsn, err := m.o.WAL.Append(wal.RecordCheckpoint, record.AppendFPI(nil, f.Page))
			if err != nil {
				m.pagesFailed(p, 1, fmt.Sprintf("checkpoint: append FPI of %v: %v", f.ID(), err))
				continue
			}
			m.cache.FPILogged(f, lsn)
		}
		// The image may have been appended by an earlier try of this page
		// whose barrier failed: the barrier covers it in any case.
		through = max(through, f.FPILSN(), f.Page.LSN())
		write = append(write, f)
	}
	if len(write) == 0 {
		return true
	}
	if fpis {
		m.step(StepFPIAppended)
	}
	m.stats.Barriers++
	m.writeLinked(p, write, through)
	return false
}

// pagesFailed counts n pages of pass p as not written. why, when not
// empty, is the failure: it becomes LastError, and the pass's summary
// (ErrNotFlushed) quotes the last one, so that it is not lost.
func (m *Manager) pagesFailed(p *flushPass, n int, why string) {
	p.res.Failed += n
	m.stats.PagesFailed += int64(n)
	if why != "" {
		m.stats.LastError = why
		p.err = why
	}
}

// pageWrite is one page write of a batch: the frame, and the version of
// its bytes that went out.
type pageWrite struct {
	f       *heap.Frame
	id      heap.PageID
	version uint64
}

// writeLinked hands the batch's page writes to the WAL, linked after the
// write and fdatasync that make the batch's FPIs and page LSNs durable.
func (m *Manager) writeLinked(p *flushPass, batch []*heap.Frame, through uint64) {
	gen := m.await(p.writes)
	var pws []pageWrite
	var ops []runtime.Op
	for _, f := range batch {
		if pw, op, ok := m.takePage(p, f); ok {
			ops = append(ops, op)
			pws = append(pws, pw)
		}
	}
	if len(ops) == 0 {
		m.o.Loop.AfterFunc(0, func() {
			m.resume(p.writes, gen)
			m.advance()
		})
		return
	}
	m.o.WAL.WriteAfter(through, ops, func(res []runtime.Result, err error) {
		m.resume(p.writes, gen)
		for i, pw := range pws {
			perr := err
			if i < len(res) {
				perr = res[i].Err
				if perr == nil && res[i].N != heap.PageSize {
					perr = runtime.ErrShort
				}
			} else if perr == nil {
				perr = runtime.ErrShort
			}
			m.pageWritten(p, pw, perr)
		}
		if err != nil {
			// The WAL's failure is the cause; the page writes it canceled
			// (pageWritten above) must not hide it.
			m.pagesFailed(p, 0, fmt.Sprintf("checkpoint: WAL barrier through %d: %v", through, err))
		}
		m.advance()
	})
}

// takePage takes the bytes of f's page for a write: the write's record
// and its operation. ok is false when the page is not to be written now:
// its file vanished (nothing to do), or its FPI is still pending or its
// file is not open (counted as failed; the pass is repeated).
func (m *Manager) takePage(p *flushPass, f *heap.Frame) (pageWrite, runtime.Op, bool) {
	if !m.flushable(f) {
		return pageWrite{}, runtime.Op{}, false
	}
	fd, open := m.fds[f.ID().File]
	if f.FPIPending() || !open {
		m.pagesFailed(p, 1, "")
		return pageWrite{}, runtime.Op{}, false
	}
	pw := pageWrite{f: f, id: f.ID(), version: m.cache.BeginWrite(f)}
	buf := make([]byte, heap.PageSize)
	f.Page.EncodeInto(buf)
	return pw, runtime.Op{Kind: runtime.OpPwrite, FD: fd, Buf: buf, Off: heap.PageOffset(pw.id.Page)}, true
}

// pageWritten records the outcome of one page write of pass p.
func (m *Manager) pageWritten(p *flushPass, pw pageWrite, err error) {
	if v, _ := m.cache.Vanished(pw.id.File); v {
		return
	}
	if err != nil {
		m.pagesFailed(p, 1, fmt.Sprintf("checkpoint: write page %v: %v", pw.id, err))
		return
	}
	m.fileGen[pw.id.File] = m.sync.MarkWritten(pw.id.File)
	m.cache.WriteDone(pw.f, pw.version)
	p.res.Flushed++
	m.stats.PagesFlushed++
}
