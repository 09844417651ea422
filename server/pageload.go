package server

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/runtime"
)

// loadPage reads a heap page a checkpoint step needs into the page cache,
// through the backend; the checkpoint retries the step on a later tick.
func (w *worker) loadPage(id heap.PageID) {
	c := w.ckpt
	if c.loading[id] || c.heap.Cache().Resident(id) {
		return
	}
	c.loading[id] = true
	read := func(fd runtime.FD) {
		buf := make([]byte, heap.PageSize)
		w.be.Pread(fd, buf, heap.PageOffset(id.Page), func(n int, err error) {
			delete(c.loading, id)
			if err == nil && n != heap.PageSize {
				err = runtime.ErrShort
			}
			if err != nil {
				w.logCkptErr(fmt.Sprintf("read heap page %v: %v", id, err))
				return
			}
			if _, err := c.heap.Cache().AddClean(id, buf); err != nil {
				w.logCkptErr(fmt.Sprintf("heap page %v: %v", id, err))
			}
		})
	}
	if fd, ok := c.readFDs[id.File]; ok {
		read(fd)
		return
	}
	path := heap.FilePath(filepath.Join(w.srv.shardDir(w.id), heap.DirName), id.File)
	w.be.Open(path, os.O_RDONLY, 0, func(fd runtime.FD, err error) {
		if err != nil {
			delete(c.loading, id)
			w.logCkptErr(fmt.Sprintf("open %s: %v", path, err))
			return
		}
		if old, ok := c.readFDs[id.File]; ok {
			w.be.Close(fd, nil)
			fd = old
		} else {
			c.readFDs[id.File] = fd
		}
		read(fd)
	})
}

func (w *worker) closeReadFD(file uint32) {
	if fd, ok := w.ckpt.readFDs[file]; ok {
		w.be.Close(fd, nil)
		delete(w.ckpt.readFDs, file)
	}
}
