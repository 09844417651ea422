// Command txload measures transactions whose keys live on two moond
// shards, for bench/txn_compare.sh: CLIENTS connections, each running one
// transaction at a time (-P 1), for N transactions in all, and prints
// "transactions/s". Kinds:
//
//	multi  MULTI; SET a v; INCR b; EXEC, a and b on shards 0 and 1 of 2
//	mset   MSET of 10 keys, 5 on each shard
//
// Keys are chosen by moond's slot map (server.KeySlot) among KEYSPACE
// names per shard, so that with --shards 2 every transaction spans both
// shards; against redis-server the same names are just keys.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moond-db/moond/server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address")
	clients := flag.Int("clients", 50, "connections")
	n := flag.Int("n", 100000, "transactions in all")
	kind := flag.String("kind", "multi", "multi or mset")
	keyspace := flag.Int("keyspace", 10000, "key names per shard")
	flag.Parse()
	keys := [2][]string{}
	for i := 0; len(keys[0]) < *keyspace || len(keys[1]) < *keyspace; i++ {
		k := "tx" + *kind + ":" + strconv.Itoa(i) // INCR's keys never hold MSET's values
		s := server.KeySlot([]byte(k)) * 2 / server.SlotCount
		if len(keys[s]) < *keyspace {
			keys[s] = append(keys[s], k)
		}
	}
	var left atomic.Int64
	left.Store(int64(*n))
	var wg sync.WaitGroup
	errs := make(chan error, *clients)
	start := time.Now()
	for c := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(*addr, *kind, keys, uint64(c), &left); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		fmt.Fprintln(os.Stderr, "txload:", err)
		os.Exit(1)
	}
	fmt.Printf("%.0f\n", float64(*n)/time.Since(start).Seconds())
}

// run is one client: it takes transactions from left until none remain.
func run(addr, kind string, keys [2][]string, seed uint64, left *atomic.Int64) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	rng := rand.New(rand.NewPCG(seed, 42))
	pick := func(s int) string { return keys[s][rng.IntN(len(keys[s]))] }
	var buf []byte
	for left.Add(-1) >= 0 {
		buf = buf[:0]
		replies := 1
		switch kind {
		case "multi":
			buf = cmd(buf, "MULTI")
			buf = cmd(buf, "SET", pick(0), "xxx")
			buf = cmd(buf, "INCR", pick(1))
			buf = cmd(buf, "EXEC")
			replies = 4
		case "mset":
			args := []string{"MSET"}
			for i := range 10 {
				args = append(args, pick(i%2), "xxx")
			}
			buf = cmd(buf, args...)
		default:
			return fmt.Errorf("unknown kind %q", kind)
		}
		if _, err := conn.Write(buf); err != nil {
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

func cmd(dst []byte, args ...string) []byte {
	dst = fmt.Appendf(dst, "*%d\r\n", len(args))
	for _, a := range args {
		dst = fmt.Appendf(dst, "$%d\r\n%s\r\n", len(a), a)
	}
	return dst
}

// skipReply reads one RESP reply; an error reply is an error.
func skipReply(r *bufio.Reader) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if len(line) < 3 {
		return fmt.Errorf("short reply %q", line)
	}
	switch line[0] {
	case '-':
		return fmt.Errorf("error reply %q", line)
	case '+', ':':
		return nil
	case '$':
		n, _ := strconv.Atoi(line[1 : len(line)-2])
		if n < 0 {
			return nil
		}
		_, err := r.Discard(n + 2)
		return err
	case '*':
		n, _ := strconv.Atoi(line[1 : len(line)-2])
		for range max(n, 0) {
			if err := skipReply(r); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unexpected reply %q", line)
}
