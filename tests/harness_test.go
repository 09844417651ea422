package tests

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// moondBinary builds cmd/moond once per test process.
func moondBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "moond-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "moond")
		args := []string{"build", "-o", binPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, "github.com/moond-db/moond/cmd/moond")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// server is one running moond process.
type server struct {
	t       testing.TB
	cmd     *exec.Cmd
	port    int
	dir     string
	log     *lockedBuffer
	done    chan error
	ready   chan struct{}
	logDone chan struct{} // closed when the log pipe reached EOF
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freePort asks the kernel for a port nobody listens on.
func freePort(t testing.TB) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		// moond listens with SO_REUSEPORT: two servers of parallel tests
		// given the same port would both listen on it and share its
		// connections. A port is handed out once per test process.
		if !portsUsed[port] {
			portsUsed[port] = true
			return port
		}
	}
}

var (
	portsMu   sync.Mutex
	portsUsed = map[int]bool{}
)

// startServer starts moond with extra flags (a config file's path first,
// if any) and waits until it accepts connections. It is stopped (SIGKILL if it must) when the test ends.
func startServer(t testing.TB, backend string, shards int, extra ...string) *server {
	t.Helper()
	return startServerIn(t, t.TempDir(), backend, shards, extra...)
}

// startServerIn is startServer on a given data directory (for restarts).
// The port freePort hands out may be taken before moond listens on it (a
// client connection's ephemeral port is drawn from the same range): then
// moond is started again on another port, at most three times.
func startServerIn(t testing.TB, dir, backend string, shards int, extra ...string) *server {
	t.Helper()
	for attempt := 1; ; attempt++ {
		s := launch(t, dir, backend, shards, extra...)
		if attempt < 3 && s.portTaken() {
			continue
		}
		s.waitReady()
		return s
	}
}

// portTaken reports whether moond exited before it was ready because its
// port was in use; it waits until the server is ready or exited.
func (s *server) portTaken() bool {
	select {
	case <-s.ready:
		return false
	case err := <-s.done:
		s.done <- err
		<-s.logDone
		return strings.Contains(s.log.String(), "address already in use")
	case <-time.After(30 * time.Second):
		return false // waitReady says so
	}
}

// launch starts moond without waiting for it to be ready.
func launch(t testing.TB, dir, backend string, shards int, extra ...string) *server {
	t.Helper()
	s := &server{t: t, port: freePort(t), dir: dir, log: &lockedBuffer{}, done: make(chan error, 1)}
	var args []string
	if len(extra) > 0 && !strings.HasPrefix(extra[0], "--") {
		args, extra = extra[:1], extra[1:] // a config file comes first
	}
	args = append(append(args, "--port", strconv.Itoa(s.port), "--dir", s.dir, "--io-backend", backend,
		"--shards", strconv.Itoa(shards)), extra...)
	s.cmd = exec.Command(moondBinary(t), args...)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stdout, s.cmd.Stderr = pw, pw
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	s.ready = make(chan struct{})
	s.logDone = make(chan struct{})
	go s.readLog(pr)
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			// The server's side of a failure: a crash, a refusal, the
			// log lines before the client saw something go wrong.
			err := <-s.done
			s.done <- err
			t.Logf("moond on port %d (%s) exited (%v); its log:\n%s", s.port, s.dir, err, s.log.String())
		}
	})
	return s
}

// logShows waits (at most 10s) for a log line containing substr: the log
// is copied by another goroutine, so a line the server wrote may lag
// behind what a client already saw.
func (s *server) logShows(substr string) bool {
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.log.String(), substr) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// exitCode waits (at most 30s) for the process to exit by itself.
func (s *server) exitCode() int {
	s.t.Helper()
	select {
	case err := <-s.done:
		s.done <- err
		<-s.logDone
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			s.t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		s.t.Fatalf("moond still running after 30s\n%s", s.log.String())
		return -1
	}
}

// kill9 kills the process with SIGKILL and waits for it to be gone.
func (s *server) kill9() {
	s.cmd.Process.Kill()
	err := <-s.done
	s.done <- err
}

// readLog copies the server's log and closes ready at the line that says
// it accepts connections.
func (s *server) readLog(r *os.File) {
	defer close(s.logDone)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	signalled := false
	for sc.Scan() {
		line := sc.Text()
		s.log.Write([]byte(line + "\n"))
		if !signalled && strings.Contains(line, "Ready to accept connections") {
			signalled = true
			close(s.ready)
		}
	}
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// waitReady waits, with a deadline, for the log line that says moond
// accepts connections.
func (s *server) waitReady() {
	s.t.Helper()
	select {
	case <-s.ready:
	case err := <-s.done:
		s.done <- err
		s.t.Fatalf("moond exited before it was ready: %v\n%s", err, s.log.String())
	case <-time.After(30 * time.Second):
		s.t.Fatalf("moond did not become ready on %s within 30s\n%s", s.addr(), s.log.String())
	}
}

func (s *server) kill() {
	// Every reader of done puts the result back, so it is there once the
	// process exited; ProcessState is not read here: the goroutine in
	// launch writes it when the process exits on its own.
	s.cmd.Process.Kill() // an error when it exited already: nothing to do
	err := <-s.done
	s.done <- err
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop() error {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.done <- err
		return err
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		return fmt.Errorf("moond did not exit within 15s of SIGTERM\n%s", s.log.String())
	}
}

// client returns a go-redis client speaking protocol proto (2 or 3).
func (s *server) client(proto int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.addr(), Protocol: proto, DisableIdentity: proto == 2})
	s.t.Cleanup(func() { c.Close() })
	return c
}

// raw opens a plain TCP connection for hand-written protocol.
func (s *server) raw() *rawConn {
	s.t.Helper()
	c, err := net.DialTimeout("tcp", s.addr(), 5*time.Second)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { c.Close() })
	return &rawConn{t: s.t, c: c, r: bufio.NewReader(c)}
}

type rawConn struct {
	t testing.TB
	c net.Conn
	r *bufio.Reader
}

func (r *rawConn) send(s string) {
	r.t.Helper()
	r.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.c.Write([]byte(s)); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// line reads one reply line (without CRLF).
func (r *rawConn) line() string {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	l, err := r.r.ReadString('\n')
	if err != nil {
		r.t.Fatalf("read: %v (got %q)", err, l)
	}
	return l[:len(l)-2]
}

// closed reports whether the server closed the connection (EOF within 5s).
func (r *rawConn) closed() bool {
	r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := r.r.ReadByte()
	return err != nil && !isTimeout(err)
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// eachServer runs f against moond on both backends with 1 and 2 shards.
func eachServer(t *testing.T, f func(t *testing.T, s *server)) {
	for _, backend := range []string{"uring", "pool"} {
		for _, shards := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/shards=%d", backend, shards), func(t *testing.T) {
				t.Parallel()
				f(t, startServer(t, backend, shards))
			})
		}
	}
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}
