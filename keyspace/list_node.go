package keyspace

import "encoding/binary"

// A list node: a flat buffer of entries, the unit both list
// representations are made of (list.go). The entries live in b[lo:], one
// after the other, each as
//
//	uvarint(len) ‖ element bytes ‖ the same uvarint's bytes reversed
//
// so that the node reads forwards from lo and backwards from len(b) (the
// reversed length, like a listpack entry's backlen, is read from its last
// byte down). The bytes before lo are headroom for pushes at the front,
// the bytes past len(b) up to cap(b) room for pushes at the back: a push
// or pop at either end moves a boundary and copies one element, nothing
// else, until a push finds no room and the node is re-laid.
type lnode struct {
	b    []byte // the entries are b[lo:]
	lo   int32
	meta uint32 // a quicklist node's chunk id | nodeDirty (chunk.go)
	n    int    // number of entries
}

// nodeDirty marks a node whose entries changed since its chunk record was
// written; the other bits of meta are its chunk id (0: none yet). Every
// method that changes the entries sets it.
const nodeDirty = 1 << 31

func (n *lnode) touch()          { n.meta |= nodeDirty }
func (n *lnode) chunkID() uint32 { return n.meta &^ nodeDirty }
func (n *lnode) changed() bool   { return n.meta&nodeDirty != 0 }

// entrySize is the encoded size of an element of l bytes.
func entrySize(l int) int { return 2*uvarintLen(uint64(l)) + l }

// putNodeEntry encodes e into dst, which is entrySize(len(e)) bytes.
func putNodeEntry(dst, e []byte) {
	k := binary.PutUvarint(dst, uint64(len(e)))
	copy(dst[k:], e)
	for i := 0; i < k; i++ {
		dst[k+len(e)+i] = dst[k-1-i]
	}
}

// readFwd returns the element whose entry starts at p in b, and where the
// next entry starts.
func readFwd(b []byte, p int) ([]byte, int) {
	l, k := binary.Uvarint(b[p:])
	s := p + k
	e := s + int(l)
	return b[s:e:e], e + k
}

// readBack returns the element whose entry ends at q in b, and where that
// entry starts.
func readBack(b []byte, q int) ([]byte, int) {
	i := q - 1
	var v uint64
	for shift := 0; ; shift += 7 {
		c := b[i]
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			break
		}
		i--
	}
	k := q - i
	end := q - k
	s := end - int(v)
	return b[s:end:end], s - k
}

// size is the bytes the node's entries take.
func (n *lnode) size() int { return len(n.b) - int(n.lo) }

// mem is the node buffer's memory, as the allocator hands it out.
func (n *lnode) mem() int64 { return allocSize(int64(cap(n.b))) }

// growCap is the capacity a node buffer gets when it must hold n bytes:
// a quarter more, so that a run of pushes reallocates O(log n) times,
// rounded up to the allocator's size class (which allocates it anyway).
func growCap(n int) int { return int(allocSize(int64(n + n/4 + 8))) }

// relay makes room for need more bytes at the front (front) or the back
// of the node: in the same buffer when it has room to spare, else in a
// new one. The new one is growCap large, or, for a quicklist node (most
// > 0, the node limit's allocation), twice what it must hold up to most:
// such a node is filled to the limit by pushes at one end, and doubling
// copies each byte about once on the way where growCap's quarter copies
// it about four times. The spare room goes where the pushes come: a node
// never pushed at the front (lo 0) keeps all of it at the back, one never
// pushed at the back since it was laid (no room there) all of it at the
// front; any other splits it between the ends.
func (n *lnode) relay(need int, front bool, most int) {
	size := n.size()
	c := cap(n.b)
	if size+need > c*3/4 {
		c = growCap(size + need)
		if most > 0 {
			c = max(size+need, min(int(allocSize(int64(2*(size+need)))), most))
		}
	}
	gap := c - size - need
	newLo := 0
	switch {
	case front && len(n.b) == cap(n.b):
		newLo = gap
	case front || n.lo > 0:
		newLo = gap / 2
	}
	if front {
		newLo += need
	}
	if c != cap(n.b) {
		nb := make([]byte, newLo+size, c)
		copy(nb[newLo:], n.b[n.lo:])
		n.b = nb
	} else {
		copy(n.b[newLo:newLo+size], n.b[n.lo:])
		n.b = n.b[:newLo+size]
	}
	n.lo = int32(newLo)
}

// reserve gives an empty node a buffer of the size class of size bytes,
// its room at the front (for pushes at the front) or at the back.
func (n *lnode) reserve(size int, front bool) {
	c := int(allocSize(int64(size)))
	n.b, n.lo = make([]byte, 0, c), 0
	if front {
		n.b, n.lo = n.b[:c], int32(c)
	}
}

