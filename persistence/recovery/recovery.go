package recovery

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/moond-db/moond/persistence/checkpoint/record"
	"github.com/moond-db/moond/persistence/control"
	"github.com/moond-db/moond/persistence/heap"
	"github.com/moond-db/moond/persistence/manifest"
	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/persistence/wal"
)

// Options configures Open.
type Options struct {
	FS       vfs.FS // vfs.Default when nil
	ShardDir string // <dir>/shard-NNN: control, manifest, wal/ and heap/ live in it
	Shard    uint32
	// Cache is the page cache the heap will use. Required.
	Cache *heap.Cache
	// MaxFileSize is passed to heap.Options (heap.DefaultMaxFileSize when 0).
	MaxFileSize int64
	// OnRecord receives every live heap record: the load of the keyspace
	// (heap.Options.OnRecord; heap.Index.Add is the reference). When Open
	// fails, what it received must be discarded.
	OnRecord func(*heap.ScanRecord) error
	// OnRedo, when set, is told the redo point once the control file is
	// read, before any record reaches OnRecord: the keyspace's load needs
	// it for the per-key LSN rule. keys are the manifest's key counts per
	// physical database at the last checkpoint (nil when unknown), for
	// sizing the tables before the load.
	OnRedo func(redo uint64, keys []uint64)
	// Log receives progress and what was repaired, swept and unlinked.
	// May be nil.
	Log *slog.Logger
	// Salvage is wal.RecoverOptions.Salvage, which the caller passes to
	// wal.Recover next: the scan for full-page images goes on past damage
	// in the log where the replay will.
	Salvage bool
}

// State is a shard's persisted state, booted up to the WAL replay.
type State struct {
	// Control is the control file as read, or control.Fresh.
	Control control.Control
	// Fresh is set when there is no control file: no checkpoint ever
	// finalized.
	Fresh bool
	// Redo is the first LSN the WAL replay must apply: Control.RedoLSN
	// (1 when fresh).
	Redo uint64
	// Manifest is the registry of heap files, its counter seeded past every
	// id on disk and the control file's next file id.
	Manifest *manifest.Manifest
	// Heap is the loaded heap, its file ids allocated by Manifest. It was
	// opened with ReadMisses false, as the serving loop needs: an operation
	// on a page that is not cached fails with heap.ErrNotResident. (The
	// load itself reads every page from its file, bypassing the cache, so
	// it does not need ReadMisses.)
	Heap *heap.Heap
	// Files are the live heap files (Manifest.Live()), fsynced.
	Files []uint32
	// Repaired are the torn pages restored from full-page images, in file
	// and page order.
	Repaired []heap.PageID
	// Swept are the heap files the manifest never registered, deleted.
	Swept []uint32
	// Unlinked are the tombstoned files whose tombstone the published redo
	// point covers, unlinked and forgotten.
	Unlinked []uint32
	// Images is the number of distinct heap pages with a full-page image at
	// or above the redo point in the WAL.
	Images int
	// LastCheckpoint is when the last checkpoint finalized (LASTSAVE);
	// zero when fresh.
	LastCheckpoint time.Time
}

// missingHistory is the type of ErrMissingHistory: a damaged log's
// refusal (wal.DamagedLog), so that moond exits with status 70 for it.
type missingHistory string

func (e missingHistory) Error() string { return string(e) }

// DamagedLog marks it as a damaged log's refusal.
func (missingHistory) DamagedLog() {}

// missingHistoryWayOut ends the text of a missing-history refusal.
const missingHistoryWayOut = "; the acknowledged writes in them are lost: restore the missing segments from a backup, " +
	"or move the shard's directory away to start it empty"

var (
	// ErrMissingHistory: the WAL no longer holds the records from the redo
	// point on (its oldest segment starts above it, or it is empty although
	// the control file names a durable checkpoint record).
	ErrMissingHistory error = missingHistory("recovery: WAL history below the redo point is missing")
	// ErrManifestMissing: the control file exists and the manifest does
	// not. A checkpoint commits the manifest before the control file, so
	// the registry of heap files is lost; boot will not sweep the heap
	// files as unregistered.
	ErrManifestMissing = errors.New("recovery: the control file exists but the manifest is missing")
	// ErrNoImage: a heap page fails validation (torn or damaged) and the
	// WAL holds no full-page image of it at or above the redo point.
	ErrNoImage = errors.New("recovery: heap page fails validation and has no full-page image at or above the redo point")
)

