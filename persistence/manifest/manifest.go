package manifest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"

	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/vfs"
)

// Layout. See the package documentation.
const (
	// FileName is the manifest's name in the shard directory.
	FileName = "manifest"
	// Magic opens a manifest.
	Magic = "MOONDMAN"
	// Version is the format version this package writes; it reads
	// version 1 too (no key counts).
	Version = 2
	// HeaderSize is the fixed part before the entries.
	HeaderSize = 32
	// EntrySize is the size of one entry.
	EntrySize = 16
	// MaxEntries bounds the entry count (4M files of 64 MiB: 256 TiB). A
	// count above it is damage, never a reason to allocate.
	MaxEntries = 1 << 22
	// MaxKeyCounts bounds the key-count section (one per database).
	MaxKeyCounts = 1 << 16

	offVersion  = 8
	offShard    = 12
	offNext     = 16
	offCount    = 24
	offReserved = 28 // version 1: zero; version 2: the number of key counts

	// idLimit is one past the largest file id.
	idLimit = 1 << 32
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// State is a registered file's state.
type State uint8

const (
	// Live: the file is part of the heap.
	Live State = 1
	// Tombstoned: the file holds nothing live; it is unlinked once the
	// checkpoint that commits the tombstone has finalized.
	Tombstoned State = 2
)

func (s State) String() string {
	switch s {
	case Live:
		return "live"
	case Tombstoned:
		return "tombstoned"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Entry is one registered file.
type Entry struct {
	ID    uint32
	State State
	// Checkpoint is, for a tombstoned file, the redo LSN of the checkpoint
	// that commits the tombstone; 0 for a live file.
	Checkpoint uint64
}

// Manifest is the registry in memory. Not safe for concurrent use.
type Manifest struct {
	shard   uint32
	next    uint64 // 1..idLimit
	entries map[uint32]Entry
	keys    []uint64 // keys per physical database at the last commit
}

// SetKeyCounts records how many keys each physical database holds, for the
// next commit: a boot sizes its tables from them before it loads the heap.
// They are a hint, never a rule: nothing checks them against the heap.
func (m *Manifest) SetKeyCounts(keys []uint64) { m.keys = append(m.keys[:0], keys...) }

// KeyCounts are the key counts the manifest was committed with (nil when
// it has none: version 1, or none were set).
func (m *Manifest) KeyCounts() []uint64 { return m.keys }

var _ heap.FileIDAllocator = (*Manifest)(nil)

// New returns the empty registry of shard: no files, next id 1.
func New(shard uint32) *Manifest {
	return &Manifest{shard: shard, next: 1, entries: make(map[uint32]Entry)}
}

// Shard is the shard the manifest belongs to.
func (m *Manifest) Shard() uint32 { return m.shard }

// NextID is the counter: the id AllocateFileID hands out next (2^32 when
// ids are exhausted).
func (m *Manifest) NextID() uint64 { return m.next }

// ErrExhausted is returned when every file id has been handed out.
var ErrExhausted = errors.New("manifest: file ids exhausted")

// AllocateFileID hands out the next file id and registers it live.
func (m *Manifest) AllocateFileID() (uint32, error) {
	if m.next >= idLimit {
		return 0, ErrExhausted
	}
	id := uint32(m.next)
	if _, ok := m.entries[id]; ok {
		panic(fmt.Sprintf("manifest: counter %d at a registered id", id))
	}
	m.next++
	m.entries[id] = Entry{ID: id, State: Live}
	return id, nil
}

// SeedPast moves the counter past id (a file found on disk, say). It never
// moves it back.
func (m *Manifest) SeedPast(id uint32) {
	m.next = max(m.next, uint64(id)+1)
}

// Lookup returns the entry of file id.
func (m *Manifest) Lookup(id uint32) (Entry, bool) {
	e, ok := m.entries[id]
	return e, ok
}

// IsLive reports whether file id is registered live: a live file that
// vanishes is an unexpected loss; any other vanished file was retired.
func (m *Manifest) IsLive(id uint32) bool { return m.entries[id].State == Live }

// Entries returns every entry, by ascending id.
func (m *Manifest) Entries() []Entry {
	out := make([]Entry, 0, len(m.entries))
	for _, id := range slices.Sorted(maps.Keys(m.entries)) {
		out = append(out, m.entries[id])
	}
	return out
}

// Live returns the ids of the live files, ascending: the files the heap
// loads.
func (m *Manifest) Live() []uint32 {
	var out []uint32
	for _, e := range m.Entries() {
		if e.State == Live {
			out = append(out, e.ID)
		}
	}
	return out
}

// Tombstone marks live file id as holding nothing live, to be committed by
// the checkpoint whose redo LSN is checkpoint.
func (m *Manifest) Tombstone(id uint32, checkpoint uint64) error {
	e, ok := m.entries[id]
	switch {
	case !ok:
		return fmt.Errorf("manifest: tombstone file %08x: not registered", id)
	case e.State != Live:
		return fmt.Errorf("manifest: tombstone file %08x: already %v", id, e.State)
	case checkpoint == 0:
		return fmt.Errorf("manifest: tombstone file %08x at checkpoint 0", id)
	}
	m.entries[id] = Entry{ID: id, State: Tombstoned, Checkpoint: checkpoint}
	return nil
}

// Unlinkable returns the tombstoned files whose tombstone a finalized
// checkpoint committed: those whose checkpoint is at or below the
// published redo point. They may be unlinked now (and then forgotten).
func (m *Manifest) Unlinkable(published uint64) []uint32 {
	var out []uint32
	for _, e := range m.Entries() {
		if e.State == Tombstoned && e.Checkpoint <= published {
			out = append(out, e.ID)
		}
	}
	return out
}

// Forget drops the entry of a tombstoned file that was unlinked (and the
// unlink made durable). The counter does not move.
func (m *Manifest) Forget(id uint32) error {
	e, ok := m.entries[id]
	if !ok || e.State != Tombstoned {
		return fmt.Errorf("manifest: forget file %08x: not tombstoned (%v)", id, e.State)
	}
	delete(m.entries, id)
	return nil
}

// Append appends the encoded manifest to dst.
func (m *Manifest) Append(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, Magic...)
	dst = binary.LittleEndian.AppendUint32(dst, Version)
	dst = binary.LittleEndian.AppendUint32(dst, m.shard)
	dst = binary.LittleEndian.AppendUint64(dst, m.next)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(m.entries)))
	keys := m.keys[:min(len(m.keys), MaxKeyCounts)]
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(keys)))
	for _, e := range m.Entries() {
		if err := m.checkEntry(e); err != nil {
			panic(err)
		}
		dst = binary.LittleEndian.AppendUint32(dst, e.ID)
		dst = append(dst, byte(e.State), 0, 0, 0)
		dst = binary.LittleEndian.AppendUint64(dst, e.Checkpoint)
	}
	for _, k := range keys {
		dst = binary.LittleEndian.AppendUint64(dst, k)
	}
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// Encode returns the encoded manifest.
func (m *Manifest) Encode() []byte {
	return m.Append(make([]byte, 0, HeaderSize+EntrySize*len(m.entries)+8*len(m.keys)+4))
}

