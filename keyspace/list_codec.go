package keyspace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"
)

// The list kind's objectType and heap encoding.
//
// A list's heap encoding (heap records and MOOND.APPLY PUT) is
//
//	uvarint(count) ‖ count × (uvarint(len) ‖ element bytes)
//
// the elements from head to tail, every uvarint in any valid form. decode
// refuses a count of zero (Redis keeps no empty list), a count larger than
// the bytes could hold, an element running past the end, and bytes left
// over after the last element; it builds the representation the
// keyspace's list-max-listpack-size calls for.

func init() {
	registerObjectType(KindList, &objectType{
		encoding:  func(unsafe.Pointer) string { return "quicklist" },
		heapBytes: func(p unsafe.Pointer) int64 { return (*list)(p).memory() },
		encode:    func(p unsafe.Pointer, dst []byte) []byte { return (*list)(p).encode(dst) },
		decode: func(b []byte, lim *EncodingLimits) (unsafe.Pointer, error) {
			l, err := decodeList(b, limitOf(lim.ListMaxListpackSize))
			return unsafe.Pointer(l), err
		},
		clone:   func(p unsafe.Pointer) unsafe.Pointer { return unsafe.Pointer((*list)(p).clone()) },
		chunked: listChunked,
	})
}

// encode appends the list's heap encoding to dst.
func (l *list) encode(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(l.len()))
	for ni := 0; ni < l.numNodes(); ni++ {
		dst = l.node(ni).appendEncoded(dst)
	}
	return dst
}

// appendEncoded appends the node's elements in the heap encoding (each
// uvarint(length) ‖ bytes) to dst.
func (n *lnode) appendEncoded(dst []byte) []byte {
	for p := int(n.lo); p < len(n.b); {
		var e []byte
		e, p = readFwd(n.b, p)
		dst = binary.AppendUvarint(dst, uint64(len(e)))
		dst = append(dst, e...)
	}
	return dst
}

var errListEmpty = errors.New("list: an empty list")

// decodeList builds a list from its heap encoding.
func decodeList(b []byte, lim listLimit) (*list, error) {
	count, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, fmt.Errorf("list: bad element count")
	}
	if count == 0 {
		return nil, errListEmpty
	}
	if count > uint64(len(b)-k) {
		return nil, fmt.Errorf("list: %d elements in %d bytes", count, len(b)-k)
	}
	b = b[k:]
	l := newList()
	for i := uint64(0); i < count; i++ {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, fmt.Errorf("list: element %d runs past the end", i)
		}
		l.push(b[k:k+int(n)], false, lim)
		b = b[k+int(n):]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("list: %d bytes after the last element", len(b))
	}
	l.compactNodes()
	return l, nil
}

// clone is COPY's deep copy: the same elements in tight buffers.
func (l *list) clone() *list {
	cp := func(n *lnode) lnode {
		b := make([]byte, n.size(), allocSize(int64(n.size())))
		copy(b, n.b[n.lo:])
		return lnode{b: b, n: n.n}
	}
	c := &list{}
	if l.q == nil {
		c.lp = cp(&l.lp)
		return c
	}
	c.q = &quicklist{nodes: make([]*lnode, l.numNodes()), count: l.q.count}
	for i := range c.q.nodes {
		n := cp(l.node(i))
		c.q.nodes[i] = &n
	}
	c.recount()
	return c
}
