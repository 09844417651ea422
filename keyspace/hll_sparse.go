package keyspace

// The sparse HyperLogLog representation (see hll.go for its opcodes):
// reading it, converting it to dense, and raising one register in place
// the way Redis 7.0's hllSparseSet does, so that the bytes come out
// identical to Redis's for the same sequence of updates.

const (
	hllXZeroBit       = 0x40
	hllValBit         = 0x80
	hllValMaxValue    = 32
	hllValMaxLen      = 4
	hllZeroMaxLen     = 64
	hllXZeroMaxLen    = 16384
	hllSparseOpsStart = hllHdrSize
)

// sparseOp decodes the opcode at b[p]: the registers it covers, its value
// (0 for the zero runs) and its length in bytes. An XZERO cut short by
// the end of b reads a zero second byte, as Redis reads the terminator of
// its string, so that a damaged value reads the same in both servers.
func sparseOp(b []byte, p int) (span int, val uint8, oplen int) {
	op := b[p]
	switch {
	case op&0xc0 == 0: // ZERO
		return int(op&0x3f) + 1, 0, 1
	case op&hllValBit != 0: // VAL
		return int(op&0x3) + 1, op>>2&0x1f + 1, 1
	}
	var lo byte
	if p+1 < len(b) {
		lo = b[p+1]
	}
	return (int(op&0x3f)<<8 | int(lo)) + 1, 0, 2
}

func isSparseVal(op byte) bool { return op&hllValBit != 0 }

func sparseValOp(val uint8, n int) byte { return (val-1)<<2 | byte(n-1) | hllValBit }

// appendSparseZeros appends the opcode of a run of n zero registers.
func appendSparseZeros(seq []byte, n int) []byte {
	if n > hllZeroMaxLen {
		return append(seq, byte((n-1)>>8)|hllXZeroBit, byte((n-1)&0xff))
	}
	return append(seq, byte(n-1))
}

// sparseEach calls f for every run of the sparse value b (header
// included), in register order, and checks that the runs cover exactly
// the 16384 registers. A run of values past the last register is an
// error before f sees it, so that f may index registers without checks;
// zero runs only move the index.
func sparseEach(b []byte, f func(first, n int, val uint8)) error {
	idx := 0
	for p := hllSparseOpsStart; p < len(b); {
		span, val, oplen := sparseOp(b, p)
		if val != 0 && idx+span > hllRegisters {
			return errHLLInvalid
		}
		f(idx, span, val)
		idx += span
		p += oplen
	}
	if idx != hllRegisters {
		return errHLLInvalid
	}
	return nil
}

// hllToDense returns the dense form of the HyperLogLog b: b itself when
// it is dense, else a new value with b's header (cached cardinality
// included) and its registers.
func hllToDense(b []byte) ([]byte, error) {
	if b[4] == hllDense {
		return b, nil
	}
	dense := make([]byte, hllDenseSize)
	copy(dense, b[:hllHdrSize])
	dense[4] = hllDense
	r := dense[hllHdrSize:]
	err := sparseEach(b, func(first, n int, val uint8) {
		if val == 0 {
			return
		}
		for i := first; i < first+n; i++ {
			denseSet(r, i, val)
		}
	})
	if err != nil {
		return nil, err
	}
	return dense, nil
}

// sparseFind locates the opcode that covers register index: its offset
// p, the first register it covers, the offset of the opcode before it
// (-1 for none), and its span. ok is false when the opcodes end before
// index.
func sparseFind(b []byte, index int) (p, first, prev, span int, ok bool) {
	prev = -1
	for p = hllSparseOpsStart; p < len(b); {
		n, _, oplen := sparseOp(b, p)
		span = n
		if index <= first+span-1 {
			return p, first, prev, span, true
		}
		prev = p
		p += oplen
		first += span
	}
	return 0, 0, 0, 0, false
}

