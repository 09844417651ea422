package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
)

// PowerLoss is a power-loss model for both I/O stacks, in the style of
// ALICE and Pebble's strict in-memory file system: it records every write
// and every fsync or fdatasync that reaches a file through the FS and the
// runtime.Backend it wraps (PowerLoss.FS, PowerLoss.Backend), and Crash
// materializes what a disk could hold after the power failed at that
// moment:
//
//   - every byte covered by a completed fsync or fdatasync is kept: a
//     sync covers the writes to its file that completed before it was
//     submitted, and the writes before it in its own Chain;
//   - every other written 4 KiB page independently keeps its new bytes,
//     goes back to its bytes before the last write (old), is zeroed, or is
//     torn at a 512-byte sector boundary (new sectors, then old ones);
//     only the bytes of writes not yet covered change, never the synced
//     bytes sharing their page;
//   - a file whose size grew since its last sync may lose any part of the
//     growth.
//
// Directory operations (create, rename, unlink) are kept as they are: the
// model is about file contents. The files live on the real file system
// under the wrapped stacks; Crash copies the tree under a root into another
// directory, with the damage applied, for recovery to boot from.
//
// Safe for concurrent use; the wrappers follow the rules of what they wrap.
type PowerLoss struct {
	mu    sync.Mutex
	seq   uint64
	files map[string]*plFile
}

// PageSize and SectorSize are the units of a power loss's damage.
const (
	PageSize   = 4096
	SectorSize = 512
)

// plFile is what the model knows of one file beyond its real contents.
type plFile struct {
	// writes are the writes not covered by a completed sync, in order.
	writes []*plWrite
	// old holds, per page index, the page's bytes before the most recent
	// of those writes that touched it.
	old map[int64][]byte
	// durSize is the size a completed sync made durable.
	durSize int64
}

type plWrite struct {
	seq  uint64
	off  int64
	n    int64
	done bool // completed: a sync submitted from now on covers it
}

// NewPowerLoss returns an empty model.
func NewPowerLoss() *PowerLoss { return &PowerLoss{files: make(map[string]*plFile)} }

// file returns the record of path, starting one whose whole current
// contents count as durable (the model knows of nothing before).
func (p *PowerLoss) file(path string) *plFile {
	f := p.files[path]
	if f == nil {
		f = &plFile{old: make(map[int64][]byte)}
		if fi, err := os.Stat(path); err == nil {
			f.durSize = fi.Size()
		}
		p.files[path] = f
	}
	return f
}

// created records that path was created or truncated to size 0: nothing
// of it is durable yet but its (empty) existence.
func (p *PowerLoss) created(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.files[path] = &plFile{old: make(map[int64][]byte)}
}

// beginWrite records a write of n bytes at off to path, about to be
// submitted, with the old bytes of the pages it touches.
func (p *PowerLoss) beginWrite(path string, off, n int64) *plWrite {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.file(path)
	p.seq++
	w := &plWrite{seq: p.seq, off: off, n: n}
	f.writes = append(f.writes, w)
	if n > 0 {
		rf, err := os.Open(path)
		if err == nil {
			defer rf.Close()
		}
		for pg := off / PageSize; pg <= (off+n-1)/PageSize; pg++ {
			b := make([]byte, PageSize)
			if err == nil {
				_, _ = rf.ReadAt(b, pg*PageSize) // beyond the end: zeros
			}
			f.old[pg] = b
		}
	}
	return w
}

func (p *PowerLoss) endWrite(w *plWrite) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w.done = true
}

// beginSync returns the writes a sync of path submitted now covers: those
// completed, plus the given ones (earlier steps of its chain).
func (p *PowerLoss) beginSync(path string, chained []*plWrite) []*plWrite {
	p.mu.Lock()
	defer p.mu.Unlock()
	var cover []*plWrite
	for _, w := range p.file(path).writes {
		if w.done {
			cover = append(cover, w)
		}
	}
	return append(cover, chained...)
}

