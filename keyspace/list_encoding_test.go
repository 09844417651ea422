package keyspace

import (
	"strings"
	"testing"
	"unsafe"
)

// checkNodeLimits checks that every node of a quicklist holding more than
// one entry is within lim, and that a listpack is.
func checkNodeLimits(t *testing.T, l *list, lim listLimit) {
	t.Helper()
	for i := 0; i < l.numNodes(); i++ {
		n := l.node(i)
		if n.n > 1 && (n.n > lim.entries || n.size() > lim.bytes) {
			t.Fatalf("node %d of %d: %d entries, %d bytes, over the limit %+v", i, l.numNodes(), n.n, n.size(), lim)
		}
	}
}

// TestListConvertsAtTheNodeLimit checks the conversions: a listpack
// becomes a quicklist once its entries pass list-max-listpack-size
// (entries or bytes), a quicklist down to one node at most half the limit
// becomes a listpack, and OBJECT ENCODING answers quicklist for both, as
// Redis 7.0 does.
func TestListConvertsAtTheNodeLimit(t *testing.T) {
	h := newHarness(t)
	h.ks.Limits.ListMaxListpackSize = 5
	lim := limitOf(5)
	h.run("RPUSH l a b c d e")
	if h.listOfKey("l").quick() {
		t.Fatal("5 entries with list-max-listpack-size 5: quicklist")
	}
	h.expect("OBJECT ENCODING l", q("quicklist"))
	h.run("RPUSH l f")
	l := h.listOfKey("l")
	if !l.quick() || l.numNodes() != 2 {
		t.Fatalf("6 entries with list-max-listpack-size 5: quick %v, %d nodes", l.quick(), l.numNodes())
	}
	for range 20 {
		h.run("LPUSH l x")
		h.run("LINSERT l AFTER c y")
		checkNodeLimits(t, h.listOfKey("l"), lim)
	}
	h.expect("LTRIM l 0 1", "OK")
	if h.listOfKey("l").quick() {
		t.Fatal("2 entries left of a quicklist with limit 5: still a quicklist")
	}
	h.checkList("l")

	// Byte limits: -1 is 4 KiB of entries.
	h.ks.Limits.ListMaxListpackSize = -1
	lim = limitOf(-1)
	h.run("DEL big")
	e := strings.Repeat("z", 1000)
	for range 4 {
		h.do("RPUSH", "big", e)
	}
	if h.listOfKey("big").quick() {
		t.Fatal("4 entries of 1000 bytes under 4 KiB: quicklist")
	}
	h.do("RPUSH", "big", e)
	if !h.listOfKey("big").quick() {
		t.Fatal("5 entries of 1000 bytes over 4 KiB: still a listpack")
	}
	for range 30 {
		h.do("LPUSH", "big", e)
		h.do("LSET", "big", "3", e+e)
		checkNodeLimits(t, h.listOfKey("big"), lim)
	}
	h.checkList("big")
	for h.run("LLEN big") != n(1) {
		h.run("RPOP big")
		h.checkList("big")
	}
	if h.listOfKey("big").quick() {
		t.Fatal("one 1000-byte entry left: still a quicklist")
	}

	// An element larger than the limit gets a node of its own.
	h.do("RPUSH", "huge", strings.Repeat("h", 10000))
	if !h.listOfKey("huge").quick() {
		t.Fatal("a 10000-byte element: a listpack")
	}
	h.do("RPUSH", "huge", "small")
	if got := h.listOfKey("huge").numNodes(); got != 2 {
		t.Fatalf("a large element and a small one: %d nodes", got)
	}
	h.checkList("huge")
}

// TestListDecodePicksTheRepresentation checks that decode follows the
// keyspace's limit, as Redis's loading does.
func TestListDecodePicksTheRepresentation(t *testing.T) {
	h := newHarness(t)
	h.run("RPUSH l a b c d e f g h")
	enc := h.listOfKey("l").encode(nil)
	for _, c := range []struct {
		fill  int64
		quick bool
	}{{-2, false}, {8, false}, {7, true}, {2, true}} {
		l, err := decodeList(enc, limitOf(c.fill))
		if err != nil {
			t.Fatal(err)
		}
		if l.quick() != c.quick {
			t.Errorf("decoded with list-max-listpack-size %d: quick %v, want %v", c.fill, l.quick(), c.quick)
		}
		checkNodeLimits(t, l, limitOf(c.fill))
	}
}

// TestListDecodeRejectsBadInput checks decode's refusals.
func TestListDecodeRejectsBadInput(t *testing.T) {
	for _, b := range [][]byte{
		nil,
		{0},              // no elements
		{2, 1, 'a'},      // a count above the elements
		{1, 2, 'a'},      // an element past the end
		{1, 1, 'a', 'b'}, // a trailing byte
		{0xff},           // a truncated count
		{200, 1},         // more elements than bytes
	} {
		if _, err := decodeList(b, limitOf(-2)); err == nil {
			t.Errorf("decode(%q) succeeded", b)
		}
	}
}

