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
// A hash, set or sorted set held in a table (dict), or a list held in
// nodes, whose memory reaches chunkMinBytes is stored as a head record and
// chunk records, so that the checkpoint after a small change writes the
// head and the chunks that changed, not the whole value.
//
// Chunks of a table. A member is in chunk h & (2^lg-1), h being the hash
// its dict keys it by. For lg at most the dict's level, the dict keeps the
// member in a segment whose index has the same low lg bits (linear
// hashing, dict.segIndex), so chunk i is exactly the members of segments
// i, i+2^lg, i+2·2^lg, …: writing a chunk reads only its members, and
// splits and merges never move a member to another chunk. Each change of
// a member marks its chunk in the object's chunkTrack, from the hash it
// computes anyway. The dicts' seeds are the process's, so after a restart
// the members' chunks are not those of the records they came from: the
// first version written after a restart rewrites every chunk, as does a
// change of lg (the value doubled or halved) or a new object under the
// key (an overwrite, RENAME, COPY, MOVE).
//
// Chunks of a list. Each node of a quicklist is a chunk, named by an id
// the list's track gives it when a version first writes it; a change to a
// node's entries sets its dirty flag (list_node.go). The head lists the
// nodes' ids in order, so a push that fills a new node writes that node
// and the head; a removed node's record is freed with the version that no
// longer names it.
//
// Records. The head is the key's record (its heap key, expiry and key
// LSN), of kind uint8(kind)|kindChunkedHead, with the value
//
//	uvarint(n) ‖ part(4, LE) ‖ uvarint(len(prefix)) ‖ prefix ‖ ordered(1) ‖
//	n × ([uvarint(id) if ordered] ‖ uvarint(stamp))
//
// prefix being what the kind's encoding has before its entries (the
// count; a set's type byte first), part the partition's nonce (random
// when a track is made), the ids 0..n-1 unless ordered, and stamp the key
// LSN of the chunk's record. A chunk record has kind kindChunk, the heap
// key heapKey ‖ part(4, LE) ‖ id(4, LE), its stamp as key LSN, no expiry,
// and as value its entries in the kind's encoding. The value is prefix ‖
// the chunks' entries in the head's order (a sorted set's then sorted:
// chunkedKind.sorted).
//
// Versions. Version writes the head and, in the same step, every chunk
// that changed since its record was written or has none, stamped with the
// head's key LSN; the head names the other chunks' existing records. The
// chunks' records are the pair's, kept in source.chunks apart from the
// object, so that a deletion or an overwrite hands them to the checkpoint
// to free (Version.OldParts, deferred until it finalizes: a crash before
// then may boot the version that uses them). A chunk's records never share
// (part, id, stamp): within a partition a chunk is written again only
// after a change to it, which took an LSN. At boot a head counts only when
// every chunk it names is there with its stamp (chunk_load.go).

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
	// chunks returns the object's chunks for a version, making or
	// dropping its track as the value's size calls for, or nil when the
	// value is stored as one record.
	chunks func(p unsafe.Pointer, mem int64) chunkSource
	// prefix appends what the kind's encoding has before the entries.
	prefix func(p unsafe.Pointer, dst []byte) []byte
	// sorted, when set, puts the concatenated entries in the order the
	// decoder wants them (a sorted set's).
	sorted func(entries []byte) ([]byte, error)
	// adopt, when set, builds the object from its chunks keeping them as
	// its own (a list's nodes): its first version after the load writes
	// only what changed. It returns ok false when the chunks do not fit
	// the representation the limits call for; the value is then decoded
	// whole and written whole once.
	adopt func(prefix []byte, chunks [][]byte, ids []uint32, part uint32, lim *EncodingLimits) (p unsafe.Pointer, t *chunkTrack, ok bool, err error)
}

// chunkSource is a chunked object's chunks, in the value's order, while
// nothing changes it (one Version and its Placed).
type chunkSource interface {
	track() *chunkTrack
	ordered() bool // the head names the ids (else they are 0..len-1)
	len() int
	id(j int) uint32
	dirty(j int) bool // changed since its record was written
	clean(j int)      // its record was written
	appendChunk(j int, dst []byte) []byte
}

// hashedSource is the chunks of a table (see above).
type hashedSource struct {
	t   *chunkTrack
	add func(i, mask uint64, dst []byte) []byte
}

