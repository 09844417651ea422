package wal

import (
	"bytes"
	"errors"
	"testing"
)

func TestCommandRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte{0, 1, 2, 0xff}, 1000)
	cases := []struct {
		db   int
		args [][]byte
	}{
		{0, [][]byte{[]byte("PING")}},
		{15, [][]byte{[]byte("SET"), []byte("k"), []byte("v"), []byte("PXAT"), []byte("1700000000000")}},
		{1 << 20, [][]byte{[]byte("SET"), {}, big}},
	}
	for _, c := range cases {
		p := EncodeCommand(c.db, c.args)
		if len(p) != CommandSize(c.db, c.args) {
			t.Fatalf("size %d, CommandSize %d", len(p), CommandSize(c.db, c.args))
		}
		db, args, err := DecodeCommand(p)
		if err != nil {
			t.Fatal(err)
		}
		if db != c.db || len(args) != len(c.args) {
			t.Fatalf("db %d args %d", db, len(args))
		}
		for i := range args {
			if !bytes.Equal(args[i], c.args[i]) {
				t.Fatalf("arg %d: %q", i, args[i])
			}
		}
	}
}

func TestCommandEncodingIsDeterministic(t *testing.T) {
	args := [][]byte{[]byte("INCRBY"), []byte("counter"), []byte("5")}
	if !bytes.Equal(EncodeCommand(3, args), EncodeCommand(3, args)) {
		t.Fatal("two encodings differ")
	}
}

func TestAppendCommandDoesNotAllocate(t *testing.T) {
	args := [][]byte{[]byte("SET"), []byte("key"), []byte("value")}
	buf := make([]byte, 0, 256)
	if a := testing.AllocsPerRun(100, func() { buf = AppendCommand(buf[:0], 0, args) }); a != 0 {
		t.Fatalf("%.1f allocations", a)
	}
}

func TestDecodeCommandIntoReusesSlice(t *testing.T) {
	p := EncodeCommand(0, [][]byte{[]byte("SET"), []byte("k"), []byte("v")})
	args := make([][]byte, 0, 8)
	if a := testing.AllocsPerRun(100, func() { _, args, _ = DecodeCommandInto(args, p) }); a != 0 {
		t.Fatalf("%.1f allocations", a)
	}
}

func TestDecodeCommandRejectsMalformedPayloads(t *testing.T) {
	good := EncodeCommand(2, [][]byte{[]byte("SET"), []byte("k"), []byte("v")})
	cases := map[string][]byte{
		"empty":              {},
		"no argc":            {2},
		"argc zero":          {2, 0},
		"argc beyond bytes":  {2, 100, 1, 'x'},
		"truncated":          good[:len(good)-1],
		"trailing":           append(bytes.Clone(good), 0),
		"non-minimal varint": {0x82, 0x00, 1, 1, 'x'},
		"db overflow":        {0xff, 0xff, 0xff, 0xff, 0x0f, 1, 1, 'x'},
		"length beyond":      {0, 1, 5, 'x'},
	}
	for name, p := range cases {
		if _, _, err := DecodeCommand(p); !errors.Is(err, ErrBadCommand) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}
