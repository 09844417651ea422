package vfs

import (
	"os"

	"github.com/moond-db/moond/runtime"
)

// Backend returns a runtime.Backend that passes every call to inner and
// records the file writes and syncs in the model. Like any Backend it
// belongs to its loop's thread.
func (p *PowerLoss) Backend(inner runtime.Backend) runtime.Backend {
	return &powerLossBackend{Backend: inner, p: p, paths: make(map[runtime.FD]string)}
}

type powerLossBackend struct {
	runtime.Backend
	p     *PowerLoss
	paths map[runtime.FD]string
}

func (b *powerLossBackend) Open(path string, flag int, perm uint32, cb func(fd runtime.FD, err error)) {
	b.Backend.Open(path, flag, perm, func(fd runtime.FD, err error) {
		if err == nil {
			b.paths[fd] = path
			if flag&os.O_TRUNC != 0 {
				b.p.created(path)
			}
		}
		cb(fd, err)
	})
}

func (b *powerLossBackend) Close(fd runtime.FD, cb func(err error)) {
	delete(b.paths, fd)
	b.Backend.Close(fd, cb)
}

func (b *powerLossBackend) Pwrite(fd runtime.FD, buf []byte, off int64, cb func(n int, err error)) {
	path, ok := b.paths[fd]
	if !ok {
		b.Backend.Pwrite(fd, buf, off, cb)
		return
	}
	w := b.p.beginWrite(path, off, int64(len(buf)))
	b.Backend.Pwrite(fd, buf, off, func(n int, err error) {
		b.p.endWrite(w)
		cb(n, err)
	})
}

func (b *powerLossBackend) Pwritev(fd runtime.FD, bufs [][]byte, off int64, cb func(n int, err error)) {
	path, ok := b.paths[fd]
	if !ok {
		b.Backend.Pwritev(fd, bufs, off, cb)
		return
	}
	w := b.p.beginWrite(path, off, vecLen(bufs))
	b.Backend.Pwritev(fd, bufs, off, func(n int, err error) {
		b.p.endWrite(w)
		cb(n, err)
	})
}

func (b *powerLossBackend) Fsync(fd runtime.FD, cb func(err error)) {
	b.sync(fd, cb, b.Backend.Fsync)
}

func (b *powerLossBackend) Fdatasync(fd runtime.FD, cb func(err error)) {
	b.sync(fd, cb, b.Backend.Fdatasync)
}

func (b *powerLossBackend) sync(fd runtime.FD, cb func(err error), do func(runtime.FD, func(error))) {
	path, ok := b.paths[fd]
	if !ok {
		do(fd, cb)
		return
	}
	cover := b.p.beginSync(path, nil)
	do(fd, func(err error) {
		if err == nil {
			b.p.endSync(path, cover)
		}
		cb(err)
	})
}

func (b *powerLossBackend) Rename(oldpath, newpath string, cb func(err error)) {
	b.Backend.Rename(oldpath, newpath, func(err error) {
		if err == nil {
			b.renamed(oldpath, newpath)
		}
		cb(err)
	})
}

func (b *powerLossBackend) Unlink(path string, cb func(err error)) {
	b.Backend.Unlink(path, func(err error) {
		if err == nil {
			b.p.removed(path)
		}
		cb(err)
	})
}