// hllSparseSet raises register index of the sparse HyperLogLog b to
// count if it is lower (Redis's hllSparseSet). It returns the value,
// which may have moved or become dense, and whether the register changed.
// The value turns dense when count does not fit a VAL opcode or when it
// would grow past maxBytes.
func hllSparseSet(b []byte, index int, count uint8, maxBytes int64) ([]byte, bool, error) {
	if count > hllValMaxValue {
		return hllPromote(b, index, count)
	}
	p, first, prev, span, ok := sparseFind(b, index)
	if !ok {
		return b, false, errHLLInvalid
	}
	op := b[p]
	runlen, oldval, oplen := sparseOp(b, p)
	if isSparseVal(op) {
		if oldval >= count {
			return b, false, nil
		}
		if runlen == 1 {
			b[p] = sparseValOp(count, 1)
			return hllSparseMerge(b, prev), true, nil
		}
	}
	if op&0xc0 == 0 && runlen == 1 {
		b[p] = sparseValOp(count, 1)
		return hllSparseMerge(b, prev), true, nil
	}
	// Split the run into at most three opcodes: before, ours, after.
	var seqBuf [5]byte
	seq := seqBuf[:0]
	last := first + span - 1
	if !isSparseVal(op) {
		if index != first {
			seq = appendSparseZeros(seq, index-first)
		}
		seq = append(seq, sparseValOp(count, 1))
		if index != last {
			seq = appendSparseZeros(seq, last-index)
		}
	} else {
		if index != first {
			seq = append(seq, sparseValOp(oldval, index-first))
		}
		seq = append(seq, sparseValOp(count, 1))
		if index != last {
			seq = append(seq, sparseValOp(oldval, last-index))
		}
	}
	delta := len(seq) - oplen
	if delta > 0 && int64(len(b)+delta) > maxBytes {
		return hllPromote(b, index, count)
	}
	b = spliceOpcode(b, p, oplen, seq)
	return hllSparseMerge(b, prev), true, nil
}

// spliceOpcode replaces the oplen bytes at p with seq, moving the rest.
// An XZERO cut short (p+oplen past the end) is replaced as Redis does:
// the value's length grows by the difference, which drops the last byte
// of seq.
func spliceOpcode(b []byte, p, oplen int, seq []byte) []byte {
	end := len(b)
	delta := len(seq) - oplen
	if p+oplen > end {
		return append(b[:p], seq...)[:end+delta]
	}
	if delta > 0 {
		var pad [4]byte
		b = append(b, pad[:delta]...)
	}
	copy(b[p+len(seq):], b[p+oplen:end])
	b = b[:end+delta]
	copy(b[p:], seq)
	return b
}

// hllSparseMerge joins adjacent VAL opcodes of one value whose runs fit one
// opcode, scanning up to five opcodes from prev (or the first), and marks
// the cache invalid: the end of every update of a sparse value.
func hllSparseMerge(b []byte, prev int) []byte {
	p := prev
	if p < 0 {
		p = hllSparseOpsStart
	}
	for scan := 5; p < len(b) && scan > 0; {
		scan--
		op := b[p]
		if !isSparseVal(op) {
			if op&0xc0 == hllXZeroBit {
				p += 2
			} else {
				p++
			}
			continue
		}
		if p+1 < len(b) && isSparseVal(b[p+1]) {
			v1, v2 := op>>2&0x1f, b[p+1]>>2&0x1f
			n := int(op&3) + int(b[p+1]&3) + 2
			if v1 == v2 && n <= hllValMaxLen {
				b[p+1] = sparseValOp(v1+1, n)
				copy(b[p:], b[p+1:])
				b = b[:len(b)-1]
				continue
			}
		}
		p++
	}
	hllInvalidateCache(b)
	return b
}

// hllPromote turns the sparse b dense and raises register index to
// count, which the caller knows is above it.
func hllPromote(b []byte, index int, count uint8) ([]byte, bool, error) {
	dense, err := hllToDense(b)
	if err != nil {
		return b, false, err
	}
	return dense, denseMax(dense[hllHdrSize:], index, count), nil
}
