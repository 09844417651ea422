package heap

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/moond-db/moond/persistence/vfs"
)

// DirName is the name of a shard's heap directory: <shard dir>/heap.
const DirName = "heap"

const (
	filePrefix = "heap-"
	fileSuffix = ".dat"
)

// FilePattern matches the name of every heap file (filepath.Match syntax).
const FilePattern = filePrefix + "*" + fileSuffix

// FileName is the name of heap file id: "heap-" + 8 lower-case hex digits +
// ".dat".
func FileName(id uint32) string { return fmt.Sprintf("%s%08x%s", filePrefix, id, fileSuffix) }

// FilePath is FileName under the heap directory dir.
func FilePath(dir string, id uint32) string { return filepath.Join(dir, FileName(id)) }

// ParseFileName returns the id a heap file name carries, and whether name is
// a heap file name at all. Id 0 is never a file.
func ParseFileName(name string) (uint32, bool) {
	hex, ok := strings.CutPrefix(name, filePrefix)
	if !ok {
		return 0, false
	}
	hex, ok = strings.CutSuffix(hex, fileSuffix)
	if !ok || len(hex) != 8 || strings.ToLower(hex) != hex {
		return 0, false
	}
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil || v == 0 {
		return 0, false
	}
	return uint32(v), true
}

// PageOffset is the byte offset of page n in its file.
func PageOffset(n uint32) int64 { return int64(n) * PageSize }

// ListFiles returns the ids of the heap files in dir, ascending. A missing
// directory holds no files.
func ListFiles(fsys vfs.FS, dir string) ([]uint32, error) {
	names, err := fsys.List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("heap: list heap files: %w", err)
	}
	var ids []uint32
	for _, name := range names {
		if id, ok := ParseFileName(name); ok {
			ids = append(ids, id)
		}
	}
	return ids, nil // List sorts names; fixed-width hex sorts like the ids
}

// File is a heap file opened through vfs.FS: the synchronous reader and
// writer that boot-time loading, tools and tests use. The serving loop
// writes the same bytes (Page.EncodeInto) at the same offsets (PageOffset)
// through runtime.Backend. Not safe for concurrent use.
type File struct {
	fsys vfs.FS
	f    vfs.File
	id   uint32
	path string
	buf  []byte // one page of scratch for ReadPage and WritePage
}

func (f *File) scratch() []byte {
	if f.buf == nil {
		f.buf = make([]byte, PageSize)
	}
	return f.buf
}

// OpenFile opens heap file id in dir for reading and writing. A missing
// file is an error wrapping fs.ErrNotExist.
func OpenFile(fsys vfs.FS, dir string, id uint32) (*File, error) {
	path := FilePath(dir, id)
	f, err := fsys.OpenReadWrite(path)
	if err != nil {
		return nil, fmt.Errorf("heap: open %s: %w", path, err)
	}
	return &File{fsys: fsys, f: f, id: id, path: path}, nil
}

// CreateFile creates heap file id in dir, empty, and makes its directory
// entry durable (the directory is fsynced). It refuses to replace an
// existing file.
func CreateFile(fsys vfs.FS, dir string, id uint32) (*File, error) {
	if id == 0 {
		panic("heap: create heap file 0")
	}
	path := FilePath(dir, id)
	if _, err := fsys.Stat(path); err == nil {
		return nil, fmt.Errorf("heap: create %s: already exists", path)
	}
	f, err := fsys.Create(path)
	if err != nil {
		return nil, fmt.Errorf("heap: create %s: %w", path, err)
	}
	if err := vfs.SyncDir(fsys, dir); err != nil {
		f.Close()
		return nil, err
	}
	return &File{fsys: fsys, f: f, id: id, path: path}, nil
}

// ID is the file's id.
func (f *File) ID() uint32 { return f.id }

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Size returns the file's length in whole pages, and the bytes of a partial
// page after them (nonzero only when a write that extended the file was
// torn).
func (f *File) Size() (pages uint32, tail int, err error) {
	st, err := f.f.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("heap: stat %s: %w", f.path, err)
	}
	n := st.Size() / PageSize
	if n > int64(MaxPages) {
		return 0, 0, fmt.Errorf("heap: %s holds %d pages, more than %d", f.path, n, MaxPages)
	}
	return uint32(n), int(st.Size() % PageSize), nil
}

