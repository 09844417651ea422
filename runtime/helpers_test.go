package runtime

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// testKinds are the backends the conformance suite runs against.
var testKinds = []Kind{KindUring, KindPool}

// forEachBackend runs f as one subtest per backend. The uring subtest is
// skipped only where io_uring cannot be set up here.
func forEachBackend(t *testing.T, f func(t *testing.T, kind Kind)) {
	t.Helper()
	for _, kind := range testKinds {
		t.Run(kind.String(), func(t *testing.T) {
			skipUnavailable(t, kind)
			f(t, kind)
		})
	}
}

func skipUnavailable(tb testing.TB, kind Kind) {
	tb.Helper()
	if kind != KindUring {
		return
	}
	if ok, reason, _ := ProbeUring(); !ok {
		tb.Skipf("io_uring unavailable: %s", reason)
	}
}

// startLoop starts a loop of kind and stops it when the test ends.
func startLoop(tb testing.TB, kind Kind, mod ...func(*Config)) *Loop {
	tb.Helper()
	cfg := Config{Backend: kind, CPU: -1}
	for _, m := range mod {
		m(&cfg)
	}
	l := NewLoop(cfg)
	if err := l.Start(); err != nil {
		tb.Fatalf("Start(%v): %v", kind, err)
	}
	tb.Cleanup(l.Stop)
	return l
}

// testDeadline bounds every wait in the tests: generous, because -race and
// a loaded CI machine are slow, but finite, so a bug fails instead of hanging.
const testDeadline = 20 * time.Second

// waitFor polls cond until it holds or the deadline passes.
func waitFor(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// onLoop runs f on l's thread and returns once it ran.
func onLoop(tb testing.TB, l *Loop, f func()) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	if err := l.Call(ctx, f); err != nil {
		tb.Fatalf("Call: %v", err)
	}
}

// await waits for the value a loop callback sends on ch.
func await[T any](tb testing.TB, ch <-chan T, what string) T {
	tb.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testDeadline):
		tb.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// echoServer serves TCP echo on a loop: per connection, recv into its own
// buffer, send what came, recv again. It is the shape of a RESP server's
// connection handling, minus the parsing.
type echoServer struct {
	l    *Loop
	b    Backend
	ln   FD
	addr net.Addr

	// multi serves each connection with RecvMulti instead of one Recv
	// after another.
	multi bool

	mu       sync.Mutex
	accepted int
	errs     []error
}

// startEcho listens on 127.0.0.1 and starts accepting, on l's thread.
func startEcho(tb testing.TB, l *Loop, bufSize int) *echoServer {
	tb.Helper()
	s := &echoServer{l: l}
	var err error
	onLoop(tb, l, func() {
		s.b = l.Backend()
		s.ln, s.addr, err = s.b.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			s.accept(bufSize)
		}
	})
	if err != nil {
		tb.Fatalf("Listen: %v", err)
	}
	return s
}

func (s *echoServer) accept(bufSize int) {
	s.b.Accept(s.ln, func(c FD, err error) {
		if err != nil {
			s.fail(err) // ECANCELED at Stop
			return
		}
		s.mu.Lock()
		s.accepted++
		s.mu.Unlock()
		if s.multi {
			s.serveMulti(c)
		} else {
			s.serve(c, make([]byte, bufSize))
		}
		s.accept(bufSize)
	})
}

func (s *echoServer) serve(c FD, buf []byte) {
	s.b.Recv(c, buf, func(n int, err error) {
		if err != nil || n == 0 {
			s.b.Close(c, nil)
			return
		}
		s.b.Send(c, buf[:n], func(_ int, err error) {
			if err != nil {
				s.fail(err)
				s.b.Close(c, nil)
				return
			}
			s.serve(c, buf)
		})
	})
}

// startEchoMulti is startEcho with connections served by RecvMulti.
func startEchoMulti(tb testing.TB, l *Loop) *echoServer {
	tb.Helper()
	s := &echoServer{l: l, multi: true}
	var err error
	onLoop(tb, l, func() {
		s.b = l.Backend()
		s.ln, s.addr, err = s.b.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			s.accept(0)
		}
	})
	if err != nil {
		tb.Fatalf("Listen: %v", err)
	}
	return s
}

// serveMulti echoes over RecvMulti, the way a server with a multishot recv
// works: every chunk is copied into the connection's pending output (the
// chunk's memory goes back to the backend when the callback returns), and
// one send at a time takes all that is pending. At end of stream the
// connection is closed once the last send finished.
func (s *echoServer) serveMulti(c FD) {
	var out, pending []byte
	var sending, eof, closed bool
	closeConn := func() {
		if !closed {
			closed = true
			s.b.Close(c, nil)
		}
	}
	var flush func()
	flush = func() {
		out, pending = pending, out[:0]
		sending = true
		s.b.Send(c, out, func(_ int, err error) {
			sending = false
			switch {
			case err != nil:
				if !closed {
					s.fail(err)
				}
				closeConn()
			case len(pending) > 0:
				flush()
			case eof:
				closeConn()
			}
		})
	}
	s.b.RecvMulti(c, func(data []byte, err error, done bool) {
		switch {
		case done && err == nil: // end of stream: finish sending first
			eof = true
			if !sending {
				closeConn()
			}
		case done:
			closeConn()
		default:
			pending = append(pending, data...)
			if !sending {
				flush()
			}
		}
	})
}

func (s *echoServer) fail(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}
