package keyspace

import (
	"slices"
	"unsafe"
)

// The list kind. A list has two representations, as Redis 7.2 has:
//
//   - "listpack": one node (list_node.go) embedded in the list, all the
//     entries in one flat allocation; used while the entries fit the node
//     limit (list-max-listpack-size).
//   - "quicklist": a deque of nodes, each within the node limit, so that
//     pushes and pops at either end touch one node (O(1) amortized) and an
//     index walks nodes by their counts, then one node's entries.
//
// A listpack whose entries exceed the node limit becomes a quicklist; a
// quicklist down to one node at most half the limit becomes a listpack
// again (Redis 7.2's rule; the halving keeps a list at the boundary from
// converting back and forth). OBJECT ENCODING answers "quicklist" for
// both, as Redis 7.0 does: 7.0 keeps every list in a quicklist.
//
// The node limit: a positive list-max-listpack-size is entries per node
// (and at most 8 KiB of entries, Redis's SIZE_SAFETY_LIMIT); -1 to -5 are
// 4, 8, 16, 32 or 64 KiB of entries. The bytes are this package's entry
// encoding, a little smaller than a listpack's.
//
// A listpack is the list header and one buffer: its count is its node's
// and its memory is computed. A quicklist keeps both in its quicklist
// part, adjusted by every change, so that heapBytes stays O(1).
type list struct {
	lp lnode      // the listpack form's entries (q == nil)
	q  *quicklist // the quicklist form, nil for a listpack
}

// quicklist is the node form's state.
type quicklist struct {
	nodes  []*lnode // nodes[head:], none empty
	head   int
	count  int
	mem    int64       // the memory of nodes and of the nodes they point to
	ck     *chunkTrack // when stored in chunks (chunk.go): the nodes are
	nextID uint32      // the last chunk id given to a node
}

var listHeader = allocSize(int64(unsafe.Sizeof(list{})))

var quickHeader = allocSize(int64(unsafe.Sizeof(quicklist{})))

var nodeHeader = allocSize(int64(unsafe.Sizeof(lnode{})))

// listLimit is the node limit of a list-max-listpack-size setting.
type listLimit struct{ entries, bytes int }

// sizeSafetyLimit bounds a node's bytes when the limit counts entries.
const sizeSafetyLimit = 8192

func limitOf(fill int64) listLimit {
	switch {
	case fill > 0:
		return listLimit{entries: int(min(fill, 1<<15)), bytes: sizeSafetyLimit}
	case fill == 0:
		return listLimit{entries: 1, bytes: sizeSafetyLimit}
	}
	return listLimit{entries: 1 << 62, bytes: 4096 << (min(-fill, 5) - 1)}
}

// fits reports whether a node may take one more entry of need bytes. An
// empty node takes any entry.
func (lim listLimit) fits(n *lnode, need int) bool {
	return n.n == 0 || n.n < lim.entries && n.size()+need <= lim.bytes
}

func newList() *list { return &list{} }

// len is the number of elements.
func (l *list) len() int {
	if l.q == nil {
		return l.lp.n
	}
	return l.q.count
}

// memory is heapBytes: O(1).
func (l *list) memory() int64 {
	if l.q == nil {
		return listHeader + l.lp.mem()
	}
	return listHeader + quickHeader + l.q.mem
}

// addCount and addMem adjust a quicklist's figures; a listpack's follow
// from its node.
func (l *list) addCount(d int) {
	if l.q != nil {
		l.q.count += d
	}
}

func (l *list) addMem(d int64) {
	if l.q != nil {
		l.q.mem += d
	}
}

func (l *list) quick() bool { return l.q != nil }

func (l *list) numNodes() int {
	if l.q == nil {
		return 1
	}
	return len(l.q.nodes) - l.q.head
}

func (l *list) node(i int) *lnode {
	if l.q == nil {
		return &l.lp
	}
	return l.q.nodes[l.q.head+i]
}

// recount recomputes mem from the structure, after a change that touched
// many nodes.
func (l *list) recount() {
	if l.q != nil {
		l.q.mem = allocSize(int64(cap(l.q.nodes)) * 8)
		for _, n := range l.q.nodes[l.q.head:] {
			l.q.mem += nodeHeader + n.mem()
		}
	}
}

