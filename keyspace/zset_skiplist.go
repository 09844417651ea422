package keyspace

import (
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"unsafe"
)

// zskiplist is a sorted set's "skiplist" form: a skiplist whose links
// carry spans (the number of members they pass over), so that rank and
// the member at a rank are O(log n), plus a dict member -> node for O(1)
// score lookups. The dict's key is the node's member string: the bytes are
// stored once.
type zskiplist struct {
	header *zslNode
	tail   *zslNode
	length int
	level  int
	dict   dict[*zslNode]
	// nodeBytes is the memory of the nodes, their level arrays and their
	// members, kept as they come and go so that heapBytes is O(1).
	nodeBytes int64
	ck        *chunkTrack // when stored in chunks (chunk.go)
	// found is the node the last find returned (nil after its removal):
	// ZADD looks a member's score up, then updates it, and update takes
	// the node from here rather than hash and probe the dict again.
	found *zslNode
}

// zslNode is a node's header; its levels follow it in the same
// allocation (zslNodeN), so that a node of one level is 56 bytes, a
// 64-byte allocation, with no slice header and no second allocation.
type zslNode struct {
	member   string
	score    float64
	backward *zslNode
	nlev     int
}

type zslLevel struct {
	forward *zslNode
	span    int
}

const zslMaxLevel = 32

// zsetSeed hashes every sorted set's members.
var zsetSeed = maphash.MakeSeed()

var (
	zslHeaderSize = unsafe.Sizeof(zslNode{})
	zslLevelBytes = int64(unsafe.Sizeof(zslLevel{}))
	zslOwnBytes   = allocSize(int64(unsafe.Sizeof(zskiplist{})))
)

func newZSkiplist() *zskiplist {
	return &zskiplist{
		header: newZSLNode("", 0, zslMaxLevel),
		level:  1,
		dict:   newDict[*zslNode](zsetSeed),
	}
}

func (sk *zskiplist) heapBytes() int64 {
	return zslOwnBytes + nodeMem("", zslMaxLevel) + sk.nodeBytes + sk.dict.memory()
}

// randomLevel is 1 with probability 3/4, 2 with 3/16, ..., as Redis's
// (ZSKIPLIST_P = 1/4).
func randomLevel() int {
	l := 1 + bits.TrailingZeros64(rand.Uint64()|1<<62)/2
	return min(l, zslMaxLevel)
}

// The allocations of nodes: the header and room for 1, 2, 3 or 4 levels
// (all but about one node in 256), or 8, 16 or 32.
type (
	zslNode1 struct {
		zslNode
		_ [1]zslLevel
	}
	zslNode2 struct {
		zslNode
		_ [2]zslLevel
	}
	zslNode3 struct {
		zslNode
		_ [3]zslLevel
	}
	zslNode4 struct {
		zslNode
		_ [4]zslLevel
	}
	zslNode8 struct {
		zslNode
		_ [8]zslLevel
	}
	zslNode16 struct {
		zslNode
		_ [16]zslLevel
	}
	zslNode32 struct {
		zslNode
		_ [32]zslLevel
	}
)

// zslRoom is the number of levels the allocation of a node of lvl levels
// has room for.
func zslRoom(lvl int) int {
	switch {
	case lvl <= 4:
		return lvl
	case lvl <= 8:
		return 8
	case lvl <= 16:
		return 16
	}
	return 32
}

// newZSLNode allocates a node of lvl levels.
func newZSLNode(member string, score float64, lvl int) *zslNode {
	var x *zslNode
	switch zslRoom(lvl) {
	case 1:
		x = &(&zslNode1{}).zslNode
	case 2:
		x = &(&zslNode2{}).zslNode
	case 3:
		x = &(&zslNode3{}).zslNode
	case 4:
		x = &(&zslNode4{}).zslNode
	case 8:
		x = &(&zslNode8{}).zslNode
	case 16:
		x = &(&zslNode16{}).zslNode
	default:
		x = &(&zslNode32{}).zslNode
	}
	x.member, x.score, x.nlev = member, score, lvl
	return x
}

