package resp

import "errors"

// ProtocolError is a request that breaks the protocol or its limits. Msg is
// the error reply Redis sends for it, letter for letter, with its "ERR"
// prefix, e.g. "ERR Protocol error: invalid bulk length". Like Redis, the
// server should send Msg as an error reply and then close the connection:
// after a protocol error the rest of the input cannot be framed.
type ProtocolError struct {
	Msg string
}

func (e *ProtocolError) Error() string { return e.Msg }

// The texts of Redis's protocol errors (networking.c).
const (
	msgTooBigInline     = "ERR Protocol error: too big inline request"
	msgUnbalancedQuotes = "ERR Protocol error: unbalanced quotes in request"
	msgTooBigMbulkCount = "ERR Protocol error: too big mbulk count string"
	msgTooBigBulkCount  = "ERR Protocol error: too big bulk count string"
	msgInvalidMultibulk = "ERR Protocol error: invalid multibulk length"
	msgUnauthMultibulk  = "ERR Protocol error: unauthenticated multibulk length"
	msgInvalidBulk      = "ERR Protocol error: invalid bulk length"
	msgUnauthBulk       = "ERR Protocol error: unauthenticated bulk length"
	msgExpectedDollar   = "ERR Protocol error: expected '$', got '"
)

// errExpectedDollar reports a multibulk argument that does not start with
// '$'. Redis formats the byte with printf's %c and then replaces CR and LF
// in the message by spaces; a NUL byte ends the C string, so the message
// stops right after the opening quote.
func errExpectedDollar(c byte) *ProtocolError {
	switch c {
	case 0:
		return &ProtocolError{Msg: msgExpectedDollar}
	case '\r', '\n':
		c = ' '
	}
	return &ProtocolError{Msg: msgExpectedDollar + string([]byte{c}) + "'"}
}

// ErrMalformedReply is returned by [NextReply] and [SplitArray] for bytes
// that are not a well-formed RESP2/RESP3 reply.
var ErrMalformedReply = errors.New("resp: malformed reply")
