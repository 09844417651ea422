package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/runtime"
)

// A heap file unlinked from outside while the checkpoint holds it open
// keeps its inode: the page writes and the fsync succeed on it, and the
// checkpoint would publish a manifest that lists a file no boot can open.
// So once a checkpoint's files are durable, and before it finalizes, it
// opens each one's path again: a path that is gone is a vanished file
// (vanish), found while its keys can still be written again with the same
// redo point. A file unlinked after this check is found by the next
// checkpoint that opens or fsyncs it.

// verifyFiles opens the path of every file in m.verify (read-only, closed
// at once) and moves Syncing on once all answered: a file found missing
// vanished; any other failure is retried after a backoff.
func (m *Manager) verifyFiles() {
	gen := m.await(waitVerify)
	ids := slices.Sorted(maps.Keys(m.verify))
	pending := len(ids)
	var failed error
	for _, id := range ids {
		path := heap.FilePath(m.heapDir, id)
		m.be.Open(path, os.O_RDONLY, 0, func(fd runtime.FD, err error) {
			switch {
			case err == nil:
				m.be.Close(fd, nil)
				delete(m.verify, id)
			case errors.Is(err, fs.ErrNotExist):
				m.vanish(id)
			default:
				failed = fmt.Errorf("checkpoint: open %s again after its fsync: %w", path, err)
			}
			if pending--; pending > 0 {
				return
			}
			m.resume(waitVerify, gen)
			if failed != nil {
				m.retryLater(failed)
				return
			}
			m.advance()
		})
	}
}

// FileMissing reports heap file id found missing outside the checkpoint's
// own I/O (the shard's page loader, the unlink of a retired file). It is
// handled as the checkpoint's own opens and fsyncs handle it: classified
// by the manifest (retired, or an unexpected loss whose keys are written
// again and whose id is tombstoned, never re-created). Loop thread only.
func (m *Manager) FileMissing(id uint32) {
	m.vanish(id)
}