// progressEvery is how many WAL bytes the image scan reads between
// progress lines.
const progressEvery = 256 << 20

// Open boots the persisted state of one shard: see the package
// documentation for the steps. It modifies files only to repair them (torn
// pages from their images), to delete heap files that hold nothing the
// shard needs, and to make durable what is on disk; the WAL is only read.
func Open(o Options) (*State, error) {
	if o.ShardDir == "" {
		return nil, errors.New("recovery: Open without a shard directory")
	}
	if o.Cache == nil {
		return nil, errors.New("recovery: Open without a page cache")
	}
	b := &boot{
		o:       o,
		fs:      o.FS,
		log:     o.Log,
		walDir:  filepath.Join(o.ShardDir, wal.DirName),
		heapDir: filepath.Join(o.ShardDir, heap.DirName),
		images:  make(map[heap.PageID]imageLoc),
		files:   make(map[uint32]*heap.File),
	}
	if b.fs == nil {
		b.fs = vfs.Default
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	b.log = b.log.With("shard", o.Shard)
	defer b.closeFiles()
	start := time.Now()
	steps := []func() error{b.readControl, b.readManifest, b.scanImages, b.repair, b.syncFiles, b.openHeap}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	b.log.Info("heap recovered", "redo", b.st.Redo, "fresh", b.st.Fresh, "files", len(b.st.Files),
		"repaired", len(b.st.Repaired), "swept", len(b.st.Swept), "unlinked", len(b.st.Unlinked),
		"elapsed", time.Since(start).String())
	st := b.st
	return &st, nil
}

// segment is a WAL segment file found in the directory.
type segment struct {
	lsn  uint64 // first LSN, from the name
	path string
}

// imageLoc is where the highest-LSN full-page image of a page is: the
// record at off in seg.
type imageLoc struct {
	lsn uint64
	seg string
	off int64
}

type boot struct {
	o       Options
	fs      vfs.FS
	log     *slog.Logger
	walDir  string
	heapDir string
	st      State

	segs   []segment
	images map[heap.PageID]imageLoc
	// damage is the first damage the image scan met in the log (nil when
	// it read the log to its end): where it stopped, or under salvage the
	// first thing it skipped.
	damage *wal.MidChainTearError
	// files are the live heap files, open from repair until they are
	// fsynced.
	files map[uint32]*heap.File
}

func (b *boot) closeFiles() {
	for id, f := range b.files {
		_ = f.Close()
		delete(b.files, id)
	}
}

// readControl is step 1: the redo point, and whether the WAL still holds
// the history from it on.
func (b *boot) readControl() error {
	c, present, err := control.Read(b.fs, b.o.ShardDir, b.o.Shard)
	if err != nil {
		return fmt.Errorf("recovery: shard %d: %w", b.o.Shard, err)
	}
	b.st.Control, b.st.Fresh, b.st.Redo = c, !present, c.RedoLSN
	if present {
		b.st.LastCheckpoint = c.Time
	}
	b.segs, err = listSegments(b.fs, b.walDir)
	if err != nil {
		return err
	}
	source := fmt.Sprintf("the control file %s", control.Path(b.o.ShardDir))
	if !present {
		source = fmt.Sprintf("there is no control file %s: the shard never checkpointed and replays from LSN 1", control.Path(b.o.ShardDir))
	}
	switch {
	case len(b.segs) == 0 && present && c.CheckpointLSN > 0:
		return fmt.Errorf("%w: shard %d: the WAL directory %s holds no segment, but %s says the checkpoint record at LSN %d was durable (redo point %d)"+missingHistoryWayOut,
			ErrMissingHistory, b.o.Shard, b.walDir, source, c.CheckpointLSN, c.RedoLSN)
	case len(b.segs) > 0 && b.segs[0].lsn > b.st.Redo:
		return fmt.Errorf("%w: shard %d: the oldest WAL segment %s starts at LSN %d, but the redo point is LSN %d (%s): LSNs %d..%d are gone"+missingHistoryWayOut,
			ErrMissingHistory, b.o.Shard, b.segs[0].path, b.segs[0].lsn, b.st.Redo, source, b.st.Redo, b.segs[0].lsn-1)
	}
	b.log.Info("control file read", "fresh", b.st.Fresh, "redo", b.st.Redo,
		"checkpoint_lsn", c.CheckpointLSN, "next_file_id", c.NextFileID, "wal_segments", len(b.segs))
	return nil
}

// listSegments returns the segment files of dir by first LSN. Temporary
// and salvage leftovers are not segments; a missing directory holds none.
func listSegments(fsys vfs.FS, dir string) ([]segment, error) {
	firsts, err := wal.ListSegments(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("recovery: %w", err)
	}
	segs := make([]segment, len(firsts))
	for i, lsn := range firsts {
		segs[i] = segment{lsn: lsn, path: wal.SegmentPath(dir, lsn)}
	}
	return segs, nil
}

// readManifest is step 2: the registry, its counter seeded, unregistered
// files swept and covered tombstones unlinked.
func (b *boot) readManifest() error {
	m, present, err := manifest.Read(b.fs, b.o.ShardDir, b.o.Shard)
	if err != nil {
		return fmt.Errorf("recovery: shard %d: %w", b.o.Shard, err)
	}
	if !present && !b.st.Fresh {
		return fmt.Errorf("%w: shard %d: %s is missing next to %s (redo point %d); the heap files in %s cannot be told from unregistered ones, and deleting them would lose checkpointed keys",
			ErrManifestMissing, b.o.Shard, manifest.Path(b.o.ShardDir), control.Path(b.o.ShardDir), b.st.Redo, b.heapDir)
	}
	b.st.Manifest = m
	read := m.NextID()
	// The counter never moves back: past what the control file recorded
	// (a file allocated between the manifest commit and the control
	// write) and past every file on disk.
	if next := b.st.Control.NextFileID; next > 0 {
		m.SeedPast(next - 1)
	}
	swept, err := m.Sweep(b.fs, b.heapDir)
	if err != nil {
		return fmt.Errorf("recovery: shard %d: %w", b.o.Shard, err)
	}
	// No checkpoint finalized on a fresh shard: nothing is published, and
	// no tombstone is covered.
	published := uint64(0)
	if !b.st.Fresh {
		published = b.st.Redo
	}
	unlink := m.Unlinkable(published)
	if m.NextID() != read {
		b.log.Info("manifest file-id counter moved past the ids on disk", "from", read, "to", m.NextID())
		// Durable before any file is deleted (see the package
		// documentation).
		if err := m.Write(b.fs, b.o.ShardDir); err != nil {
			return fmt.Errorf("recovery: shard %d: persist the file-id counter: %w", b.o.Shard, err)
		}
	}
	if len(swept) > 0 {
		if err := manifest.RemoveFiles(b.fs, b.heapDir, swept); err != nil {
			return fmt.Errorf("recovery: shard %d: delete unregistered heap files %s: %w", b.o.Shard, fileNames(swept), err)
		}
		b.st.Swept = swept
		b.log.Warn("deleted heap files the manifest never registered (a checkpoint that did not commit)", "files", fileNames(swept))
	}
	if len(unlink) > 0 {
		if err := manifest.RemoveFiles(b.fs, b.heapDir, unlink); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("recovery: shard %d: unlink tombstoned heap files %s: %w", b.o.Shard, fileNames(unlink), err)
		}
		for _, id := range unlink {
			if err := m.Forget(id); err != nil {
				return fmt.Errorf("recovery: shard %d: %w", b.o.Shard, err)
			}
		}
		if err := m.Write(b.fs, b.o.ShardDir); err != nil {
			return fmt.Errorf("recovery: shard %d: commit the manifest without the unlinked files: %w", b.o.Shard, err)
		}
		b.st.Unlinked = unlink
		b.log.Info("unlinked tombstoned heap files the published redo point covers", "files", fileNames(unlink), "redo", published)
	}
	b.st.Files = m.Live()
	return nil
}

