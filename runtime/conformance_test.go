package runtime

// The conformance suite: one set of behaviours every backend must show, each
// test run once per backend (uring, pool) as subtests.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestEchoServes500ConnectionsWithPipelinedTrafficByteForByte(t *testing.T) {
	testEcho500(t, false)
}

func TestEchoOverRecvMultiServes500ConnectionsWithPipelinedTrafficByteForByte(t *testing.T) {
	testEcho500(t, true)
}

func testEcho500(t *testing.T, multi bool) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		const conns = 500
		const perConn = 24 << 10
		needFiles(t, 2*conns+100) // client and server ends share this process
		l := startLoop(t, kind)
		var srv *echoServer
		if multi {
			srv = startEchoMulti(t, l)
		} else {
			srv = startEcho(t, l, 8<<10)
		}

		var wg sync.WaitGroup
		errs := make(chan error, conns)
		for i := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- echoClient(srv.addr.String(), uint64(i), perConn)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if srv.accepted != conns {
			t.Fatalf("server accepted %d connections, want %d", srv.accepted, conns)
		}
		if len(srv.errs) > 0 {
			t.Fatalf("server errors: %v", srv.errs)
		}
	})
}

// echoClient writes total bytes of a seeded pattern in random-sized pieces
// without waiting for replies, while reading the echo concurrently and
// comparing every byte.
func echoClient(addr string, seed uint64, total int) error {
	c, err := net.DialTimeout("tcp", addr, testDeadline)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(testDeadline))
	want := make([]byte, total)
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := range want {
		want[i] = byte(rng.Uint32())
	}
	werr := make(chan error, 1)
	go func() {
		off := 0
		for off < total {
			n := min(1+rng.IntN(4096), total-off)
			if _, err := c.Write(want[off : off+n]); err != nil {
				werr <- err
				return
			}
			off += n
		}
		werr <- nil
	}()
	got := make([]byte, total)
	if _, err := io.ReadFull(c, got); err != nil {
		return fmt.Errorf("conn %d: read echo: %w", seed, err)
	}
	if err := <-werr; err != nil {
		return fmt.Errorf("conn %d: write: %w", seed, err)
	}
	if i := firstDiff(got, want); i >= 0 {
		return fmt.Errorf("conn %d: echo differs at byte %d of %d", seed, i, total)
	}
	return nil
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// openOnLoop opens path on l and returns the FD.
func openOnLoop(t *testing.T, l *Loop, path string, flag int, perm uint32) FD {
	t.Helper()
	ch := make(chan error, 1)
	var fd FD
	onLoop(t, l, func() {
		l.Backend().Open(path, flag, perm, func(f FD, err error) { fd = f; ch <- err })
	})
	if err := await(t, ch, "open "+path); err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return fd
}

// chainOnLoop runs ops as one chain on l and returns the results.
func chainOnLoop(t *testing.T, l *Loop, ops []Op) []Result {
	t.Helper()
	ch := make(chan []Result, 1)
	onLoop(t, l, func() { l.Backend().Chain(ops, func(r []Result) { ch <- r }) })
	return await(t, ch, "chain")
}

func errOnLoop(t *testing.T, l *Loop, start func(b Backend, done func(error))) error {
	t.Helper()
	ch := make(chan error, 1)
	onLoop(t, l, func() { start(l.Backend(), func(err error) { ch <- err }) })
	return await(t, ch, "operation")
}

func TestChainWalWriteFdatasyncPageWriteTakesEffectInOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		dir := t.TempDir()
		wal := openOnLoop(t, l, filepath.Join(dir, "wal"), os.O_RDWR|os.O_CREATE, 0o644)
		page := openOnLoop(t, l, filepath.Join(dir, "page"), os.O_RDWR|os.O_CREATE, 0o644)

		// Many chains at once, each on its own 4 KiB of both files. Each
		// writes its WAL record, makes it durable, then overwrites the same
		// page twice (old, then new version) and reads the page back: only
		// strict order leaves the new version in place and in the read.
		const chains = 64
		const size = 4096
		results := make(chan []Result, chains)
		reads := make([][]byte, chains)
		onLoop(t, l, func() {
			b := l.Backend()
			for i := range chains {
				off := int64(i * size)
				rec := bytes.Repeat([]byte{byte(i)}, size)
				oldPage := bytes.Repeat([]byte{'o'}, size)
				newPage := bytes.Repeat([]byte{byte(i) ^ 0xff}, size)
				reads[i] = make([]byte, size)
				b.Chain([]Op{
					{Kind: OpPwrite, FD: wal, Buf: rec, Off: off},
					{Kind: OpFdatasync, FD: wal},
					{Kind: OpPwrite, FD: page, Buf: oldPage, Off: off},
					{Kind: OpPwritev, FD: page, Bufs: [][]byte{newPage[:100], newPage[100:]}, Off: off},
					{Kind: OpPread, FD: page, Buf: reads[i], Off: off},
				}, func(r []Result) { results <- r })
			}
		})
		for range chains {
			r := await(t, results, "chain results")
			if i := FailedStep(r); i >= 0 {
				t.Fatalf("step %d failed: %+v", i, r)
			}
			for i, want := range []int{size, 0, size, size, size} {
				if r[i].N != want {
					t.Fatalf("step %d moved %d bytes, want %d", i, r[i].N, want)
				}
			}
		}
		walData, _ := os.ReadFile(filepath.Join(dir, "wal"))
		pageData, _ := os.ReadFile(filepath.Join(dir, "page"))
		for i := range chains {
			span := func(b []byte) []byte { return b[i*size : (i+1)*size] }
			if !bytes.Equal(span(walData), bytes.Repeat([]byte{byte(i)}, size)) {
				t.Fatalf("chain %d: WAL record not written", i)
			}
			want := bytes.Repeat([]byte{byte(i) ^ 0xff}, size)
			if !bytes.Equal(span(pageData), want) {
				t.Fatalf("chain %d: page on disk is not the last version written", i)
			}
			if !bytes.Equal(reads[i], want) {
				t.Fatalf("chain %d: the read step ran before the writes before it", i)
			}
		}
	})
}

