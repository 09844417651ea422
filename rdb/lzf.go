package rdb

// LZF decompression (the format of Redis's lzf_c.c, which RDB uses for
// strings over 20 bytes when rdbcompression is on). The input is a
// sequence of runs, each opened by a control byte c:
//
//	c < 32          a literal: the next c+1 bytes are copied
//	c >> 5 in 1..6  a back reference of length (c>>5)+2
//	c >> 5 == 7     a back reference of length 7+next byte+2
//
// a back reference's offset is ((c&31)<<8 | the byte after the length) +
// 1 bytes back from the end of the output; it may overlap what it writes.

// lzfMaxRatio bounds the expansion of LZF: a back reference of three bytes
// writes at most 264. A claimed length beyond it is a lie, refused before
// anything is allocated.
const lzfMaxRatio = 88

// lzfDecompress decompresses in, which must decompress to exactly n bytes.
func lzfDecompress(in []byte, n uint64) ([]byte, error) {
	if n > uint64(len(in))*lzfMaxRatio {
		return nil, formatErr("LZF: %d bytes cannot come from %d", n, len(in))
	}
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		c := int(in[i])
		i++
		if c < 32 {
			l := c + 1
			if l > len(in)-i || uint64(len(out)+l) > n {
				return nil, formatErr("LZF: literal runs past the end")
			}
			out = append(out, in[i:i+l]...)
			i += l
			continue
		}
		l := c >> 5
		if l == 7 {
			if i >= len(in) {
				return nil, formatErr("LZF: truncated back reference")
			}
			l += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, formatErr("LZF: truncated back reference")
		}
		back := ((c&31)<<8 | int(in[i])) + 1
		i++
		l += 2
		if back > len(out) || uint64(len(out)+l) > n {
			return nil, formatErr("LZF: back reference out of range")
		}
		// The reference may overlap what it writes (back < l: a run of
		// period back). Copying whole periods keeps the source's phase:
		// each copy reads from the reference's start as many bytes as
		// are written so far (a multiple of back), so the runs double.
		from, start := len(out)-back, len(out)
		out = out[:start+l]
		for k := 0; k < l; {
			k += copy(out[start+k:], out[from:start+k])
		}
	}
	if uint64(len(out)) != n {
		return nil, formatErr("LZF: %d bytes decompressed, %d expected", len(out), n)
	}
	return out, nil
}

// lzfHashBits sizes lzfCompress's table of recent positions.
const lzfHashBits = 13

// lzfCompress compresses in into at most max bytes, greedily: at each
// position, the longest match (up to 264 bytes, at most 8192 back) with
// the last position whose three bytes hashed alike, else a literal. It
// returns nil when the output would not fit in max (Redis then stores the
// string as it is).
func lzfCompress(in []byte, max int) []byte {
	// The table of the last position+1 of each hash: as large as the
	// input up to 2^lzfHashBits, so that a short string costs little.
	bits := lzfHashBits
	for bits > 4 && 1<<(bits-1) >= len(in) {
		bits--
	}
	table := make([]int32, 1<<bits)
	out := make([]byte, 0, max)
	lit := 0 // start of the pending literal bytes
	// flush appends in[lit:end] as literal runs of at most 32 bytes.
	flush := func(end int) bool {
		for lit < end {
			n := min(end-lit, 32)
			if len(out)+1+n > max {
				return false
			}
			out = append(out, byte(n-1))
			out = append(out, in[lit:lit+n]...)
			lit += n
		}
		return true
	}
	for i := 0; i+2 < len(in); {
		h := (uint32(in[i])<<16 | uint32(in[i+1])<<8 | uint32(in[i+2])) * 2654435761 >> (32 - bits)
		ref := int(table[h]) - 1
		table[h] = int32(i + 1)
		if ref < 0 || i-ref > 8192 || in[ref] != in[i] || in[ref+1] != in[i+1] || in[ref+2] != in[i+2] {
			i++
			continue
		}
		l, maxl := 3, min(len(in)-i, 264)
		for l < maxl && in[ref+l] == in[i+l] {
			l++
		}
		if !flush(i) {
			return nil
		}
		off, code := i-ref-1, l-2
		if code < 7 {
			out = append(out, byte(code<<5|off>>8), byte(off))
		} else {
			out = append(out, byte(7<<5|off>>8), byte(code-7), byte(off))
		}
		if len(out) > max {
			return nil
		}
		i += l
		lit = i
	}
	if !flush(len(in)) {
		return nil
	}
	return out
}
