package heap

import "fmt"

// The free-space map: what the heap knows about every page of every file
// without reading it, and the indexes that place a record without a scan.
//
//   - Per page (12 bytes, 0.3% of the heap): its kind, and for a slotted
//     page its room (Page.Room) and its links in its file's bucket list.
//   - Per file: one list per room bucket (bucket b holds the slotted pages
//     with room in [b*bucketWidth, (b+1)*bucketWidth)), a bit mask of the
//     non-empty buckets, and a stack of the wholly free pages.
//   - Per bucket, the set of files whose list for it is not empty; and the
//     set of files that have free pages. So finding a page with room for n
//     bytes costs a few bucket probes, whatever the number of files.

const (
	bucketWidth = 128
	nBuckets    = (MaxRecordSize + bucketWidth) / bucketWidth
	// maxProbes bounds the pages a search looks at in one bucket list:
	// the lowest bucket it tries holds pages that may be too small, and on
	// the serving loop pages that are not resident are passed over.
	maxProbes = 8
)

// pageKind is what the heap keeps a page for.
type pageKind uint8

const (
	// pkFree: nothing live. A page never written (a hole), a free page, a
	// slotted page without records, an overflow page no record reaches.
	pkFree pageKind = iota
	// pkKV: a slotted page with at least one live record.
	pkKV
	// pkOverflow: an overflow page of a live record's chain.
	pkOverflow
)

type pageInfo struct {
	kind       pageKind
	bucket     int8   // -1: on no bucket list
	room       uint16 // pkKV: Page.Room
	prev, next uint32 // bucket list links, NoPage at the ends
}

// bucketOf is the bucket of a page with room bytes free, or -1 when it
// cannot take even the smallest record.
func bucketOf(room int) int {
	if room < RecordHeaderSize {
		return -1
	}
	return room / bucketWidth
}

// idSet is a set of file ids with O(1) add, remove and membership.
type idSet struct {
	ids []uint32
	pos map[uint32]int
}

func (s *idSet) add(id uint32) {
	if s.pos == nil {
		s.pos = make(map[uint32]int)
	}
	if _, ok := s.pos[id]; ok {
		return
	}
	s.pos[id] = len(s.ids)
	s.ids = append(s.ids, id)
}

func (s *idSet) remove(id uint32) {
	i, ok := s.pos[id]
	if !ok {
		return
	}
	last := s.ids[len(s.ids)-1]
	s.ids[i] = last
	s.pos[last] = i
	s.ids = s.ids[:len(s.ids)-1]
	delete(s.pos, id)
}

func (s *idSet) has(id uint32) bool { _, ok := s.pos[id]; return ok }

// space is the free-space map of one heap.
type space struct {
	files    map[uint32]*fileSpace
	inBucket [nBuckets]idSet // files with pages in each bucket
	withFree idSet           // files with wholly free pages
}

// fileSpace is the free-space map of one file.
type fileSpace struct {
	id    uint32
	pages []pageInfo // one per page of the file; len is the file's size in pages
	heads [nBuckets]uint32
	mask  uint64   // bit b set: bucket b's list is not empty
	free  []uint32 // wholly free pages, a stack

	liveRecords   int // records (heads) in the file
	overflowPages int // pages of live chains
	closed        bool
}

func newSpace() *space { return &space{files: make(map[uint32]*fileSpace)} }

// addFile starts the map of a file with no pages.
func (s *space) addFile(id uint32) *fileSpace {
	if s.files[id] != nil {
		panic(fmt.Sprintf("heap: file %08x added twice", id))
	}
	fs := &fileSpace{id: id}
	for i := range fs.heads {
		fs.heads[i] = NoPage
	}
	s.files[id] = fs
	return fs
}

// closeFile takes a file out of placement for good: nothing new is put in
// it (it was retired, or it vanished).
func (s *space) closeFile(fs *fileSpace) {
	for b := range fs.heads {
		for fs.heads[b] != NoPage {
			s.unlink(fs, fs.heads[b])
		}
	}
	fs.closed = true
	for b := range s.inBucket {
		s.inBucket[b].remove(fs.id)
	}
	s.withFree.remove(fs.id)
}

