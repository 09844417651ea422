package resp

import (
	"fmt"
	"testing"
)

// BenchmarkParse parses a pipelined buffer of 100 SET and GET commands, as
// redis-benchmark -P 100 sends them. One op is the whole buffer.
func BenchmarkParse(b *testing.B) {
	var buf []byte
	for i := range 50 {
		key := fmt.Sprintf("key:%012d", i)
		buf = append(buf, encode([]string{"SET", key, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"})...)
		buf = append(buf, encode([]string{"GET", key})...)
	}
	var p Parser
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		for rest := buf; len(rest) > 0; {
			_, n, err := p.Parse(rest)
			if err != nil || n == 0 {
				b.Fatal(n, err)
			}
			rest = rest[n:]
		}
	}
}

// BenchmarkParseInline parses inline commands, quoted ones included.
func BenchmarkParseInline(b *testing.B) {
	var buf []byte
	for i := range 50 {
		buf = fmt.Appendf(buf, "SET key:%012d \"some \\x41 value\"\r\nGET key:%012d\r\n", i, i)
	}
	var p Parser
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		for rest := buf; len(rest) > 0; {
			_, n, err := p.Parse(rest)
			if err != nil || n == 0 {
				b.Fatal(n, err)
			}
			rest = rest[n:]
		}
	}
}

// BenchmarkWriter writes one reply of every kind, then resets.
func BenchmarkWriter(b *testing.B) {
	for _, proto := range []int{2, 3} {
		b.Run(fmt.Sprintf("RESP%d", proto), func(b *testing.B) {
			w := Writer{Proto: proto}
			b.ReportAllocs()
			for b.Loop() {
				w.Reset()
				writeSample(&w)
			}
		})
	}
}

// BenchmarkWriterGetReplies writes 100 bulk replies, a pipelined GET's worth.
func BenchmarkWriterGetReplies(b *testing.B) {
	var w Writer
	v := []byte("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
	b.ReportAllocs()
	for b.Loop() {
		w.Reset()
		for range 100 {
			w.Bulk(v)
		}
	}
}

func BenchmarkNextReply(b *testing.B) {
	var w Writer
	w.ArrayHeader(100)
	for range 100 {
		w.BulkString("value:000000000000")
	}
	b.SetBytes(int64(len(w.Buf)))
	b.ReportAllocs()
	for b.Loop() {
		if n, err := NextReply(w.Buf); n != len(w.Buf) || err != nil {
			b.Fatal(n, err)
		}
	}
}