// Chain records each step as its lone counterpart does; a sync step also
// covers the writes before it in the chain, which the kernel completed
// before starting it.
func (b *powerLossBackend) Chain(ops []runtime.Op, cb func(res []runtime.Result)) {
	writes := make([]*plWrite, len(ops))
	covers := make([][]*plWrite, len(ops))
	for i, op := range ops {
		path, ok := b.paths[op.FD]
		switch {
		case !ok:
		case op.Kind == runtime.OpPwrite:
			writes[i] = b.p.beginWrite(path, op.Off, int64(len(op.Buf)))
		case op.Kind == runtime.OpPwritev:
			writes[i] = b.p.beginWrite(path, op.Off, vecLen(op.Bufs))
		case op.Kind == runtime.OpFsync || op.Kind == runtime.OpFdatasync:
			var chained []*plWrite
			for j := range i {
				if writes[j] != nil && ops[j].FD == op.FD {
					chained = append(chained, writes[j])
				}
			}
			covers[i] = b.p.beginSync(path, chained)
		}
	}
	b.Backend.Chain(ops, func(res []runtime.Result) {
		for i, op := range ops {
			switch {
			case writes[i] != nil:
				b.p.endWrite(writes[i])
			case covers[i] != nil && res[i].Err == nil:
				b.p.endSync(b.paths[op.FD], covers[i])
			case op.Kind == runtime.OpRename && res[i].Err == nil:
				b.renamed(op.Path, op.NewPath)
			case op.Kind == runtime.OpUnlink && res[i].Err == nil:
				b.p.removed(op.Path)
			}
		}
		cb(res)
	})
}

// renamed moves the model's record of a file and the paths of its open
// descriptors.
func (b *powerLossBackend) renamed(from, to string) {
	b.p.renamed(from, to)
	for fd, p := range b.paths {
		if p == from {
			b.paths[fd] = to
		}
	}
}

func vecLen(bufs [][]byte) int64 {
	var n int64
	for _, b := range bufs {
		n += int64(len(b))
	}
	return n
}

// FS returns an FS that passes every call to inner and records the file
// writes and syncs in the model.
func (p *PowerLoss) FS(inner FS) FS { return &powerLossFS{FS: inner, p: p} }

type powerLossFS struct {
	FS
	p *PowerLoss
}

func (s *powerLossFS) OpenReadWrite(name string) (File, error) {
	f, err := s.FS.OpenReadWrite(name)
	if err != nil {
		return nil, err
	}
	return &powerLossFile{File: f, p: s.p, path: name}, nil
}

func (s *powerLossFS) Create(name string) (File, error) {
	f, err := s.FS.Create(name)
	if err != nil {
		return nil, err
	}
	s.p.created(name)
	return &powerLossFile{File: f, p: s.p, path: name}, nil
}

func (s *powerLossFS) Rename(oldname, newname string) error {
	if err := s.FS.Rename(oldname, newname); err != nil {
		return err
	}
	s.p.renamed(oldname, newname)
	return nil
}

func (s *powerLossFS) Remove(name string) error {
	if err := s.FS.Remove(name); err != nil {
		return err
	}
	s.p.removed(name)
	return nil
}

func (s *powerLossFS) Truncate(name string, size int64) error {
	if err := s.FS.Truncate(name, size); err != nil {
		return err
	}
	s.p.truncated(name, size)
	return nil
}

// powerLossFile records a file's writes and syncs; Write goes on from
// where the last Write ended, from offset 0, as FS.OpenReadWrite says.
type powerLossFile struct {
	File
	p    *PowerLoss
	path string
	pos  int64
}

func (f *powerLossFile) WriteAt(b []byte, off int64) (int, error) {
	w := f.p.beginWrite(f.path, off, int64(len(b)))
	defer f.p.endWrite(w)
	return f.File.WriteAt(b, off)
}

func (f *powerLossFile) Write(b []byte) (int, error) {
	w := f.p.beginWrite(f.path, f.pos, int64(len(b)))
	defer f.p.endWrite(w)
	n, err := f.File.Write(b)
	f.pos += int64(n)
	return n, err
}

func (f *powerLossFile) Sync() error { return f.sync(f.File.Sync) }

func (f *powerLossFile) Datasync() error { return f.sync(f.File.Datasync) }

func (f *powerLossFile) sync(do func() error) error {
	cover := f.p.beginSync(f.path, nil)
	if err := do(); err != nil {
		return err
	}
	f.p.endSync(f.path, cover)
	return nil
}
