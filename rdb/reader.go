package rdb

// reader walks an RDB encoding held in memory. Every read checks the bytes
// left, so a truncated or lying input ends in an error.
type reader struct {
	b   []byte
	off int
}

// left is the number of unread bytes.
func (r *reader) left() int { return len(r.b) - r.off }

// readByte reads one byte.
func (r *reader) readByte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, formatErr("truncated at byte %d", r.off)
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

// take returns the next n bytes, aliasing the input.
func (r *reader) take(n uint64) ([]byte, error) {
	if n > uint64(r.left()) {
		return nil, formatErr("%d bytes wanted at byte %d, %d left", n, r.off, r.left())
	}
	s := r.b[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return s, nil
}
