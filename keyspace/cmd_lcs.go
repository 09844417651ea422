package keyspace

import "math"

// lcsMatch is one range of the longest common subsequence: a[A0..A1] equals
// b[B0..B1].
type lcsMatch struct{ a0, a1, b0, b1 int64 }

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]
func cmdLCS(ks *Keyspace, c *Client, args [][]byte, w ReplyWriter) {
	// Copy each string out before the next lookup: a lookup may expire a
	// key, which moves slots.
	a, okA := ks.lcsInput(c, args[1])
	b, okB := ks.lcsInput(c, args[2])
	if !okA || !okB {
		w.Error("ERR The specified keys must contain string values")
		return
	}
	var getLen, getIdx, withMatchLen bool
	var minMatchLen int64
	for j := 3; j < len(args); j++ {
		opt := args[j]
		switch {
		case equalFold(opt, "idx"):
			getIdx = true
		case equalFold(opt, "len"):
			getLen = true
		case equalFold(opt, "withmatchlen"):
			withMatchLen = true
		case equalFold(opt, "minmatchlen") && j+1 < len(args):
			n, ok := parseInt(args[j+1])
			if !ok {
				w.Error(errNotInteger)
				return
			}
			minMatchLen = max(n, 0)
			j++
		default:
			w.Error(errSyntax)
			return
		}
	}
	if getLen && getIdx {
		w.Error("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	if len(a) >= math.MaxUint32-1 || len(b) >= math.MaxUint32-1 {
		w.Error("ERR String too long for LCS")
		return
	}
	if cells := int64(len(a)+1) * int64(len(b)+1); cells*4 > ks.MaxBulkLen {
		w.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	table := lcsTable(a, b)
	cols := len(b) + 1
	total := int64(table[len(a)*cols+len(b)])
	if getLen {
		w.Int(total)
		return
	}
	seq, matches := lcsWalk(a, b, table, getIdx, minMatchLen)
	if !getIdx {
		w.Bulk(seq)
		return
	}
	w.MapHeader(2)
	w.BulkString("matches")
	w.ArrayHeader(len(matches))
	for _, m := range matches {
		if withMatchLen {
			w.ArrayHeader(3)
		} else {
			w.ArrayHeader(2)
		}
		w.ArrayHeader(2)
		w.Int(m.a0)
		w.Int(m.a1)
		w.ArrayHeader(2)
		w.Int(m.b0)
		w.Int(m.b1)
		if withMatchLen {
			w.Int(m.a1 - m.a0 + 1)
		}
	}
	w.BulkString("len")
	w.Int(total)
}

// lcsInput returns a copy of key's string (empty if the key is missing),
// or false if the key holds another kind.
func (ks *Keyspace) lcsInput(c *Client, key []byte) ([]byte, bool) {
	sl, _ := ks.lookupRead(c, key)
	switch {
	case sl == nil:
		return nil, true
	case sl.v.kind() != KindString:
		return nil, false
	}
	return sl.v.appendTo(nil), true
}

// lcsTable is the dynamic programming table: cell (i, j), at i*(len(b)+1)+j,
// holds the length of the LCS of a[:i] and b[:j].
func lcsTable(a, b []byte) []uint32 {
	cols := len(b) + 1
	t := make([]uint32, (len(a)+1)*cols)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				t[i*cols+j] = t[(i-1)*cols+j-1] + 1
			default:
				t[i*cols+j] = max(t[(i-1)*cols+j], t[i*cols+j-1])
			}
		}
	}
	return t
}

// lcsWalk walks the table back from its last cell as Redis does, building
// the LCS string and, if wantRanges, the ranges of contiguous matches from
// the end of the strings backwards, keeping those of at least minLen bytes.
func lcsWalk(a, b []byte, t []uint32, wantRanges bool, minLen int64) ([]byte, []lcsMatch) {
	cols := len(b) + 1
	idx := int(t[len(a)*cols+len(b)])
	seq := make([]byte, idx)
	var matches []lcsMatch
	var cur lcsMatch
	open := false // cur holds a range being extended backwards
	i, j := len(a), len(b)
	for i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			seq[idx-1] = a[i-1]
			switch {
			case !open:
				cur = lcsMatch{int64(i - 1), int64(i - 1), int64(j - 1), int64(j - 1)}
				open = true
			case cur.a0 == int64(i) && cur.b0 == int64(j):
				cur.a0--
				cur.b0--
			default:
				emit = true
			}
			// A range that reached the start of either string is complete.
			if cur.a0 == 0 || cur.b0 == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if t[(i-1)*cols+j] > t[i*cols+j-1] {
				i--
			} else {
				j--
			}
			if open {
				emit = true
			}
		}
		if emit {
			if wantRanges && (minLen == 0 || cur.a1-cur.a0+1 >= minLen) {
				matches = append(matches, cur)
			}
			open = false
		}
	}
	return seq, matches
}
