package keyspace

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"unsafe"

	"github.com/moond-db/moond/persistence/checkpoint"
	"github.com/moond-db/moond/persistence/heap"
)

// Large values in chunks (docs/DESIGN.md §4, "Values and data types").
//
// A hash, set or sorted set held in a table (dict) whose memory reaches
// chunkMinBytes is stored as a head record and 2^lg chunk records, so that
// the checkpoint after a small change writes the head and the chunks that
// changed, not the whole value.
//
// Partition. A member is in chunk h & (2^lg-1), h being the hash its dict
// keys it by. For lg at most the dict's level, the dict keeps the member in
// a segment whose index has the same low lg bits (linear hashing,
// dict.segIndex), so chunk i is exactly the members of segments i,
// i+2^lg, i+2·2^lg, …: writing a chunk reads only its members, and splits
// and merges never move a member to another chunk. Each change of a
// member marks its chunk in the object's chunkTrack, from the hash it
// computes anyway. The dicts' seeds are the process's, so after a restart
// the members' chunks are not those of the records they came from: the
// first version written after a restart rewrites every chunk, as does a
// change of lg (the value doubled or halved) or a new object under the
// key (an overwrite, RENAME, COPY, MOVE).
//
// Records. The head is the key's record (its heap key, expiry and key
// LSN), of kind uint8(kind)|kindChunkedHead, with the value
//
//	uvarint(lg) ‖ part(4, LE) ‖ uvarint(len(prefix)) ‖ prefix ‖ 2^lg × uvarint(stamp)
//
// prefix being what the kind's encoding has before its entries (the
// count; a set's type byte first), part the partition's nonce (random
// when a track is made), and stamp[i] the key LSN of chunk i's record. A
// chunk record has kind kindChunk, the heap key heapKey ‖ part(4, LE) ‖
// i(4, LE), its stamp as key LSN, no expiry, and as value the entries of
// its members in the kind's encoding. The value is prefix ‖ chunk 0 ‖ … ‖
// chunk 2^lg-1 (a sorted set's entries sorted first: chunkedKind.sorted).
//
// Versions. Version writes the head and, in the same step, every chunk
// that changed since its record was written or has none, stamped with the
// head's key LSN; the head names the other chunks' existing records. The
// chunks' records are the pair's, kept in source.chunks apart from the
// object, so that a deletion or an overwrite hands them to the checkpoint
// to free (Version.OldParts, deferred until it finalizes: a crash before
// then may boot the version that uses them). A chunk's records never share
// (part, i, stamp): within a partition a chunk is written again only after
// a change of one of its members, which took an LSN. At boot a head counts
// only when every chunk it names is there with its stamp (chunk_load.go).

// Record kinds of chunked values. Kind values stay below kindChunkedHead.
const (
	kindChunkedHead = 0x80 // | the value's Kind: a head record
	kindChunk       = 0xff // a chunk record
)

var _ [kindChunkedHead - KindStream - 1]struct{}

// Sizes: a value is stored in chunks from chunkMinBytes of memory (and
// stays so down to half of it), in chunks of about chunkTarget of memory,
// at most 2^chunkMaxLg of them. The head is about 6 bytes a chunk.
// Variables for the tests.
var (
	chunkMinBytes int64 = 256 << 10
	chunkTarget   int64 = 32 << 10
)

const (
	chunkMaxLg   = 16
	chunkKeyTail = 8 // part and index after a chunk's heap key
)

// chunkTrack is what a chunked object keeps: its partition and the chunks
// changed since their records were last written.
type chunkTrack struct {
	mask  uint64   // 2^lg - 1
	part  uint32   // the partition's nonce
	dirty []uint64 // a bit per chunk
}

func newChunkTrack(lg int) *chunkTrack {
	n := 1 << lg
	t := &chunkTrack{mask: uint64(n - 1), part: rand.Uint32(), dirty: make([]uint64, (n+63)/64)}
	for i := range n {
		t.dirty[i/64] |= 1 << (i % 64)
	}
	return t
}

// mark notes a change of the member whose dict hash is h. A nil track
// (a value not in chunks) ignores it.
func (t *chunkTrack) mark(h uint64) {
	if t != nil {
		i := h & t.mask
		t.dirty[i/64] |= 1 << (i % 64)
	}
}

