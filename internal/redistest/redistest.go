// Package redistest starts the real redis-server 7.0, whose replies are
// moond's specification, for the differential tests of several packages
// (tests/, replication/).
package redistest

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// readyWithin bounds how long redis-server may take to accept connections.
const readyWithin = 20 * time.Second

// Start starts redis-server on 127.0.0.1:port with its data in dir,
// without persistence, and the extra arguments after (a configuration
// file's path first, if any, as redis-server takes it); waits until it
// accepts connections; and returns a RESP2 client. It skips the test when
// redis-server is not installed or is not 7.0. The server and the client
// go when the test ends.
func Start(t testing.TB, port int, dir string, extra ...string) *redis.Client {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	var args []string
	if len(extra) > 0 && !strings.HasPrefix(extra[0], "--") {
		args, extra = extra[:1], extra[1:]
	}
	args = append(append(args, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir), extra...)
	cmd := exec.Command(path, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if !ready(out) {
		t.Fatalf("redis-server did not become ready within %v", readyWithin)
	}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	info, err := c.Info(context.Background(), "server").Result()
	if err != nil || !strings.Contains(info, "redis_version:7.0.") {
		t.Skip("redis-server is not 7.0, whose replies are the specification")
	}
	return c
}

// ready waits, within readyWithin, for redis-server's log line saying it
// accepts connections, then drains the rest of its log in the background.
func ready(log io.Reader) bool {
	seen := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(log)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "Ready to accept connections") {
				close(seen)
				break
			}
		}
		io.Copy(io.Discard, log)
	}()
	select {
	case <-seen:
		return true
	case <-time.After(readyWithin):
		return false
	}
}