func TestChainFailedFirstStepCancelsTheRestAndNamesTheStep(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		dir := t.TempDir()
		roPath := filepath.Join(dir, "ro")
		if err := os.WriteFile(roPath, []byte("original"), 0o644); err != nil {
			t.Fatal(err)
		}
		otherPath := filepath.Join(dir, "other")
		ro := openOnLoop(t, l, roPath, os.O_RDONLY, 0)
		other := openOnLoop(t, l, otherPath, os.O_RDWR|os.O_CREATE, 0o644)

		r := chainOnLoop(t, l, []Op{
			{Kind: OpPwrite, FD: ro, Buf: []byte("clobbered"), Off: 0},
			{Kind: OpFdatasync, FD: ro},
			{Kind: OpPwrite, FD: other, Buf: []byte("must not happen"), Off: 0},
		})
		if got := FailedStep(r); got != 0 {
			t.Fatalf("FailedStep = %d, want 0 (results %+v)", got, r)
		}
		if !errors.Is(r[0].Err, syscall.EBADF) {
			t.Fatalf("step 0: err %v, want EBADF (write on a read-only fd)", r[0].Err)
		}
		for i := 1; i < len(r); i++ {
			if !errors.Is(r[i].Err, syscall.ECANCELED) {
				t.Fatalf("step %d: err %v, want ECANCELED", i, r[i].Err)
			}
		}
		if b, _ := os.ReadFile(otherPath); len(b) != 0 {
			t.Fatalf("a cancelled step ran: other file holds %q", b)
		}
		if b, _ := os.ReadFile(roPath); string(b) != "original" {
			t.Fatalf("read-only file changed to %q", b)
		}
	})
}

func TestChainShortStepReportsErrShortAndCancelsTheRest(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		dir := t.TempDir()
		src := filepath.Join(dir, "src")
		if err := os.WriteFile(src, []byte("0123456789"), 0o644); err != nil {
			t.Fatal(err)
		}
		dstPath := filepath.Join(dir, "dst")
		in := openOnLoop(t, l, src, os.O_RDONLY, 0)
		out := openOnLoop(t, l, dstPath, os.O_RDWR|os.O_CREATE, 0o644)

		buf := make([]byte, 8)
		r := chainOnLoop(t, l, []Op{
			{Kind: OpPread, FD: in, Buf: make([]byte, 4), Off: 0},
			{Kind: OpPread, FD: in, Buf: buf, Off: 6}, // only 4 bytes left
			{Kind: OpPwrite, FD: out, Buf: buf, Off: 0},
			{Kind: OpFsync, FD: out},
		})
		if got := FailedStep(r); got != 1 {
			t.Fatalf("FailedStep = %d, want 1 (results %+v)", got, r)
		}
		if r[0].N != 4 || r[0].Err != nil {
			t.Fatalf("step 0: %+v, want 4 bytes", r[0])
		}
		if r[1].N != 4 || !errors.Is(r[1].Err, ErrShort) {
			t.Fatalf("step 1: %+v, want 4 bytes and ErrShort", r[1])
		}
		for i := 2; i < len(r); i++ {
			if !errors.Is(r[i].Err, syscall.ECANCELED) {
				t.Fatalf("step %d: err %v, want ECANCELED", i, r[i].Err)
			}
		}
		if b, _ := os.ReadFile(dstPath); len(b) != 0 {
			t.Fatalf("a cancelled step ran: dst holds %q", b)
		}

		// A lone short read is not an error: it is what pread returned.
		ch := make(chan Result, 1)
		onLoop(t, l, func() {
			l.Backend().Pread(in, make([]byte, 8), 6, func(n int, err error) { ch <- Result{n, err} })
		})
		if got := await(t, ch, "pread"); got.N != 4 || got.Err != nil {
			t.Fatalf("lone short Pread = %+v, want 4 bytes, no error", got)
		}
	})
}