// endSync records that the sync covering cover completed successfully.
func (p *PowerLoss) endSync(path string, cover []*plWrite) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.file(path)
	covered := make(map[*plWrite]bool, len(cover))
	for _, w := range cover {
		covered[w] = true
		f.durSize = max(f.durSize, w.off+w.n)
	}
	keep := f.writes[:0]
	for _, w := range f.writes {
		if !covered[w] {
			keep = append(keep, w)
		}
	}
	clear(f.writes[len(keep):])
	f.writes = keep
	if len(keep) == 0 {
		clear(f.old)
	}
}

func (p *PowerLoss) renamed(from, to string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f, ok := p.files[from]; ok {
		delete(p.files, from)
		p.files[to] = f
	} else {
		delete(p.files, to)
	}
}

func (p *PowerLoss) removed(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.files, path)
}

func (p *PowerLoss) truncated(path string, size int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.file(path)
	f.durSize = min(f.durSize, size)
}

// Unsynced returns the number of bytes written to path and not covered by
// a completed sync (overlaps counted twice).
func (p *PowerLoss) Unsynced(path string) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var n int64
	if f := p.files[path]; f != nil {
		for _, w := range f.writes {
			n += w.n
		}
	}
	return n
}

// CrashReport says what Crash did.
type CrashReport struct {
	Files      int   // files copied
	Pages      int   // pages holding bytes not covered by a sync
	Kept       int   // of those, pages kept new
	Old        int   // ... gone back to their old bytes
	Zeroed     int   // ... zeroed
	Torn       int   // ... torn at a sector boundary
	CutBytes   int64 // bytes lost from the ends of files that had grown
	DamagedAny bool  // some unsynced byte differs from what was written
}

// Crash copies every regular file under root into dst (created, same
// relative paths) as a power loss now could leave it, with rng choosing
// each unsynced page's fate. The stacks that write under root must be
// quiet (their loop stopped) for the image to be a moment's.
func (p *PowerLoss) Crash(rng *rand.Rand, root, dst string) (CrashReport, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var rep CrashReport
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			// Renamed or unlinked by an operation in flight: the power
			// failed before it.
			return nil
		}
		if err != nil {
			return fmt.Errorf("vfs: power loss: read %s: %w", path, err)
		}
		if f := p.files[path]; f != nil && len(f.writes) > 0 {
			b = f.damage(rng, b, &rep)
		}
		rep.Files++
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		return rep, fmt.Errorf("vfs: power loss image of %s: %w", root, err)
	}
	return rep, nil
}

// damage applies a power loss to cur, the file's bytes now.
func (f *plFile) damage(rng *rand.Rand, cur []byte, rep *CrashReport) []byte {
	img := append([]byte(nil), cur...)
	size := int64(len(cur))
	// The bytes of writes not covered by a sync, page by page.
	type span struct{ from, to int64 }
	spans := map[int64][]span{}
	for _, w := range f.writes {
		for off := w.off; off < min(w.off+w.n, size); {
			pg := off / PageSize
			end := min((pg+1)*PageSize, w.off+w.n, size)
			spans[pg] = append(spans[pg], span{off, end})
			off = end
		}
	}
	for pg, ss := range spans {
		rep.Pages++
		old := f.old[pg]
		if old == nil {
			old = make([]byte, PageSize) // a page written before the model saw it: its old bytes are unknown; zero
		}
		mode := rng.IntN(4)
		tear := int64(1+rng.IntN(PageSize/SectorSize-1)) * SectorSize
		switch mode {
		case 0:
			rep.Kept++
			continue
		case 1:
			rep.Old++
		case 2:
			rep.Zeroed++
		case 3:
			rep.Torn++
		}
		for _, s := range ss {
			for o := s.from; o < s.to; o++ {
				in := o - pg*PageSize
				var v byte
				switch mode {
				case 1:
					v = old[in]
				case 2:
					v = 0
				case 3:
					v = cur[o]
					if in >= tear {
						v = old[in]
					}
				}
				if v != img[o] {
					rep.DamagedAny = true
				}
				img[o] = v
			}
		}
	}
	if size > f.durSize && rng.IntN(4) == 0 {
		n := f.durSize + rng.Int64N(size-f.durSize+1)
		rep.CutBytes += size - n
		if size > n {
			rep.DamagedAny = true
		}
		img = img[:n]
	}
	return img
}
