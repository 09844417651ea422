package resp

import "strconv"

// Writer appends replies to Buf in the protocol the connection speaks: RESP3
// when Proto is 3, RESP2 otherwise. The RESP3 types that RESP2 lacks are
// written the way Redis writes them to a RESP2 client: maps, sets and pushes
// as arrays, doubles, verbatim strings and big numbers as bulk strings,
// booleans as the integers 1 and 0, and nulls as the null bulk string or the
// null array.
//
// A Writer allocates only when Buf must grow; Reset keeps Buf's memory for
// the next batch of replies.
type Writer struct {
	Buf   []byte
	Proto int
}

func (w *Writer) resp3() bool { return w.Proto == 3 }

// SimpleString writes a status reply such as +OK. CR and LF cannot appear in
// one: those at either end are dropped and the others become spaces.
func (w *Writer) SimpleString(s string) {
	w.line('+', s)
}

// Error writes an error reply. msg carries its error code, as in
// "ERR unknown command" or "WRONGTYPE Operation against a key holding the
// wrong kind of value"; a leading '-' is taken as part of the encoding and
// not doubled. As Redis does for formatted errors, CR and LF at either end
// of msg are dropped and the others become spaces, so that no client input
// quoted in an error can break the reply stream.
func (w *Writer) Error(msg string) {
	if len(msg) > 0 && msg[0] == '-' {
		msg = msg[1:]
	}
	w.line('-', msg)
}

// line writes a reply of one line: prefix, s made safe, CRLF.
func (w *Writer) line(prefix byte, s string) {
	for len(s) > 0 && (s[0] == '\r' || s[0] == '\n') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == '\r' || s[len(s)-1] == '\n') {
		s = s[:len(s)-1]
	}
	w.Buf = append(w.Buf, prefix)
	start := len(w.Buf)
	w.Buf = append(w.Buf, s...)
	for i := start; i < len(w.Buf); i++ {
		if c := w.Buf[i]; c == '\r' || c == '\n' {
			w.Buf[i] = ' '
		}
	}
	w.Buf = append(w.Buf, '\r', '\n')
}

// reserve extends Buf by n bytes and returns them, for the caller to fill
// in. Unless Buf must grow, it stores back only Buf's length
// (w.Buf = w.Buf[:m] writes no pointer): w.Buf = append(w.Buf, ...) stores
// the pointer every time, a write barrier each while the collector marks,
// which cost a long reply (HGETALL of 10,000 fields) a third of its time.
func (w *Writer) reserve(n int) []byte {
	l := len(w.Buf)
	if n > cap(w.Buf)-l {
		w.grow(n)
	}
	w.Buf = w.Buf[:l+n]
	return w.Buf[l : l+n : l+n]
}

// header writes a type byte, a decimal number and CRLF.
func (w *Writer) header(prefix byte, n int64) {
	if n < 0 { // a negative integer reply, or a null's -1: rare
		var tmp [24]byte
		tmp[0] = prefix
		b := strconv.AppendInt(tmp[:1], n, 10)
		b = append(b, '\r', '\n')
		copy(w.reserve(len(b)), b)
		return
	}
	d := decimalLen(int(n))
	b := w.reserve(1 + d + 2)
	b[0] = prefix
	putDecimal(b[1:1+d], uint64(n))
	b[1+d], b[2+d] = '\r', '\n'
}

// bulkHeader writes the first line of a bulk string of n bytes into b,
// which holds BulkLen(n) bytes, and returns where its bytes go.
func bulkHeader(b []byte, n int) []byte {
	d := len(b) - n - 5
	b[0] = '$'
	putDecimal(b[1:1+d], uint64(n))
	b[1+d], b[2+d] = '\r', '\n'
	b[len(b)-2], b[len(b)-1] = '\r', '\n'
	return b[3+d : len(b)-2]
}

// Int writes an integer reply.
func (w *Writer) Int(n int64) {
	w.header(':', n)
}

// Bulk writes a bulk string. A nil b is the empty string, not a null: use
// Null for that.
func (w *Writer) Bulk(b []byte) {
	copy(bulkHeader(w.reserve(BulkLen(len(b))), len(b)), b)
}

// BulkString writes s as a bulk string.
func (w *Writer) BulkString(s string) {
	copy(bulkHeader(w.reserve(BulkLen(len(s))), len(s)), s)
}

// Null writes the null reply: the null bulk string $-1 in RESP2, _ in RESP3.
func (w *Writer) Null() {
	if w.resp3() {
		w.Buf = append(w.Buf, "_\r\n"...)
		return
	}
	w.Buf = append(w.Buf, "$-1\r\n"...)
}

// NullArray writes the null reply where a RESP2 client expects an array, as
// for a timed-out BLPOP or an aborted EXEC: *-1 in RESP2, _ in RESP3.
func (w *Writer) NullArray() {
	if w.resp3() {
		w.Buf = append(w.Buf, "_\r\n"...)
		return
	}
	w.Buf = append(w.Buf, "*-1\r\n"...)
}

