package keyspace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/moond-db/moond/persistence/heap"
)

// Loading chunked values (chunk.go). The heap is read in file order, so a
// head may come before or after its chunks, and an old version of a key,
// or chunks no head names any more, may still be there (their frees were
// deferred). QueueRecord and LoadRecord set heads and chunks aside;
// EndHeap, after the last record, loads for each key the newest head
// whose chunks are all there, competing with the key's other records as
// any version does (placeRecord), and hands every other head and chunk
// back as superseded.
//
// A head that is not whole is a crash's doing, and is dropped:
//   - at or above the redo point, its checkpoint never finalized; the
//     version it superseded is whole (its frees wait for that checkpoint)
//     or the WAL above the redo point rebuilds the key;
//   - below it, a newer version of the key superseded it and its frees
//     were reaching the disk. The newer version is loaded, unless a
//     deletion above the redo point freed it too and that free reached
//     the disk first: the WAL then deletes the key again (an old single
//     record is loaded and deleted by replay the same way).
// A chunk that went missing by damage is not told apart: the heap's page
// checksums refuse a damaged page before it gets here.

// loadChunked is what the load sets aside.
type loadChunked struct {
	heads  map[pairKey][]loadHead
	chunks map[chunkRef][]loadChunk
}

// chunkRef names a chunk: its pair (physical database, key), partition and
// index.
type chunkRef struct {
	pairKey
	part uint32
	i    uint32
}

type loadChunk struct {
	id    heap.RecordID
	stamp uint64
	val   []byte
	used  bool
}

type loadHead struct {
	id     heap.RecordID
	head   heap.RecordHead
	kind   Kind
	part   uint32
	prefix []byte
	ids    []uint32 // the chunks, in the value's order
	stamps []uint64
}

var errChunkHead = errors.New("malformed chunked value head")

// stashChunked sets aside a head or chunk record.
func (ks *Keyspace) stashChunked(r *heap.ScanRecord) error {
	hk, err := r.Key()
	if err != nil {
		return fmt.Errorf("keyspace: heap record %v: %w", r.ID, err)
	}
	val, err := r.AppendValue(nil)
	if err != nil {
		return fmt.Errorf("keyspace: heap record %v: %w", r.ID, err)
	}
	return ks.stashRecord(hk, r.ID, r.Head, val)
}

// stashRecord is stashChunked of a record read already; it keeps val.
func (ks *Keyspace) stashRecord(hk []byte, id heap.RecordID, head heap.RecordHead, val []byte) error {
	fail := func(err error) error { return fmt.Errorf("keyspace: heap record %v: %w", id, err) }
	lc := &ks.load.chunked
	if head.Kind == kindChunk {
		if len(hk) < chunkKeyTail {
			return fail(fmt.Errorf("chunk heap key of %d bytes", len(hk)))
		}
		tail := hk[len(hk)-chunkKeyTail:]
		p, err := ks.loadPair(hk[:len(hk)-chunkKeyTail])
		if err != nil {
			return fail(err)
		}
		ref := chunkRef{p, binary.LittleEndian.Uint32(tail), binary.LittleEndian.Uint32(tail[4:])}
		if lc.chunks == nil {
			lc.chunks = make(map[chunkRef][]loadChunk)
		}
		lc.chunks[ref] = append(lc.chunks[ref], loadChunk{id: id, stamp: head.KeyLSN, val: val})
		return nil
	}
	p, err := ks.loadPair(hk)
	if err != nil {
		return fail(err)
	}
	h, err := decodeChunkHead(val)
	if err != nil {
		return fail(err)
	}
	h.id, h.head, h.kind = id, head, Kind(head.Kind&^kindChunkedHead)
	h.head.Kind = uint8(h.kind)
	if int(h.kind) >= len(objectTypes) || objectTypes[h.kind] == nil || objectTypes[h.kind].chunked == nil {
		return fail(fmt.Errorf("chunked value of kind %d", h.kind))
	}
	if lc.heads == nil {
		lc.heads = make(map[pairKey][]loadHead)
	}
	lc.heads[p] = append(lc.heads[p], h)
	return nil
}

// loadPair decodes a heap key for the load (its key a string of its own).
func (ks *Keyspace) loadPair(hk []byte) (pairKey, error) {
	phys, key, err := DecodeHeapKey(hk)
	if err != nil {
		return pairKey{}, err
	}
	if phys >= len(ks.pdbs) {
		return pairKey{}, fmt.Errorf("key of database %d, but the server has %d (--databases)", phys, len(ks.pdbs))
	}
	return pairKey{phys, string(key)}, nil
}