// ReadRaw reads the images of consecutive pages starting at page first into
// buf (a multiple of PageSize long) and returns how many whole pages it
// read; fewer than asked only at the end of the file. Nothing is validated.
func (f *File) ReadRaw(first uint32, buf []byte) (int, error) {
	if len(buf)%PageSize != 0 {
		panic(fmt.Sprintf("heap: read %d bytes, not whole pages", len(buf)))
	}
	n, err := f.f.ReadAt(buf, PageOffset(first))
	if err != nil && !errors.Is(err, io.EOF) {
		return n / PageSize, fmt.Errorf("heap: read %s at page %d: %w", f.path, first, err)
	}
	return n / PageSize, nil
}

// ReadPage reads page n into dst and validates it (see CheckPage). A page at
// or beyond the end of the file is a *PageError wrapping ErrShortPage; a
// hole is ErrZeroPage. On error dst is unchanged.
func (f *File) ReadPage(n uint32, dst *Page) error {
	buf := f.scratch()
	m, err := f.f.ReadAt(buf, PageOffset(n))
	if m < PageSize {
		if err == nil || errors.Is(err, io.EOF) {
			return fmt.Errorf("heap: read %s: %w", f.path, pageErr(f.id, n, ErrShortPage, "%d bytes at the end of the file", m))
		}
		return fmt.Errorf("heap: read %s page %d: %w", f.path, n, err)
	}
	if err := dst.Decode(buf, f.id, n); err != nil {
		return fmt.Errorf("heap: read %s: %w", f.path, err)
	}
	return nil
}

// RecordHead reads the page of record id from the file and returns what the
// record says about itself (its key LSN, to tell two versions of a key
// apart at boot). The page must be valid and the slot live.
func (f *File) RecordHead(id RecordID) (RecordHead, error) {
	if id.File != f.id {
		return RecordHead{}, fmt.Errorf("heap: record %v is not in %s", id, f.path)
	}
	var p Page
	if err := f.ReadPage(id.Page, &p); err != nil {
		return RecordHead{}, err
	}
	v, err := p.Record(int(id.Slot))
	if err != nil {
		return RecordHead{}, fmt.Errorf("heap: read %s: record %v: %w", f.path, id, err)
	}
	return v.RecordHead, nil
}

// WritePage writes p (with its CRC set) at its page offset. The page must
// belong to this file.
func (f *File) WritePage(p *Page) error {
	if p.File() != f.id {
		panic(fmt.Sprintf("heap: write page of file %08x into file %08x", p.File(), f.id))
	}
	buf := f.scratch()
	p.EncodeInto(buf)
	return f.WriteImage(p.Number(), buf)
}

// WriteImage writes a page image verbatim at page n: the repair of a torn
// page from its full-page image. The image must be a valid page for this
// place (CheckPage), so that a bad image can never replace a page.
func (f *File) WriteImage(n uint32, img []byte) error {
	if _, err := CheckPage(img, f.id, n); err != nil {
		return fmt.Errorf("heap: write %s: refusing an invalid image: %w", f.path, err)
	}
	if _, err := f.f.WriteAt(img, PageOffset(n)); err != nil {
		return fmt.Errorf("heap: write %s page %d: %w", f.path, n, err)
	}
	return nil
}

// Sync fsyncs the file. A failure is a *vfs.SyncError.
func (f *File) Sync() error {
	if err := f.f.Sync(); err != nil {
		return &vfs.SyncError{Err: fmt.Errorf("heap: fsync %s: %w", f.path, err)}
	}
	return nil
}

// Close closes the file.
func (f *File) Close() error {
	if err := f.f.Close(); err != nil {
		return fmt.Errorf("heap: close %s: %w", f.path, err)
	}
	return nil
}