func (n *lnode) pushBack(e []byte) { n.pushBackIn(e, 0) }

func (n *lnode) pushFront(e []byte) { n.pushFrontIn(e, 0) }

// pushBackIn is pushBack for a node whose buffer may grow to most bytes
// (relay).
func (n *lnode) pushBackIn(e []byte, most int) {
	need := entrySize(len(e))
	if cap(n.b)-len(n.b) < need {
		n.relay(need, false, most)
	}
	l := len(n.b)
	n.b = n.b[:l+need]
	putNodeEntry(n.b[l:], e)
	n.n++
	n.touch()
}

// pushFrontIn is pushFront for a node whose buffer may grow to most bytes
// (relay).
func (n *lnode) pushFrontIn(e []byte, most int) {
	need := entrySize(len(e))
	if int(n.lo) < need {
		n.relay(need, true, most)
	}
	n.lo -= int32(need)
	putNodeEntry(n.b[n.lo:int(n.lo)+need], e)
	n.n++
	n.touch()
}

// popFront removes the first entry and returns its element, which stays
// readable until the node's next change.
func (n *lnode) popFront() []byte {
	e, next := readFwd(n.b, int(n.lo))
	n.lo = int32(next)
	n.n--
	n.touch()
	if n.n == 0 {
		n.lo, n.b = 0, n.b[:0]
	}
	return e
}

// popBack is popFront at the other end.
func (n *lnode) popBack() []byte {
	e, start := readBack(n.b, len(n.b))
	n.b = n.b[:start]
	n.n--
	n.touch()
	if n.n == 0 {
		n.lo, n.b = 0, n.b[:0]
	}
	return e
}

// offset returns where the i-th entry (0 <= i < n) starts, walking from
// the nearer end.
func (n *lnode) offset(i int) int {
	if i < n.n/2 {
		p := int(n.lo)
		for ; i > 0; i-- {
			_, p = readFwd(n.b, p)
		}
		return p
	}
	q := len(n.b)
	for j := n.n; j > i; j-- {
		_, q = readBack(n.b, q)
	}
	return q
}

// resize makes the bytes [p, q) of the node size bytes long, moving what
// follows, and returns them for the caller to fill.
func (n *lnode) resize(p, q, size int) []byte {
	d := size - (q - p)
	l := len(n.b)
	n.touch()
	switch {
	case d > 0 && cap(n.b)-l < d:
		lo := int(n.lo)
		c := growCap(l - lo + d)
		nb := make([]byte, l-lo+d, c)
		copy(nb, n.b[lo:p])
		copy(nb[p-lo+size:], n.b[q:])
		n.b, p, n.lo = nb, p-lo, 0
	case d > 0:
		n.b = n.b[:l+d]
		copy(n.b[q+d:], n.b[q:l])
	case d < 0:
		copy(n.b[p+size:], n.b[q:])
		n.b = n.b[:l+d]
	}
	return n.b[p : p+size]
}

// insertAt inserts e as an entry starting at offset p (an entry boundary).
func (n *lnode) insertAt(p int, e []byte) {
	putNodeEntry(n.resize(p, p, entrySize(len(e))), e)
	n.n++
}

// replaceAt replaces the entry starting at p with one holding e.
func (n *lnode) replaceAt(p int, e []byte) {
	_, q := readFwd(n.b, p)
	putNodeEntry(n.resize(p, q, entrySize(len(e))), e)
}

// splitAt moves the entries from the i-th on (0 < i < n) to a new node,
// which it returns.
func (n *lnode) splitAt(i int) *lnode {
	p := n.offset(i)
	rest := n.b[p:]
	nn := &lnode{b: make([]byte, len(rest), allocSize(int64(len(rest)))), n: n.n - i}
	copy(nn.b, rest)
	n.b = n.b[:p]
	n.n = i
	n.touch()
	return nn
}

// fit gives the node a buffer of the size class of its entries, at offset
// 0, unless it has one: for a quicklist node that stops being an end one,
// whose room for pushes (relay's doubling) would be waste from now on.
func (n *lnode) fit() {
	size := n.size()
	if int64(cap(n.b)) <= allocSize(int64(size)) {
		return
	}
	nb := make([]byte, size, allocSize(int64(size)))
	copy(nb, n.b[n.lo:])
	n.b, n.lo = nb, 0
}

// compact gives the node a buffer just large enough for its entries, at
// offset 0, when its buffer is more than twice as large as needed.
func (n *lnode) compact() {
	size := n.size()
	if cap(n.b) <= 64 || size*2 >= cap(n.b) {
		return
	}
	nb := make([]byte, size, allocSize(int64(size)))
	copy(nb, n.b[n.lo:])
	n.b, n.lo = nb, 0
}
