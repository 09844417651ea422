package keyspace

import "unsafe"

// loadSlab is where a heap load puts the bytes of the keys and short
// string values it creates: carved one after the other from chunks of
// slabChunk bytes, rather than one allocation each. Two million small
// allocations were a tenth of a million-key boot; a chunk is one, and the
// bytes in it need no size-class rounding.
//
// A chunk lives as long as any key or value carved from it, so a key that
// survives while its neighbours are deleted or overwritten keeps up to
// slabChunk bytes alive. That is bounded: chunks are made only while
// loading, never again, so what they hold never exceeds what the load
// itself allocated, and each chunk is freed as soon as the last of its
// pieces goes (an overwrite always allocates anew: loaded values are not
// owned, see ownedBit). Pieces above slabMax get their own allocation, so
// a chunk holds at least slabChunk/slabMax pieces and no large value is
// ever pinned by a small one. MEMORY USAGE and the keyspace's own counts
// still size each piece as its own allocation would be (allocSize), a
// slight overstatement; used_memory, the Go heap, is what is really held.
type loadSlab struct {
	chunk []byte
	off   int
}

const (
	slabChunk = 4096
	slabMax   = 256
)

// alloc returns n bytes (n <= slabMax) of the current chunk, starting a new
// chunk when it has less room left.
func (s *loadSlab) alloc(n int) []byte {
	if n > len(s.chunk)-s.off {
		s.chunk, s.off = make([]byte, slabChunk), 0
	}
	b := s.chunk[s.off : s.off+n : s.off+n]
	s.off += n
	return b
}

// unalloc gives back the n bytes the last alloc returned, unused.
func (s *loadSlab) unalloc(n int) { s.off -= n }

// str returns b as a string in the slab, or in an allocation of its own
// when it is longer than slabMax.
func (s *loadSlab) str(b []byte) string {
	if len(b) > slabMax || len(b) == 0 {
		return string(b)
	}
	c := s.alloc(len(b))
	copy(c, b)
	return unsafe.String(unsafe.SliceData(c), len(c))
}

// stringValue is newStringValue for b, the bytes the last alloc returned,
// already filled: an integer gives the bytes back, any other string keeps
// them in place (not owned: they share a chunk).
func (s *loadSlab) stringValue(b []byte) value {
	if n, ok := intForm(b); ok {
		s.unalloc(len(b))
		return intValue(n)
	}
	if len(b) == 0 {
		return value{}
	}
	return bytesValue(unsafe.String(unsafe.SliceData(b), len(b)))
}