func (s *hashedSource) track() *chunkTrack { return s.t }
func (s *hashedSource) ordered() bool      { return false }
func (s *hashedSource) len() int           { return int(s.t.mask) + 1 }
func (s *hashedSource) id(j int) uint32    { return uint32(j) }
func (s *hashedSource) dirty(j int) bool   { return s.t.isDirty(j) }
func (s *hashedSource) clean(j int)        { s.t.dirty[j/64] &^= 1 << (j % 64) }
func (s *hashedSource) appendChunk(j int, dst []byte) []byte {
	return s.add(uint64(j), s.t.mask, dst)
}

// hashedChunks returns the chunks of a table whose track is at track and
// whose dict has level, for a value of mem bytes (nil: one record).
func hashedChunks(track **chunkTrack, level uint, mem int64, add func(i, mask uint64, dst []byte) []byte) chunkSource {
	t := *track
	cur := 0
	if t != nil {
		cur = t.lg()
	}
	lg := chunkLg(mem, level, cur)
	if lg == 0 {
		*track = nil
		return nil
	}
	if t == nil || t.lg() != lg {
		t = newChunkTrack(lg)
		*track = t
	}
	return &hashedSource{t: t, add: add}
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
	owner *chunkTrack // the track they were written for; nil after a load
	at    map[uint32]chunkAt
}

// chunkAt is where a chunk's record is, and its stamp.
type chunkAt struct {
	id    heap.RecordID
	stamp uint64
}

// chunkPending is what Version decided for Placed.
type chunkPending struct {
	hk      []byte
	src     chunkSource // nil: the version has no chunks
	written []int       // the chunk (index in src) of each part
	gone    []uint32    // the pair's chunks the version no longer names
	stamp   uint64
}

// chunkLg returns lg for a table of mem bytes whose dict has level, cur
// being its track's lg (0 for none): 0 for one record.
func chunkLg(mem int64, level uint, cur int) int {
	if !chunkedSize(mem, cur > 0) {
		return 0
	}
	ideal := max(1, bits.Len64(uint64(mem/chunkTarget))-1)
	if cur > 0 && cur <= int(level) && cur >= ideal-1 && cur <= ideal+1 {
		return cur
	}
	return min(ideal, int(level), chunkMaxLg)
}

// chunkedSize reports whether a value of mem bytes goes in chunks, chunked
// saying whether it is now.
func chunkedSize(mem int64, chunked bool) bool {
	return mem >= chunkMinBytes || chunked && mem >= chunkMinBytes/2
}

// appendChunkKey appends the heap key of chunk id of partition part of
// the pair whose heap key is hk.
func appendChunkKey(dst, hk []byte, part, id uint32) []byte {
	dst = append(dst, hk...)
	dst = binary.LittleEndian.AppendUint32(dst, part)
	return binary.LittleEndian.AppendUint32(dst, id)
}