func TestChainRefusesTooLongOrUnknownStepsWithoutRunningAny(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		r := chainOnLoop(t, l, []Op{{Kind: OpNop}, {Kind: OpKind(200)}})
		if !errors.Is(r[1].Err, syscall.EINVAL) || !errors.Is(r[0].Err, syscall.ECANCELED) {
			t.Fatalf("unknown kind: %+v, want [ECANCELED EINVAL]", r)
		}
		r = chainOnLoop(t, l, make([]Op, MaxChainLen+1))
		if !errors.Is(r[0].Err, syscall.EINVAL) {
			t.Fatalf("too long: step 0 err %v, want EINVAL", r[0].Err)
		}
		long := make([]Op, MaxChainLen)
		for i := range long {
			long[i].Kind = OpNop
		}
		if i := FailedStep(chainOnLoop(t, l, long)); i >= 0 {
			t.Fatalf("chain of MaxChainLen nops failed at step %d", i)
		}
	})
}

func TestSyncDirAfterRenameMakesTheNewNameVisible(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		dir := t.TempDir()
		tmp, final := filepath.Join(dir, "control.tmp"), filepath.Join(dir, "control")
		fd := openOnLoop(t, l, tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
		r := chainOnLoop(t, l, []Op{
			{Kind: OpPwrite, FD: fd, Buf: []byte("redo=42"), Off: 0},
			{Kind: OpFsync, FD: fd},
			{Kind: OpClose, FD: fd},
			{Kind: OpRename, Path: tmp, NewPath: final},
		})
		if i := FailedStep(r); i >= 0 {
			t.Fatalf("step %d failed: %+v", i, r)
		}
		if err := errOnLoop(t, l, func(b Backend, done func(error)) { b.SyncDir(dir, done) }); err != nil {
			t.Fatalf("SyncDir: %v", err)
		}
		if b, err := os.ReadFile(final); err != nil || string(b) != "redo=42" {
			t.Fatalf("after rename: %q, %v", b, err)
		}
		if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("temp name still exists: %v", err)
		}
		err := errOnLoop(t, l, func(b Backend, done func(error)) { b.SyncDir(filepath.Join(dir, "missing"), done) })
		if !errors.Is(err, syscall.ENOENT) {
			t.Fatalf("SyncDir of a missing dir: %v, want ENOENT", err)
		}
		err = errOnLoop(t, l, func(b Backend, done func(error)) { b.Unlink(final, done) })
		if err != nil {
			t.Fatalf("Unlink: %v", err)
		}
		err = errOnLoop(t, l, func(b Backend, done func(error)) { b.Unlink(final, done) })
		if !errors.Is(err, syscall.ENOENT) {
			t.Fatalf("second Unlink: %v, want ENOENT", err)
		}
	})
}

func TestOpenReportsErrnoOfTheKernel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		dir := t.TempDir()
		missing, isDir := make(chan error, 1), make(chan error, 1)
		onLoop(t, l, func() {
			b := l.Backend()
			b.Open(filepath.Join(dir, "nope"), os.O_RDONLY, 0, func(_ FD, err error) { missing <- err })
			b.Open(dir, os.O_RDWR, 0, func(_ FD, err error) { isDir <- err })
		})
		if err := await(t, missing, "open"); !errors.Is(err, syscall.ENOENT) {
			t.Fatalf("open of a missing file: %v, want ENOENT", err)
		}
		if err := await(t, isDir, "open"); !errors.Is(err, syscall.EISDIR) {
			t.Fatalf("open of a directory for writing: %v, want EISDIR", err)
		}
	})
}

