package server

import (
	"bufio"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkTxnAcross runs what bench/txload does (issue 17) inside the
// test binary, for its CPU and memory profiles: 50 connections, one
// transaction each at a time, every transaction's keys on both shards of
// two. One op is one transaction.
//
//	go test -run '^$' -bench TxnAcross -benchmem -memprofile mem.out ./server/
func BenchmarkTxnAcross(b *testing.B) {
	for _, kind := range []string{"mset", "multi"} {
		b.Run(kind, func(b *testing.B) {
			s := startTest(b, "uring", 2, "appendonly", "no")
			keys := [2][]string{}
			for i := 0; len(keys[0]) < 1000 || len(keys[1]) < 1000; i++ {
				k := fmt.Sprintf("tx%s:%d", kind, i)
				if sh := shardOfSlot(KeySlot([]byte(k)), 2); len(keys[sh]) < 1000 {
					keys[sh] = append(keys[sh], k)
				}
			}
			const clients = 50
			conns := make([]net.Conn, clients)
			for i := range conns {
				c, err := net.Dial("tcp", s.Addr())
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				conns[i] = c
			}
			var left atomic.Int64
			left.Store(int64(b.N))
			b.ResetTimer()
			var wg sync.WaitGroup
			for i, c := range conns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := txnClient(c, kind, keys, i, &left); err != nil {
						b.Error(err)
					}
				}()
			}
			wg.Wait()
		})
	}
}

// txnClient runs transactions of kind on c until left runs out.
func txnClient(c net.Conn, kind string, keys [2][]string, seed int, left *atomic.Int64) error {
	r := bufio.NewReader(c)
	var req []byte
	replies := 1
	for n := seed; left.Add(-1) >= 0; n += 7 {
		req = req[:0]
		switch kind {
		case "mset":
			req = fmt.Appendf(req, "*21\r\n$4\r\nMSET\r\n")
			for i := range 10 {
				k := keys[i%2][(n+i)%len(keys[0])]
				req = fmt.Appendf(req, "$%d\r\n%s\r\n$3\r\nxxx\r\n", len(k), k)
			}
		case "multi":
			a, b := keys[0][n%len(keys[0])], keys[1][n%len(keys[1])]
			req = fmt.Appendf(req, "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$3\r\nxxx\r\n"+
				"*2\r\n$4\r\nINCR\r\n$%d\r\n%s\r\n*1\r\n$4\r\nEXEC\r\n", len(a), a, len(b), b)
			replies = 4
		}
		if _, err := c.Write(req); err != nil {
			return err
		}
		for range replies {
			if err := skipReply(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// skipReply reads one RESP reply; an error reply is an error.
func skipReply(r *bufio.Reader) error {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return err
	}
	switch line[0] {
	case '-':
		return fmt.Errorf("error reply %q", line)
	case '*':
		n := 0
		for _, d := range line[1 : len(line)-2] {
			n = n*10 + int(d-'0')
		}
		for range n {
			if err := skipReply(r); err != nil {
				return err
			}
		}
	}
	return nil
}
