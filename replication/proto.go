package replication

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ErrProtocol is wrapped by every error of a malformed stream from the
// master (or reply from the local server).
var ErrProtocol = errors.New("replication: protocol error")

// Limits on what one command of the master's stream may hold: Redis's
// proto-max-bulk-len and a generous bound on the argument count.
const (
	maxArgs    = 1 << 20
	maxBulkLen = 512 << 20
	maxLine    = 64 << 10
)

// readLine reads a line ending in CRLF and returns it without the CRLF.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		line = append(line, part...)
		if err == nil {
			break
		}
		if err != bufio.ErrBufferFull {
			return nil, err
		}
		if len(line) > maxLine {
			return nil, fmt.Errorf("%w: a line longer than %d bytes", ErrProtocol, maxLine)
		}
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("%w: a line not ending in CRLF: %q", ErrProtocol, clip(line))
	}
	return line[:len(line)-2], nil
}

// clip shortens b for an error message.
func clip(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// readNumber reads a line that is prefix followed by an integer in
// [min, max].
func readNumber(r *bufio.Reader, prefix byte, lo, hi int64) (int64, []byte, error) {
	line, err := readLine(r)
	if err != nil {
		return 0, nil, err
	}
	if len(line) < 2 || line[0] != prefix {
		return 0, nil, fmt.Errorf("%w: expected '%c', got %q", ErrProtocol, prefix, clip(line))
	}
	n, err := strconv.ParseInt(string(line[1:]), 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, nil, fmt.Errorf("%w: bad count %q", ErrProtocol, clip(line))
	}
	return n, line, nil
}

// command is one command of the master's stream: its bytes as they came
// (forwarded as they are) and its arguments, which alias raw.
type command struct {
	raw  []byte
	args [][]byte
}

// readCommand reads one multibulk command. The master sends nothing else
// in its stream; anything else is a protocol error.
func readCommand(r *bufio.Reader) (*command, error) {
	n, line, err := readNumber(r, '*', 1, maxArgs)
	if err != nil {
		return nil, err
	}
	raw := append(append(make([]byte, 0, 64), line...), '\r', '\n')
	spans := make([][2]int, 0, n)
	for range n {
		l, line, err := readNumber(r, '$', 0, maxBulkLen)
		if err != nil {
			return nil, err
		}
		raw = append(append(raw, line...), '\r', '\n')
		start := len(raw)
		if raw, err = readFull(r, raw, int(l)+2); err != nil {
			return nil, err
		}
		if raw[len(raw)-2] != '\r' || raw[len(raw)-1] != '\n' {
			return nil, fmt.Errorf("%w: a bulk string not followed by CRLF", ErrProtocol)
		}
		spans = append(spans, [2]int{start, start + int(l)})
	}
	c := &command{raw: raw, args: make([][]byte, len(spans))}
	for i, s := range spans {
		c.args[i] = raw[s[0]:s[1]]
	}
	return c, nil
}

// readFull appends n bytes from r to dst, in chunks, so that a lying
// length costs only the memory of the bytes that really come.
func readFull(r io.Reader, dst []byte, n int) ([]byte, error) {
	const chunk = 1 << 20
	for n > 0 {
		m := min(n, chunk)
		start := len(dst)
		dst = append(dst, make([]byte, m)...)
		if _, err := io.ReadFull(r, dst[start:]); err != nil {
			return nil, err
		}
		n -= m
	}
	return dst, nil
}

// readReply reads one RESP2 reply and returns the error's text when it is
// an error reply, or an array holding one ("" otherwise).
func readReply(r *bufio.Reader) (string, error) {
	line, err := readLine(r)
	if err != nil {
		return "", err
	}
	if len(line) == 0 {
		return "", fmt.Errorf("%w: an empty reply line", ErrProtocol)
	}
	switch line[0] {
	case '+', ':':
		return "", nil
	case '-':
		return string(line[1:]), nil
	case '$':
		n, err := strconv.Atoi(string(line[1:]))
		if err != nil || n < -1 {
			return "", fmt.Errorf("%w: bad bulk length %q", ErrProtocol, clip(line))
		}
		if n >= 0 {
			_, err = r.Discard(n + 2)
		}
		return "", err
	case '*':
		n, err := strconv.Atoi(string(line[1:]))
		if err != nil || n < -1 {
			return "", fmt.Errorf("%w: bad array length %q", ErrProtocol, clip(line))
		}
		first := "" // an EXEC's reply holds the errors of its commands
		for range n {
			msg, err := readReply(r)
			if err != nil {
				return "", err
			}
			if first == "" {
				first = msg
			}
		}
		return first, nil
	}
	return "", fmt.Errorf("%w: unexpected reply %q", ErrProtocol, clip(line))
}

// ReadCommand reads one multibulk command from r (what a replica sends
// its master: REPLCONF ACK) and returns its arguments.
func ReadCommand(r *bufio.Reader) ([][]byte, error) {
	c, err := readCommand(r)
	if err != nil {
		return nil, err
	}
	return c.args, nil
}
