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
// set or sorted set in its table form. Each chunk holds its members'
// entries in the kind's own heap encoding.

var hashChunked = &chunkedKind{
	table: func(p unsafe.Pointer) (**chunkTrack, uint, bool) {
		if !hashIsTable(p) {
			return nil, 0, false
		}
		t := (*hashTable)(p)
		return &t.ck, t.d.level, true
	},
	prefix: func(p unsafe.Pointer, dst []byte) []byte {
		return binary.AppendUvarint(dst, uint64(hashLen(p)))
	},
	appendChunk: func(p unsafe.Pointer, i, mask uint64, dst []byte) []byte {
		eachInChunk(&(*hashTable)(p).d, i, mask, func(sl *slot[uint64]) {
			f, v := sl.keyBytes(), pairValue(sl)
			dst = binary.AppendUvarint(dst, uint64(len(f)))
			dst = append(dst, f...)
			dst = binary.AppendUvarint(dst, uint64(len(v)))
			dst = append(dst, v...)
		})
		return dst
	},
}

var setChunked = &chunkedKind{
	table: func(p unsafe.Pointer) (**chunkTrack, uint, bool) {
		if setEnc(p) != setEncHash {
			return nil, 0, false
		}
		t := setTab(p)
		return &t.ck, t.d.level, true
	},
	prefix: func(p unsafe.Pointer, dst []byte) []byte {
		dst = append(dst, setCodecStrings)
		return binary.AppendUvarint(dst, uint64(setCard(p)))
	},
	appendChunk: func(p unsafe.Pointer, i, mask uint64, dst []byte) []byte {
		eachInChunk(&setTab(p).d, i, mask, func(sl *slot[struct{}]) {
			m := sl.keyBytes()
			dst = binary.AppendUvarint(dst, uint64(len(m)))
			dst = append(dst, m...)
		})
		return dst
	},
}

var zsetChunked = &chunkedKind{
	table: func(p unsafe.Pointer) (**chunkTrack, uint, bool) {
		sk := (*zset)(p).sk
		if sk == nil {
			return nil, 0, false
		}
		return &sk.ck, sk.dict.level, true
	},
	prefix: func(p unsafe.Pointer, dst []byte) []byte {
		return binary.AppendUvarint(dst, uint64((*zset)(p).card()))
	},
	appendChunk: func(p unsafe.Pointer, i, mask uint64, dst []byte) []byte {
		eachInChunk(&(*zset)(p).sk.dict, i, mask, func(sl *slot[*zslNode]) {
			dst = appendZEntry(dst, sl.keyBytes(), sl.v.score)
		})
		return dst
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