// push adds e at the front (front) or the back.
func (l *list) push(e []byte, front bool, lim listLimit) {
	l.addCount(1)
	if l.q == nil { // a listpack's memory is its node's: nothing to count
		if front {
			l.lp.pushFront(e)
		} else {
			l.lp.pushBack(e)
		}
		if l.lp.n > lim.entries || l.lp.size() > lim.bytes {
			l.toQuick(lim)
		}
		return
	}
	if l.numNodes() == 0 {
		l.insertNode(0, &lnode{})
	}
	i := 0
	if !front {
		i = l.numNodes() - 1
	}
	n := l.node(i)
	if !lim.fits(n, entrySize(len(e))) {
		// n is full: the new end node takes the pushes, and n keeps no
		// room for them.
		before := n.mem()
		n.fit()
		l.addMem(n.mem() - before)
		n = &lnode{}
		l.insertNode(i+boolInt(!front), n)
	}
	// The memory changes only with the buffer (relay): the size class
	// lookup of a node's 8 KiB is a binary search, not for every push.
	c := cap(n.b)
	if front {
		n.pushFrontIn(e, lim.nodeCap())
	} else {
		n.pushBackIn(e, lim.nodeCap())
	}
	if cap(n.b) != c {
		l.addMem(allocSize(int64(cap(n.b))) - allocSize(int64(c)))
	}
}

// nodeCap is the largest buffer a quicklist node grows to for pushes: a
// full node's, within the size class of the limit's bytes (a node takes
// entries up to the limit, and one entry past it when it is empty, which
// relay then sizes exactly).
func (lim listLimit) nodeCap() int { return int(allocSize(int64(lim.bytes))) }