// decodeChunkHead reads a head's value (chunk.go).
func decodeChunkHead(b []byte) (loadHead, error) {
	bad := func(what string) (loadHead, error) { return loadHead{}, fmt.Errorf("%w: %s", errChunkHead, what) }
	n, k := binary.Uvarint(b)
	if k <= 0 || n == 0 || n > uint64(len(b)) || len(b) < k+4 {
		return bad("bad chunk count")
	}
	h := loadHead{part: binary.LittleEndian.Uint32(b[k:])}
	off := k + 4
	pl, k := binary.Uvarint(b[off:])
	if k <= 0 || pl >= uint64(len(b)-off-k) {
		return bad("bad prefix")
	}
	off += k
	h.prefix = b[off : off+int(pl)]
	off += int(pl)
	ordered := b[off]
	if ordered > 1 {
		return bad("bad order flag")
	}
	off++
	h.ids, h.stamps = make([]uint32, n), make([]uint64, n)
	seen := map[uint32]bool{}
	for i := range h.ids {
		id := uint64(i)
		if ordered == 1 {
			if id, k = binary.Uvarint(b[off:]); k <= 0 || id == 0 || id >= nodeDirty || seen[uint32(id)] {
				return bad(fmt.Sprintf("bad id of chunk %d", i))
			}
			seen[uint32(id)] = true
			off += k
		}
		s, k := binary.Uvarint(b[off:])
		if k <= 0 || s == 0 {
			return bad(fmt.Sprintf("bad stamp of chunk %d", i))
		}
		h.ids[i], h.stamps[i] = uint32(id), s
		off += k
	}
	if off != len(b) {
		return bad(fmt.Sprintf("%d trailing bytes", len(b)-off))
	}
	return h, nil
}

// EndHeap loads the chunked values the heap holds, once every record was
// queued and FlushLoad ran: see the comment above. The records it does
// not load join Superseded.
func (ks *Keyspace) EndHeap() error {
	ks.mustBeFlushed("EndHeap")
	lc := &ks.load.chunked
	defer func() { *lc = loadChunked{} }()
	for p, hs := range lc.heads {
		slices.SortFunc(hs, func(a, b loadHead) int { return -cmpU64(a.head.KeyLSN, b.head.KeyLSN) })
		chosen := -1
		for j := range hs {
			if lc.whole(p, &hs[j]) {
				chosen = j
				break
			}
		}
		for j := range hs {
			if j != chosen {
				ks.load.superseded = append(ks.load.superseded, hs[j].id)
			}
		}
		if chosen >= 0 {
			if err := ks.loadChunkedValue(p, &hs[chosen]); err != nil {
				return err
			}
		}
	}
	for _, cs := range lc.chunks {
		for _, c := range cs {
			if !c.used {
				ks.load.superseded = append(ks.load.superseded, c.id)
			}
		}
	}
	return nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// whole reports whether every chunk h names is there.
func (lc *loadChunked) whole(p pairKey, h *loadHead) bool {
	for i, s := range h.stamps {
		if lc.find(chunkRef{p, h.part, h.ids[i]}, s) == nil {
			return false
		}
	}
	return true
}

func (lc *loadChunked) find(ref chunkRef, stamp uint64) *loadChunk {
	cs := lc.chunks[ref]
	for i := range cs {
		if cs[i].stamp == stamp {
			return &cs[i]
		}
	}
	return nil
}

// loadChunkedValue decodes the value of head h, whose chunks are all
// there, and places it as the record of pair p.
func (ks *Keyspace) loadChunkedValue(p pairKey, h *loadHead) error {
	fail := func(err error) error { return fmt.Errorf("keyspace: heap record %v: %w", h.id, err) }
	ck := objectTypes[h.kind].chunked
	n := len(h.prefix)
	chunks := make([]*loadChunk, len(h.stamps))
	for i, s := range h.stamps {
		chunks[i] = ks.load.chunked.find(chunkRef{p, h.part, h.ids[i]}, s)
		n += len(chunks[i].val)
	}
	var v value
	var owner *chunkTrack
	if ck.adopt != nil {
		vals := make([][]byte, len(chunks))
		for i, c := range chunks {
			vals[i] = c.val
		}
		obj, t, ok, err := ck.adopt(h.prefix, vals, h.ids, h.part, &ks.Limits)
		if err != nil {
			return fail(err)
		}
		if ok {
			v, owner = objectValue(h.kind, obj), t
		}
	}
	if owner == nil {
		entries := make([]byte, 0, n-len(h.prefix))
		for _, c := range chunks {
			entries = append(entries, c.val...)
		}
		if ck.sorted != nil {
			var err error
			if entries, err = ck.sorted(entries); err != nil {
				return fail(err)
			}
		}
		enc := append(append(make([]byte, 0, n), h.prefix...), entries...)
		var err error
		if v, err = ks.decodeValue(h.kind, enc); err != nil {
			return fail(err)
		}
	}
	d := ks.pdbs[p.db]
	key := []byte(p.key)
	pr := pendingRecord{d: d, phys: p.db, h: d.keys.hash(key), key: p.key, v: v, head: h.head, id: h.id}
	sup, dup, err := ks.placeRecord(&pr)
	if err != nil {
		return err
	}
	if dup {
		ks.load.superseded = append(ks.load.superseded, sup)
		if sup == h.id {
			return nil // an other record of the key is newer: the chunks go too
		}
	}
	cs := &pairChunks{owner: owner, at: make(map[uint32]chunkAt, len(chunks))}
	for i, c := range chunks {
		c.used = true
		cs.at[h.ids[i]] = chunkAt{id: c.id, stamp: h.stamps[i]}
	}
	sl := d.keys.find(pr.h, key)
	if ks.src.chunks == nil {
		ks.src.chunks = make(map[pairKey]*pairChunks)
	}
	ks.src.chunks[pairKey{p.db, sl.key()}] = cs
	return nil
}