func TestCallbacksNeverRunInsideTheCallThatStartedThem(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		ch := make(chan error, 1)
		onLoop(t, l, func() {
			inside := true
			l.Backend().Chain([]Op{{Kind: OpKind(99)}}, func([]Result) {
				if inside {
					ch <- errors.New("chain callback ran inside Chain")
					return
				}
				l.Backend().Fsync(12345, func(err error) {
					if !errors.Is(err, syscall.EBADF) {
						ch <- fmt.Errorf("fsync of a bad fd: %v, want EBADF", err)
						return
					}
					ch <- nil
				})
			})
			inside = false
		})
		if err := await(t, ch, "callbacks"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestTimersAndMailboxRunOnScheduleWhileFsyncHangs makes an fsync hang for
// real: it is chained behind a read of a FIFO that only the test writes. While
// it hangs, the loop must keep its tick and keep running messages.
func TestTimersAndMailboxRunOnScheduleWhileFsyncHangs(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		dir := t.TempDir()
		fifoPath := filepath.Join(dir, "gate")
		if err := mkfifo(fifoPath); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
		// The test holds the FIFO open for writing; the loop reads it.
		gate, err := os.OpenFile(fifoPath, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer gate.Close()
		fifo := openOnLoop(t, l, fifoPath, os.O_RDWR, 0)
		file := openOnLoop(t, l, filepath.Join(dir, "data"), os.O_RDWR|os.O_CREATE, 0o644)

		var ticks, messages atomic.Int64
		done := make(chan []Result, 1)
		const period = 2 * time.Millisecond
		onLoop(t, l, func() {
			b := l.Backend()
			b.Chain([]Op{
				{Kind: OpRead, FD: fifo, Buf: make([]byte, 1)},
				{Kind: OpFsync, FD: file},
			}, func(r []Result) { done <- r })
			l.Every(period, func() { ticks.Add(1) })
		})
		start := time.Now()
		stopPosting := make(chan struct{})
		posted := make(chan struct{})
		go func() { // one message in flight at a time, each waited for
			defer close(posted)
			for {
				ran := make(chan struct{})
				if l.Post(func() { messages.Add(1); close(ran) }) != nil {
					return
				}
				select {
				case <-ran:
				case <-stopPosting:
					return
				}
			}
		}()
		const want = 25
		waitFor(t, testDeadline, "ticks and messages while the fsync hangs", func() bool {
			return ticks.Load() >= want && messages.Load() >= want
		})
		elapsed := time.Since(start)
		close(stopPosting)
		<-posted
		select {
		case r := <-done:
			t.Fatalf("the gated chain completed before the gate opened: %+v", r)
		default:
		}
		// On schedule: 25 ticks of 2ms cannot take seconds unless the loop
		// was blocked.
		if elapsed > 5*time.Second {
			t.Fatalf("%d ticks of %v took %v: the loop was blocked", want, period, elapsed)
		}
		t.Logf("%d ticks, %d messages in %v while the fsync hung", ticks.Load(), messages.Load(), elapsed)

		if _, err := gate.Write([]byte{1}); err != nil {
			t.Fatal(err)
		}
		r := await(t, done, "the gated chain after the gate opened")
		if i := FailedStep(r); i >= 0 {
			t.Fatalf("step %d failed after release: %+v", i, r)
		}
	})
}

func TestStopCancelsOperationsInFlightAndRunsTheirCallbacks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := NewLoop(Config{Backend: kind, CPU: -1})
		if err := l.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(l.Stop) // Stop is idempotent; this one only matters on failure
		srv := startEcho(t, l, 512)
		// One connection whose recv never completes: the client stays silent.
		c, err := net.Dial("tcp", srv.addr.String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		waitFor(t, testDeadline, "the connection to be accepted", func() bool {
			srv.mu.Lock()
			defer srv.mu.Unlock()
			return srv.accepted == 1
		})
		recvErr := make(chan error, 1)
		dir := t.TempDir()
		fifoPath := filepath.Join(dir, "never")
		fifoOK := mkfifo(fifoPath) == nil
		var fifoFD FD
		if fifoOK {
			fifoFD = openOnLoop(t, l, fifoPath, os.O_RDWR, 0)
		}
		chainRes := make(chan []Result, 1)
		onLoop(t, l, func() {
			b := l.Backend()
			// In flight now: the echo server's accept and its recv on the
			// silent connection. Add a timer Stop must drop and a chain
			// gated on a FIFO nobody writes.
			l.AfterFunc(time.Hour, func() { recvErr <- errors.New("a dropped timer fired") })
			if fifoOK {
				b.Chain([]Op{{Kind: OpRead, FD: fifoFD, Buf: make([]byte, 1)}, {Kind: OpNop}},
					func(r []Result) { chainRes <- r })
			}
		})
		stopped := make(chan struct{})
		go func() { l.Stop(); close(stopped) }()
		await(t, stopped, "Stop to return")
		if err := l.Post(func() {}); !errors.Is(err, ErrStopped) {
			t.Fatalf("Post after Stop: %v, want ErrStopped", err)
		}
		srv.mu.Lock()
		errs := srv.errs
		srv.mu.Unlock()
		if len(errs) != 1 || !errors.Is(errs[0], syscall.ECANCELED) {
			t.Fatalf("the pending accept reported %v, want one ECANCELED", errs)
		}
		if fifoOK {
			r := <-chainRes // Stop returned, so the callback has run
			if !errors.Is(r[0].Err, syscall.ECANCELED) || !errors.Is(r[1].Err, syscall.ECANCELED) {
				t.Fatalf("gated chain after Stop: %+v, want ECANCELED for both steps", r)
			}
		}
		select {
		case err := <-recvErr:
			t.Fatal(err)
		default:
		}
		// The server's connection was closed by Stop: the client sees EOF.
		_ = c.SetReadDeadline(time.Now().Add(testDeadline))
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !isReset(err) {
			t.Fatalf("client read after Stop: %v, want EOF", err)
		}
		l.Stop() // idempotent
	})
}

func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

