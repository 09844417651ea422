package resp

import "bytes"

// parseInline parses an inline command: one line, ended by LF or CRLF, split
// into arguments the way Redis's sdssplitargs splits it.
func (p *Parser) parseInline(buf []byte) ([][]byte, int, error) {
	lim := p.Limits.withDefaults()
	i, tooLong := p.findLine(buf, 0, '\n', lim.MaxInlineLen)
	if i < 0 {
		if tooLong {
			p.Reset()
			return nil, 0, &ProtocolError{Msg: msgTooBigInline}
		}
		return nil, 0, nil
	}
	p.scanned = 0
	line := buf[:i]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	// Redis splits the line as a C string: a NUL byte ends it.
	if z := bytes.IndexByte(line, 0); z >= 0 {
		line = line[:z]
	}
	args, ok := p.splitArgs(line)
	p.args = args
	if !ok {
		p.Reset()
		return nil, 0, &ProtocolError{Msg: msgUnbalancedQuotes}
	}
	return args, i + 1, nil
}

// splitArgs splits an inline line into arguments with the rules of Redis's
// sdssplitargs, which redis-cli's quoting is written for:
//
//   - Arguments are separated by blanks (space, \t, \n, \v, \f, \r); an
//     unquoted argument ends at a space, \t, \n or \r.
//   - "double quotes" take the escapes \xHH (two hex digits), \n, \r, \t,
//     \b, \a, and \ before any other byte stands for that byte.
//   - 'single quotes' take no escapes but \'.
//   - Quotes may start in the middle of an argument (a"b c" is `ab c`), but
//     a closing quote must be followed by a blank or the end of the line.
//
// An unterminated quote, or a closing quote followed by something else, makes
// the line unbalanced: ok is false. Arguments without quotes alias line; the
// others are unescaped into p.scratch. args reuses p.args's memory.
func (p *Parser) splitArgs(line []byte) (args [][]byte, ok bool) {
	args = p.args[:0]
	// An unescaped argument is never longer than its source, so scratch
	// with room for the whole line never grows while arguments point
	// into it.
	if cap(p.scratch) < len(line) {
		p.scratch = make([]byte, 0, len(line))
	}
	out := p.scratch[:0]
	// at returns the byte at i, or 0 past the end, as C's terminating NUL.
	at := func(i int) byte {
		if i < len(line) {
			return line[i]
		}
		return 0
	}
	i := 0
	for {
		for i < len(line) && isBlank(line[i]) {
			i++
		}
		if i == len(line) {
			return args, true
		}
		// Fast path: an argument without quotes is a slice of line.
		start := i
		for i < len(line) && !endsWord(line[i]) && line[i] != '"' && line[i] != '\'' {
			i++
		}
		if i == len(line) || endsWord(line[i]) {
			args = append(args, line[start:i:i])
			continue
		}
		// Slow path: copy what was scanned, then unquote.
		o := len(out)
		out = append(out, line[start:i]...)
		inq, insq := false, false
	word:
		for {
			c := at(i)
			switch {
			case inq:
				switch {
				case c == '\\' && at(i+1) == 'x' && isHex(at(i+2)) && isHex(at(i+3)):
					out = append(out, unhex(at(i+2))<<4|unhex(at(i+3)))
					i += 4
				case c == '\\' && at(i+1) != 0:
					out = append(out, unescape(at(i+1)))
					i += 2
				case c == '"':
					if n := at(i + 1); n != 0 && !isBlank(n) {
						return args, false
					}
					i++
					break word
				case c == 0:
					return args, false
				default:
					out = append(out, c)
					i++
				}
			case insq:
				switch {
				case c == '\\' && at(i+1) == '\'':
					out = append(out, '\'')
					i += 2
				case c == '\'':
					if n := at(i + 1); n != 0 && !isBlank(n) {
						return args, false
					}
					i++
					break word
				case c == 0:
					return args, false
				default:
					out = append(out, c)
					i++
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					break word
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					out = append(out, c)
				}
				i++
			}
		}
		args = append(args, out[o:len(out):len(out)])
	}
}

// isBlank reports whether C's isspace is true of c.
func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// endsWord reports whether c ends an unquoted argument. \v and \f do not,
// though they are skipped between arguments: Redis's rule, kept as is.
func endsWord(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// unescape returns the byte that a backslash escape in double quotes stands for.
func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

// SplitArgs splits a line into arguments by the rules of Redis's inline
// commands (sdssplitargs), which redis.conf files follow too. ok is false
// for unbalanced quotes. The arguments are fresh copies.
func SplitArgs(line []byte) (args []string, ok bool) {
	var p Parser
	raw, ok := p.splitArgs(line)
	if !ok {
		return nil, false
	}
	args = make([]string, len(raw))
	for i, a := range raw {
		args[i] = string(a)
	}
	return args, true
}
