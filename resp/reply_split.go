package resp

import "bytes"

// NextReply returns the length of the first complete reply in buf, of any
// RESP2 or RESP3 type, aggregates with all their elements included, or 0 if
// buf ends before that reply does. An attribute (RESP3 |) is framed together
// with the reply it annotates. Streamed strings and aggregates ($?, *?),
// which Redis never sends, are reported as malformed.
//
// It is meant for replies this package's Writer produced, such as the reply
// buffer of a shard that executed part of a multi-key command: it checks
// framing (type bytes, lengths, CRLFs), not the content of simple replies
// beyond what framing needs. The error, if any, is ErrMalformedReply.
func NextReply(buf []byte) (n int, err error) {
	pos := 0
	// need counts the replies still to be read: the first, plus the
	// elements of every aggregate opened so far. Walking the replies in
	// order with this counter handles any nesting without recursion.
	for need := int64(1); need > 0; need-- {
		if pos == len(buf) {
			return 0, nil
		}
		t := buf[pos]
		switch t {
		case '+', '-', ':', '_', ',', '#', '(', '$', '!', '=', '*', '~', '>', '%', '|':
		default:
			return 0, ErrMalformedReply
		}
		end := bytes.IndexByte(buf[pos+1:], '\r')
		if end < 0 || pos+1+end+1 >= len(buf) {
			return 0, nil
		}
		end += pos + 1
		if buf[end+1] != '\n' {
			return 0, ErrMalformedReply
		}
		line := buf[pos+1 : end]
		pos = end + 2
		switch t {
		case '+', '-', ',', '(':
			// A line, taken as is.
		case ':':
			if _, ok := parseInt(line); !ok {
				return 0, ErrMalformedReply
			}
		case '_':
			if len(line) != 0 {
				return 0, ErrMalformedReply
			}
		case '#':
			if len(line) != 1 || line[0] != 't' && line[0] != 'f' {
				return 0, ErrMalformedReply
			}
		case '$', '!', '=':
			l, ok := parseInt(line)
			if ok && l == -1 && t == '$' {
				break // the RESP2 null bulk string
			}
			if !ok || l < 0 {
				return 0, ErrMalformedReply
			}
			if l > int64(len(buf)-pos)-2 { // not l+2 >, which can overflow
				return 0, nil
			}
			pos += int(l)
			if buf[pos] != '\r' || buf[pos+1] != '\n' {
				return 0, ErrMalformedReply
			}
			pos += 2
		case '*', '~', '>', '%', '|':
			c, ok := parseInt(line)
			if ok && c == -1 && t == '*' {
				break // the RESP2 null array
			}
			if !ok || c < 0 {
				return 0, ErrMalformedReply
			}
			if c > int64(len(buf)) {
				return 0, nil // cannot fit; also keeps need from overflowing
			}
			switch t {
			case '%':
				c *= 2
			case '|':
				// The attribute's pairs, then the reply it annotates,
				// which this iteration's need-- does not account for.
				c = 2*c + 1
			}
			need += c
			// The replies still to read (this one done) take at least
			// 3 bytes each, as "_\r\n" does; if they cannot fit, the
			// reply is incomplete. This also keeps need bounded.
			if need-1 > int64(len(buf)-pos)/3 {
				return 0, nil
			}
		}
	}
	return pos, nil
}

// SplitArray returns the elements of reply, which must be exactly one
// array, set, push or map reply (a map yields its keys and values,
// alternating). Each element is a whole encoded reply, a subslice of reply
// capped at its own end. A null array has no elements: SplitArray returns
// nil and no error. The error, if any, is ErrMalformedReply.
func SplitArray(reply []byte) (elems [][]byte, err error) {
	n, err := NextReply(reply)
	if err != nil {
		return nil, err
	}
	if n == 0 || n != len(reply) {
		// Incomplete, or more than one reply.
		return nil, ErrMalformedReply
	}
	switch reply[0] {
	case '*', '~', '>', '%':
	default:
		return nil, ErrMalformedReply
	}
	end := bytes.IndexByte(reply, '\r')
	c, _ := parseInt(reply[1:end]) // NextReply validated it
	if c < 0 {
		return nil, nil // *-1
	}
	if reply[0] == '%' {
		c *= 2
	}
	elems = make([][]byte, 0, c)
	pos := end + 2
	for range c {
		m, _ := NextReply(reply[pos:])
		elems = append(elems, reply[pos:pos+m:pos+m])
		pos += m
	}
	return elems, nil
}