func TestConnectionAddressesAndCloseCancelsThePendingRecvAndAccept(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		var ln FD
		var addr net.Addr
		accepted := make(chan FD, 1)
		onLoop(t, l, func() {
			var err error
			ln, addr, err = l.Backend().Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Error(err)
				return
			}
			l.Backend().Accept(ln, func(c FD, err error) { accepted <- c })
		})
		c, err := net.Dial("tcp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conn := await(t, accepted, "accept")
		var local, remote, lnAddr, none net.Addr
		onLoop(t, l, func() {
			b := l.Backend()
			local, remote, lnAddr, none = b.LocalAddr(conn), b.RemoteAddr(conn), b.LocalAddr(ln), b.RemoteAddr(ln)
		})
		if local == nil || local.String() != c.RemoteAddr().String() ||
			remote == nil || remote.String() != c.LocalAddr().String() ||
			lnAddr == nil || lnAddr.String() != addr.String() || none != nil {
			t.Fatalf("addresses: local %v remote %v listener %v/%v; client sees %v -> %v, listener %v",
				local, remote, lnAddr, none, c.LocalAddr(), c.RemoteAddr(), addr)
		}
		type res struct {
			n   int
			err error
		}
		recv := make(chan res, 1)
		closed := make(chan error, 1)
		onLoop(t, l, func() {
			b := l.Backend()
			b.Recv(conn, make([]byte, 16), func(n int, err error) { recv <- res{n, err} })
			b.Close(conn, func(err error) { closed <- err })
		})
		if err := await(t, closed, "close"); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if r := await(t, recv, "the pending recv"); r.n != 0 || !errors.Is(r.err, syscall.ECANCELED) {
			t.Fatalf("pending recv after Close: %d bytes, %v; want ECANCELED", r.n, r.err)
		}

		// The same for a listener with an accept pending.
		acceptErr := make(chan error, 1)
		onLoop(t, l, func() {
			b := l.Backend()
			b.Accept(ln, func(_ FD, err error) { acceptErr <- err })
			b.Close(ln, func(err error) { closed <- err })
		})
		if err := await(t, closed, "close of the listener"); err != nil {
			t.Fatalf("Close of the listener: %v", err)
		}
		if err := await(t, acceptErr, "the pending accept"); !errors.Is(err, syscall.ECANCELED) {
			t.Fatalf("pending accept after Close: %v, want ECANCELED", err)
		}
	})
}

func TestTwoLoopsListenOnTheSamePort(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		a, b := startLoop(t, kind), startLoop(t, kind)
		srv := startEcho(t, a, 512)
		var err error
		onLoop(t, b, func() { _, _, err = b.Backend().Listen("tcp", srv.addr.String()) })
		if err != nil {
			t.Fatalf("second loop cannot listen on %v: %v", srv.addr, err)
		}
	})
}

func TestMailboxWakesASleepingLoopPromptly(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		var worst time.Duration
		for range 200 {
			// Let the loop go to sleep: nothing is due, nothing is in flight
			// but its own wake-up read.
			waitFor(t, testDeadline, "the loop to sleep", l.sleeping.Load)
			ran := make(chan time.Time, 1)
			sent := time.Now()
			if err := l.Post(func() { ran <- time.Now() }); err != nil {
				t.Fatal(err)
			}
			lat := await(t, ran, "the message").Sub(sent)
			worst = max(worst, lat)
		}
		t.Logf("worst wake-up latency of 200: %v", worst)
		// A lost wake-up would show as the full test deadline; a slow one
		// as tens of milliseconds. Either fails here.
		if worst > 250*time.Millisecond {
			t.Fatalf("worst wake-up latency %v", worst)
		}
	})
}

func TestMailboxRunsEveryMessageInOrderFromManyProducers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind, func(c *Config) { c.MailboxSize = 64 })
		const producers, each = 8, 5000
		next := make([]int, producers) // loop thread only
		var bad atomic.Int64
		var total atomic.Int64
		var wg sync.WaitGroup
		for p := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					err := l.PostWait(context.Background(), func() {
						if next[p] != i {
							bad.Add(1)
						}
						next[p] = i + 1
						total.Add(1)
					})
					if err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		waitFor(t, testDeadline, "every message to run", func() bool { return total.Load() == producers*each })
		if bad.Load() != 0 {
			t.Fatalf("%d messages ran out of their producer's order", bad.Load())
		}
	})
}

func TestPostToAFullMailboxReturnsErrMailboxFull(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		const size = 4
		l := startLoop(t, kind, func(c *Config) { c.MailboxSize = size })
		// Hold the loop's thread so that nothing is drained meanwhile.
		hold, held := make(chan struct{}), make(chan struct{})
		if err := l.Post(func() { close(held); <-hold }); err != nil {
			t.Fatal(err)
		}
		<-held
		var ran atomic.Int64
		for i := range size {
			if err := l.Post(func() { ran.Add(1) }); err != nil {
				t.Fatalf("post %d of %d: %v", i+1, size, err)
			}
		}
		if err := l.Post(func() { ran.Add(1) }); !errors.Is(err, ErrMailboxFull) {
			t.Fatalf("post beyond MailboxSize: %v, want ErrMailboxFull", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		if err := l.PostWait(ctx, func() {}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("PostWait on a full mailbox: %v, want the context's error", err)
		}
		waiting := make(chan error, 1)
		go func() { waiting <- l.PostWait(context.Background(), func() { ran.Add(1) }) }()
		close(hold)
		if err := await(t, waiting, "PostWait once room appeared"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, testDeadline, "the queued messages", func() bool { return ran.Load() == size+1 })
	})
}

