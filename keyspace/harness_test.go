package keyspace

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/moond-db/moond/resp"
)

// The server's reply writer must satisfy the interface Exec takes.
var _ ReplyWriter = (*resp.Writer)(nil)

// startClock is the fake clock's initial reading: 2023-11-14, in unix ms.
const startClock = 1_700_000_000_000

// harness runs commands against a keyspace with a fake clock and returns
// their replies in a compact form:
//
//	OK                      simple string
//	(error) ERR ...         error
//	(integer) 5             integer
//	"text"                  bulk string, Go-quoted
//	(nil)                   null bulk string, null array or RESP3 null
//	[a b c]                 array (RESP3 maps and sets too)
type harness struct {
	t       testing.TB
	ks      *Keyspace
	c       Client
	clock   int64
	w       resp.Writer
	records []record // the journal, when recording
}

type record struct {
	db   int
	args []string
}

func newHarness(t testing.TB) *harness {
	h := &harness{t: t, clock: startClock}
	h.ks = NewKeyspace(16, func() int64 { return h.clock })
	return h
}

// recordJournal makes the harness keep every journal record.
func (h *harness) recordJournal() {
	setJournal(h.ks, func(db int, args [][]byte) {
		r := record{db: db}
		for _, a := range args {
			r.args = append(r.args, string(a))
		}
		h.records = append(h.records, r)
	})
}

// do runs one command given as separate arguments.
func (h *harness) do(args ...string) string {
	h.t.Helper()
	bargs := make([][]byte, len(args))
	for i, a := range args {
		bargs[i] = []byte(a)
	}
	h.w.Reset()
	h.ks.Exec(&h.c, bargs, &h.w)
	s, rest, err := decodeReply(h.w.Buf)
	if err != nil || len(rest) != 0 {
		h.t.Fatalf("%q: bad reply %q (%v)", args, h.w.Buf, err)
	}
	return s
}

// run runs a command line split on white space.
func (h *harness) run(line string) string {
	h.t.Helper()
	return h.do(strings.Fields(line)...)
}

// expect runs a command line and checks its reply.
func (h *harness) expect(line, want string) {
	h.t.Helper()
	if got := h.run(line); got != want {
		h.t.Errorf("%s\n got: %s\nwant: %s", line, got, want)
	}
}

// expectArgs runs a command given as arguments and checks its reply.
func (h *harness) expectArgs(want string, args ...string) {
	h.t.Helper()
	if got := h.do(args...); got != want {
		h.t.Errorf("%q\n got: %s\nwant: %s", args, got, want)
	}
}

// script runs pairs of command line and expected reply.
func (h *harness) script(pairs ...string) {
	h.t.Helper()
	if len(pairs)%2 != 0 {
		h.t.Fatal("script needs pairs")
	}
	for i := 0; i < len(pairs); i += 2 {
		h.expect(pairs[i], pairs[i+1])
	}
}

func (h *harness) advance(ms int64) { h.clock += ms }

func (h *harness) selectDB(n int) { h.c.DB = n }

// decodeReply decodes one RESP2 or RESP3 reply.
func decodeReply(b []byte) (string, []byte, error) {
	if len(b) == 0 {
		return "", nil, fmt.Errorf("empty")
	}
	i := strings.Index(string(b), "\r\n")
	if i < 0 {
		return "", nil, fmt.Errorf("no CRLF")
	}
	line, rest := string(b[1:i]), b[i+2:]
	switch b[0] {
	case '+':
		return line, rest, nil
	case '-':
		return "(error) " + line, rest, nil
	case ':':
		return "(integer) " + line, rest, nil
	case '_':
		return "(nil)", rest, nil
	case ',':
		return "(double) " + line, rest, nil
	case '$':
		n, err := strconv.Atoi(line)
		if err != nil {
			return "", nil, err
		}
		if n < 0 {
			return "(nil)", rest, nil
		}
		if len(rest) < n+2 {
			return "", nil, fmt.Errorf("short bulk")
		}
		return strconv.Quote(string(rest[:n])), rest[n+2:], nil
	case '*', '%', '~':
		n, err := strconv.Atoi(line)
		if err != nil {
			return "", nil, err
		}
		if n < 0 {
			return "(nil)", rest, nil
		}
		if b[0] == '%' {
			n *= 2
		}
		elems := make([]string, n)
		for j := range elems {
			if elems[j], rest, err = decodeReply(rest); err != nil {
				return "", nil, err
			}
		}
		return "[" + strings.Join(elems, " ") + "]", rest, nil
	}
	return "", nil, fmt.Errorf("unknown type %q", b[0])
}

// q quotes a bulk string as decodeReply shows it.
func q(s string) string { return strconv.Quote(s) }

// n shows an integer reply as decodeReply does.
func n(i int64) string { return "(integer) " + strconv.FormatInt(i, 10) }
