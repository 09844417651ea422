package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/moond-db/moond/persistence/checkpoint/record"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/runtime"
)

// The checkpoint's write-order invariants, checked as the tests' fakes see
// the operations go by (a test asserts the lists are empty):
//
//   - log before data: a page is written only after the WAL is durable
//     through its page LSN and through the full-page image of it logged in
//     this checkpoint (fakeWAL.checkWrites, into fakeWAL.violations);
//   - durable before published: every page write that completed before a
//     redo point is published is covered by a successful fsync of its file
//     that started after it (env.checkDurable, into env.undurable).

// writeOrder is what the fakes record for these checks.
type writeOrder struct {
	cycle      uint64                  // the running checkpoint's redo point
	fpiAt      map[heap.PageID]uint64  // the LSN of each page's last image
	violations []string                // writes that broke log before data
	seq        uint64                  // orders the events below
	written    map[string]uint64       // file → seq of its last completed write
	synced     map[string]uint64       // file → start seq of its last good fsync
	pathOf     func(runtime.FD) string // the path of a descriptor
}

func newWriteOrder() *writeOrder {
	return &writeOrder{fpiAt: map[heap.PageID]uint64{}, written: map[string]uint64{}, synced: map[string]uint64{}}
}

// appended notes a full-page image.
func (o *writeOrder) appended(lsn uint64, payload []byte) {
	if len(payload) == 0 || payload[0] != record.KindFPI {
		return
	}
	if id, _, err := record.DecodeFPI(payload); err == nil {
		o.fpiAt[id] = lsn
	}
}

// checkWrites checks page writes linked after a WAL barrier through lsn.
func (o *writeOrder) checkWrites(lsn uint64, ops []runtime.Op) {
	for _, op := range ops {
		file, ok := heap.ParseFileName(filepath.Base(o.pathOf(op.FD)))
		if !ok {
			o.violations = append(o.violations, fmt.Sprintf("write to %q, not a heap file", o.pathOf(op.FD)))
			continue
		}
		id := heap.PageID{File: file, Page: uint32(op.Off / heap.PageSize)}
		var p heap.Page
		if err := p.Decode(op.Buf, id.File, id.Page); err != nil {
			o.violations = append(o.violations, fmt.Sprintf("write of page %v: %v", id, err))
			continue
		}
		if p.LSN() > lsn {
			o.violations = append(o.violations, fmt.Sprintf("page %v with LSN %d written after a barrier through %d", id, p.LSN(), lsn))
		}
		if fpi := o.fpiAt[id]; fpi < o.cycle || fpi > lsn {
			o.violations = append(o.violations, fmt.Sprintf("page %v written after a barrier through %d, its image of the cycle from %d is at %d", id, lsn, o.cycle, fpi))
		}
	}
}

// pwriteDone notes a page write that completed.
func (o *writeOrder) pwriteDone(fd runtime.FD, err error) {
	o.seq++
	if err == nil {
		o.written[filepath.Base(o.pathOf(fd))] = o.seq
	}
}

// fsyncStarted returns the order of an fsync of fd; fsyncDone notes its
// result.
func (o *writeOrder) fsyncStarted() uint64 { o.seq++; return o.seq }

func (o *writeOrder) fsyncDone(fd runtime.FD, start uint64, err error) {
	if name := filepath.Base(o.pathOf(fd)); err == nil && start > o.synced[name] {
		o.synced[name] = start
	}
}

// undurable lists the heap files written and not fsynced since, at a
// publish. A file that no longer exists (vanished, retired) holds nothing.
func (o *writeOrder) undurable(heapDir string) []string {
	var out []string
	for name, w := range o.written {
		if _, err := os.Stat(filepath.Join(heapDir, name)); err != nil {
			continue
		}
		if o.synced[name] < w {
			out = append(out, fmt.Sprintf("%s written (#%d), last fsync started at #%d", name, w, o.synced[name]))
		}
	}
	return out
}