// pushAll pushes elems one after the other at the front (front) or the
// back, as that many calls of push would. An empty listpack that will
// hold them all first gets one buffer of the size class they need, rather
// than the few a run of pushes allocates, the last with spare room: a
// list loaded by one push of its elements (RPUSH k a b c ...) keeps no
// slack and costs one allocation.
func (l *list) pushAll(elems [][]byte, front bool, lim listLimit) {
	if l.q == nil && l.lp.n == 0 && cap(l.lp.b) == 0 && len(elems) > 1 && len(elems) <= lim.entries {
		total := 0
		for _, e := range elems {
			total += entrySize(len(e))
		}
		if total <= lim.bytes {
			l.lp.reserve(total, front)
		}
	}
	for _, e := range elems {
		l.push(e, front, lim)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pop removes the first (front) or last element and returns it; it stays
// readable until the list's next change. The list must not be empty.
func (l *list) pop(front bool, lim listLimit) []byte {
	l.addCount(-1)
	i := 0
	if !front {
		i = l.numNodes() - 1
	}
	n := l.node(i)
	var e []byte
	if front { // a pop keeps the node's buffer: its memory does not change
		e = n.popFront()
	} else {
		e = n.popBack()
	}
	if l.q != nil && (n.n == 0 || l.numNodes() == 1) {
		if n.n == 0 {
			l.removeNode(i)
		}
		l.settle(lim)
	}
	return e
}

// insertNode puts n at node index i (0 <= i <= numNodes), in a
// quicklist.
func (l *list) insertNode(i int, n *lnode) {
	before := allocSize(int64(cap(l.q.nodes)) * 8)
	switch {
	case i == 0 && l.q.head > 0:
		l.q.head--
		l.q.nodes[l.q.head] = n
	case i == 0:
		room := len(l.q.nodes)/2 + 2
		nodes := make([]*lnode, room+len(l.q.nodes))
		copy(nodes[room:], l.q.nodes)
		l.q.nodes, l.q.head = nodes, room-1
		l.q.nodes[l.q.head] = n
	default:
		l.q.nodes = slices.Insert(l.q.nodes, l.q.head+i, n)
	}
	l.addMem(allocSize(int64(cap(l.q.nodes))*8) - before + nodeHeader + n.mem())
}

// removeNode drops node i of a quicklist.
func (l *list) removeNode(i int) {
	n := l.node(i)
	l.addMem(-(nodeHeader + n.mem()))
	switch {
	case i == 0:
		l.q.nodes[l.q.head] = nil
		l.q.head++
		if l.q.head >= 32 && l.q.head*2 >= len(l.q.nodes) {
			live := copy(l.q.nodes, l.q.nodes[l.q.head:])
			clear(l.q.nodes[live:])
			l.q.nodes, l.q.head = l.q.nodes[:live], 0
		}
	case l.q.head+i == len(l.q.nodes)-1:
		l.q.nodes[l.q.head+i] = nil
		l.q.nodes = l.q.nodes[:len(l.q.nodes)-1]
	default:
		l.q.nodes = slices.Delete(l.q.nodes, l.q.head+i, l.q.head+i+1)
	}
	if l.q.head > 0 && l.q.head == len(l.q.nodes) {
		l.q.nodes, l.q.head = l.q.nodes[:0], 0
	}
}

// settle converts the list to the representation the limit calls for.
func (l *list) settle(lim listLimit) {
	switch {
	case l.q == nil:
		if l.lp.n > lim.entries || l.lp.size() > lim.bytes {
			l.toQuick(lim)
		}
	case l.numNodes() == 0:
		l.q, l.lp = nil, lnode{}
	case l.numNodes() == 1:
		n := l.node(0)
		if n.n <= lim.entries/2 && n.size() <= lim.bytes/2 {
			n.compact()
			l.lp = *n
			l.q = nil
		}
	}
}

// toQuick turns a listpack into a quicklist of nodes within lim.
func (l *list) toQuick(lim listLimit) {
	old := l.lp
	l.lp = lnode{}
	l.q = &quicklist{nodes: make([]*lnode, 0, 4)}
	l.recount()
	for p := int(old.lo); p < len(old.b); {
		var e []byte
		e, p = readFwd(old.b, p)
		l.push(e, false, lim)
	}
}

// locate returns the node holding element i (0 <= i < count) and the
// element's index within it, walking from the nearer end.
func (l *list) locate(i int) (ni, j int) {
	if i < l.len()/2 {
		for ni = 0; ; ni++ {
			n := l.node(ni).n
			if i < n {
				return ni, i
			}
			i -= n
		}
	}
	j = l.len() - i // elements from the end, counting i
	for ni = l.numNodes() - 1; ; ni-- {
		n := l.node(ni).n
		if j <= n {
			return ni, n - j
		}
		j -= n
	}
}

// index returns element i (0 <= i < count).
func (l *list) index(i int) []byte {
	ni, j := l.locate(i)
	n := l.node(ni)
	e, _ := readFwd(n.b, n.offset(j))
	return e
}

// set replaces element i (0 <= i < count) with e.
func (l *list) set(i int, e []byte, lim listLimit) {
	ni, j := l.locate(i)
	n := l.node(ni)
	before := n.mem()
	n.replaceAt(n.offset(j), e)
	l.addMem(n.mem() - before)
	l.splitIfOver(ni, lim)
}

// insert puts e before (after false) or after element i.
func (l *list) insert(i int, after bool, e []byte, lim listLimit) {
	ni, j := l.locate(i)
	n := l.node(ni)
	p := n.offset(j)
	if after {
		_, p = readFwd(n.b, p)
	}
	before := n.mem()
	n.insertAt(p, e)
	l.addCount(1)
	l.addMem(n.mem() - before)
	l.splitIfOver(ni, lim)
}

// splitIfOver splits node ni in halves, and those again, when a change
// took it over the limit (a listpack converts instead).
func (l *list) splitIfOver(ni int, lim listLimit) {
	if l.q == nil {
		l.settle(lim)
		return
	}
	n := l.node(ni)
	if n.n < 2 || n.n <= lim.entries && n.size() <= lim.bytes {
		return
	}
	before := n.mem()
	nn := n.splitAt(n.n / 2)
	n.compact()
	l.addMem(n.mem() - before)
	l.insertNode(ni+1, nn)
	// A large entry may leave a half still over the limit.
	l.splitIfOver(ni+1, lim)
	l.splitIfOver(ni, lim)
}

// trim deletes the first front and the last back elements
// (front+back <= count).
func (l *list) trim(front, back int, lim listLimit) {
	for front > 0 {
		n := l.node(0)
		if n.n <= front && l.q != nil {
			front -= n.n
			l.addCount(-n.n)
			l.removeNode(0)
			continue
		}
		for ; front > 0; front-- {
			l.pop(true, lim)
		}
	}
	for back > 0 {
		n := l.node(l.numNodes() - 1)
		if n.n <= back && l.q != nil {
			back -= n.n
			l.addCount(-n.n)
			l.removeNode(l.numNodes() - 1)
			continue
		}
		for ; back > 0; back-- {
			l.pop(false, lim)
		}
	}
	l.compactNodes()
	l.settle(lim)
}

// compactNodes gives the end nodes tight buffers after a large removal.
func (l *list) compactNodes() {
	if l.numNodes() == 0 {
		return
	}
	for _, n := range []*lnode{l.node(0), l.node(l.numNodes() - 1)} {
		before := n.mem()
		n.compact()
		l.addMem(n.mem() - before)
	}
}

// remove deletes up to max elements equal to e (every one when max is
// 0), from the tail when fromTail, and returns how many it deleted.
func (l *list) remove(e []byte, max int, fromTail bool, lim listLimit) int {
	removed := 0
	nn := l.numNodes()
	for k := 0; k < nn && (max == 0 || removed < max); k++ {
		ni := k
		if fromTail {
			ni = nn - 1 - k
		}
		n := l.node(ni)
		before := n.mem()
		removed += n.removeMatches(e, max-removed, max == 0, fromTail)
		l.addMem(n.mem() - before)
	}
	l.addCount(-removed)
	if l.q != nil {
		for ni := l.numNodes() - 1; ni >= 0; ni-- {
			if l.node(ni).n == 0 {
				l.removeNode(ni)
			}
		}
	}
	l.settle(lim)
	return removed
}

// contains reports whether an element equals e.
func (l *list) contains(e []byte) bool {
	it := l.iterAt(0, false)
	for x, ok := it.next(); ok; x, ok = it.next() {
		if string(x) == string(e) {
			return true
		}
	}
	return false
}

// removeMatches deletes from the node the entries equal to e: all of them
// when all, else the first (or, fromTail, the last) max ones.
func (n *lnode) removeMatches(e []byte, max int, all, fromTail bool) int {
	matches := 0
	for p := int(n.lo); p < len(n.b); {
		var x []byte
		x, p = readFwd(n.b, p)
		if string(x) == string(e) {
			matches++
		}
	}
	if matches == 0 {
		return 0
	}
	skip := 0 // matches to keep, at the front, when removing from the tail
	if !all && matches > max {
		if fromTail {
			skip = matches - max
		}
		matches = max
	}
	w, seen, removed := int(n.lo), 0, 0
	for p := int(n.lo); p < len(n.b); {
		x, next := readFwd(n.b, p)
		drop := false
		if string(x) == string(e) {
			seen++
			drop = seen > skip && removed < matches
		}
		if drop {
			removed++
		} else {
			w += copy(n.b[w:], n.b[p:next])
		}
		p = next
	}
	n.b = n.b[:w]
	n.n -= removed
	if removed > 0 {
		n.touch()
	}
	if n.n == 0 {
		n.lo, n.b = 0, n.b[:0]
	}
	n.compact()
	return removed
}

// listIter walks a list's elements forwards or backwards.
type listIter struct {
	l   *list
	ni  int // current node
	off int // forwards: the next entry's start; backwards: the next entry's end
}

// iterAt returns an iterator whose next element is element i
// (0 <= i < count).
func (l *list) iterAt(i int, backwards bool) listIter {
	ni, j := l.locate(i)
	n := l.node(ni)
	p := n.offset(j)
	if backwards {
		_, p = readFwd(n.b, p)
	}
	return listIter{l: l, ni: ni, off: p}
}

// next returns the next element forwards, false past the end.
func (it *listIter) next() ([]byte, bool) {
	n := it.l.node(it.ni)
	for it.off >= len(n.b) {
		if it.ni+1 >= it.l.numNodes() {
			return nil, false
		}
		it.ni++
		n = it.l.node(it.ni)
		it.off = int(n.lo)
	}
	var e []byte
	e, it.off = readFwd(n.b, it.off)
	return e, true
}

// prev returns the next element backwards, false past the start.
func (it *listIter) prev() ([]byte, bool) {
	n := it.l.node(it.ni)
	for it.off <= int(n.lo) {
		if it.ni == 0 {
			return nil, false
		}
		it.ni--
		n = it.l.node(it.ni)
		it.off = len(n.b)
	}
	var e []byte
	e, it.off = readBack(n.b, it.off)
	return e, true
}
