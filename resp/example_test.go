package resp_test

import (
	"fmt"

	"github.com/moond-db/moond/resp"
)

// A connection's read loop: parse what has arrived, keep the rest.
func ExampleParser() {
	var p resp.Parser
	var w resp.Writer
	input := []byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\n*1\r\n$4\r\nEC")
	for {
		args, n, err := p.Parse(input)
		if err != nil {
			w.Error(err.Error()) // then close the connection
			break
		}
		if n == 0 {
			break // wait for more input; keep input as it is
		}
		input = input[n:]
		if len(args) == 0 {
			continue // an empty command
		}
		fmt.Printf("%q\n", args)
	}
	fmt.Printf("left: %q\n", input)
	// Output:
	// ["GET" "k"]
	// ["PING"]
	// left: "*1\r\n$4\r\nEC"
}

func ExampleWriter() {
	for _, proto := range []int{2, 3} {
		w := resp.Writer{Proto: proto}
		w.MapHeader(1)
		w.BulkString("score")
		w.Double(1.5)
		fmt.Printf("RESP%d: %q\n", proto, w.Buf)
	}
	// Output:
	// RESP2: "*2\r\n$5\r\nscore\r\n$3\r\n1.5\r\n"
	// RESP3: "%1\r\n$5\r\nscore\r\n,1.5\r\n"
}

// Reassembling a multi-key command: cut a shard's reply buffer into replies,
// and an array reply into its elements.
func ExampleSplitArray() {
	shard := []byte("*2\r\n$2\r\nv1\r\n$-1\r\n:1\r\n")
	n, _ := resp.NextReply(shard)
	elems, _ := resp.SplitArray(shard[:n])
	fmt.Printf("%q then %q\n", elems, shard[n:])
	// Output:
	// ["$2\r\nv1\r\n" "$-1\r\n"] then ":1\r\n"
}