func (m *Manifest) checkEntry(e Entry) error {
	switch {
	case e.ID == 0 || uint64(e.ID) >= m.next:
		return fmt.Errorf("%w: file id %d with next file id %d", ErrInvalid, e.ID, m.next)
	case e.State == Live && e.Checkpoint != 0:
		return fmt.Errorf("%w: live file %08x with tombstone checkpoint %d", ErrInvalid, e.ID, e.Checkpoint)
	case e.State == Tombstoned && e.Checkpoint == 0:
		return fmt.Errorf("%w: tombstoned file %08x without a checkpoint", ErrInvalid, e.ID)
	case e.State != Live && e.State != Tombstoned:
		return fmt.Errorf("%w: file %08x in state %d", ErrInvalid, e.ID, e.State)
	}
	return nil
}

// Errors Decode returns.
var (
	ErrSize     = errors.New("manifest: size does not match the entry count")
	ErrBadMagic = errors.New("manifest: not a manifest (bad magic)")
	ErrChecksum = errors.New("manifest: checksum mismatch")
	ErrVersion  = errors.New("manifest: unsupported format version")
	ErrInvalid  = errors.New("manifest: impossible content")
	ErrShard    = errors.New("manifest: manifest of another shard")
)

// Decode decodes and validates an encoded manifest.
func Decode(b []byte) (*Manifest, error) {
	if len(b) < HeaderSize+4 {
		return nil, fmt.Errorf("%w: %d bytes", ErrSize, len(b))
	}
	if string(b[:len(Magic)]) != Magic {
		return nil, ErrBadMagic
	}
	n := binary.LittleEndian.Uint32(b[offCount:])
	reserved := binary.LittleEndian.Uint32(b[offReserved:])
	nk := reserved // version 2: the key counts
	if binary.LittleEndian.Uint32(b[offVersion:]) == 1 {
		nk = 0
	}
	if n > MaxEntries || nk > MaxKeyCounts || len(b) != HeaderSize+EntrySize*int(n)+8*int(nk)+4 {
		return nil, fmt.Errorf("%w: %d bytes for %d entries and %d key counts", ErrSize, len(b), n, nk)
	}
	end := len(b) - 4
	stored := binary.LittleEndian.Uint32(b[end:])
	if got := crc32.Checksum(b[:end], castagnoli); got != stored {
		return nil, fmt.Errorf("%w (stored %#08x, computed %#08x)", ErrChecksum, stored, got)
	}
	switch v := binary.LittleEndian.Uint32(b[offVersion:]); {
	case v == 1 && reserved != 0:
		return nil, fmt.Errorf("%w: reserved header bytes are not zero", ErrInvalid)
	case v != 1 && v != Version:
		return nil, fmt.Errorf("%w %d (this build reads 1 and %d)", ErrVersion, v, Version)
	}
	m := &Manifest{
		shard:   binary.LittleEndian.Uint32(b[offShard:]),
		next:    binary.LittleEndian.Uint64(b[offNext:]),
		entries: make(map[uint32]Entry, n),
	}
	if m.next == 0 || m.next > idLimit {
		return nil, fmt.Errorf("%w: next file id %d", ErrInvalid, m.next)
	}
	var prev uint32
	for i := range int(n) {
		r := b[HeaderSize+EntrySize*i:]
		e := Entry{ID: binary.LittleEndian.Uint32(r), State: State(r[4]), Checkpoint: binary.LittleEndian.Uint64(r[8:])}
		if r[5] != 0 || r[6] != 0 || r[7] != 0 {
			return nil, fmt.Errorf("%w: entry %d has nonzero reserved bytes", ErrInvalid, i)
		}
		if i > 0 && e.ID <= prev {
			return nil, fmt.Errorf("%w: entry %d (file %08x) out of order", ErrInvalid, i, e.ID)
		}
		if err := m.checkEntry(e); err != nil {
			return nil, err
		}
		m.entries[e.ID] = e
		prev = e.ID
	}
	if nk > 0 {
		m.keys = make([]uint64, nk)
		for i := range m.keys {
			m.keys[i] = binary.LittleEndian.Uint64(b[HeaderSize+EntrySize*int(n)+8*i:])
		}
	}
	return m, nil
}

