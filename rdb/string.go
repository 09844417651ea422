package rdb

import (
	"encoding/binary"
	"math"
	"strconv"
)

// Strings (Redis's rdbSaveRawString and rdbGenericLoadStringObject). A
// string is a length and its bytes, or, after a 11xxxxxx length byte, an
// integer of one, two or four bytes little-endian (encInt8/16/32) standing
// for its decimal form, or an LZF-compressed string: the compressed and
// the decompressed lengths, then the compressed bytes.

// AppendString appends s in the string encoding, as Redis's
// rdbSaveRawString with rdbcompression on: a string of at most 11 bytes
// that is the canonical decimal of an integer in int32's range as that
// integer; a string over 20 bytes LZF-compressed when that saves at least
// 4 bytes; any other as its bytes.
func AppendString(dst []byte, s []byte) []byte {
	if len(s) <= 11 {
		if n, ok := canonicalInt(s); ok {
			if b, ok := appendIntEncoding(dst, n); ok {
				return b
			}
		}
	}
	if len(s) > 20 {
		if c := lzfCompress(s, len(s)-4); c != nil {
			dst = append(dst, lenSpecial<<6|encLZF)
			dst = AppendLen(dst, uint64(len(c)))
			dst = AppendLen(dst, uint64(len(s)))
			return append(dst, c...)
		}
	}
	dst = AppendLen(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendInt appends the string encoding of the decimal form of n (Redis's
// rdbSaveLongLongAsStringObject).
func AppendInt(dst []byte, n int64) []byte {
	if b, ok := appendIntEncoding(dst, n); ok {
		return b
	}
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], n, 10)
	dst = AppendLen(dst, uint64(len(s)))
	return append(dst, s...)
}

// appendIntEncoding appends n in the shortest integer encoding, if one
// holds it.
func appendIntEncoding(dst []byte, n int64) ([]byte, bool) {
	switch {
	case n >= math.MinInt8 && n <= math.MaxInt8:
		return append(dst, lenSpecial<<6|encInt8, byte(n)), true
	case n >= math.MinInt16 && n <= math.MaxInt16:
		dst = append(dst, lenSpecial<<6|encInt16)
		return binary.LittleEndian.AppendUint16(dst, uint16(n)), true
	case n >= math.MinInt32 && n <= math.MaxInt32:
		dst = append(dst, lenSpecial<<6|encInt32)
		return binary.LittleEndian.AppendUint32(dst, uint32(n)), true
	}
	return dst, false
}

// canonicalInt reports whether s is the canonical decimal of an int64: no
// sign on zero, no leading zeros, no '+', no spaces (Redis's string2ll
// followed by the round trip rdbTryIntegerEncoding checks).
func canonicalInt(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil {
		return 0, false
	}
	var buf [20]byte
	return n, string(strconv.AppendInt(buf[:0], n, 10)) == string(s)
}

// readString reads a string in any of its encodings. A raw string aliases
// the input; the others are new.
func (r *reader) readString() ([]byte, error) {
	n, special, err := r.readLen()
	if err != nil {
		return nil, err
	}
	if !special {
		return r.take(n)
	}
	switch n {
	case encInt8:
		c, err := r.readByte()
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int8(c)), 10), nil
	case encInt16:
		b, err := r.take(2)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int16(binary.LittleEndian.Uint16(b))), 10), nil
	case encInt32:
		b, err := r.take(4)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int32(binary.LittleEndian.Uint32(b))), 10), nil
	case encLZF:
		clen, cs, err := r.readLen()
		if err != nil {
			return nil, err
		}
		ulen, us, err := r.readLen()
		if err != nil {
			return nil, err
		}
		if cs || us {
			return nil, formatErr("LZF string with an encoded length")
		}
		in, err := r.take(clen)
		if err != nil {
			return nil, err
		}
		return lzfDecompress(in, ulen)
	}
	return nil, formatErr("unknown string encoding %d", n)
}

// AppendBinaryDouble appends f as RDB_TYPE_ZSET_2 stores a score: eight
// bytes, IEEE 754, little-endian.
func AppendBinaryDouble(dst []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
}

// readBinaryDouble reads a score of RDB_TYPE_ZSET_2.
func (r *reader) readBinaryDouble() (float64, error) {
	b, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

// readDecimalDouble reads a score of the older RDB_TYPE_ZSET (Redis's
// rdbLoadDoubleValue): a length byte, 253 for NaN, 254 for +inf, 255 for
// -inf, else that many bytes of decimal.
func (r *reader) readDecimalDouble() (float64, error) {
	c, err := r.readByte()
	if err != nil {
		return 0, err
	}
	switch c {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	b, err := r.take(uint64(c))
	if err != nil {
		return 0, err
	}
	return parseScore(b)
}

// parseScore parses a score written as text (strtod's job in Redis).
func parseScore(b []byte) (float64, error) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, formatErr("bad score %q", b)
		}
	}
	return f, nil
}

// DecodeString decodes the RDB string (any encoding) at the start of b and
// returns it and the bytes after it; an RDB file's keys are such strings.
func DecodeString(b []byte) ([]byte, []byte, error) {
	r := &reader{b: b}
	s, err := r.readString()
	if err != nil {
		return nil, nil, err
	}
	return s, b[r.off:], nil
}
