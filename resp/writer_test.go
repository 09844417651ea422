package resp

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestWriterEncodings(t *testing.T) {
	tests := []struct {
		name         string
		write        func(w *Writer)
		resp2, resp3 string
	}{
		{"simple string", func(w *Writer) { w.SimpleString("OK") }, "+OK\r\n", "+OK\r\n"},
		{"simple string with newlines", func(w *Writer) { w.SimpleString("\r\na\r\nb\n") }, "+a  b\r\n", "+a  b\r\n"},
		{"error", func(w *Writer) { w.Error("ERR unknown command 'FOO'") }, "-ERR unknown command 'FOO'\r\n", "-ERR unknown command 'FOO'\r\n"},
		{"error with leading dash", func(w *Writer) { w.Error("-WRONGTYPE x") }, "-WRONGTYPE x\r\n", "-WRONGTYPE x\r\n"},
		{"error with newlines", func(w *Writer) { w.Error("ERR bad 'a\r\nb'\r\n") }, "-ERR bad 'a  b'\r\n", "-ERR bad 'a  b'\r\n"},
		{"int", func(w *Writer) { w.Int(-42) }, ":-42\r\n", ":-42\r\n"},
		{"int extremes", func(w *Writer) { w.Int(math.MinInt64); w.Int(math.MaxInt64) },
			":-9223372036854775808\r\n:9223372036854775807\r\n", ":-9223372036854775808\r\n:9223372036854775807\r\n"},
		{"bulk", func(w *Writer) { w.Bulk([]byte("a\r\nb")) }, "$4\r\na\r\nb\r\n", "$4\r\na\r\nb\r\n"},
		{"empty bulk", func(w *Writer) { w.Bulk(nil) }, "$0\r\n\r\n", "$0\r\n\r\n"},
		{"bulk string", func(w *Writer) { w.BulkString("héllo") }, "$6\r\nhéllo\r\n", "$6\r\nhéllo\r\n"},
		{"null", func(w *Writer) { w.Null() }, "$-1\r\n", "_\r\n"},
		{"null array", func(w *Writer) { w.NullArray() }, "*-1\r\n", "_\r\n"},
		{"array", func(w *Writer) { w.ArrayHeader(2); w.Int(1); w.Null() }, "*2\r\n:1\r\n$-1\r\n", "*2\r\n:1\r\n_\r\n"},
		{"empty array", func(w *Writer) { w.ArrayHeader(0) }, "*0\r\n", "*0\r\n"},
		{"map", func(w *Writer) { w.MapHeader(1); w.BulkString("k"); w.Int(1) }, "*2\r\n$1\r\nk\r\n:1\r\n", "%1\r\n$1\r\nk\r\n:1\r\n"},
		{"set", func(w *Writer) { w.SetHeader(1); w.BulkString("m") }, "*1\r\n$1\r\nm\r\n", "~1\r\n$1\r\nm\r\n"},
		{"push", func(w *Writer) { w.PushHeader(2); w.BulkString("a"); w.BulkString("b") },
			"*2\r\n$1\r\na\r\n$1\r\nb\r\n", ">2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"double", func(w *Writer) { w.Double(1.5) }, "$3\r\n1.5\r\n", ",1.5\r\n"},
		{"double integer", func(w *Writer) { w.Double(10) }, "$2\r\n10\r\n", ",10\r\n"},
		{"double inf", func(w *Writer) { w.Double(math.Inf(-1)) }, "$4\r\n-inf\r\n", ",-inf\r\n"},
		{"double nan", func(w *Writer) { w.Double(math.NaN()) }, "$3\r\nnan\r\n", ",nan\r\n"},
		{"true", func(w *Writer) { w.Bool(true) }, ":1\r\n", "#t\r\n"},
		{"false", func(w *Writer) { w.Bool(false) }, ":0\r\n", "#f\r\n"},
		{"verbatim", func(w *Writer) { w.Verbatim("txt", []byte("hi\nthere")) }, "$8\r\nhi\nthere\r\n", "=12\r\ntxt:hi\nthere\r\n"},
		{"big number", func(w *Writer) { w.BigNumber("3492890328409238509324850943850943825024385") },
			"$43\r\n3492890328409238509324850943850943825024385\r\n", "(3492890328409238509324850943850943825024385\r\n"},
		{"raw", func(w *Writer) { w.Raw([]byte("+PONG\r\n")) }, "+PONG\r\n", "+PONG\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				proto int
				want  string
			}{{0, tt.resp2}, {2, tt.resp2}, {3, tt.resp3}} {
				w := Writer{Proto: c.proto}
				tt.write(&w)
				if string(w.Buf) != c.want {
					t.Errorf("RESP%d: %q, want %q", c.proto, w.Buf, c.want)
				}
				// Whatever the Writer writes frames as whole replies.
				for b := w.Buf; len(b) > 0; {
					n, err := NextReply(b)
					if err != nil || n == 0 {
						t.Fatalf("RESP%d: NextReply(%q) = %d, %v", c.proto, b, n, err)
					}
					b = b[n:]
				}
			}
		})
	}
}