func TestPostFromAnotherLoopWakesIt(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		a, b := startLoop(t, kind), startLoop(t, kind)
		// Ping-pong: each hop is posted from the other loop's thread while
		// the receiver sleeps (on uring: a MSG_RING from the sender's ring).
		const hops = 2000
		done := make(chan int, 1)
		var hop func(n int, from, to *Loop)
		hop = func(n int, from, to *Loop) {
			if n == hops {
				done <- n
				return
			}
			if err := to.Post(func() { hop(n+1, to, from) }); err != nil {
				t.Error(err)
				done <- n
			}
		}
		start := time.Now()
		if err := a.Post(func() { hop(0, a, b) }); err != nil {
			t.Fatal(err)
		}
		if n := await(t, done, "ping-pong"); n != hops {
			t.Fatalf("ping-pong stopped after %d hops", n)
		}
		t.Logf("%d cross-loop hops in %v", hops, time.Since(start))
	})
}

func TestTimersFireInDeadlineOrderAndStopPreventsFiring(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		var order []int
		done := make(chan struct{})
		ticks := 0
		var stopped bool
		onLoop(t, l, func() {
			l.AfterFunc(30*time.Millisecond, func() { order = append(order, 3) })
			l.AfterFunc(10*time.Millisecond, func() { order = append(order, 1) })
			l.AfterFunc(20*time.Millisecond, func() { order = append(order, 2) })
			never := l.AfterFunc(15*time.Millisecond, func() { order = append(order, -1) })
			stopped = never.Stop()
			var every *Timer
			every = l.Every(time.Millisecond, func() {
				ticks++
				if ticks == 5 {
					every.Stop()
				}
			})
			l.AfterFunc(40*time.Millisecond, func() { close(done) })
		})
		await(t, done, "timers")
		onLoop(t, l, func() {
			if !stopped {
				t.Error("Stop of a pending timer returned false")
			}
			if fmt.Sprint(order) != "[1 2 3]" {
				t.Errorf("timers fired as %v, want [1 2 3]", order)
			}
			if ticks != 5 {
				t.Errorf("periodic timer ticked %d times after stopping itself at 5", ticks)
			}
		})
	})
}

func TestStartFailsForAnUnknownBackend(t *testing.T) {
	l := NewLoop(Config{Backend: Kind(42), CPU: -1})
	if err := l.Start(); err == nil {
		t.Fatal("Start with an unknown backend succeeded")
	}
	if err := l.Post(func() {}); !errors.Is(err, ErrStopped) {
		t.Fatalf("Post to a loop that failed to start: %v", err)
	}
	l.Stop()
}

func TestRequestStopFromTheLoopsOwnThreadStopsIt(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		if err := l.Post(l.RequestStop); err != nil {
			t.Fatal(err)
		}
		select {
		case <-l.Done():
		case <-time.After(testDeadline):
			t.Fatal("the loop did not stop")
		}
		if err := l.Err(); err != nil {
			t.Fatalf("Err after a clean stop: %v", err)
		}
	})
}

