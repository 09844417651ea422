package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/runtime/looptest"
	"github.com/moond-db/moond/server/config"
	"github.com/redis/go-redis/v9"
)

// faults is the fault injection of a test server: every shard's storage
// runs through a vfs.FaultyBackend, and a rule applies to all of them.
type faults struct {
	mu  sync.Mutex
	bes []*vfs.FaultyBackend
}

// wrap is the server's wrapBackend hook.
func (f *faults) wrap(l *runtime.Loop, be runtime.Backend) runtime.Backend {
	fb := vfs.NewFaultyBackend(l, be)
	f.mu.Lock()
	f.bes = append(f.bes, fb)
	f.mu.Unlock()
	return fb
}

// add applies r on every shard and returns what removes it again.
func (f *faults) add(r vfs.Rule) (remove func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := make([]vfs.RuleID, len(f.bes))
	bes := append([]*vfs.FaultyBackend(nil), f.bes...)
	for i, fb := range bes {
		ids[i] = fb.Add(r)
	}
	return func() {
		for i, fb := range bes {
			fb.Delete(ids[i])
		}
	}
}

// walFiles matches the WAL's segment files (not a segment being created).
const walFiles = "wal-*.log"

func startFaulty(t *testing.T, backend string, shards int) (*Server, *faults) {
	cfg := config.Default()
	cfg.Port, cfg.Shards, cfg.IOBackend, cfg.Dir, cfg.AppendFsync = 0, shards, backend, t.TempDir(), "always"
	s := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	f := &faults{}
	s.wrapBackend = f.wrap
	startLoaded(t, s)
	return s, f
}

func TestFailedWALWriteAnswersMISCONFUntilAWriteSucceeds(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			s, f := startFaulty(t, backend, 1)
			c := client(t, s)
			ctx := testCtx(t)
			if err := c.Set(ctx, "before", "1", 0).Err(); err != nil {
				t.Fatal(err)
			}
			full := f.add(vfs.ENOSPCOnWrite(walFiles))
			// This write is applied in memory and logged, but its record
			// cannot be written: under always its reply is held until the
			// record is durable, so it is not acknowledged now. (Redis
			// exits on this; moond keeps the record and retries.)
			err := impatient(t, s).Set(ctx, "during", "1", 0).Err()
			if err == nil {
				t.Fatal("a write was acknowledged while the WAL could not be written")
			}
			c = client(t, s) // the timed-out connection's reply may still come
			waitFor(t, "MISCONF", func() bool {
				err := c.Set(ctx, "refused", "1", 0).Err()
				return err != nil && err.Error() == "MISCONF Errors writing to the AOF file: No space left on device"
			})
			if v, err := c.Get(ctx, "before").Result(); err != nil || v != "1" {
				t.Fatalf("reads must keep working: %q %v", v, err)
			}
			if info, _ := c.Info(ctx, "persistence").Result(); !strings.Contains(info, "aof_last_write_status:err") {
				t.Fatalf("INFO does not report the failed write:\n%s", info)
			}
			full()
			// The retried group goes through: the shard reports ok again and
			// takes writes (the record that was refused earlier is not there).
			waitFor(t, "aof_last_write_status:ok", func() bool {
				info, _ := c.Info(ctx, "persistence").Result()
				return strings.Contains(info, "aof_last_write_status:ok")
			})
			for i := 0; i < 20; i++ {
				if err := c.Set(ctx, "after"+strconv.Itoa(i), "1", 0).Err(); err != nil {
					t.Fatalf("write after the disk recovered: %v", err)
				}
			}
			if v, _ := c.Get(ctx, "during").Result(); v != "1" {
				t.Fatalf("the held write is gone after the disk recovered: %q", v)
			}
		})
	}
}

func TestFailedFdatasyncPoisonsTheShardForGood(t *testing.T) {
	s, f := startFaulty(t, "uring", 2)
	c := client(t, s)
	ctx := testCtx(t)
	c.Set(ctx, "x", "1", 0)
	eio := f.add(vfs.Rule{Op: vfs.OpDatasync, Path: walFiles, Fault: vfs.FaultError, Err: syscall.EIO})
	// The write whose fdatasync fails is never acknowledged: its client
	// gets an error (its connection closed, or MISCONF from another
	// shard), not OK, and not a hang.
	patient := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true, ReadTimeout: 10 * time.Second, MaxRetries: -1})
	defer patient.Close()
	err := patient.Set(ctx, "y", "1", 0).Err()
	var ne net.Error
	switch {
	case err == nil:
		t.Fatal("a write whose fdatasync failed was acknowledged")
	case errors.As(err, &ne) && ne.Timeout():
		t.Fatalf("a write whose fdatasync failed left its client hanging: %v", err)
	}
	eio()
	c = client(t, s)
	waitFor(t, "poison reported", func() bool {
		info, _ := c.Info(ctx, "persistence").Result()
		return strings.Contains(info, "wal_poisoned:1")
	})
	// Every shard that saw the failure refuses writes from now on; a
	// key on the poisoned shard is refused even though fsync works again.
	refused := 0
	for i := 0; i < 20; i++ {
		if err := c.Set(ctx, "k"+string(rune('a'+i)), "1", 0).Err(); err != nil && strings.HasPrefix(err.Error(), "MISCONF") {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no write refused after a failed fdatasync")
	}
	if v, err := c.Get(ctx, "x").Result(); err != nil || v != "1" {
		t.Fatalf("reads must keep working on a poisoned shard: %q %v", v, err)
	}
}

