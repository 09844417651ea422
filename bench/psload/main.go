// Command psload measures CLIENT TRACKING and Pub/Sub for
// bench/tracking_compare.sh, and prints one rate. Kinds:
//
//	track    CLIENTS RESP3 connections with CLIENT TRACKING on, each
//	         sending GETs of random keys (key:%012d below KEYSPACE) in
//	         pipelines of PIPELINE, N GETs in all; prints GETs/s
//	publish  SUBSCRIBERS RESP2 connections subscribed to one channel and
//	         one publisher sending N PUBLISHes in pipelines of PIPELINE;
//	         prints messages delivered per second: N × SUBSCRIBERS over
//	         the time from the first PUBLISH until every subscriber got
//	         its N messages
//
// It parses just enough RESP to count replies: every reply and push is
// read whole, and pushes (invalidations) are skipped.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address")
	kind := flag.String("kind", "track", "track or publish")
	clients := flag.Int("clients", 50, "connections (track) or subscribers (publish)")
	n := flag.Int("n", 1000000, "GETs or PUBLISHes in all")
	pipeline := flag.Int("P", 16, "commands per pipeline")
	keyspace := flag.Int("keyspace", 100000, "keys the GETs pick from")
	flag.Parse()
	var rate float64
	var err error
	switch *kind {
	case "track":
		rate, err = track(*addr, *clients, *n, *pipeline, *keyspace)
	case "publish":
		rate, err = publish(*addr, *clients, *n, *pipeline)
	default:
		err = fmt.Errorf("unknown kind %q", *kind)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "psload:", err)
		os.Exit(1)
	}
	fmt.Printf("%.0f\n", rate)
}

// conn is a connection that writes commands and reads whole replies.
type conn struct {
	c net.Conn
	r *bufio.Reader
}

func dial(addr string) (*conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &conn{c: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

func appendCommand(b []byte, args ...string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// reply reads one reply; push reports whether it was a push (>).
func (c *conn) reply() (push bool, err error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return false, err
	}
	if len(line) < 3 {
		return false, fmt.Errorf("short line %q", line)
	}
	kind := line[0]
	n, _ := strconv.Atoi(string(line[1 : len(line)-2]))
	switch kind {
	case '-':
		return false, errors.New(string(line[:len(line)-2]))
	case '$', '=', '!':
		if n >= 0 {
			_, err = c.r.Discard(n + 2)
		}
		return false, err
	case '*', '~', '>', '%':
		if kind == '%' {
			n *= 2
		}
		for range max(n, 0) {
			if _, err := c.reply(); err != nil {
				return false, err
			}
		}
		return kind == '>', nil
	}
	return false, nil
}

// nonPush reads replies until one that is not a push.
func (c *conn) nonPush() error {
	for {
		push, err := c.reply()
		if err != nil || !push {
			return err
		}
	}
}

func track(addr string, clients, n, pipeline, keyspace int) (float64, error) {
	var left atomic.Int64
	left.Store(int64(n))
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := trackClient(addr, uint64(i), pipeline, keyspace, &left); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

func trackClient(addr string, seed uint64, pipeline, keyspace int, left *atomic.Int64) error {
	c, err := dial(addr)
	if err != nil {
		return err
	}
	defer c.c.Close()
	buf := appendCommand(appendCommand(nil, "HELLO", "3"), "CLIENT", "TRACKING", "on")
	if _, err := c.c.Write(buf); err != nil {
		return err
	}
	for range 2 {
		if err := c.nonPush(); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	for {
		k := int(min(left.Add(-int64(pipeline))+int64(pipeline), int64(pipeline)))
		if k <= 0 {
			return nil
		}
		buf = buf[:0]
		for range k {
			buf = appendCommand(buf, "GET", fmt.Sprintf("key:%012d", rng.IntN(keyspace)))
		}
		if _, err := c.c.Write(buf); err != nil {
			return err
		}
		for range k {
			if err := c.nonPush(); err != nil {
				return err
			}
		}
	}
}

func publish(addr string, subscribers, n, pipeline int) (float64, error) {
	subs := make([]*conn, subscribers)
	for i := range subs {
		c, err := dial(addr)
		if err != nil {
			return 0, err
		}
		defer c.c.Close()
		if _, err := c.c.Write(appendCommand(nil, "SUBSCRIBE", "psload")); err != nil {
			return 0, err
		}
		if _, err := c.reply(); err != nil {
			return 0, err
		}
		subs[i] = c
	}
	pub, err := dial(addr)
	if err != nil {
		return 0, err
	}
	defer pub.c.Close()
	errs := make(chan error, subscribers+1)
	var wg sync.WaitGroup
	// Every message is the same bytes: a subscriber counts them by length
	// and checks the first, so that the load generator, on its one CPU,
	// does not cap the rate.
	msg := []byte("*3\r\n$7\r\nmessage\r\n$6\r\npsload\r\n$16\r\n" + payload + "\r\n")
	for _, c := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := receive(c, msg, n); err != nil {
				errs <- err
			}
		}()
	}
	start := time.Now()
	go func() { errs <- publisher(pub, n, pipeline, subscribers) }()
	wg.Wait()
	elapsed := time.Since(start)
	if err := <-errs; err != nil {
		return 0, err
	}
	return float64(n) * float64(subscribers) / elapsed.Seconds(), nil
}

const payload = "0123456789abcdef"

// receive reads n copies of msg from c.
func receive(c *conn, msg []byte, n int) error {
	first := make([]byte, len(msg))
	if _, err := io.ReadFull(c.r, first); err != nil {
		return err
	}
	if !bytes.Equal(first, msg) {
		return fmt.Errorf("message %q, want %q", first, msg)
	}
	left := int64(n-1) * int64(len(msg))
	got, err := io.CopyN(io.Discard, c.r, left)
	if err != nil {
		return fmt.Errorf("after %d of %d bytes: %w", got, left, err)
	}
	return nil
}

func publisher(c *conn, n, pipeline, subscribers int) error {
	msg := appendCommand(nil, "PUBLISH", "psload", payload)
	var buf []byte
	for sent := 0; sent < n; {
		k := min(pipeline, n-sent)
		buf = buf[:0]
		for range k {
			buf = append(buf, msg...)
		}
		if _, err := c.c.Write(buf); err != nil {
			return err
		}
		for range k {
			line, err := c.r.ReadSlice('\n')
			if err != nil {
				return err
			}
			if got, _ := strconv.Atoi(string(line[1 : len(line)-2])); got != subscribers {
				return fmt.Errorf("PUBLISH reached %d subscribers, want %d", got, subscribers)
			}
		}
		sent += k
	}
	return nil
}
