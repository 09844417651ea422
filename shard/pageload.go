package shard

import (
	"fmt"
	"os"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/runtime"
)

// loadPage reads a heap page a checkpoint step needs into the page cache,
// through the backend; the checkpoint retries the step on a later tick.
func (s *Shard) loadPage(id heap.PageID) {
	c := s.ckpt
	if c.loading[id] || c.heap.Cache().Resident(id) {
		return
	}
	c.loading[id] = true
	read := func(fd runtime.FD) {
		buf := make([]byte, heap.PageSize)
		s.be.Pread(fd, buf, heap.PageOffset(id.Page), func(n int, err error) {
			delete(c.loading, id)
			if err == nil && n != heap.PageSize {
				err = runtime.ErrShort
			}
			if err != nil {
				s.logCkptErr(fmt.Sprintf("read heap page %v: %v", id, err))
				return
			}
			if _, err := c.heap.Cache().AddClean(id, buf); err != nil {
				s.logCkptErr(fmt.Sprintf("heap page %v: %v", id, err))
			}
		})
	}
	if fd, ok := c.readFDs[id.File]; ok {
		read(fd)
		return
	}
	path := heap.FilePath(s.heapDir(), id.File)
	s.be.Open(path, os.O_RDONLY, 0, func(fd runtime.FD, err error) {
		if err != nil {
			delete(c.loading, id)
			s.logCkptErr(fmt.Sprintf("open %s: %v", path, err))
			return
		}
		if old, ok := c.readFDs[id.File]; ok {
			s.be.Close(fd, nil)
			fd = old
		} else {
			c.readFDs[id.File] = fd
		}
		read(fd)
	})
}

func (s *Shard) closeReadFD(file uint32) {
	if fd, ok := s.ckpt.readFDs[file]; ok {
		s.be.Close(fd, nil)
		delete(s.ckpt.readFDs, file)
	}
}