func TestListenOnAllAddressesAcceptsIPv4Clients(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		var addr net.Addr
		var err error
		accepted := make(chan error, 1)
		onLoop(t, l, func() {
			var ln FD
			ln, addr, err = l.Backend().Listen("tcp", ":0")
			if err == nil {
				l.Backend().Accept(ln, func(_ FD, err error) { accepted <- err })
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		port := addr.(*net.TCPAddr).Port
		c, err := net.Dial("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatalf("dial 127.0.0.1:%d after Listen(tcp, :0) = %v: %v", port, addr, err)
		}
		defer c.Close()
		if err := await(t, accepted, "accept"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestStopReturnsWithinStopGraceWhileAnOpenBlocksOnAFIFO opens a FIFO for
// reading, which blocks in the kernel until a writer appears. io_uring
// cancels it (the io-wq worker is interrupted); the pool cannot interrupt a
// blocking open(2), so Stop waits StopGrace and abandons it. Either way Stop
// returns.
func TestStopReturnsWithinStopGraceWhileAnOpenBlocksOnAFIFO(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		fifoPath := filepath.Join(t.TempDir(), "nobody-writes")
		if err := mkfifo(fifoPath); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
		// Release the open at the end, so no thread stays blocked.
		defer func() {
			if w, err := os.OpenFile(fifoPath, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}()
		const grace = 50 * time.Millisecond
		l := startLoop(t, kind, func(c *Config) { c.StopGrace = grace })
		onLoop(t, l, func() {
			l.Backend().Open(fifoPath, os.O_RDONLY, 0, func(fd FD, err error) {
				if err == nil {
					l.Backend().Close(fd, nil)
				}
			})
		})
		if p, ok := l.drv.(*poolBackend); ok {
			waitFor(t, testDeadline, "a worker to take the open", func() bool { return p.work.len() == 0 })
		}
		start := time.Now()
		stopped := make(chan struct{})
		go func() { l.Stop(); close(stopped) }()
		await(t, stopped, "Stop")
		t.Logf("Stop returned after %v (StopGrace %v)", time.Since(start), grace)
	})
}

// TestBeforeWaitRunsOncePerIterationAfterMessages checks the hook that group
// commit hangs on: it sees everything a burst of messages did, and runs
// before the loop sleeps, so work queued by it goes out without a wake-up.
func TestBeforeWaitRunsOncePerIterationAfterMessages(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		var queued, flushedAt []int
		pending := 0
		onLoop(t, l, func() {
			l.BeforeWait(func() {
				if pending > 0 {
					flushedAt = append(flushedAt, pending)
					pending = 0
				}
			})
		})
		done := make(chan struct{})
		// One message that queues 3 items: the hook must flush all 3 at once.
		onLoop(t, l, func() {
			for i := 0; i < 3; i++ {
				queued = append(queued, i)
				pending++
			}
		})
		onLoop(t, l, func() { close(done) })
		await(t, done, "messages")
		onLoop(t, l, func() {
			if len(flushedAt) == 0 || flushedAt[0] != 3 {
				t.Errorf("hook flushed %v, want the 3 items of one iteration together", flushedAt)
			}
		})
	})
}

// recvMultiRecorder collects what a RecvMulti hands its callback, from the
// loop's thread, for a test goroutine to inspect.
type recvMultiRecorder struct {
	mu       sync.Mutex
	data     []byte
	chunks   int
	empty    int // chunks with no data and done == false: never allowed
	afterEnd int // callbacks after the done one: never allowed
	ends     int
	endErr   error
	end      chan error // receives the done callback's error
}

func newRecvMultiRecorder() *recvMultiRecorder {
	return &recvMultiRecorder{end: make(chan error, 1)}
}

// cb is the RecvMulti callback; onChunk (may be nil) runs after each chunk
// was recorded, on the loop's thread.
func (r *recvMultiRecorder) cb(onChunk func()) func(data []byte, err error, done bool) {
	return func(data []byte, err error, done bool) {
		r.mu.Lock()
		switch {
		case r.ends > 0:
			r.afterEnd++
		case done:
			r.ends++
			r.endErr = err
			if len(data) > 0 {
				r.empty = -1 // data with the done callback: flagged as a contract breach below
			}
		case len(data) == 0 || err != nil:
			r.empty++
		default:
			r.data = append(r.data, data...) // data is valid only now: copy it
			r.chunks++
		}
		r.mu.Unlock()
		if done {
			r.end <- err
		} else if onChunk != nil {
			onChunk()
		}
	}
}

// check fails the test when the callback sequence broke the contract: a
// chunk without data, data with the done call, or a call after it.
func (r *recvMultiRecorder) check(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.empty != 0 || r.afterEnd != 0 || r.ends != 1 {
		t.Fatalf("RecvMulti callbacks: %d empty or bad chunks, %d done calls, %d calls after done",
			r.empty, r.ends, r.afterEnd)
	}
}

// acceptOne listens on l, dials it and returns the server's end (an FD of
// l's backend) and the client's.
func acceptOne(t *testing.T, l *Loop) (FD, net.Conn) {
	t.Helper()
	accepted := make(chan FD, 1)
	var addr net.Addr
	onLoop(t, l, func() {
		var ln FD
		var err error
		ln, addr, err = l.Backend().Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Error(err)
			return
		}
		l.Backend().Accept(ln, func(c FD, err error) {
			if err != nil {
				t.Errorf("accept: %v", err)
			}
			accepted <- c
			l.Backend().Close(ln, nil)
		})
	})
	if t.Failed() {
		t.FailNow()
	}
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return await(t, accepted, "accept"), c
}

func TestRecvMultiDeliversEveryByteInOrderThenEOF(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		conn, c := acceptOne(t, l)
		rec := newRecvMultiRecorder()
		onLoop(t, l, func() { l.Backend().RecvMulti(conn, rec.cb(nil)) })

		// Pieces from 1 byte to well past a receive buffer, so that chunks
		// both gather several writes and split one.
		rng := rand.New(rand.NewPCG(1, 2))
		want := make([]byte, 2<<20)
		for i := range want {
			want[i] = byte(rng.Uint32())
		}
		for off := 0; off < len(want); {
			n := min(1+rng.IntN(3*recvMultiBufSize), len(want)-off)
			if _, err := c.Write(want[off : off+n]); err != nil {
				t.Fatal(err)
			}
			off += n
		}
		if err := c.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		if err := await(t, rec.end, "the done callback"); err != nil {
			t.Fatalf("RecvMulti ended with %v, want end of stream (nil)", err)
		}
		onLoop(t, l, func() {}) // one more iteration: no callback may follow the done one
		rec.check(t)
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if !bytes.Equal(rec.data, want) {
			t.Fatalf("received %d bytes, want %d; first difference at %d",
				len(rec.data), len(want), firstDiff(rec.data, want))
		}
		t.Logf("%d bytes in %d chunks", len(want), rec.chunks)
		onLoop(t, l, func() { l.Backend().Close(conn, nil) })
	})
}

