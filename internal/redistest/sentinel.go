package redistest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Monitor is what a Sentinel watches: a master by name and address, the
// quorum, and the timeouts that make a failover fast enough for a test.
type Monitor struct {
	Name            string
	Host            string
	Port            int
	Quorum          int
	DownAfter       time.Duration // down-after-milliseconds
	FailoverTimeout time.Duration // failover-timeout
}

// Sentinel is one running redis-sentinel.
type Sentinel struct {
	Addr   string
	Client *redis.SentinelClient
	log    *syncBuffer
}

// StartSentinel starts redis-sentinel 7.0 on 127.0.0.1:port with a
// writable configuration file in dir (Sentinel rewrites it) that monitors
// m, and waits until it answers PING. It skips the test when
// redis-sentinel is not installed. The process goes when the test ends;
// its log is printed if the test failed.
func StartSentinel(t testing.TB, port int, dir string, m Monitor) *Sentinel {
	t.Helper()
	path, err := exec.LookPath("redis-sentinel")
	if err != nil {
		t.Skip("redis-sentinel not installed")
	}
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\n"+
		"sentinel monitor %s %s %d %d\n"+
		"sentinel down-after-milliseconds %s %d\n"+
		"sentinel failover-timeout %s %d\n",
		port, dir, m.Name, m.Host, m.Port, m.Quorum,
		m.Name, m.DownAfter.Milliseconds(), m.Name, m.FailoverTimeout.Milliseconds())
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Sentinel{Addr: "127.0.0.1:" + strconv.Itoa(port), log: &syncBuffer{}}
	cmd := exec.Command(path, conf)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("redis-sentinel on %s; its log:\n%s", s.Addr, s.log.String())
		}
	})
	s.Client = redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { s.Client.Close() })
	deadline := time.Now().Add(readyWithin)
	for s.Client.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("redis-sentinel did not answer PING within %v:\n%s", readyWithin, s.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

// syncBuffer is a bytes.Buffer that a process writes while a test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
