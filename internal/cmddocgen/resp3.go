package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// value is one RESP3 reply as read from redis-server.
type value struct {
	kind  byte // the RESP3 type byte: '$', '+', ':', '*', '%', '~', '_'
	str   string
	num   int64
	elems []value // a map's keys and values alternate
}

// readValue reads one RESP3 reply.
func readValue(r *bufio.Reader) (value, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return value{}, fmt.Errorf("read reply: %w", err)
	}
	if len(line) < 3 {
		return value{}, fmt.Errorf("short reply line %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return value{kind: kind, str: body}, nil
	case '-':
		return value{}, fmt.Errorf("redis-server: %s", body)
	case '_':
		return value{kind: kind}, nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		return value{kind: kind, num: n}, err
	case '$':
		return readBulk(r, body)
	case '*', '~', '%':
		return readAggregate(r, kind, body)
	}
	return value{}, fmt.Errorf("unexpected reply type %q", kind)
}

func readBulk(r *bufio.Reader, length string) (value, error) {
	n, err := strconv.Atoi(length)
	if err != nil || n < 0 {
		return value{}, fmt.Errorf("bad bulk length %q", length)
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(r, buf); err != nil {
		return value{}, fmt.Errorf("read bulk: %w", err)
	}
	return value{kind: '$', str: string(buf[:n])}, nil
}

func readAggregate(r *bufio.Reader, kind byte, count string) (value, error) {
	n, err := strconv.Atoi(count)
	if err != nil || n < 0 {
		return value{}, fmt.Errorf("bad aggregate length %q", count)
	}
	if kind == '%' {
		n *= 2
	}
	v := value{kind: kind, elems: make([]value, n)}
	for i := range v.elems {
		if v.elems[i], err = readValue(r); err != nil {
			return value{}, err
		}
	}
	return v, nil
}

// field is the value of a map's entry named key.
func (v value) field(key string) (value, bool) {
	for i := 0; v.kind == '%' && i+1 < len(v.elems); i += 2 {
		if v.elems[i].str == key {
			return v.elems[i+1], true
		}
	}
	return value{}, false
}

// without is the map v less its entry named key.
func (v value) without(key string) value {
	out := value{kind: v.kind}
	for i := 0; i+1 < len(v.elems); i += 2 {
		if v.elems[i].str != key {
			out.elems = append(out.elems, v.elems[i], v.elems[i+1])
		}
	}
	return out
}
