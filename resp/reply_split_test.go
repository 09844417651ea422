package resp

import (
	"errors"
	"reflect"
	"testing"
)

func TestNextReply(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
	}{
		{"simple string", "+OK\r\n", 5},
		{"error", "-ERR x\r\n", 8},
		{"integer", ":-12\r\n", 6},
		{"bulk", "$3\r\nabc\r\n", 9},
		{"bulk holding CRLF", "$4\r\na\r\nb\r\n", 10},
		{"null bulk", "$-1\r\n", 5},
		{"null array", "*-1\r\n", 5},
		{"null", "_\r\n", 3},
		{"double", ",1.5\r\n", 6},
		{"boolean", "#t\r\n", 4},
		{"big number", "(123\r\n", 6},
		{"blob error", "!5\r\nERR x\r\n", 11},
		{"verbatim", "=7\r\ntxt:abc\r\n", 13},
		{"empty array", "*0\r\n", 4},
		{"array", "*2\r\n:1\r\n$1\r\na\r\n", 15},
		{"nested array", "*2\r\n*2\r\n:1\r\n:2\r\n*1\r\n*0\r\n", 24},
		{"map", "%1\r\n+k\r\n*1\r\n:1\r\n", 16},
		{"set", "~2\r\n:1\r\n:2\r\n", 12},
		{"push", ">2\r\n+message\r\n$1\r\nx\r\n", 21},
		{"attribute then reply", "|1\r\n+ttl\r\n:3\r\n:42\r\n", 19},
		{"followed by more", "+OK\r\n+OK\r\n", 5},
		{"array followed by more", "*1\r\n:1\r\n:2\r\n", 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := NextReply([]byte(tt.in))
			if n != tt.n || err != nil {
				t.Fatalf("NextReply(%q) = %d, %v; want %d, nil", tt.in, n, err, tt.n)
			}
			// Every proper prefix of a reply is incomplete.
			for k := 0; k < tt.n; k++ {
				if n, err := NextReply([]byte(tt.in[:k])); n != 0 || err != nil {
					t.Fatalf("NextReply(%q) = %d, %v; want 0, nil", tt.in[:k], n, err)
				}
			}
		})
	}
}

func TestNextReplyIncomplete(t *testing.T) {
	for _, in := range []string{
		"", "+OK", "+OK\r", "$3\r\nab", "$3\r\nabc\r", "*2\r\n:1\r\n", "*2\r\n*2\r\n:1\r\n:2\r\n",
		"%1\r\n+k\r\n", "|1\r\n+a\r\n+b\r\n", "*2147483647\r\n:1\r\n", "$2147483647\r\nabc\r\n",
		"$9223372036854775807\r\nabc\r\n", "$9223372036854775806\r\n", "*9223372036854775807\r\n:1\r\n",
	} {
		if n, err := NextReply([]byte(in)); n != 0 || err != nil {
			t.Errorf("NextReply(%q) = %d, %v; want 0, nil", in, n, err)
		}
	}
}

func TestNextReplyMalformed(t *testing.T) {
	for _, in := range []string{
		"x\r\n", "\r\n", "+OK\rX", ":abc\r\n", ":\r\n", "_x\r\n", "#x\r\n",
		"$-2\r\n", "$abc\r\n", "$3\r\nabcXY", "!-1\r\n", "=-1\r\n", "*-2\r\n", "~-1\r\n", "%-1\r\n",
		"*1\r\n?\r\n", "$?\r\n", "*?\r\n", "*2\r\n:1\r\n!x\r\n",
	} {
		if n, err := NextReply([]byte(in)); n != 0 || !errors.Is(err, ErrMalformedReply) {
			t.Errorf("NextReply(%q) = %d, %v; want 0, ErrMalformedReply", in, n, err)
		}
	}
}

func TestSplitArray(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"array", "*3\r\n:1\r\n$-1\r\n$3\r\nabc\r\n", []string{":1\r\n", "$-1\r\n", "$3\r\nabc\r\n"}},
		{"nested", "*2\r\n*2\r\n:1\r\n:2\r\n+x\r\n", []string{"*2\r\n:1\r\n:2\r\n", "+x\r\n"}},
		{"set", "~1\r\n_\r\n", []string{"_\r\n"}},
		{"push", ">1\r\n+a\r\n", []string{"+a\r\n"}},
		{"map", "%1\r\n+k\r\n+v\r\n", []string{"+k\r\n", "+v\r\n"}},
		{"empty", "*0\r\n", []string{}},
		{"null array", "*-1\r\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			elems, err := SplitArray([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			if elems != nil {
				got = []string{}
			}
			for _, e := range elems {
				got = append(got, string(e))
				if cap(e) != len(e) {
					t.Errorf("element %q not capped", e)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SplitArray(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSplitArrayRefuses(t *testing.T) {
	for _, in := range []string{
		"", "+OK\r\n", "$1\r\na\r\n", "*2\r\n:1\r\n", "*1\r\n:1\r\n:2\r\n", "*1\r\n:x\r\n", "|1\r\n+a\r\n+b\r\n*0\r\n",
	} {
		if elems, err := SplitArray([]byte(in)); elems != nil || !errors.Is(err, ErrMalformedReply) {
			t.Errorf("SplitArray(%q) = %q, %v; want nil, ErrMalformedReply", in, elems, err)
		}
	}
}

// The per-shard reassembly the server does: replies written by Writer are
// cut apart and their elements recombined.
func TestSplitArrayOfWriterOutput(t *testing.T) {
	for _, proto := range []int{2, 3} {
		w := Writer{Proto: proto}
		w.ArrayHeader(3)
		w.BulkString("v1")
		w.Null()
		w.MapHeader(1)
		w.BulkString("k")
		w.Double(0.5)
		w.Int(7)
		n, err := NextReply(w.Buf)
		if err != nil || n != len(w.Buf)-len(":7\r\n") {
			t.Fatalf("RESP%d: NextReply = %d, %v", proto, n, err)
		}
		elems, err := SplitArray(w.Buf[:n])
		if err != nil || len(elems) != 3 {
			t.Fatalf("RESP%d: SplitArray = %q, %v", proto, elems, err)
		}
		inner, err := SplitArray(elems[2])
		if err != nil || len(inner) != 2 || string(inner[0]) != "$1\r\nk\r\n" {
			t.Fatalf("RESP%d: inner = %q, %v", proto, inner, err)
		}
	}
}