// Path is the manifest of the shard in shardDir.
func Path(shardDir string) string { return filepath.Join(shardDir, FileName) }

// Error is a manifest that is present but unusable, or unreadable.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("manifest %s: %v", e.Path, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Read reads the manifest of the shard in shardDir, which must belong to
// shard, and reports whether it exists; a missing one is New(shard). A
// manifest that exists and does not decode, or names another shard, is an
// *Error naming the file.
func Read(fsys vfs.FS, shardDir string, shard uint32) (*Manifest, bool, error) {
	path := Path(shardDir)
	f, err := fsys.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return New(shard), false, nil
	}
	if err != nil {
		return nil, false, &Error{path, err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, true, &Error{path, err}
	}
	if size := st.Size(); size < HeaderSize+4 || size > HeaderSize+EntrySize*MaxEntries+8*MaxKeyCounts+4 {
		return nil, true, &Error{path, fmt.Errorf("%w: %d bytes", ErrSize, size)}
	}
	b := make([]byte, st.Size())
	if n, err := f.ReadAt(b, 0); n != len(b) {
		if err == nil || errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w: read %d of %d bytes", ErrSize, n, len(b))
		}
		return nil, true, &Error{path, err}
	}
	m, err := Decode(b)
	if err != nil {
		return nil, true, &Error{path, err}
	}
	if m.shard != shard {
		return nil, true, &Error{path, fmt.Errorf("%w: it names shard %d, this is shard %d", ErrShard, m.shard, shard)}
	}
	return m, true, nil
}

// Prepare returns the atomic replacement that commits m in shardDir: the
// steps the serving loop performs through runtime.Backend.
func (m *Manifest) Prepare(shardDir string) vfs.AtomicWrite {
	return vfs.NewAtomicWrite(shardDir, FileName, m.Encode())
}

// Write commits m in shardDir atomically through fsys.
func (m *Manifest) Write(fsys vfs.FS, shardDir string) error {
	if err := m.Prepare(shardDir).Run(fsys); err != nil {
		return fmt.Errorf("manifest: write %s: %w", Path(shardDir), err)
	}
	return nil
}

// Sweep lists the heap files in heapDir, moves the counter past every one
// of them, and returns, ascending, the ids of those the manifest does not
// list: files of a checkpoint that never committed, or of a tombstone that
// was forgotten before its unlink was durable. Boot deletes them
// (RemoveFiles) before it loads the heap.
func (m *Manifest) Sweep(fsys vfs.FS, heapDir string) ([]uint32, error) {
	ids, err := heap.ListFiles(fsys, heapDir)
	if err != nil {
		return nil, fmt.Errorf("manifest: sweep: %w", err)
	}
	var out []uint32
	for _, id := range ids {
		m.SeedPast(id)
		if _, ok := m.entries[id]; !ok {
			out = append(out, id)
		}
	}
	return out, nil
}

// RemoveFiles unlinks heap files ids from heapDir and fsyncs the directory,
// so that the removals are durable before the caller forgets them. A file
// that is already gone is not an error.
func RemoveFiles(fsys vfs.FS, heapDir string, ids []uint32) error {
	if len(ids) == 0 {
		return nil
	}
	for _, id := range ids {
		if err := fsys.Remove(heap.FilePath(heapDir, id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("manifest: remove heap file: %w", err)
		}
	}
	if err := vfs.SyncDir(fsys, heapDir); err != nil {
		return fmt.Errorf("manifest: remove heap files: %w", err)
	}
	return nil
}