// FuzzListDecode checks that decode never panics and that what it
// accepts re-encodes to a form that decodes to the same list.
func FuzzListDecode(f *testing.F) {
	h := newHarness(f)
	h.run("RPUSH l a bb ccc 1 2 3")
	f.Add(h.listOfKey("l").encode(nil), int64(-2))
	f.Add([]byte{1, 0}, int64(1))
	f.Add([]byte{3, 1, 'x', 0, 2, 'y', 'z'}, int64(2))
	f.Fuzz(func(t *testing.T, b []byte, fill int64) {
		l, err := decodeList(b, limitOf(fill))
		if err != nil {
			return
		}
		enc := l.encode(nil)
		l2, err := decodeList(enc, limitOf(fill))
		if err != nil {
			t.Fatalf("re-encoded list does not decode: %v", err)
		}
		if string(l2.encode(nil)) != string(enc) {
			t.Fatal("decode(encode(x)) differs from x")
		}
		checkNodeLimits(t, l, limitOf(fill))
		mem := l.memory()
		l.recount()
		if mem != l.memory() {
			t.Fatalf("mem %d, recounted %d", mem, l.memory())
		}
	})
}

// TestListSplitsAroundALargeEntry checks that a node an LSET or LINSERT
// takes over the limit with one large entry splits until every node with
// more than one entry is within the limit.
func TestListSplitsAroundALargeEntry(t *testing.T) {
	h := newHarness(t)
	h.ks.Limits.ListMaxListpackSize = -1
	lim := limitOf(-1)
	elems := make([]string, 0, 1500)
	for i := range 1500 {
		elems = append(elems, itoa(i))
	}
	h.do(append([]string{"RPUSH", "l"}, elems...)...)
	if !h.listOfKey("l").quick() {
		t.Fatal("1500 entries in one 4 KiB node")
	}
	for i, at := range []string{"5", "700", "1395", "-1", "0"} {
		h.do("LSET", "l", at, strings.Repeat("S", 3000+i))
		checkNodeLimits(t, h.listOfKey("l"), lim)
		h.do("LINSERT", "l", "BEFORE", "100", strings.Repeat("I", 3500+i))
		checkNodeLimits(t, h.listOfKey("l"), lim)
		h.checkList("l")
	}
}

// TestListPushOfManyAllocatesOnce checks that a list created by one push
// of several elements holds them in one buffer of the size class they
// need, at either end, with the elements in push order.
func TestListPushOfManyAllocatesOnce(t *testing.T) {
	h := newHarness(t)
	h.run("RPUSH r value:00 value:01 value:02 value:03 value:04 value:05 value:06 value:07 value:08 value:09")
	h.run("LPUSH l value:00 value:01 value:02 value:03 value:04 value:05 value:06 value:07 value:08 value:09")
	want := listHeader + allocSize(10*int64(entrySize(8)))
	for _, k := range []string{"r", "l"} {
		l := h.listOfKey(k)
		if l.quick() || l.memory() != want {
			t.Errorf("%s: quick %v, memory %d, want a listpack of %d", k, l.quick(), l.memory(), want)
		}
		h.checkList(k)
	}
	h.expect("LINDEX r 0", q("value:00"))
	h.expect("LINDEX r -1", q("value:09"))
	h.expect("LINDEX l 0", q("value:09"))
	h.expect("LINDEX l -1", q("value:00"))
	h.run("RPUSH r x")
	h.run("LPUSH l x")
	h.checkList("r")
	h.checkList("l")
	h.expect("LINDEX r -1", q("x"))
	h.expect("LINDEX l 0", q("x"))
}

// Pushes at one end of a quicklist lay each node's buffer out a few
// times at most (doubling, all the room on the side pushed), and a full
// node keeps no room: its buffer is its entries' size class. A quarter
// more room each time, split between the ends, laid a node of 8 KiB out
// about 30 times, 8 bytes copied per byte pushed.
func TestQuicklistPushesLayNodesOutRarely(t *testing.T) {
	for _, front := range []bool{true, false} {
		l := newList()
		lim := limitOf(-2)
		layouts, nodes := 0, 0
		var last *lnode
		var lastBuf *byte
		for range 20000 {
			l.push([]byte("xxx"), front, lim)
			end := l.node(0)
			if !front {
				end = l.node(l.numNodes() - 1)
			}
			buf := unsafe.SliceData(end.b[:cap(end.b)])
			switch {
			case end != last:
				nodes++
				last = end
			case buf != lastBuf:
				layouts++
			}
			lastBuf = buf
		}
		if !l.quick() || nodes < 10 {
			t.Fatalf("front %v: %d nodes", front, nodes)
		}
		if per := float64(layouts) / float64(nodes); per > 12 {
			t.Errorf("front %v: %.1f layouts per node, want at most 12", front, per)
		}
		for i := 1; i < l.numNodes()-1; i++ {
			if n := l.node(i); int64(cap(n.b)) != allocSize(int64(n.size())) {
				t.Errorf("front %v: full node %d holds %d bytes in %d", front, i, n.size(), cap(n.b))
			}
		}
	}
}
