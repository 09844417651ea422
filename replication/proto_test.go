package replication

import (
	"bufio"
	"errors"
	"strings"
	"testing"
)

func reader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

// TestReadCommand reads a command as it came, and its arguments.
func TestReadCommand(t *testing.T) {
	in := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n*1\r\n$4\r\nPING\r\n"
	r := reader(in)
	c, err := readCommand(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(c.raw) != in[:len(in)-14] || len(c.args) != 3 || string(c.args[0]) != "SET" || string(c.args[1]) != "k" || len(c.args[2]) != 0 {
		t.Fatalf("got %q %q", c.raw, c.args)
	}
	if c, err = readCommand(r); err != nil || string(c.args[0]) != "PING" {
		t.Fatalf("second command: %v %v", c, err)
	}
}

// TestReadCommandMalformed: what a master must not send is ErrProtocol (or
// the end of the stream), never a panic, and a lying length allocates
// nothing big.
func TestReadCommandMalformed(t *testing.T) {
	for _, in := range []string{
		"PING\r\n", "%garbage\r\n", "*0\r\n", "*-1\r\n", "*x\r\n", "*2000000\r\n",
		"*1\r\n+OK\r\n", "*1\r\n$-1\r\n", "*1\r\n$999999999\r\n", "*1\r\n$3\r\nSETX\r\n", "*1\r\n$3\nSET\r\n",
		"*1\r\n$3\r\nSE", "*1\r\n$2147483648\r\n",
	} {
		_, err := readCommand(reader(in))
		if err == nil {
			t.Errorf("%q: no error", in)
			continue
		}
		if !errors.Is(err, ErrProtocol) && !strings.Contains(err.Error(), "EOF") {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// TestReadReply reads replies of every RESP2 kind, nested, and returns
// the text of an error reply, or of the first error in an array.
func TestReadReply(t *testing.T) {
	r := reader("+OK\r\n:1\r\n$-1\r\n$3\r\nabc\r\n*2\r\n*1\r\n:1\r\n$1\r\nx\r\n-ERR bad\r\n*2\r\n+OK\r\n-WRONGTYPE x\r\n")
	for i, want := range []string{"", "", "", "", "", "ERR bad", "WRONGTYPE x"} {
		got, err := readReply(r)
		if err != nil || got != want {
			t.Fatalf("reply %d: %q %v, want %q", i, got, err, want)
		}
	}
	if _, err := readReply(reader("?\r\n")); !errors.Is(err, ErrProtocol) {
		t.Fatalf("an unknown reply: %v", err)
	}
}
