package resp

import "bytes"

// Parser parses client requests from a byte buffer, incrementally, applying
// Redis's limits and answering malformed input with Redis's errors.
//
// A request is a multibulk command when its first byte is '*' and an inline
// command otherwise, as in Redis. The zero Parser is ready to use, with
// Redis's default limits. A Parser holds the state of one connection's
// partially received command and is not safe for concurrent use.
type Parser struct {
	// Limits bounds what the client may send; zero fields mean Redis's
	// defaults.
	Limits Limits

	// Unauthenticated applies the stricter limits Redis 7 puts on a client
	// that has not yet authenticated to a server that requires it: a
	// multibulk command of more than 10 arguments is refused with
	// "unauthenticated multibulk length" and an argument longer than 16384
	// bytes with "unauthenticated bulk length". Inline commands keep the
	// ordinary limit. Clear it once AUTH (or HELLO AUTH) succeeds.
	Unauthenticated bool

	// The multibulk command in progress. Offsets count from the start of
	// the buffer, which the caller keeps between calls, so the buffer may
	// move (grow, be copied) while a command arrives.
	left    int64  // arguments still to read; 0 when no multibulk command is open
	pos     int    // offset of the first byte not yet parsed
	bulkLen int64  // length of the argument being read; -1 until its $ line is read
	spans   []span // the arguments read so far

	// scanned counts the bytes of the current line, from its start, that
	// earlier calls searched for the line end without finding it, so that a
	// line arriving byte by byte is searched once, not once per byte.
	scanned int

	pending int      // see Pending
	args    [][]byte // returned by Parse, reused
	scratch []byte   // unescaped inline arguments, reused
}

// span locates one argument in the caller's buffer.
type span struct{ off, len int }

// Past these capacities the parser's reusable slices are dropped once the
// command that grew them is done, so that one huge command does not pin its
// memory for the life of the connection.
const (
	keepArgs    = 1024
	keepScratch = 4096
)

// Parse parses one command from the start of buf.
//
// It returns the command's arguments, the number of bytes of buf the
// command took, and an error. The arguments alias buf, or the Parser's own
// memory for inline arguments with quotes or escapes, and the slice holding
// them is reused: they are valid until the next call to Parse or Reset and
// until the caller overwrites those bytes of buf. Copy what must live longer.
//
// (nil, 0, nil) means that buf does not hold a whole command yet. The caller
// then calls Parse again with a buffer that starts with the same bytes and
// holds more; the parser remembers how far it got, so a command arriving in
// many reads is parsed once in total. [Parser.Pending] tells how many more
// bytes the argument being received needs, when its length is known.
//
// A command with no arguments, which Redis skips without a reply, is
// returned as zero arguments and n > 0: an empty or blank inline line, and a
// multibulk count of zero or less (*0, *-1). The caller drops n bytes and
// parses on.
//
// Malformed or oversized input yields a *ProtocolError with Redis's reply
// text; like Redis, the caller should send it and close the connection. The
// Parser is then reset.
func (p *Parser) Parse(buf []byte) (args [][]byte, n int, err error) {
	p.pending = 0
	if p.pos+p.scanned > len(buf) {
		// The caller broke the contract and passed a shorter buffer;
		// start over rather than index past its end.
		p.Reset()
	}
	if p.left == 0 {
		p.shrink()
		if len(buf) == 0 {
			return nil, 0, nil
		}
		if buf[0] != '*' {
			return p.parseInline(buf)
		}
		n, err := p.parseCount(buf)
		switch {
		case err != nil:
			return nil, 0, err
		case n > 0:
			return p.args[:0], n, nil // a count of zero or less
		case p.left == 0:
			return nil, 0, nil // the count line is not complete
		}
	}
	return p.parseBulks(buf)
}

// parseCount parses the *N line at the start of buf. On success with N > 0
// it opens the command (p.left = N) and returns 0; for N <= 0 it returns the
// length of the line, the whole command.
func (p *Parser) parseCount(buf []byte) (int, error) {
	lim := p.Limits.withDefaults()
	ll, i, ok := shortLine(buf, 0, lim.MaxInlineLen)
	if !ok {
		var tooLong bool
		i, tooLong = p.findLine(buf, 0, '\r', lim.MaxInlineLen)
		if i < 0 {
			if tooLong {
				p.Reset()
				return 0, &ProtocolError{Msg: msgTooBigMbulkCount}
			}
			return 0, nil
		}
		// Like Redis, take the line as ending at its CR once one more
		// byte (the LF, unchecked) has arrived.
		if i+2 > len(buf) {
			return 0, nil
		}
		ll, ok = parseInt(buf[1:i])
	}
	if !ok || ll > lim.MaxMultibulkLen {
		p.Reset()
		return 0, &ProtocolError{Msg: msgInvalidMultibulk}
	}
	if p.Unauthenticated && ll > unauthMaxMultibulkLen {
		p.Reset()
		return 0, &ProtocolError{Msg: msgUnauthMultibulk}
	}
	p.scanned = 0
	if ll <= 0 {
		return i + 2, nil
	}
	p.left, p.pos, p.bulkLen, p.spans = ll, i+2, -1, p.spans[:0]
	return 0, nil
}