// grow appends n pages of kind pkFree to the file (not on the free stack:
// the caller takes them) and returns the first one's number.
func (fs *fileSpace) grow(n int) uint32 {
	first := len(fs.pages)
	if uint64(first)+uint64(n) > uint64(MaxPages) {
		panic(fmt.Sprintf("heap: file %08x would exceed %d pages", fs.id, MaxPages))
	}
	for range n {
		fs.pages = append(fs.pages, pageInfo{kind: pkFree, bucket: -1, prev: NoPage, next: NoPage})
	}
	return uint32(first)
}

// setKV records that slotted page no holds live records and has room bytes
// free.
func (s *space) setKV(fs *fileSpace, no uint32, room int) {
	pi := &fs.pages[no]
	if pi.kind != pkKV && pi.kind != pkFree {
		panic(fmt.Sprintf("heap: page %08x:%d of kind %d becomes slotted", fs.id, no, pi.kind))
	}
	pi.kind = pkKV
	pi.room = uint16(room)
	b := bucketOf(room)
	if fs.closed {
		b = -1
	}
	if int(pi.bucket) == b {
		return
	}
	s.unlink(fs, no)
	if b >= 0 {
		s.link(fs, no, b)
	}
}

// setFree records that page no holds nothing live and pushes it on the
// file's free stack.
func (s *space) setFree(fs *fileSpace, no uint32) {
	pi := &fs.pages[no]
	if pi.kind == pkFree {
		panic(fmt.Sprintf("heap: page %08x:%d freed twice", fs.id, no))
	}
	s.unlink(fs, no)
	pi.kind, pi.room = pkFree, 0
	fs.free = append(fs.free, no)
	if !fs.closed {
		s.withFree.add(fs.id)
	}
}

// pushFree puts page no, which is free and was just grown, on the file's
// free stack (boot: a page that holds nothing live).
func (s *space) pushFree(fs *fileSpace, no uint32) {
	if pi := fs.pages[no]; pi.kind != pkFree || pi.bucket >= 0 {
		panic(fmt.Sprintf("heap: page %08x:%d of kind %d pushed as free", fs.id, no, pi.kind))
	}
	fs.free = append(fs.free, no)
	if !fs.closed {
		s.withFree.add(fs.id)
	}
}

// setOverflow records that page no belongs to a live chain. It must have
// been taken off the free stack (takeFree) or just grown.
func (s *space) setOverflow(fs *fileSpace, no uint32) {
	pi := &fs.pages[no]
	if pi.kind != pkFree || pi.bucket >= 0 {
		panic(fmt.Sprintf("heap: page %08x:%d of kind %d becomes overflow", fs.id, no, pi.kind))
	}
	pi.kind = pkOverflow
}

// takeFree pops a wholly free page of the file, or returns NoPage.
func (s *space) takeFree(fs *fileSpace) uint32 {
	for len(fs.free) > 0 {
		no := fs.free[len(fs.free)-1]
		fs.free = fs.free[:len(fs.free)-1]
		if len(fs.free) == 0 {
			s.withFree.remove(fs.id)
		}
		if fs.pages[no].kind == pkFree {
			return no
		}
		panic(fmt.Sprintf("heap: page %08x:%d of kind %d on the free stack", fs.id, no, fs.pages[no].kind))
	}
	return NoPage
}

func (s *space) link(fs *fileSpace, no uint32, b int) {
	pi := &fs.pages[no]
	pi.bucket = int8(b)
	pi.prev = NoPage
	pi.next = fs.heads[b]
	if pi.next != NoPage {
		fs.pages[pi.next].prev = no
	}
	fs.heads[b] = no
	if fs.mask&(1<<b) == 0 {
		fs.mask |= 1 << b
		s.inBucket[b].add(fs.id)
	}
}

func (s *space) unlink(fs *fileSpace, no uint32) {
	pi := &fs.pages[no]
	b := int(pi.bucket)
	if b < 0 {
		return
	}
	if pi.prev != NoPage {
		fs.pages[pi.prev].next = pi.next
	} else {
		fs.heads[b] = pi.next
	}
	if pi.next != NoPage {
		fs.pages[pi.next].prev = pi.prev
	}
	pi.prev, pi.next, pi.bucket = NoPage, NoPage, -1
	if fs.heads[b] == NoPage {
		fs.mask &^= 1 << b
		s.inBucket[b].remove(fs.id)
	}
}

