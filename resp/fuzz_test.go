package resp

import (
	"bytes"
	"reflect"
	"strconv"
	"testing"
)

// encode writes args as a multibulk request.
func encode(args []string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		pipeline,
		"*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n",
		"*1\r\n$-1\r\n", "*-1\r\n", "*0\r\n", "*20\r\n", "*1\r\n$100\r\nabc",
		"SET \"a\\x41\\n\" 'b\\'c' d\"e f\"\r\n", "\"unbalanced\r\n", "a\"b\"c\r\n",
		"\r\n\r\n\n", "PING\x00PONG\r\n", "*1\rx$4\r\nPINGxy",
	} {
		f.Add([]byte(s), uint16(len(s)/2), false)
		f.Add([]byte(s), uint16(1), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint16, unauth bool) {
		// Small limits, so that the fuzzer reaches them.
		newParser := func() *Parser {
			return &Parser{Limits: Limits{MaxBulkLen: 1000, MaxMultibulkLen: 100, MaxInlineLen: 40}, Unauthenticated: unauth}
		}
		p := newParser()
		var cmds [][]string
		var perr error
		for b := data; ; {
			args, n, err := p.Parse(b)
			if n < 0 || n > len(b) {
				t.Fatalf("Parse(%q) consumed %d of %d bytes", b, n, len(b))
			}
			if err != nil {
				if _, ok := err.(*ProtocolError); !ok || n != 0 || args != nil {
					t.Fatalf("Parse(%q) = %q, %d, %#v", b, args, n, err)
				}
				perr = err
				break
			}
			if n == 0 {
				if args != nil {
					t.Fatalf("Parse(%q) = %q with n == 0", b, args)
				}
				break
			}
			cmd := append([]string{}, strs(args)...)
			cmds = append(cmds, cmd)
			b = b[n:]

			// A command parsed, written as multibulk and parsed again, is
			// the same command.
			if len(cmd) > 0 {
				enc := encode(cmd)
				var q Parser
				again, m, err := q.Parse(enc)
				if err != nil || m != len(enc) || !reflect.DeepEqual(strs(again), cmd) {
					t.Fatalf("%q re-encoded as %q parses as %q, %d, %v", cmd, enc, again, m, err)
				}
			}
		}

		// The same input in two reads, through a moving buffer, parses
		// the same, error included.
		k := int(split) % (len(data) + 1)
		got, err := conn(newParser(), [][]byte{data[:k], data[k:]})
		if errMsg(err) != errMsg(perr) || !reflect.DeepEqual(got, cmds) {
			t.Fatalf("split at %d: %q, %v; whole: %q, %v", k, got, err, cmds, perr)
		}
	})
}

func FuzzNextReply(f *testing.F) {
	for _, proto := range []int{2, 3} {
		w := Writer{Proto: proto}
		writeSample(&w)
		f.Add(w.Buf)
		w.Reset()
		w.ArrayHeader(2)
		w.MapHeader(1)
		w.BulkString("k")
		w.Double(0.25)
		w.NullArray()
		f.Add(w.Buf)
	}
	for _, s := range []string{
		"|1\r\n+ttl\r\n:3\r\n:42\r\n", "*2147483647\r\n", "$9223372036854775807\r\nabc\r\n", "$-1\r\n", "!5\r\nERR x\r\n", "*1\r\n*1\r\n*1\r\n*0\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := NextReply(data)
		if n < 0 || n > len(data) || err != nil && n != 0 {
			t.Fatalf("NextReply(%q) = %d, %v", data, n, err)
		}
		if n == 0 {
			return
		}
		r := data[:n]
		if m, err := NextReply(r); m != n || err != nil {
			t.Fatalf("NextReply(%q) = %d, %v; want %d", r, m, err, n)
		}
		// Every proper prefix of a reply is incomplete, never malformed.
		step := 1 + n/256
		for k := 0; k < n; k += step {
			if m, err := NextReply(r[:k]); m != 0 || err != nil {
				t.Fatalf("prefix %q of %q: %d, %v", r[:k], r, m, err)
			}
		}
		switch r[0] {
		case '*', '~', '>', '%':
			elems, err := SplitArray(r)
			if err != nil {
				t.Fatalf("SplitArray(%q): %v", r, err)
			}
			var joined []byte
			for _, e := range elems {
				if m, err := NextReply(e); m != len(e) || err != nil {
					t.Fatalf("element %q of %q: %d, %v", e, r, m, err)
				}
				joined = append(joined, e...)
			}
			if !bytes.HasSuffix(r, joined) {
				t.Fatalf("elements %q are not the tail of %q", elems, r)
			}
		}
	})
}
