package vfs

import (
	"errors"
	"io"
	"os"
)

// Faulty is an FS that injects faults into another. It is safe for
// concurrent use. Its rules (Add, Delete, Hits, Counts, Crashed, Reset) are
// the ones FaultyBackend takes too.
type Faulty struct {
	ruleSet
	base FS
}

var _ FS = (*Faulty)(nil)

// NewFaulty returns an FS that passes every call to base until rules say
// otherwise.
func NewFaulty(base FS) *Faulty { return &Faulty{base: base} }

// call is a Call of op on path that has no offset.
func call(op Op, path string) Call { return Call{Op: op, Path: path, Off: -1} }

// interrupt applies a non-write fault: it returns the error the call fails
// with, or nil when the call should go ahead (a hang that was released
// without an error).
func interrupt(r *Rule, opName, path string) error {
	if r.Fault == FaultHang {
		if r.Entered != nil {
			r.Entered <- path
		}
		<-r.Gate
		if r.Err == nil {
			return nil
		}
	}
	return pathErr(opName, path, r.Err)
}

func pathErr(op, path string, err error) error {
	return &os.PathError{Op: op, Path: path, Err: err}
}

func (f *Faulty) open(op Op, opName, name string, do func(string) (File, error)) (File, error) {
	if r := f.fire(call(op, name)); r != nil {
		if err := interrupt(r, opName, name); err != nil {
			return nil, err
		}
	}
	file, err := do(name)
	if err != nil {
		return nil, err
	}
	return &faultyFile{fs: f, f: file, path: name}, nil
}

func (f *Faulty) Open(name string) (File, error) {
	return f.open(OpOpen, "open", name, f.base.Open)
}

func (f *Faulty) OpenReadWrite(name string) (File, error) {
	return f.open(OpOpen, "open", name, f.base.OpenReadWrite)
}

func (f *Faulty) Create(name string) (File, error) {
	return f.open(OpCreate, "open", name, f.base.Create)
}

func (f *Faulty) OpenDir(name string) (File, error) {
	return f.open(OpOpenDir, "open", name, f.base.OpenDir)
}

func (f *Faulty) Rename(oldname, newname string) error {
	if r := f.fire(Call{Op: OpRename, Path: oldname, NewPath: newname, Off: -1}); r != nil {
		if err := interrupt(r, "rename", oldname); err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: pe.Err}
			}
			return err
		}
	}
	return f.base.Rename(oldname, newname)
}

func (f *Faulty) Remove(name string) error {
	if r := f.fire(call(OpRemove, name)); r != nil {
		if err := interrupt(r, "remove", name); err != nil {
			return err
		}
	}
	return f.base.Remove(name)
}

func (f *Faulty) List(dir string) ([]string, error) {
	if r := f.fire(call(OpList, dir)); r != nil {
		if err := interrupt(r, "readdir", dir); err != nil {
			return nil, err
		}
	}
	return f.base.List(dir)
}

func (f *Faulty) Stat(name string) (os.FileInfo, error) {
	if r := f.fire(call(OpStat, name)); r != nil {
		if err := interrupt(r, "stat", name); err != nil {
			return nil, err
		}
	}
	return f.base.Stat(name)
}

func (f *Faulty) MkdirAll(dir string, perm os.FileMode) error {
	if r := f.fire(call(OpMkdirAll, dir)); r != nil {
		if err := interrupt(r, "mkdir", dir); err != nil {
			return err
		}
	}
	return f.base.MkdirAll(dir, perm)
}

func (f *Faulty) Truncate(name string, size int64) error {
	if r := f.fire(call(OpTruncate, name)); r != nil {
		if err := interrupt(r, "truncate", name); err != nil {
			return err
		}
	}
	return f.base.Truncate(name, size)
}

// faultyFile is a File whose calls go through its Faulty's rules.
type faultyFile struct {
	fs   *Faulty
	f    File
	path string
}

func (ff *faultyFile) ReadAt(p []byte, off int64) (int, error) {
	if r := ff.fs.fire(Call{Op: OpRead, Path: ff.path, Off: off}); r != nil {
		if err := interrupt(r, "read", ff.path); err != nil {
			return 0, err
		}
	}
	return ff.f.ReadAt(p, off)
}

func (ff *faultyFile) Write(p []byte) (int, error) {
	return ff.write(p, -1, ff.f.Write)
}

func (ff *faultyFile) WriteAt(p []byte, off int64) (int, error) {
	return ff.write(p, off, func(b []byte) (int, error) { return ff.f.WriteAt(b, off) })
}

// write applies the write faults: a prefix of p reaches the file through do
// for short and torn writes. off is the offset of WriteAt, -1 for Write.
func (ff *faultyFile) write(p []byte, off int64, do func([]byte) (int, error)) (int, error) {
	r := ff.fs.fire(Call{Op: OpWrite, Path: ff.path, Off: off})
	if r == nil {
		return do(p)
	}
	switch r.Fault {
	case FaultShortWrite:
		n := min(r.N, max(len(p)-1, 0))
		m, err := do(p[:n])
		if err != nil {
			return m, err
		}
		return m, pathErr("write", ff.path, io.ErrShortWrite)
	case FaultTornWrite:
		n := min(r.N, len(p))
		m, err := do(p[:n])
		if err != nil {
			return m, err
		}
		return m, pathErr("write", ff.path, ErrCrashed)
	}
	if err := interrupt(r, "write", ff.path); err != nil {
		return 0, err
	}
	return do(p)
}

func (ff *faultyFile) Sync() error {
	if r := ff.fs.fire(call(OpSync, ff.path)); r != nil {
		if err := interrupt(r, "sync", ff.path); err != nil {
			return err
		}
	}
	return ff.f.Sync()
}

func (ff *faultyFile) Datasync() error {
	if r := ff.fs.fire(call(OpDatasync, ff.path)); r != nil {
		if err := interrupt(r, "fdatasync", ff.path); err != nil {
			return err
		}
	}
	return ff.f.Datasync()
}

func (ff *faultyFile) Stat() (os.FileInfo, error) {
	if r := ff.fs.fire(call(OpStat, ff.path)); r != nil {
		if err := interrupt(r, "stat", ff.path); err != nil {
			return nil, err
		}
	}
	return ff.f.Stat()
}

// Close always releases the underlying file, even when a fault is injected,
// so that tests do not leak descriptors.
func (ff *faultyFile) Close() error {
	if r := ff.fs.fire(call(OpClose, ff.path)); r != nil {
		err := interrupt(r, "close", ff.path)
		cerr := ff.f.Close()
		if err != nil {
			return err
		}
		return cerr
	}
	return ff.f.Close()
}