func fileNames(ids []uint32) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = heap.FileName(id)
	}
	return out
}

// scanImages is the first half of step 3: where the newest full-page
// image at or above the redo point of every page is. The WAL is read, never
// written.
//
// Damage (anything but the torn tail of the last segment) is judged the way
// wal.Recover judges it. Without salvage the scan stops there, and images
// after it are not used: wal.Recover will refuse the log, and a page that
// needed one of them fails the boot with the same refusal (noImage). With
// salvage the scan goes on where wal.Recover's replay goes on: a segment
// whose header does not belong is skipped whole, a damaged one is read up
// to the damage, and the next segment is read without the link check, as
// long as its LSNs go forward.
func (b *boot) scanImages() error {
	if len(b.segs) == 0 {
		return nil
	}
	start := 0
	for i, s := range b.segs {
		if s.lsn <= b.st.Redo {
			start = i
		}
	}
	began := time.Now()
	var scanned, nextLog int64 = 0, progressEvery
	var prev *wal.ScanResult
	// after is the highest LSN read so far: after damage, with no previous
	// seal to link to, a segment must at least start above it.
	var after uint64
	for i := start; i < len(b.segs); i++ {
		s := b.segs[i]
		last := i == len(b.segs)-1
		res, dmg, err := b.scanSegment(s, prev, after, last)
		if err != nil {
			return err
		}
		if res.Records > 0 {
			after = max(after, res.LastLSN)
		}
		scanned += res.Size
		if scanned >= nextLog {
			b.log.Info("scanning the WAL for full-page images", "segment", s.path, "bytes", scanned,
				"segments", fmt.Sprintf("%d/%d", i-start+1, len(b.segs)-start))
			nextLog = scanned + progressEvery
		}
		if dmg == nil {
			switch {
			case res.Stop == wal.StopSealed:
				prev = &res
				continue
			case last && (res.Stop == wal.StopEOF || res.Stop == wal.StopTorn):
				// The normal end of a crashed log; wal.Recover cuts the tail.
				continue
			case res.Stop == wal.StopEOF:
				dmg = b.tear(s, last, res.Offset, res.LastLSN,
					fmt.Errorf("segment ends at byte %d without a seal record, and a later segment exists", res.Offset))
			default:
				dmg = b.tear(s, last, res.Offset, res.LastLSN, fmt.Errorf("%v at byte %d: %w", res.Stop, res.Offset, res.Reason))
			}
		}
		if !b.noteDamage(dmg) {
			break
		}
		prev = nil
	}
	b.st.Images = len(b.images)
	b.log.Info("WAL scanned for full-page images", "from_redo", b.st.Redo, "pages", len(b.images),
		"bytes", scanned, "elapsed", time.Since(began).String())
	return nil
}

