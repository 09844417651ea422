package keyspace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unsafe"
)

// The kinds whose large values are stored in chunks (chunk.go): a hash,
// set or sorted set in its table form, a list in its quicklist form. Each
// chunk holds its members' entries in the kind's own heap encoding.

var hashChunked = &chunkedKind{
	chunks: func(p unsafe.Pointer, mem int64) chunkSource {
		if !hashIsTable(p) {
			return nil
		}
		t := (*hashTable)(p)
		return hashedChunks(&t.ck, t.d.level, mem, func(i, mask uint64, dst []byte) []byte {
			eachInChunk(&t.d, i, mask, func(sl *slot[uint64]) {
				f, v := sl.keyBytes(), pairValue(sl)
				dst = binary.AppendUvarint(dst, uint64(len(f)))
				dst = append(dst, f...)
				dst = binary.AppendUvarint(dst, uint64(len(v)))
				dst = append(dst, v...)
			})
			return dst
		})
	},
	prefix: func(p unsafe.Pointer, dst []byte) []byte {
		return binary.AppendUvarint(dst, uint64(hashLen(p)))
	},
}

var setChunked = &chunkedKind{
	chunks: func(p unsafe.Pointer, mem int64) chunkSource {
		if setEnc(p) != setEncHash {
			return nil
		}
		t := setTab(p)
		return hashedChunks(&t.ck, t.d.level, mem, func(i, mask uint64, dst []byte) []byte {
			eachInChunk(&t.d, i, mask, func(sl *slot[struct{}]) {
				m := sl.keyBytes()
				dst = binary.AppendUvarint(dst, uint64(len(m)))
				dst = append(dst, m...)
			})
			return dst
		})
	},
	prefix: func(p unsafe.Pointer, dst []byte) []byte {
		dst = append(dst, setCodecStrings)
		return binary.AppendUvarint(dst, uint64(setCard(p)))
	},
}

var zsetChunked = &chunkedKind{
	chunks: func(p unsafe.Pointer, mem int64) chunkSource {
		sk := (*zset)(p).sk
		if sk == nil {
			return nil
		}
		return hashedChunks(&sk.ck, sk.dict.level, mem, func(i, mask uint64, dst []byte) []byte {
			eachInChunk(&sk.dict, i, mask, func(sl *slot[*zslNode]) {
				dst = appendZEntry(dst, sl.keyBytes(), sl.v.score)
			})
			return dst
		})
	},
	prefix: func(p unsafe.Pointer, dst []byte) []byte {
		return binary.AppendUvarint(dst, uint64((*zset)(p).card()))
	},
	sorted: sortZEntries,
}

// sortZEntries returns the sorted set entries of b (the heap layout,
// without the count) in the set's order, which the decoder checks.
func sortZEntries(b []byte) ([]byte, error) {
	type pair struct {
		m []byte
		s float64
	}
	var ps []pair
	for off := 0; off < len(b); {
		m, s, next, ok := zlpEntryChecked(b, off)
		if !ok {
			return nil, fmt.Errorf("%w: truncated pair %d", errZSetEncoding, len(ps))
		}
		ps = append(ps, pair{m, s})
		off = next
	}
	slices.SortFunc(ps, func(a, b pair) int {
		switch {
		case a.s < b.s:
			return -1
		case a.s > b.s:
			return 1
		case math.IsNaN(a.s) || math.IsNaN(b.s):
			return 0 // the decoder refuses NaN
		}
		return bytes.Compare(a.m, b.m)
	})
	out := make([]byte, 0, len(b))
	for _, p := range ps {
		out = appendZEntry(out, p.m, p.s)
	}
	return out, nil
}

var listChunked = &chunkedKind{
	chunks: listChunks,
	adopt:  adoptList,
	prefix: func(p unsafe.Pointer, dst []byte) []byte {
		return binary.AppendUvarint(dst, uint64((*list)(p).len()))
	},
}

