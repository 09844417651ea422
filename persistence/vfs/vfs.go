package vfs

import (
	"io"
	"os"
)

// FS is the file system the persistence code uses.
type FS interface {
	// Open opens an existing file for reading.
	Open(name string) (File, error)
	// OpenReadWrite opens an existing file for reading and writing, without
	// truncating it. Writes through Write start at offset 0.
	OpenReadWrite(name string) (File, error)
	// Create creates name for reading and writing, truncating it if it
	// exists.
	Create(name string) (File, error)
	// OpenDir opens a directory so that its entries can be made durable with
	// Sync.
	OpenDir(name string) (File, error)
	// Rename renames oldname to newname, replacing newname if it exists.
	Rename(oldname, newname string) error
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// List returns the base names of the entries of dir, sorted.
	List(dir string) ([]string, error)
	// Stat describes the file name.
	Stat(name string) (os.FileInfo, error)
	// MkdirAll creates dir and any missing parents.
	MkdirAll(dir string, perm os.FileMode) error
	// Truncate changes the size of the file name. It does not make the change
	// durable: open the file and Sync it for that.
	Truncate(name string, size int64) error
}

// File is an open file (or directory, from FS.OpenDir).
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Writer
	io.Closer
	// Sync flushes the file's data and metadata to stable storage (fsync).
	Sync() error
	// Datasync flushes the file's data and the metadata needed to read it
	// back (fdatasync where the system has it, fsync elsewhere).
	Datasync() error
	// Stat describes the file.
	Stat() (os.FileInfo, error)
}