// ArrayHeader starts an array of n elements; the caller writes them next.
func (w *Writer) ArrayHeader(n int) {
	w.header('*', int64(n))
}

// MapHeader starts a map of n key-value pairs; the caller writes the 2n keys
// and values next, alternating. RESP2 sees an array of 2n elements.
func (w *Writer) MapHeader(n int) {
	if w.resp3() {
		w.header('%', int64(n))
		return
	}
	w.header('*', 2*int64(n))
}

// SetHeader starts a set of n elements. RESP2 sees an array.
func (w *Writer) SetHeader(n int) {
	if w.resp3() {
		w.header('~', int64(n))
		return
	}
	w.header('*', int64(n))
}

// PushHeader starts an out-of-band push message of n elements, such as a
// pub/sub message or a client-tracking invalidation. RESP2 sees an array.
func (w *Writer) PushHeader(n int) {
	if w.resp3() {
		w.header('>', int64(n))
		return
	}
	w.header('*', int64(n))
}

// Double writes a floating-point number, formatted as Redis 7.2 and later
// format it (see appendDouble): a RESP3 double, or a bulk string in RESP2.
func (w *Writer) Double(f float64) {
	var tmp [32]byte
	d := appendDouble(tmp[:0], f)
	if w.resp3() {
		w.Buf = append(w.Buf, ',')
		w.Buf = append(w.Buf, d...)
		w.Buf = append(w.Buf, '\r', '\n')
		return
	}
	w.Bulk(d)
}

// Bool writes a boolean: #t or #f in RESP3, the integer 1 or 0 in RESP2.
func (w *Writer) Bool(b bool) {
	switch {
	case w.resp3() && b:
		w.Buf = append(w.Buf, "#t\r\n"...)
	case w.resp3():
		w.Buf = append(w.Buf, "#f\r\n"...)
	case b:
		w.Buf = append(w.Buf, ":1\r\n"...)
	default:
		w.Buf = append(w.Buf, ":0\r\n"...)
	}
}

// Verbatim writes a verbatim string, text with a three-byte format such as
// "txt" or "mkd" (RESP3 =); RESP2 gets b alone as a bulk string. It panics if
// format is not three bytes long, as the protocol requires.
func (w *Writer) Verbatim(format string, b []byte) {
	if len(format) != 3 {
		panic("resp: verbatim format must be 3 bytes, got " + strconv.Quote(format))
	}
	if !w.resp3() {
		w.Bulk(b)
		return
	}
	w.header('=', int64(len(b))+4)
	w.Buf = append(w.Buf, format...)
	w.Buf = append(w.Buf, ':')
	w.Buf = append(w.Buf, b...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// BigNumber writes an integer too large for Int, given in decimal (RESP3 ();
// RESP2 gets a bulk string.
func (w *Writer) BigNumber(s string) {
	if !w.resp3() {
		w.BulkString(s)
		return
	}
	w.Buf = append(w.Buf, '(')
	w.Buf = append(w.Buf, s...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// Raw appends b, which must be whole encoded replies in the connection's
// protocol, such as a reply that another shard produced.
func (w *Writer) Raw(b []byte) {
	w.Buf = append(w.Buf, b...)
}

// Grow makes room for n more bytes in Buf, for a reply whose size is known
// before it is written (see BulkLen): one allocation of the right size
// instead of a series of growths, each copying what came before, which for
// a reply of hundreds of kilobytes allocate about five times its size and
// keep the collector busy.
func (w *Writer) Grow(n int) {
	if n > cap(w.Buf)-len(w.Buf) {
		w.grow(n)
	}
}

// grow moves Buf to an allocation with room for n more bytes, at least
// twice its capacity (so that a reply written piece by piece is copied
// O(1) times per byte). One allocation, in every build: slices.Grow's
// append of a made slice allocates twice under the race detector.
func (w *Writer) grow(n int) {
	b := make([]byte, len(w.Buf), max(len(w.Buf)+n, 2*cap(w.Buf)))
	copy(b, w.Buf)
	w.Buf = b
}

// BulkLen is the length of a bulk string of n bytes as Bulk writes it:
// type byte, length, CRLF, the bytes, CRLF.
func BulkLen(n int) int {
	return 1 + decimalLen(n) + 2 + n + 2
}

// decimalLen is the number of digits of n >= 0 in decimal.
func decimalLen(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// putDecimal writes v in decimal into b, which holds exactly its digits.
func putDecimal(b []byte, v uint64) {
	for i := len(b) - 1; i > 0; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	b[0] = byte('0' + v)
}

// Reset empties Buf, keeping its memory.
func (w *Writer) Reset() {
	w.Buf = w.Buf[:0]
}