// listChunks returns a quicklist's nodes as chunks, giving each new node
// its chunk id.
func listChunks(p unsafe.Pointer, mem int64) chunkSource {
	l := (*list)(p)
	if l.q == nil || !chunkedSize(mem, l.q.ck != nil) {
		if l.q != nil {
			l.q.ck = nil
		}
		return nil
	}
	if l.q.ck == nil {
		l.q.ck, l.q.nextID = newChunkTrack(0), 0
	}
	for _, n := range l.q.nodes[l.q.head:] {
		if n.chunkID() != 0 {
			continue
		}
		if l.q.nextID == nodeDirty-1 { // the ids ran out: a new partition
			l.q.ck, l.q.nextID = newChunkTrack(0), 0
			for _, m := range l.q.nodes[l.q.head:] {
				m.meta = 0
			}
			return listChunks(p, mem)
		}
		l.q.nextID++
		n.meta = l.q.nextID | nodeDirty
	}
	return (*listSource)(l)
}

// listSource is a quicklist's nodes as chunks.
type listSource list

func (s *listSource) l() *list           { return (*list)(s) }
func (s *listSource) track() *chunkTrack { return s.q.ck }
func (s *listSource) ordered() bool      { return true }
func (s *listSource) len() int           { return s.l().numNodes() }
func (s *listSource) id(j int) uint32    { return s.l().node(j).chunkID() }
func (s *listSource) dirty(j int) bool   { return s.l().node(j).changed() }
func (s *listSource) clean(j int)        { s.l().node(j).meta &^= nodeDirty }
func (s *listSource) appendChunk(j int, dst []byte) []byte {
	return s.l().node(j).appendEncoded(dst)
}

// adoptList builds a quicklist of one node per chunk, each node keeping
// its chunk's id, clean: the load's list is what its records hold. ok is
// false when a chunk does not fit a node under lim (the limit changed
// since it was written); a count that does not match the chunks, or a
// malformed chunk, is an error.
func adoptList(prefix []byte, chunks [][]byte, ids []uint32, part uint32, lim *EncodingLimits) (unsafe.Pointer, *chunkTrack, bool, error) {
	count, k := binary.Uvarint(prefix)
	if k <= 0 || k != len(prefix) || count == 0 {
		return nil, nil, false, fmt.Errorf("list: bad element count")
	}
	ll := limitOf(lim.ListMaxListpackSize)
	q := &quicklist{nodes: make([]*lnode, 0, len(chunks))}
	total := uint64(0)
	for i, c := range chunks {
		n, err := chunkNode(c)
		if err != nil {
			return nil, nil, false, fmt.Errorf("list: chunk %d: %w", ids[i], err)
		}
		if n.n == 0 || n.n > ll.entries || n.size() > ll.bytes {
			return nil, nil, false, nil
		}
		n.meta = ids[i]
		q.nodes = append(q.nodes, n)
		q.nextID = max(q.nextID, ids[i])
		total += uint64(n.n)
	}
	if total != count {
		return nil, nil, false, fmt.Errorf("list: %d elements in the chunks, the head says %d", total, count)
	}
	if len(q.nodes) < 2 {
		return nil, nil, false, nil // a listpack's size: decoded whole
	}
	q.count = int(total)
	q.ck = newChunkTrack(0)
	q.ck.part = part
	l := &list{q: q}
	l.recount()
	return unsafe.Pointer(l), q.ck, true, nil
}

// chunkNode builds a node of the elements of a list chunk (uvarint(len) ‖
// bytes, each), in a buffer of its size.
func chunkNode(c []byte) (*lnode, error) {
	size := 0
	for off := 0; off < len(c); {
		l, k := binary.Uvarint(c[off:])
		if k <= 0 || l > uint64(len(c)-off-k) {
			return nil, fmt.Errorf("element runs past the end")
		}
		size += entrySize(int(l))
		off += k + int(l)
	}
	n := &lnode{b: make([]byte, 0, allocSize(int64(size)))}
	for off := 0; off < len(c); {
		l, k := binary.Uvarint(c[off:])
		n.pushBack(c[off+k : off+k+int(l)])
		off += k + int(l)
	}
	return n, nil
}