func TestWriterAppendsAndResets(t *testing.T) {
	w := Writer{Buf: []byte("+OK\r\n")}
	w.Int(1)
	if string(w.Buf) != "+OK\r\n:1\r\n" {
		t.Fatalf("Buf = %q", w.Buf)
	}
	c := cap(w.Buf)
	w.Reset()
	if len(w.Buf) != 0 || cap(w.Buf) != c {
		t.Fatalf("after Reset len %d cap %d, want 0, %d", len(w.Buf), cap(w.Buf), c)
	}
}

// TestWriterNumbersAtEveryWidth: the lengths and integers Writer formats
// itself (not through strconv) are right at every number of digits, and
// BulkLen and Grow agree with what Bulk writes.
func TestWriterNumbersAtEveryWidth(t *testing.T) {
	for v := int64(1); v > 0 && v <= math.MaxInt64/10+1; v *= 10 {
		for _, n := range []int64{v - 1, v, v + 1, 9*v + (v - 1)} {
			var w Writer
			w.Int(n)
			if want := ":" + strconv.FormatInt(n, 10) + "\r\n"; string(w.Buf) != want {
				t.Errorf("Int(%d) = %q, want %q", n, w.Buf, want)
			}
		}
	}
	for _, n := range []int{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 10000, 65536} {
		b := []byte(strings.Repeat("x", n))
		var w Writer
		w.Grow(BulkLen(n))
		c := cap(w.Buf)
		w.Bulk(b)
		want := "$" + strconv.Itoa(n) + "\r\n" + string(b) + "\r\n"
		if string(w.Buf) != want || len(want) != BulkLen(n) || cap(w.Buf) != c {
			t.Errorf("Bulk of %d bytes: %q (%d bytes, cap %d after Grow %d), BulkLen %d", n, w.Buf, len(w.Buf), cap(w.Buf), c, BulkLen(n))
		}
		w.Reset()
		w.BulkString(string(b))
		if string(w.Buf) != want {
			t.Errorf("BulkString of %d bytes: %q", n, w.Buf)
		}
	}
}

func TestWriterVerbatimFormatMustBeThreeBytes(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "3 bytes") {
			t.Fatalf("recovered %v", r)
		}
	}()
	w := Writer{Proto: 3}
	w.Verbatim("markdown", nil)
}

func TestWriterDoesNotAllocate(t *testing.T) {
	for _, proto := range []int{2, 3} {
		w := Writer{Proto: proto}
		writeAll := func() {
			w.Reset()
			writeSample(&w)
		}
		writeAll()
		if allocs := testing.AllocsPerRun(100, writeAll); allocs != 0 {
			t.Errorf("RESP%d: %v allocations, want 0", proto, allocs)
		}
	}
}

var sampleBulk = []byte("some value of moderate length")

// writeSample writes one reply of every kind.
func writeSample(w *Writer) {
	w.SimpleString("OK")
	w.Error("ERR something went wrong")
	w.Int(123456789)
	w.Bulk(sampleBulk)
	w.BulkString("key:000042")
	w.Null()
	w.NullArray()
	w.ArrayHeader(3)
	w.MapHeader(2)
	w.SetHeader(4)
	w.PushHeader(3)
	w.Double(3.14159)
	w.Double(1e300)
	w.Bool(true)
	w.Verbatim("txt", sampleBulk)
	w.BigNumber("123456789012345678901234567890")
}
