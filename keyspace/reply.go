package keyspace

import "github.com/moond-db/moond/resp"

// ReplyWriter is where Exec writes replies: the methods of *resp.Writer, so
// that the server passes its connection's writer as is. Error's message
// carries its prefix ("ERR ...", "WRONGTYPE ...").
type ReplyWriter interface {
	SimpleString(s string)
	Error(msg string)
	Int(n int64)
	Bulk(b []byte)
	BulkString(s string)
	Null()
	NullArray()
	ArrayHeader(n int)
	MapHeader(n int)
	SetHeader(n int)
	PushHeader(n int)
	Double(f float64)
	Bool(b bool)
	Verbatim(format string, b []byte)
	BigNumber(s string)
	Raw(b []byte)
	Reset()
	// Grow makes room for n more bytes of replies, for a long reply whose
	// size is known before it is written; a hint, never required.
	Grow(n int)
}

// Error replies shared by several commands, as Redis words them.
const (
	errWrongType    = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errSyntax       = "ERR syntax error"
	errNotInteger   = "ERR value is not an integer or out of range"
	errNotFloat     = "ERR value is not a valid float"
	errNoSuchKey    = "ERR no such key"
	errDBRange      = "ERR DB index is out of range"
	errSameObject   = "ERR source and destination objects are the same"
	errOverflow     = "ERR increment or decrement would overflow"
	errInvalidCur   = "ERR invalid cursor"
	errStringTooBig = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
)

func errArity(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

func errInvalidExpire(name string) string {
	return "ERR invalid expire time in '" + name + "' command"
}

// replyValue writes a string value as a bulk string.
func (ks *Keyspace) replyValue(w ReplyWriter, v value) {
	if v.isInt() {
		ks.scratch = v.appendTo(ks.scratch[:0])
		w.Bulk(ks.scratch)
		return
	}
	w.Bulk(v.bytes())
}

func replyOK(w ReplyWriter) { w.SimpleString("OK") }

// isRESP3 reports whether replies go to a RESP3 client, for the replies
// whose shape (not just their types) differs by protocol: pairs as
// two-element arrays (HRANDFIELD, ZRANGE ... WITHSCORES).
func isRESP3(w ReplyWriter) bool {
	rw, ok := w.(*resp.Writer)
	return ok && rw.Proto == 3
}
