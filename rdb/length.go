package rdb

import "encoding/binary"

// The length encoding (Redis's rdbSaveLen and rdbLoadLen). The two high
// bits of the first byte say the form:
//
//	00xxxxxx                   a length below 64
//	01xxxxxx xxxxxxxx          a length below 16384, big-endian
//	10000000 + 4 bytes         a 32-bit length, big-endian
//	10000001 + 8 bytes         a 64-bit length, big-endian
//	11xxxxxx                   not a length: a string in a special encoding
//	                           (encInt8, encInt16, encInt32, encLZF)
const (
	len6bit    = 0
	len14bit   = 1
	len32bit   = 0x80
	len64bit   = 0x81
	lenSpecial = 3
)

// The special string encodings a 11xxxxxx length byte names.
const (
	encInt8  = 0
	encInt16 = 1
	encInt32 = 2
	encLZF   = 3
)

// AppendLen appends n in the length encoding, in its shortest form.
func AppendLen(dst []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(dst, byte(n))
	case n < 1<<14:
		return append(dst, byte(n>>8)|len14bit<<6, byte(n))
	case n <= 1<<32-1:
		dst = append(dst, len32bit)
		return binary.BigEndian.AppendUint32(dst, uint32(n))
	}
	dst = append(dst, len64bit)
	return binary.BigEndian.AppendUint64(dst, n)
}

// readLen reads a length. special reports a 11xxxxxx byte, whose low six
// bits n then are: the string encoding that follows.
func (r *reader) readLen() (n uint64, special bool, err error) {
	c, err := r.readByte()
	if err != nil {
		return 0, false, err
	}
	switch c >> 6 {
	case len6bit:
		return uint64(c & 0x3f), false, nil
	case len14bit:
		c2, err := r.readByte()
		if err != nil {
			return 0, false, err
		}
		return uint64(c&0x3f)<<8 | uint64(c2), false, nil
	case lenSpecial:
		return uint64(c & 0x3f), true, nil
	}
	switch c {
	case len32bit:
		b, err := r.take(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(b)), false, nil
	case len64bit:
		b, err := r.take(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(b), false, nil
	}
	return 0, false, formatErr("bad length byte %#x", c)
}

// readCount reads the length of a collection of elements that each take
// at least min bytes, checking it against the bytes left, so that a lying
// count cannot make the caller allocate for elements that are not there.
func (r *reader) readCount(min int) (uint64, error) {
	n, special, err := r.readLen()
	if err != nil {
		return 0, err
	}
	if special {
		return 0, formatErr("an encoded string where a count belongs")
	}
	if n > uint64(r.left()/min) {
		return 0, formatErr("count %d with %d bytes left", n, r.left())
	}
	return n, nil
}
