package vfs

import (
	"os"
	"sort"
)

// Default is the operating system's file system.
var Default FS = osFS{}

type osFS struct{}

func (osFS) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) OpenReadWrite(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) OpenDir(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return osDir{osFile{f}}, nil
}

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (osFS) Remove(name string) error             { return os.Remove(name) }
func (osFS) Stat(name string) (os.FileInfo, error) {
	return os.Stat(name)
}
func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }
func (osFS) Truncate(name string, size int64) error      { return os.Truncate(name, size) }

func (osFS) List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	sort.Strings(names) // os.ReadDir sorts already; keep the promise explicit.
	return names, nil
}

// osFile is a File over *os.File.
type osFile struct{ *os.File }

func (f osFile) Datasync() error { return datasync(f.File) }

// osDir is a directory handle; its Sync makes the directory's entries durable
// where the system can (see syncDir).
type osDir struct{ osFile }

func (d osDir) Sync() error     { return syncDir(d.File) }
func (d osDir) Datasync() error { return syncDir(d.File) }