// lv returns level i (0 <= i < nlev) of x: the levels follow the header
// in x's allocation.
func (x *zslNode) lv(i int) *zslLevel {
	return (*zslLevel)(unsafe.Add(unsafe.Pointer(x), zslHeaderSize+uintptr(i)*uintptr(zslLevelBytes)))
}

// nodeMem is the memory of a node of the given levels and its member.
func nodeMem(member string, levels int) int64 {
	return allocSize(int64(len(member))) + allocSize(int64(zslHeaderSize)+int64(zslRoom(levels))*zslLevelBytes)
}

func (sk *zskiplist) find(member []byte) *zslNode {
	if x := sk.found; x != nil && x.member == string(member) {
		return x
	}
	sl := sk.dict.find(sk.dict.hash(member), member)
	if sl == nil {
		return nil
	}
	sk.found = sl.v
	return sl.v
}

func (sk *zskiplist) score(member []byte) (float64, bool) {
	if x := sk.find(member); x != nil {
		return x.score, true
	}
	return 0, false
}

// before reports whether x sorts before (s, m).
func (x *zslNode) before(s float64, m string) bool {
	return x.score < s || x.score == s && x.member < m
}

// rank is member's 0-based rank.
func (sk *zskiplist) rank(member []byte) (int, bool) {
	x := sk.find(member)
	if x == nil {
		return 0, false
	}
	// Descend to x, counting the spans passed: the members before it.
	p, traversed := sk.header, 0
	for i := sk.level - 1; i >= 0; i-- {
		for f := p.lv(i).forward; f != nil && f.before(x.score, x.member); f = p.lv(i).forward {
			traversed += p.lv(i).span
			p = f
		}
	}
	return traversed, true
}

// countWhile returns how many leading members before holds for.
func (sk *zskiplist) countWhile(before func(m []byte, s float64) bool) int {
	x, traversed := sk.header, 0
	for i := sk.level - 1; i >= 0; i-- {
		for f := x.lv(i).forward; f != nil && before(unsafeBytes(f.member), f.score); f = x.lv(i).forward {
			traversed += x.lv(i).span
			x = f
		}
	}
	return traversed
}

// nodeAt returns the node of 0-based rank r (0 <= r < length).
func (sk *zskiplist) nodeAt(r int) *zslNode {
	x, traversed := sk.header, 0
	for i := sk.level - 1; i >= 0; i-- {
		for x.lv(i).forward != nil && traversed+x.lv(i).span <= r+1 {
			traversed += x.lv(i).span
			x = x.lv(i).forward
		}
		if traversed == r+1 {
			return x
		}
	}
	return nil
}

func (sk *zskiplist) each(start, end int, rev bool, fn func(m []byte, s float64)) {
	if !rev {
		x := sk.nodeAt(start)
		for i := start; i <= end; i++ {
			fn(unsafeBytes(x.member), x.score)
			x = x.lv(0).forward
		}
		return
	}
	x := sk.nodeAt(end)
	for i := end; i >= start; i-- {
		fn(unsafeBytes(x.member), x.score)
		x = x.backward
	}
}

// insert adds member, which must be absent (the string is kept).
func (sk *zskiplist) insert(member string, score float64) {
	x := newZSLNode(member, score, randomLevel())
	sk.link(x)
	h := sk.dict.hashString(member)
	sk.dict.insert(h, member, x, 0)
	sk.ck.mark(h)
	sk.nodeBytes += nodeMem(member, x.nlev)
}