// tear describes damage at byte off of segment s, after the good LSN
// lastGood, as wal.Recover would refuse it.
func (b *boot) tear(s segment, last bool, off int64, lastGood uint64, reason error) *wal.MidChainTearError {
	return &wal.MidChainTearError{Shard: b.o.Shard, Segment: s.path, Offset: off, LastLSN: lastGood, Last: last, Reason: reason}
}

// noteDamage records damage the scan met and reports whether the scan goes
// on past it (salvage).
func (b *boot) noteDamage(d *wal.MidChainTearError) bool {
	if b.damage == nil {
		b.damage = d
	}
	if b.o.Salvage {
		b.log.Warn("WAL damaged: salvage, the scan for full-page images goes on with the next segment",
			"segment", d.Segment, "offset", d.Offset, "why", d.Reason.Error())
		return true
	}
	b.log.Warn("WAL damaged: full-page images after the damage are not used", "segment", d.Segment,
		"offset", d.Offset, "why", d.Reason.Error())
	return false
}

// scanSegment reads one segment's full-page images. A header that does not
// belong where the segment is (damage, another shard, another first LSN)
// returns the damage, and nothing is read. A header that does not link to
// prev, the previous segment read, returns the damage too; the segment is
// read anyway under salvage, as wal.Recover replays it. Under salvage after
// damage (prev nil), a segment that does not start above after, the
// highest LSN read, cannot be ordered: it is damage and is not read.
func (b *boot) scanSegment(s segment, prev *wal.ScanResult, after uint64, last bool) (wal.ScanResult, *wal.MidChainTearError, error) {
	f, err := b.fs.Open(s.path)
	if err != nil {
		return wal.ScanResult{}, nil, fmt.Errorf("recovery: open WAL segment: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return wal.ScanResult{}, nil, fmt.Errorf("recovery: stat WAL segment %s: %w", s.path, err)
	}
	h, err := wal.ReadSegmentHeader(f)
	var bad error
	switch {
	case isHeaderDamage(err):
		bad = fmt.Errorf("bad segment header: %w", err)
	case err != nil:
		return wal.ScanResult{}, nil, fmt.Errorf("recovery: read header of WAL segment %s: %w", s.path, err)
	case h.Shard != b.o.Shard:
		bad = fmt.Errorf("%w: the header names shard %d", wal.ErrBadHeader, h.Shard)
	case h.FirstLSN != s.lsn:
		bad = fmt.Errorf("%w: the header names first LSN %d", wal.ErrBadHeader, h.FirstLSN)
	case prev == nil && after > 0 && h.FirstLSN <= after:
		bad = fmt.Errorf("the segment starts at LSN %d, not after LSN %d already read", h.FirstLSN, after)
	}
	if bad != nil {
		return wal.ScanResult{}, b.tear(s, last, 0, s.lsn-1, bad), nil
	}
	var dmg *wal.MidChainTearError
	if prev != nil && (h.Prev != prev.Link() || h.FirstLSN <= prev.LastLSN) {
		dmg = b.tear(s, last, 0, prev.LastLSN, fmt.Errorf("the header links to %v, the previous segment ends %v", h.Prev, prev.Link()))
		if !b.o.Salvage {
			return wal.ScanResult{}, dmg, nil
		}
	}
	res, err := wal.ScanSegment(f, st.Size(), wal.ScanOptions{Visit: func(rec wal.Record, off int64) error {
		return b.visit(s, rec, off)
	}})
	if err != nil {
		return wal.ScanResult{}, nil, fmt.Errorf("recovery: scan WAL segment %s: %w", s.path, err)
	}
	if dmg != nil {
		// Read under salvage; the rest of the segment is judged as usual.
		b.noteDamage(dmg)
	}
	return res, nil, nil
}

func isHeaderDamage(err error) bool {
	return errors.Is(err, wal.ErrShortHeader) || errors.Is(err, wal.ErrBadMagic) ||
		errors.Is(err, wal.ErrHeaderChecksum) || errors.Is(err, wal.ErrBadHeader) ||
		errors.Is(err, wal.ErrVersion)
}

// visit notes rec when it is a full-page image at or above the redo point.
// A checkpoint record whose checksum is right and whose payload does not
// decode is not a torn write: it is an error.
func (b *boot) visit(s segment, rec wal.Record, off int64) error {
	if rec.Type != wal.RecordCheckpoint || rec.LSN < b.st.Redo {
		return nil
	}
	var kind byte
	if len(rec.Payload) > 0 {
		kind = rec.Payload[0]
	}
	switch kind {
	case record.KindEnd:
		if _, err := record.DecodeEnd(rec.Payload); err != nil {
			return fmt.Errorf("checkpoint record LSN %d at byte %d: %w", rec.LSN, off, err)
		}
	case record.KindDBMap:
		if _, err := record.DecodeDBMap(rec.Payload); err != nil {
			return fmt.Errorf("checkpoint record LSN %d at byte %d: %w", rec.LSN, off, err)
		}
	case record.KindRedo:
		if _, _, err := record.DecodeRedo(rec.Payload); err != nil {
			return fmt.Errorf("checkpoint record LSN %d at byte %d: %w", rec.LSN, off, err)
		}
	case record.KindGap:
		// The log opened again after appendonly no: the shard's replay
		// stops there (shard/aof.go). Full-page images after it are
		// still the pages a checkpoint wrote, and repair them.
		if !record.IsGap(rec.Payload) {
			return fmt.Errorf("checkpoint record LSN %d at byte %d: %w: gap record of %d bytes", rec.LSN, off, record.ErrPayload, len(rec.Payload))
		}
	case record.KindFPI:
		id, _, err := record.DecodeFPI(rec.Payload)
		if err != nil {
			return fmt.Errorf("checkpoint record LSN %d at byte %d: %w", rec.LSN, off, err)
		}
		if cur, ok := b.images[id]; !ok || rec.LSN > cur.lsn {
			b.images[id] = imageLoc{lsn: rec.LSN, seg: s.path, off: off}
		}
	default:
		return fmt.Errorf("checkpoint record LSN %d at byte %d: %w: unknown kind %d", rec.LSN, off, record.ErrPayload, kind)
	}
	return nil
}

// repair is the second half of step 3: every page of a live file that has
// an image and fails validation, and a partial page at the end of a live
// file, is overwritten with its image.
func (b *boot) repair() error {
	byFile := make(map[uint32][]uint32)
	for id := range b.images {
		byFile[id.File] = append(byFile[id.File], id.Page)
	}
	buf := make([]byte, repairRun*heap.PageSize)
	for _, fid := range b.st.Files {
		f, err := heap.OpenFile(b.fs, b.heapDir, fid)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("recovery: shard %d: heap file %s is missing, and the manifest %s lists it live: %w",
				b.o.Shard, heap.FilePath(b.heapDir, fid), manifest.Path(b.o.ShardDir), err)
		}
		if err != nil {
			return fmt.Errorf("recovery: shard %d: %w", b.o.Shard, err)
		}
		b.files[fid] = f
		pages, tail, err := f.Size()
		if err != nil {
			return fmt.Errorf("recovery: shard %d: %w", b.o.Shard, err)
		}
		nos := byFile[fid]
		slices.Sort(nos)
		if err := b.repairPages(f, pages, nos, buf); err != nil {
			return err
		}
		if tail != 0 {
			cerr := &heap.PageError{File: fid, Page: pages, Err: fmt.Errorf("%w: %d bytes at the end of the file (a torn write that extended it)", heap.ErrShortPage, tail)}
			if _, ok := b.images[heap.PageID{File: fid, Page: pages}]; !ok {
				return b.noImage(f.Path(), cerr)
			}
			if err := b.restore(f, pages, cerr); err != nil {
				return err
			}
		}
	}
	return nil
}