func (t *chunkTrack) lg() int { return bits.Len64(t.mask) }

func (t *chunkTrack) isDirty(i int) bool { return t.dirty[i/64]&(1<<(i%64)) != 0 }

// chunkedKind is what a kind whose large values go in chunks provides.
type chunkedKind struct {
	// table returns where the object keeps its track and its dict's
	// level, or ok false when its representation has no table (a
	// listpack, an intset: one record).
	table func(p unsafe.Pointer) (track **chunkTrack, level uint, ok bool)
	// prefix appends what the kind's encoding has before the entries.
	prefix func(p unsafe.Pointer, dst []byte) []byte
	// appendChunk appends the entries of the members in chunk i of mask.
	appendChunk func(p unsafe.Pointer, i, mask uint64, dst []byte) []byte
	// sorted, when set, puts the concatenated entries in the order the
	// decoder wants them (a sorted set's).
	sorted func(entries []byte) ([]byte, error)
}

// eachInChunk calls fn for every member of d in chunk i of mask, which
// must be below 2^d.level.
func eachInChunk[V any](d *dict[V], i, mask uint64, fn func(*slot[V])) {
	for s := i; s < uint64(len(d.segs)); s += mask + 1 {
		d.segs[s].each(fn)
	}
}

// pairChunks are the chunk records of a pair's last written version.
type pairChunks struct {
	owner  *chunkTrack // the track they were written for; nil after a load
	ids    []heap.RecordID
	stamps []uint64
}

// chunkPending is what Version decided for Placed: the chunks written.
type chunkPending struct {
	hk      []byte
	track   *chunkTrack // nil: the version has no chunks
	written []int       // the chunk of each part
	stamp   uint64
}

// chunkLg returns lg for a value of mem bytes whose dict has level, cur
// being its track's lg (0 for none): 0 for one record.
func chunkLg(mem int64, level uint, cur int) int {
	if mem < chunkMinBytes && (cur == 0 || mem < chunkMinBytes/2) {
		return 0
	}
	ideal := max(1, bits.Len64(uint64(mem/chunkTarget))-1)
	if cur > 0 && cur <= int(level) && cur >= ideal-1 && cur <= ideal+1 {
		return cur
	}
	return min(ideal, int(level), chunkMaxLg)
}

// appendChunkKey appends the heap key of chunk i of partition part of the
// pair whose heap key is hk.
func appendChunkKey(dst, hk []byte, part uint32, i int) []byte {
	dst = append(dst, hk...)
	dst = binary.LittleEndian.AppendUint32(dst, part)
	return binary.LittleEndian.AppendUint32(dst, uint32(i))
}

// versionChunks fills v's record with the head of the live object in sl
// and its Parts with the chunks to write, when the object goes in chunks;
// otherwise it leaves v alone and reports false. Either way, the records
// of the pair's chunks that v no longer uses become v.OldParts.
func (ks *Keyspace) versionChunks(v *checkpoint.Version, hk []byte, pair pairKey, sl *slot[entry]) bool {
	ks.src.pending = chunkPending{hk: hk, written: ks.src.pending.written[:0]}
	cs := ks.src.chunks[pair]
	if !sl.v.isObject() {
		ks.oldParts(v, cs)
		return false
	}
	ck := sl.v.objType().chunked
	if ck == nil {
		ks.oldParts(v, cs)
		return false
	}
	p := sl.v.p
	track, level, ok := ck.table(p)
	if !ok {
		ks.oldParts(v, cs)
		return false
	}
	t := *track
	cur := 0
	if t != nil {
		cur = t.lg()
	}
	lg := chunkLg(sl.v.heapBytes(), level, cur)
	if lg == 0 {
		*track = nil
		ks.oldParts(v, cs)
		return false
	}
	if t == nil || t.lg() != lg {
		t = newChunkTrack(lg)
		*track = t
	}
	full := cs == nil || cs.owner != t
	if full {
		ks.oldParts(v, cs)
	}
	stamp := v.Record.KeyLSN
	n := 1 << lg
	head := binary.AppendUvarint(ks.src.verBuf[:0], uint64(lg))
	head = binary.LittleEndian.AppendUint32(head, t.part)
	pre := ck.prefix(p, ks.src.partBuf[:0])
	head = binary.AppendUvarint(head, uint64(len(pre)))
	head = append(head, pre...)
	written := ks.src.pending.written[:0]
	vals := ks.src.partBuf[:0]
	keys := ks.src.partKeys[:0]
	var ends []int
	for i := range n {
		s := uint64(0)
		if !full {
			s = cs.stamps[i]
		}
		if full || t.isDirty(i) || cs.ids[i].File == 0 {
			if !full && cs.ids[i].File != 0 {
				v.OldParts = append(v.OldParts, cs.ids[i])
			}
			written = append(written, i)
			vals = ck.appendChunk(p, uint64(i), t.mask, vals)
			keys = appendChunkKey(keys, hk, t.part, i)
			ends = append(ends, len(vals))
			s = stamp
		}
		head = binary.AppendUvarint(head, s)
	}
	parts := ks.src.parts[:0]
	start := 0
	for j := range written {
		kb := keys[j*(len(hk)+chunkKeyTail) : (j+1)*(len(hk)+chunkKeyTail)]
		parts = append(parts, heap.Record{Key: kb, Kind: kindChunk, KeyLSN: stamp, Value: vals[start:ends[j]]})
		start = ends[j]
	}
	ks.src.verBuf, ks.src.partBuf, ks.src.partKeys, ks.src.parts = head, vals, keys, parts
	v.Record.Kind |= kindChunkedHead
	v.Record.Value = head
	v.Parts = parts
	ks.src.pending = chunkPending{hk: hk, track: t, written: written, stamp: stamp}
	return true
}