// find returns a slotted page with room for a record of size bytes for
// which ok holds, preferring the fullest page that fits (the lowest
// bucket) and, within a bucket, file prefer. It returns NoPage when there
// is none within the probe limits.
func (s *space) find(size int, prefer uint32, ok func(PageID) bool) PageID {
	lo := bucketOf(size)
	if lo < 0 {
		lo = 0
	}
	for b := lo; b < nBuckets; b++ {
		set := &s.inBucket[b]
		if len(set.ids) == 0 {
			continue
		}
		// Bucket lo may hold pages just too small; the buckets above it
		// only hold pages that fit.
		if set.has(prefer) {
			if no := s.probe(s.files[prefer], b, size, ok); no != NoPage {
				return PageID{prefer, no}
			}
		}
		for i, id := range set.ids {
			if i >= maxProbes {
				break
			}
			if id == prefer {
				continue
			}
			if no := s.probe(s.files[id], b, size, ok); no != NoPage {
				return PageID{id, no}
			}
		}
	}
	return PageID{Page: NoPage}
}

func (s *space) probe(fs *fileSpace, b, size int, ok func(PageID) bool) uint32 {
	n := 0
	for no := fs.heads[b]; no != NoPage && n < maxProbes; no = fs.pages[no].next {
		n++
		if int(fs.pages[no].room) >= size && ok(PageID{fs.id, no}) {
			return no
		}
	}
	return NoPage
}

// check verifies the map's internal consistency (tests call it after every
// step): every list link, mask bit and set membership agrees with the page
// entries, and the free stack holds exactly the free pages.
func (s *space) check() error {
	for id, fs := range s.files {
		if fs.id != id {
			return fmt.Errorf("file %08x filed under %08x", fs.id, id)
		}
		inList := 0
		for b := range nBuckets {
			prev := NoPage
			n := 0
			for no := fs.heads[b]; no != NoPage; no = fs.pages[no].next {
				pi := fs.pages[no]
				if pi.kind != pkKV || int(pi.bucket) != b || bucketOf(int(pi.room)) != b || pi.prev != prev {
					return fmt.Errorf("page %08x:%d in bucket %d: %+v", id, no, b, pi)
				}
				prev = no
				n++
				if n > len(fs.pages) {
					return fmt.Errorf("bucket %d of file %08x loops", b, id)
				}
			}
			inList += n
			nonEmpty := fs.heads[b] != NoPage
			if nonEmpty != (fs.mask&(1<<b) != 0) || nonEmpty != s.inBucket[b].has(id) {
				return fmt.Errorf("file %08x bucket %d: list %v, mask %v, set %v", id, b, nonEmpty, fs.mask&(1<<b) != 0, s.inBucket[b].has(id))
			}
		}
		want, free := 0, 0
		for no, pi := range fs.pages {
			switch {
			case pi.kind == pkFree:
				free++
				if pi.bucket >= 0 {
					return fmt.Errorf("free page %08x:%d on bucket %d", id, no, pi.bucket)
				}
			case pi.kind == pkKV && !fs.closed && bucketOf(int(pi.room)) >= 0:
				want++
			}
		}
		if inList != want {
			return fmt.Errorf("file %08x: %d pages on lists, %d should be", id, inList, want)
		}
		seen := make(map[uint32]bool)
		for _, no := range fs.free {
			if fs.pages[no].kind != pkFree || seen[no] {
				return fmt.Errorf("file %08x: page %d on the free stack twice or not free", id, no)
			}
			seen[no] = true
		}
		if len(seen) != free {
			return fmt.Errorf("file %08x: %d free pages, %d on the stack", id, free, len(seen))
		}
		if !fs.closed && (len(fs.free) > 0) != s.withFree.has(id) {
			return fmt.Errorf("file %08x: %d free pages, in the free set %v", id, len(fs.free), s.withFree.has(id))
		}
	}
	return nil
}
