package shard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/runtime"
)

// The page loader reads heap pages the checkpoint needs (freeing the
// record of a key deleted after a restart, whose page boot did not cache)
// into the page cache, through the shard's backend: every page of a round
// is read at once, on the ring (checkpoint.Options.LoadPages). A heap file
// found missing here is the checkpoint's to handle (Manager.FileMissing):
// its pages are then needed by nothing, so their loads succeed.

// loadPages reads pages into the cache and calls done once every read
// finished, with the first failure or nil; never inside the call.
func (s *Shard) loadPages(pages []heap.PageID, done func(error)) {
	pending := 1 // this call's own share, released after the loop
	var first error
	finish := func(err error) {
		if err != nil && first == nil {
			first = err
		}
		if pending--; pending == 0 {
			done(first)
		}
	}
	for _, id := range pages {
		pending++
		s.loadPage(id, finish)
	}
	s.loop.AfterFunc(0, func() { finish(nil) })
}

// loadPage reads page id into the cache, unless it is cached, its file
// vanished or it is being read already, and calls done when it is in (or
// needed no more).
func (s *Shard) loadPage(id heap.PageID, done func(error)) {
	c := s.ckpt
	if gone, _ := c.heap.Cache().Vanished(id.File); gone || c.heap.Cache().Resident(id) {
		done(nil)
		return
	}
	if waiting, ok := c.loading[id]; ok {
		c.loading[id] = append(waiting, done)
		return
	}
	c.loading[id] = []func(error){done}
	finish := func(err error) {
		waiting := c.loading[id]
		delete(c.loading, id)
		for _, w := range waiting {
			w(err)
		}
	}
	s.readFD(id.File, func(fd runtime.FD, err error) {
		if errors.Is(err, fs.ErrNotExist) {
			finish(nil) // the file vanished (readFD reported it)
			return
		}
		if err != nil {
			finish(err)
			return
		}
		buf := s.takeReadBuf()
		s.be.Pread(fd, buf, heap.PageOffset(id.Page), func(n int, err error) {
			// The ring is done with buf; AddClean copies the page out.
			defer s.giveReadBuf(buf)
			if err == nil && n != heap.PageSize {
				err = runtime.ErrShort
			}
			if err != nil {
				err = fmt.Errorf("read heap page %v: %w", id, err)
				s.logCkptErr(err.Error())
				finish(err)
				return
			}
			if _, err := c.heap.Cache().AddClean(id, buf); err != nil {
				err = fmt.Errorf("heap page %v: %w", id, err)
				s.logCkptErr(err.Error())
				finish(err)
				return
			}
			finish(nil)
		})
	})
}

// maxReadBufs bounds the page buffers kept for the next reads.
const maxReadBufs = 64

// takeReadBuf returns a page buffer for a read on the ring, which owns it
// until its callback gives it back (giveReadBuf).
func (s *Shard) takeReadBuf() []byte {
	c := s.ckpt
	if n := len(c.readBufs); n > 0 {
		buf := c.readBufs[n-1]
		c.readBufs[n-1] = nil
		c.readBufs = c.readBufs[:n-1]
		return buf
	}
	return make([]byte, heap.PageSize)
}

// giveReadBuf takes back a buffer no read owns any more.
func (s *Shard) giveReadBuf(buf []byte) {
	if c := s.ckpt; len(c.readBufs) < maxReadBufs {
		c.readBufs = append(c.readBufs, buf)
	}
}

// readFD calls cb with the read-only handle of heap file id, opening it
// once for all the pages that wait for it. A file that is missing is
// reported to the checkpoint (Manager.FileMissing) before cb gets the
// error.
func (s *Shard) readFD(id uint32, cb func(runtime.FD, error)) {
	c := s.ckpt
	if fd, ok := c.readFDs[id]; ok {
		cb(fd, nil)
		return
	}
	if waiting, ok := c.opening[id]; ok {
		c.opening[id] = append(waiting, cb)
		return
	}
	c.opening[id] = []func(runtime.FD, error){cb}
	path := heap.FilePath(s.heapDir(), id)
	s.be.Open(path, os.O_RDONLY, 0, func(fd runtime.FD, err error) {
		waiting := c.opening[id]
		delete(c.opening, id)
		switch {
		case err == nil:
			c.readFDs[id] = fd
		case errors.Is(err, fs.ErrNotExist):
			c.mgr.FileMissing(id)
		default:
			err = fmt.Errorf("open %s: %w", path, err)
			s.logCkptErr(err.Error())
		}
		for _, w := range waiting {
			w(fd, err)
		}
	})
}

func (s *Shard) closeReadFD(file uint32) {
	if fd, ok := s.ckpt.readFDs[file]; ok {
		s.be.Close(fd, nil)
		delete(s.ckpt.readFDs, file)
	}
}