// link puts x, whose level is set, in its place in the list.
func (sk *zskiplist) link(x *zslNode) {
	var update [zslMaxLevel]*zslNode
	var rank [zslMaxLevel]int
	p := sk.header
	for i := sk.level - 1; i >= 0; i-- {
		if i < sk.level-1 {
			rank[i] = rank[i+1]
		}
		for f := p.lv(i).forward; f != nil && f.before(x.score, x.member); f = p.lv(i).forward {
			rank[i] += p.lv(i).span
			p = f
		}
		update[i] = p
	}
	lvl := x.nlev
	if lvl > sk.level {
		for i := sk.level; i < lvl; i++ {
			rank[i] = 0
			update[i] = sk.header
			update[i].lv(i).span = sk.length
		}
		sk.level = lvl
	}
	for i := range lvl {
		x.lv(i).forward = update[i].lv(i).forward
		update[i].lv(i).forward = x
		x.lv(i).span = update[i].lv(i).span - (rank[0] - rank[i])
		update[i].lv(i).span = rank[0] - rank[i] + 1
	}
	for i := lvl; i < sk.level; i++ {
		update[i].lv(i).span++
	}
	if update[0] != sk.header {
		x.backward = update[0]
	} else {
		x.backward = nil
	}
	if x.lv(0).forward != nil {
		x.lv(0).forward.backward = x
	} else {
		sk.tail = x
	}
	sk.length++
}

// unlink takes x out of the list.
func (sk *zskiplist) unlink(x *zslNode) {
	var update [zslMaxLevel]*zslNode
	p := sk.header
	for i := sk.level - 1; i >= 0; i-- {
		for f := p.lv(i).forward; f != nil && f != x && f.before(x.score, x.member); f = p.lv(i).forward {
			p = f
		}
		update[i] = p
	}
	for i := 0; i < sk.level; i++ {
		if update[i].lv(i).forward == x {
			update[i].lv(i).span += x.lv(i).span - 1
			update[i].lv(i).forward = x.lv(i).forward
		} else {
			update[i].lv(i).span--
		}
	}
	if x.lv(0).forward != nil {
		x.lv(0).forward.backward = x.backward
	} else {
		sk.tail = x.backward
	}
	for sk.level > 1 && sk.header.lv(sk.level-1).forward == nil {
		sk.level--
	}
	sk.length--
}

// update moves member, scored old, to score: in place when its
// neighbours allow, else unlinked and linked again.
func (sk *zskiplist) update(member []byte, old, score float64) {
	x := sk.find(member)
	if sk.ck != nil {
		sk.ck.mark(sk.dict.hash(member))
	}
	prevOK := x.backward == nil || x.backward.before(score, x.member)
	next := x.lv(0).forward
	nextOK := next == nil || !next.before(score, x.member)
	if prevOK && nextOK {
		x.score = score
		return
	}
	sk.unlink(x)
	x.score = score
	for i := range x.nlev {
		*x.lv(i) = zslLevel{}
	}
	x.backward = nil
	sk.link(x)
}

// remove deletes member.
func (sk *zskiplist) remove(member []byte) bool {
	h := sk.dict.hash(member)
	sl := sk.dict.find(h, member)
	if sl == nil {
		return false
	}
	x := sl.v
	if sk.found == x {
		sk.found = nil
	}
	sk.dict.remove(h, member)
	sk.ck.mark(h)
	sk.unlink(x)
	sk.nodeBytes -= nodeMem(x.member, x.nlev)
	return true
}

// appendSorted adds pairs in the heap layout (zset.go), in order and all
// greater than the set's members, at the end: O(1) each.
func (sk *zskiplist) appendSorted(body []byte) {
	var last [zslMaxLevel]*zslNode
	var lastRank [zslMaxLevel]int
	for i := range last {
		last[i] = sk.header
	}
	for off := 0; off < len(body); {
		m, s, next := heapZEntry(body, off)
		off = next
		x := newZSLNode(string(m), s, randomLevel())
		sk.length++
		if x.nlev > sk.level {
			sk.level = x.nlev
		}
		for i := range x.nlev {
			last[i].lv(i).forward = x
			last[i].lv(i).span = sk.length - lastRank[i]
			last[i], lastRank[i] = x, sk.length
		}
		if sk.tail != nil {
			x.backward = sk.tail
		}
		sk.tail = x
		sk.dict.insert(sk.dict.hashString(x.member), x.member, x, 0)
		sk.nodeBytes += nodeMem(x.member, x.nlev)
	}
	// The last link of each level points to nothing; its span reaches the
	// end, as link and unlink keep it.
	for i := range sk.level {
		last[i].lv(i).span = sk.length - lastRank[i]
	}
}
