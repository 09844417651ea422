package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/runtime/looptest"
)

// TestReadsNeverSeeAWriteTheWALDoesNotHold: under appendfsync always, a
// write whose fdatasync has not completed is not acknowledged, and no
// other client may read it either, or a crash would take back a value
// someone saw (Redis sends no reply of an event-loop iteration before its
// AOF fsync). The fdatasyncs hang, two writes (one per shard) are applied
// but not durable, and the reads of them, one on the reader's own shard
// and one another shard runs, get their replies only after the disk
// answers.
func TestReadsNeverSeeAWriteTheWALDoesNotHold(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			s, f := startFaulty(t, backend, 2)
			ctx := testCtx(t)
			keys := [2]string{}
			for i := 0; keys[0] == "" || keys[1] == ""; i++ {
				k := fmt.Sprintf("k%d", i)
				if sh := s.shardOf([]byte(k)); keys[sh] == "" {
					keys[sh] = k
				}
			}
			c := client(t, s)
			for _, k := range keys {
				if err := c.Set(ctx, k, "old", 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			// The readers connect first: while a shard holds a write the WAL
			// does not, every reply of that shard waits, a handshake's too.
			var readers, writers [2]net.Conn
			for i := range readers {
				readers[i], writers[i] = dialPinged(t, s), dialPinged(t, s)
			}
			gate := make(chan struct{})
			release := f.add(vfs.Rule{Op: vfs.OpDatasync, Path: walFiles, Fault: vfs.FaultHang, Gate: gate})
			opened := false
			defer func() {
				release()
				if !opened {
					close(gate)
				}
			}()

			var before [2]uint64
			for i, w := range s.workers {
				looptest.On(t, w.loop, func() { before[i] = w.sh.LastLSN() })
			}
			for i, k := range keys {
				fmt.Fprintf(writers[i], "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$3\r\nnew\r\n", len(k), k)
			}
			for i, w := range s.workers { // both writes applied and logged, not durable
				if !looptest.Until(t, w.loop, func() bool { return w.sh.LastLSN() > before[i] }) {
					t.Fatalf("shard %d never logged the write", i)
				}
			}

			type read struct {
				v  string
				at time.Time
			}
			// Each reader asks for both keys: one its own shard runs, one
			// the other shard runs for it.
			got := make(chan read, len(readers)*len(keys))
			getsBefore := s.totalCalls(t, "get")
			for _, r := range readers {
				go func() {
					var p strings.Builder // one write: both run before a reply goes
					for _, k := range keys {
						fmt.Fprintf(&p, "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(k), k)
					}
					r.Write([]byte(p.String()))
					br := bufio.NewReader(r)
					for range keys {
						br.ReadString('\n') // $3
						v, _ := br.ReadString('\n')
						got <- read{strings.TrimSpace(v), time.Now()}
					}
				}()
			}
			waitFor(t, "the reads to run", func() bool { return s.totalCalls(t, "get") >= getsBefore+len(readers)*len(keys) })
			openedAt := time.Now()
			opened = true
			close(gate)
			for range len(readers) * len(keys) {
				r := <-got
				if r.v == "new" && r.at.Before(openedAt) {
					t.Fatal("a read returned a write whose fdatasync had not completed")
				}
				if r.v != "new" {
					t.Fatalf("read %q, want the value written before it ran", r.v)
				}
			}
		})
	}
}

// totalCalls is the number of calls of command name every shard counted.
func (s *Server) totalCalls(t *testing.T, name string) int {
	cmd := lookupCommand([]byte(name))
	n := int64(0)
	for _, w := range s.workers {
		looptest.On(t, w.loop, func() { n += w.stats.cmdCalls[cmd.id].calls })
	}
	return int(n)
}

// dialPinged is a raw connection to s that has had its PONG.
func dialPinged(t *testing.T, s *Server) net.Conn {
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := nc.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := io.ReadFull(nc, buf); err != nil || string(buf) != "+PONG\r\n" {
		t.Fatalf("PING: %q %v", buf, err)
	}
	return nc
}