// versionChunks fills v's record with the head of the live object in sl
// and its Parts with the chunks to write, when the object goes in chunks;
// otherwise it leaves v alone and reports false. Either way, the records
// of the pair's chunks that v no longer uses become v.OldParts.
func (ks *Keyspace) versionChunks(v *checkpoint.Version, hk []byte, pair pairKey, sl *slot[entry]) bool {
	ks.src.pending = chunkPending{hk: hk, written: ks.src.pending.written[:0], gone: ks.src.pending.gone[:0]}
	cs := ks.src.chunks[pair]
	var src chunkSource
	if sl.v.isObject() {
		if ck := sl.v.objType().chunked; ck != nil {
			src = ck.chunks(sl.v.p, sl.v.heapBytes())
		}
	}
	if src == nil {
		ks.oldParts(v, cs)
		return false
	}
	ck := sl.v.objType().chunked
	full := cs == nil || cs.owner != src.track()
	if full {
		ks.oldParts(v, cs)
	}
	pd := &ks.src.pending
	pd.src, pd.stamp = src, v.Record.KeyLSN
	n := src.len()
	head := binary.AppendUvarint(ks.src.verBuf[:0], uint64(n))
	head = binary.LittleEndian.AppendUint32(head, src.track().part)
	pre := ck.prefix(sl.v.p, ks.src.partBuf[:0])
	head = binary.AppendUvarint(head, uint64(len(pre)))
	head = append(head, pre...)
	head = append(head, boolByte(src.ordered()))
	vals, keys := ks.src.partBuf[:0], ks.src.partKeys[:0]
	ends := ks.src.partEnds[:0]
	for j := range n {
		id := src.id(j)
		if src.ordered() {
			head = binary.AppendUvarint(head, uint64(id))
		}
		old, had := chunkAt{}, false
		if !full {
			old, had = cs.at[id]
		}
		if full || !had || old.id.File == 0 || src.dirty(j) {
			if had && old.id.File != 0 {
				v.OldParts = append(v.OldParts, old.id)
			}
			pd.written = append(pd.written, j)
			vals = src.appendChunk(j, vals)
			keys = appendChunkKey(keys, hk, src.track().part, id)
			ends = append(ends, len(vals))
			old.stamp = pd.stamp
		}
		head = binary.AppendUvarint(head, old.stamp)
	}
	if !full && src.ordered() { // a table's chunks are always 0..n-1
		ks.goneChunks(v, cs, src)
	}
	parts := ks.src.parts[:0]
	start, kl := 0, len(hk)+chunkKeyTail
	for j, end := range ends {
		parts = append(parts, heap.Record{Key: keys[j*kl : (j+1)*kl], Kind: kindChunk, KeyLSN: pd.stamp, Value: vals[start:end]})
		start = end
	}
	ks.src.verBuf, ks.src.partBuf, ks.src.partKeys, ks.src.partEnds, ks.src.parts = head, vals, keys, ends, parts
	v.Record.Kind |= kindChunkedHead
	v.Record.Value = head
	v.Parts = parts
	return true
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// goneChunks makes the chunks of cs that src no longer has old parts of v
// (a list's removed nodes).
func (ks *Keyspace) goneChunks(v *checkpoint.Version, cs *pairChunks, src chunkSource) {
	live := make(map[uint32]struct{}, src.len())
	for j := range src.len() {
		live[src.id(j)] = struct{}{}
	}
	for id, at := range cs.at {
		if _, ok := live[id]; !ok {
			if at.id.File != 0 {
				v.OldParts = append(v.OldParts, at.id)
			}
			ks.src.pending.gone = append(ks.src.pending.gone, id)
		}
	}
}

// oldParts makes every chunk record of cs an old part of v.
func (ks *Keyspace) oldParts(v *checkpoint.Version, cs *pairChunks) {
	if cs == nil {
		return
	}
	for _, at := range cs.at {
		if at.id.File != 0 {
			v.OldParts = append(v.OldParts, at.id)
		}
	}
}

// placedChunks records where the chunks of the version Version just
// returned for hk live: parts[j] is chunk pending.written[j].
func (ks *Keyspace) placedChunks(hk []byte, pair pairKey, storedKey string, parts []heap.RecordID, live bool) {
	pd := ks.src.pending
	ks.src.pending = chunkPending{written: pd.written[:0], gone: pd.gone[:0]}
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
	if !live || pd.src == nil {
		delete(ks.src.chunks, pair)
		return
	}
	t := pd.src.track()
	cs := ks.src.chunks[pair]
	if cs == nil || cs.owner != t {
		cs = &pairChunks{owner: t, at: make(map[uint32]chunkAt, pd.src.len())}
		if ks.src.chunks == nil {
			ks.src.chunks = make(map[pairKey]*pairChunks)
		}
		delete(ks.src.chunks, pair) // the old entry's key may be another string
		ks.src.chunks[pairKey{pair.db, storedKey}] = cs
	}
	for _, id := range pd.gone {
		delete(cs.at, id)
	}
	for j, i := range pd.written {
		cs.at[pd.src.id(i)] = chunkAt{id: parts[j], stamp: pd.stamp}
		pd.src.clean(i)
	}
}

// redirtyChunks forgets the chunk records in file, which vanished: their
// chunks are written again with the next version of their keys, which
// become dirty. It returns how many it forgot.
func (ks *Keyspace) redirtyChunks(file uint32) int {
	n := 0
	for p, cs := range ks.src.chunks {
		hit := false
		for id, at := range cs.at {
			if at.id.File == file {
				cs.at[id] = chunkAt{stamp: at.stamp}
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
