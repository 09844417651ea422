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
		from := len(out) - back
		for k := range l {
			out = append(out, out[from+k])
		}
	}
	if uint64(len(out)) != n {
		return nil, formatErr("LZF: %d bytes decompressed, %d expected", len(out), n)
	}
	return out, nil
}