// impatient is a client that gives up on a reply after 300ms, for writes
// whose reply the server must hold back.
func impatient(t *testing.T, s *Server) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true, ReadTimeout: 300 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

// waitFor polls cond until it holds, failing after 20s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSlowDiskPausesReadersAndResumes: a connection reads again only once
// the replies to what it read went out, and a write's reply waits for its
// WAL record, so one stuck disk holds each connection to one read buffer.
// Past the WAL bound the shard also stops starting reads at all, so many
// connections cannot pile up more; every record is kept, and once the disk
// catches up everything is answered.
func TestSlowDiskPausesReadersAndResumes(t *testing.T) {
	for _, backend := range []string{"uring", "pool"} {
		t.Run(backend, func(t *testing.T) {
			cfg := config.Default()
			cfg.Port, cfg.Shards, cfg.IOBackend, cfg.Dir = 0, 1, backend, t.TempDir()
			s := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
			s.walBackpressure = 64 << 10
			f := &faults{}
			s.wrapBackend = f.wrap
			startLoaded(t, s)
			// A disk that has fallen behind: every WAL write waits.
			gate := make(chan struct{})
			release := f.add(vfs.Rule{Op: vfs.OpWrite, Path: walFiles, Fault: vfs.FaultHang, Gate: gate})
			w := s.workers[0]
			on := func(f func()) { looptest.On(t, w.loop, f) }

			const conns, perConn = 12, 100
			val := strings.Repeat("x", 1000)
			var conn []net.Conn
			sent := make(chan error, conns)
			total := 0
			for c := 0; c < conns; c++ {
				var p strings.Builder
				for i := 0; i < perConn; i++ {
					k := fmt.Sprintf("c%d:%d", c, i)
					fmt.Fprintf(&p, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(k), k, len(val), val)
				}
				total += p.Len()
				nc, err := net.Dial("tcp", s.Addr())
				if err != nil {
					t.Fatal(err)
				}
				defer nc.Close()
				conn = append(conn, nc)
				go func() {
					_, err := nc.Write([]byte(p.String()))
					sent <- err
				}()
			}
			if !looptest.Until(t, w.loop, func() bool { return w.sh.PausedReaders() > 0 }) {
				t.Fatal("no connection paused while the WAL was stuck")
			}
			var unwritten int
			var read int64
			on(func() {
				unwritten = w.sh.Info().WAL.Unwritten
				read = w.stats.netInputBytes
			})
			if limit := s.walBackpressure + conns*readBufSize*2; unwritten > limit {
				t.Fatalf("%d unwritten WAL bytes: more than the bound %d plus a read per connection", unwritten, s.walBackpressure)
			}
			if read >= int64(total) {
				t.Fatalf("the server read all %d bytes while its WAL was stuck", read)
			}
			release()
			close(gate)
			for range conns {
				if err := <-sent; err != nil {
					t.Fatal(err)
				}
			}
			for c, nc := range conn {
				r := bufio.NewReader(nc)
				nc.SetReadDeadline(time.Now().Add(30 * time.Second))
				for i := 0; i < perConn; i++ {
					if l, err := r.ReadString('\n'); err != nil || l != "+OK\r\n" {
						t.Fatalf("conn %d reply %d: %q %v", c, i, l, err)
					}
				}
			}
			if n, _ := client(t, s).DBSize(testCtx(t)).Result(); n != conns*perConn {
				t.Fatalf("DBSIZE %d after the disk caught up, want %d", n, conns*perConn)
			}
		})
	}
}

// TestTxnAcrossShardsIsNeverAcknowledgedWhenAPartCannotBeDurable: when the
// WAL's fdatasync fails under a MULTI/EXEC or an MSET over both shards, no
// command of it is answered as if it ran: the client sees errors (or its
// connection closed), never OK.
func TestTxnAcrossShardsIsNeverAcknowledgedWhenAPartCannotBeDurable(t *testing.T) {
	s, f := startFaulty(t, "uring", 2)
	ctx := testCtx(t)
	var k0, k1 string
	for i := 0; k0 == "" || k1 == ""; i++ {
		k := fmt.Sprintf("p%d", i)
		if shardOfSlot(KeySlot([]byte(k)), 2) == 0 {
			k0 = k
		} else {
			k1 = k
		}
	}
	f.add(vfs.Rule{Op: vfs.OpDatasync, Path: walFiles, Fault: vfs.FaultError, Err: syscall.EIO})
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true, ReadTimeout: 10 * time.Second, MaxRetries: -1})
	defer c.Close()
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, k0, "1", 0)
		p.Set(ctx, k1, "1", 0)
		return nil
	})
	if err == nil {
		t.Fatalf("an EXEC whose parts can never be durable was acknowledged: %v", cmds)
	}
	for _, cmd := range cmds {
		if cmd.Err() == nil {
			t.Errorf("%v answered OK although its WAL failed", cmd.Args())
		}
	}
	if err := c.MSet(ctx, k0, "2", k1, "2").Err(); err == nil {
		t.Fatal("an MSET over both shards whose WAL failed was acknowledged")
	}
}