// oldParts makes every chunk record of cs an old part of v.
func (ks *Keyspace) oldParts(v *checkpoint.Version, cs *pairChunks) {
	if cs == nil {
		return
	}
	for _, id := range cs.ids {
		if id.File != 0 {
			v.OldParts = append(v.OldParts, id)
		}
	}
}

// placedChunks records where the chunks of the version Version just
// returned for hk live: parts[j] is chunk pending.written[j].
func (ks *Keyspace) placedChunks(hk []byte, pair pairKey, storedKey string, parts []heap.RecordID, live bool) {
	pd := ks.src.pending
	ks.src.pending = chunkPending{written: pd.written[:0]}
	if string(pd.hk) != string(hk) {
		if len(parts) > 0 {
			panic("keyspace: Placed with parts for a key Version did not just return")
		}
		if _, ok := ks.src.chunks[pair]; ok {
			panic("keyspace: Placed for a key with chunks that Version did not just return")
		}
		return
	}
	if len(parts) != len(pd.written) {
		panic("keyspace: Placed with a part count Version did not give")
	}
	if !live || pd.track == nil {
		delete(ks.src.chunks, pair)
		return
	}
	cs := ks.src.chunks[pair]
	if cs == nil || cs.owner != pd.track {
		n := int(pd.track.mask) + 1
		cs = &pairChunks{owner: pd.track, ids: make([]heap.RecordID, n), stamps: make([]uint64, n)}
		if ks.src.chunks == nil {
			ks.src.chunks = make(map[pairKey]*pairChunks)
		}
		delete(ks.src.chunks, pair) // the old entry's key may be another string
		ks.src.chunks[pairKey{pair.db, storedKey}] = cs
	}
	for j, i := range pd.written {
		cs.ids[i] = parts[j]
		cs.stamps[i] = pd.stamp
		pd.track.dirty[i/64] &^= 1 << (i % 64)
	}
}

// redirtyChunks forgets the chunk records in file, which vanished: their
// chunks are written again with the next version of their keys, which
// become dirty. It returns how many it forgot.
func (ks *Keyspace) redirtyChunks(file uint32) int {
	n := 0
	for p, cs := range ks.src.chunks {
		hit := false
		for i, id := range cs.ids {
			if id.File == file {
				cs.ids[i] = heap.RecordID{}
				hit = true
				n++
			}
		}
		if !hit || p.db >= len(ks.pdbs) {
			continue
		}
		d := ks.pdbs[p.db]
		key := unsafeBytes(p.key)
		if sl := d.keys.find(d.keys.hash(key), key); sl != nil && sl.v.loc&locDirtyAny == 0 {
			sl.v.loc |= ks.src.cur()
			if ks.dirtied(d, sl) {
				ks.listRef(refOf(d, sl))
			}
		}
	}
	return n
}