// parseBulks reads the arguments of the open multibulk command.
func (p *Parser) parseBulks(buf []byte) ([][]byte, int, error) {
	lim := p.Limits.withDefaults()
	for p.left > 0 {
		if p.bulkLen < 0 {
			ll, i, ok := shortLine(buf, p.pos, lim.MaxInlineLen)
			if !ok || buf[p.pos] != '$' {
				var tooLong bool
				i, tooLong = p.findLine(buf, p.pos, '\r', lim.MaxInlineLen)
				if i < 0 {
					if tooLong {
						p.Reset()
						return nil, 0, &ProtocolError{Msg: msgTooBigBulkCount}
					}
					return nil, 0, nil
				}
				if i+2 > len(buf) {
					return nil, 0, nil
				}
				if c := buf[p.pos]; c != '$' {
					p.Reset()
					return nil, 0, errExpectedDollar(c)
				}
				ll, ok = parseInt(buf[p.pos+1 : i])
			}
			if !ok || ll < 0 || ll > lim.MaxBulkLen {
				p.Reset()
				return nil, 0, &ProtocolError{Msg: msgInvalidBulk}
			}
			if p.Unauthenticated && ll > unauthMaxBulkLen {
				p.Reset()
				return nil, 0, &ProtocolError{Msg: msgUnauthBulk}
			}
			p.pos, p.bulkLen, p.scanned = i+2, ll, 0
		}
		// The payload is followed by two bytes that Redis skips without
		// looking at them; so does this parser.
		// (Compared without adding to bulkLen, which may be near MaxInt64
		// if MaxBulkLen is.)
		if have := int64(len(buf) - p.pos); p.bulkLen > have-2 {
			p.pending = int(min(p.bulkLen-(have-2), int64(maxInt)))
			return nil, 0, nil
		}
		p.spans = append(p.spans, span{p.pos, int(p.bulkLen)})
		p.pos, p.bulkLen = p.pos+int(p.bulkLen)+2, -1
		p.left--
	}
	args := p.args[:0]
	for _, s := range p.spans {
		args = append(args, buf[s.off:s.off+s.len:s.off+s.len])
	}
	p.args = args
	n := p.pos
	p.pos, p.spans = 0, p.spans[:0]
	return args, n, nil
}

const maxInt = int(^uint(0) >> 1)

// shortLine is the fast path for the length lines that make up most of
// RESP input: a type byte at buf[start], then 1 to 9 digits without a
// leading zero, then CR and one more byte (the LF, unchecked, as Redis does
// not check it), the CR at most max bytes after start, as findLine asks.
// It returns the number and the CR's offset. Anything else
// (a sign, zero, longer numbers, a line not complete yet, malformed input)
// reports !ok and goes the general way (findLine, parseInt), which decides
// it exactly as before; so the fast path changes no answer, only the cost
// of the common one.
func shortLine(buf []byte, start, max int) (n int64, cr int, ok bool) {
	i := start + 1
	if i >= len(buf) || buf[i] < '1' || buf[i] > '9' {
		return 0, 0, false
	}
	end := min(len(buf), i+10)
	for ; i < end; i++ {
		c := buf[i]
		if c == '\r' {
			return n, i, i+1 < len(buf) && i-start <= max
		}
		if c < '0' || c > '9' {
			return 0, 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return 0, 0, false
}

// findLine returns the offset in buf of the first byte c at or after start,
// or -1. Like Redis it gives up on a line longer than max bytes: tooLong
// reports that more than max bytes follow start and none is c. Only the first
// max+1 bytes are searched, so the answer does not depend on how the input
// was split into reads.
func (p *Parser) findLine(buf []byte, start int, c byte, max int) (i int, tooLong bool) {
	end := len(buf)
	if max < end-start {
		end = start + max + 1
	}
	from := start + p.scanned
	if from < end {
		if j := bytes.IndexByte(buf[from:end], c); j >= 0 {
			p.scanned = from + j - start
			return from + j, false
		}
	}
	if end > from {
		p.scanned = end - start
	}
	return -1, len(buf)-start > max
}

// AtCommandStart reports whether the next Parse starts a new command: no
// multibulk command is open (partly received).
func (p *Parser) AtCommandStart() bool { return p.left == 0 }

// Pending reports how many bytes beyond the buffer given to the last Parse
// the command in progress needs at least: the rest of the argument being
// received and its CRLF, when that argument's length line has been read; 0
// otherwise. A connection can use it to grow its buffer once for a large
// argument instead of many times. The length comes from the client, so it is
// a claim, not a promise: grow within QueryBufferLimit, and best in steps.
func (p *Parser) Pending() int { return p.pending }

// ExceedsQueryBuffer reports whether a client that has buffered this many
// bytes of input (unconsumed input, including the command in progress) is
// over the query buffer limit. Redis then closes the connection without a
// reply, logging "Closing client that reached max query buffer length".
func (p *Parser) ExceedsQueryBuffer(buffered int) bool {
	return int64(buffered) > p.Limits.withDefaults().QueryBufferLimit
}

// Reset discards the command in progress, if any, so that the next Parse
// starts at a command boundary. Limits and Unauthenticated are kept.
func (p *Parser) Reset() {
	p.left, p.pos, p.bulkLen, p.scanned, p.pending = 0, 0, -1, 0, 0
	p.spans = p.spans[:0]
}

// shrink drops reusable slices that an unusually large command grew.
func (p *Parser) shrink() {
	if cap(p.args) > keepArgs {
		p.args = nil
	}
	if cap(p.spans) > keepArgs {
		p.spans = nil
	}
	if cap(p.scratch) > keepScratch {
		p.scratch = nil
	}
}