// repairRun is the most consecutive pages repair reads at once: after a
// checkpoint that wrote every page (the first, or one after a bulk load)
// every page has an image, and one read a page was most of the check's
// cost.
const repairRun = 64

// repairPages checks the pages nos (sorted, each with an image) of f, a
// file of pages whole pages, reading runs of consecutive pages together
// into buf (repairRun pages long), and restores each page that fails
// validation.
func (b *boot) repairPages(f *heap.File, pages uint32, nos []uint32, buf []byte) error {
	for i := 0; i < len(nos) && nos[i] < pages; {
		j := i + 1 // nos[i:j]: consecutive pages of the file
		for j < len(nos) && j-i < repairRun && nos[j] == nos[j-1]+1 && nos[j] < pages {
			j++
		}
		first, k := nos[i], j-i
		n, err := f.ReadRaw(first, buf[:k*heap.PageSize])
		if err != nil {
			return fmt.Errorf("recovery: shard %d: %w", b.o.Shard, err)
		}
		if n != k {
			return fmt.Errorf("recovery: shard %d: heap file %s shrank below page %d while it was read", b.o.Shard, f.Path(), first+uint32(n))
		}
		for x := range k {
			no := first + uint32(x)
			_, cerr := heap.CheckPage(buf[x*heap.PageSize:(x+1)*heap.PageSize], f.ID(), no)
			if cerr == nil || errors.Is(cerr, heap.ErrZeroPage) {
				continue
			}
			if err := b.restore(f, no, cerr); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

// restore overwrites page no of f, which failed validation with why, with
// its full-page image.
func (b *boot) restore(f *heap.File, no uint32, why error) error {
	id := heap.PageID{File: f.ID(), Page: no}
	loc := b.images[id]
	img, err := b.readImage(id, loc)
	if err != nil {
		return err
	}
	if err := f.WriteImage(no, img); err != nil {
		return fmt.Errorf("recovery: shard %d: repair page %v: %w", b.o.Shard, id, err)
	}
	b.st.Repaired = append(b.st.Repaired, id)
	b.log.Warn("repaired a torn heap page from its full-page image", "file", f.Path(), "page", no,
		"image_lsn", loc.lsn, "segment", loc.seg, "was", why.Error())
	return nil
}

// readImage reads back the full-page image of id that the scan found at
// loc, and checks that it is a valid page for that place.
func (b *boot) readImage(id heap.PageID, loc imageLoc) ([]byte, error) {
	f, err := b.fs.Open(loc.seg)
	if err != nil {
		return nil, fmt.Errorf("recovery: shard %d: open WAL segment to read the image of page %v: %w", b.o.Shard, id, err)
	}
	defer f.Close()
	buf := make([]byte, wal.RecordSize(record.FPISize))
	if n, err := f.ReadAt(buf, loc.off); n != len(buf) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("recovery: shard %d: read the image of page %v (LSN %d) at byte %d of %s: %w", b.o.Shard, id, loc.lsn, loc.off, loc.seg, err)
	}
	rec, _, err := wal.DecodeRecord(buf)
	if err == nil && (rec.LSN != loc.lsn || rec.Type != wal.RecordCheckpoint) {
		err = fmt.Errorf("found a %v record with LSN %d", rec.Type, rec.LSN)
	}
	var got heap.PageID
	var img []byte
	if err == nil {
		got, img, err = record.DecodeFPI(rec.Payload)
	}
	if err == nil && got != id {
		err = fmt.Errorf("it names page %v", got)
	}
	if err != nil {
		return nil, fmt.Errorf("recovery: shard %d: the image of page %v (LSN %d) at byte %d of %s changed since it was scanned: %w", b.o.Shard, id, loc.lsn, loc.off, loc.seg, err)
	}
	if _, err := heap.CheckPage(img, id.File, id.Page); err != nil {
		return nil, fmt.Errorf("recovery: shard %d: the full-page image of page %v (LSN %d in %s) is not a valid page for that place, refusing to write it: %w",
			b.o.Shard, id, loc.lsn, loc.seg, err)
	}
	return img, nil
}

// noImage is the error for a page of the heap file at path that fails
// validation with err and that no image can repair.
//
// When the image scan stopped at damage in the log, the image may lie
// beyond it: the error then also wraps the damage as wal.Recover reports
// it (*wal.MidChainTearError, whose text names the way out, salvage), so
// that a damaged log fails the boot the same way whichever step meets it.
// Under salvage the scan went past the damage, and what it skipped is
// named.
func (b *boot) noImage(path string, err error) error {
	switch {
	case b.damage == nil:
		return fmt.Errorf("%w: shard %d: %s (redo point %d): %w", ErrNoImage, b.o.Shard, path, b.st.Redo, err)
	case b.o.Salvage:
		return fmt.Errorf("%w: shard %d: %s (redo point %d; salvage skipped damage in the WAL, first in %s at byte %d: %v): %w",
			ErrNoImage, b.o.Shard, path, b.st.Redo, b.damage.Segment, b.damage.Offset, b.damage.Reason, err)
	}
	return fmt.Errorf("%w: shard %d: %s (redo point %d; the scan for full-page images stopped in %s, the image may lie beyond the damage): %w; %w",
		ErrNoImage, b.o.Shard, path, b.st.Redo, b.damage.Segment, err, b.damage)
}

// syncFiles is step 4: every live heap file, the heap directory and the
// shard directory are fsynced, so that what a killed process left in the
// operating system's cache (page writes a checkpoint never fsynced, the
// rename of a control file or manifest whose directory fsync it never
// issued) and the repairs are durable before anything is built on them.
func (b *boot) syncFiles() error {
	for _, id := range slices.Sorted(maps.Keys(b.files)) {
		f := b.files[id]
		if err := f.Sync(); err != nil {
			return fmt.Errorf("recovery: shard %d: %w", b.o.Shard, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("recovery: shard %d: %w", b.o.Shard, err)
		}
		delete(b.files, id)
	}
	for _, dir := range []string{b.heapDir, b.o.ShardDir} {
		if _, err := b.fs.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := vfs.SyncDir(b.fs, dir); err != nil {
			return fmt.Errorf("recovery: shard %d: %w", b.o.Shard, err)
		}
	}
	return nil
}

// openHeap is step 5: load the live files.
func (b *boot) openHeap() error {
	if b.o.OnRedo != nil {
		b.o.OnRedo(b.st.Redo, b.st.Manifest.KeyCounts())
	}
	h, err := heap.Open(heap.Options{
		FS:          b.fs,
		Dir:         b.heapDir,
		Files:       b.st.Files,
		Cache:       b.o.Cache,
		MaxFileSize: b.o.MaxFileSize,
		FileIDs:     b.st.Manifest,
		ReadMisses:  false,
		OnRecord:    b.o.OnRecord,
	})
	if err != nil {
		var pe *heap.PageError
		if errors.As(err, &pe) {
			if _, ok := b.images[heap.PageID{File: pe.File, Page: pe.Page}]; !ok {
				return b.noImage(heap.FilePath(b.heapDir, pe.File), err)
			}
		}
		return fmt.Errorf("recovery: shard %d: load the heap: %w", b.o.Shard, err)
	}
	b.st.Heap = h
	return nil
}