func TestRecvMultiCloseEndsItWithECANCELED(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)

		// Close while it waits on a silent connection.
		conn, _ := acceptOne(t, l)
		rec := newRecvMultiRecorder()
		closed := make(chan error, 1)
		onLoop(t, l, func() {
			b := l.Backend()
			b.RecvMulti(conn, rec.cb(nil))
			b.Close(conn, func(err error) { closed <- err })
		})
		if err := await(t, closed, "close"); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := await(t, rec.end, "the done callback"); !errors.Is(err, syscall.ECANCELED) {
			t.Fatalf("RecvMulti after Close: %v, want ECANCELED", err)
		}
		rec.check(t)

		// Close from inside the first chunk's callback, while the client
		// keeps sending: the done callback with ECANCELED is the only one
		// left.
		conn, c := acceptOne(t, l)
		rec = newRecvMultiRecorder()
		onLoop(t, l, func() {
			b := l.Backend()
			b.RecvMulti(conn, rec.cb(func() { b.Close(conn, nil) }))
		})
		go func() {
			msg := make([]byte, 1000)
			for {
				if _, err := c.Write(msg); err != nil {
					return // the server closed: reset or broken pipe
				}
			}
		}()
		if err := await(t, rec.end, "the done callback"); !errors.Is(err, syscall.ECANCELED) {
			t.Fatalf("RecvMulti closed in its callback: %v, want ECANCELED", err)
		}
		onLoop(t, l, func() {})
		rec.check(t)
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if rec.chunks != 1 {
			t.Fatalf("%d chunks delivered, want 1: none after the Close", rec.chunks)
		}
	})
}

func TestRecvMultiReportsErrorsAndStopAsTheDoneCallback(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := NewLoop(Config{Backend: kind, CPU: -1})
		if err := l.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(l.Stop)

		// A handle the backend never gave out: EBADF, and not inside the call.
		bad := newRecvMultiRecorder()
		onLoop(t, l, func() {
			l.Backend().RecvMulti(12345, bad.cb(nil))
			bad.mu.Lock()
			defer bad.mu.Unlock()
			if bad.ends != 0 {
				t.Error("the done callback ran inside RecvMulti")
			}
		})
		if err := await(t, bad.end, "the done callback"); !errors.Is(err, syscall.EBADF) {
			t.Fatalf("RecvMulti on a bad handle: %v, want EBADF", err)
		}
		bad.check(t)

		// Stop cancels a RecvMulti waiting on a silent connection.
		conn, _ := acceptOne(t, l)
		rec := newRecvMultiRecorder()
		onLoop(t, l, func() { l.Backend().RecvMulti(conn, rec.cb(nil)) })
		l.Stop()
		if err := await(t, rec.end, "the done callback"); !errors.Is(err, syscall.ECANCELED) {
			t.Fatalf("RecvMulti at Stop: %v, want ECANCELED", err)
		}
		rec.check(t)
	})
}

// TestDetachHandsTheSocketOverWithoutShuttingItDown: a detached socket's
// duplicate carries on the connection both ways, and the receive pending
// on it when it left the loop ends with ECANCELED, as after Close, having
// taken none of the bytes.
func TestDetachHandsTheSocketOverWithoutShuttingItDown(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		l := startLoop(t, kind)
		if _, ok := l.Backend().(Detacher); !ok {
			t.Skipf("%s cannot detach sockets here", kind)
		}
		accepted := make(chan FD, 1)
		var addr net.Addr
		onLoop(t, l, func() {
			ln, a, err := l.Backend().Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Error(err)
				return
			}
			addr = a
			l.Backend().Accept(ln, func(c FD, err error) { accepted <- c })
		})
		c, err := net.Dial("tcp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(testDeadline))
		conn := await(t, accepted, "accept")
		type res struct {
			n   int
			err error
		}
		recv := make(chan res, 1)
		var dup int
		onLoop(t, l, func() {
			b := l.Backend()
			b.Recv(conn, make([]byte, 16), func(n int, err error) { recv <- res{n, err} })
			dup, err = b.(Detacher).Detach(conn)
		})
		if err != nil {
			t.Fatalf("Detach: %v", err)
		}
		f := os.NewFile(uintptr(dup), "detached")
		nc, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(testDeadline))
		if _, err := nc.Write([]byte("pong")); err != nil {
			t.Fatalf("write on the duplicate: %v", err)
		}
		buf := make([]byte, 4)
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "pong" {
			t.Fatalf("the client read %q, %v; want pong", buf, err)
		}
		if _, err := c.Write([]byte("more")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(nc, buf); err != nil || string(buf) != "more" {
			t.Fatalf("the duplicate read %q, %v; want more", buf, err)
		}
		if r := await(t, recv, "the pending recv"); r.n != 0 || !errors.Is(r.err, syscall.ECANCELED) {
			t.Fatalf("the receive pending at Detach: %d bytes, %v; want ECANCELED", r.n, r.err)
		}
	})
}
