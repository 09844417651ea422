package runtime

// Benchmarks run every backend in the same run, side by side:
//
//	go test -run '^$' -bench . ./runtime/
//
// BenchmarkEcho: TCP echo round trips (64 bytes out, 64 back) through a
// loop, from 1 and from 50 client connections at once, the server receiving
// with one Recv after another.
// BenchmarkEchoRecvMulti: the same with the server receiving through
// RecvMulti (a multishot recv over provided buffers on uring), copying each
// chunk into its output as a real server must.
// MOOND_BENCH_LOOP_CPU=n pins the echo loop to CPU n (run the binary under
// taskset to keep the clients off it).
// BenchmarkGroupCommit: WAL-style group commit, N appends of 4 KiB gathered
// into one pwritev, then one fdatasync, as one chain (the shape docs/DESIGN.md
// gives the WAL: one write + fdatasync per loop iteration), N = 1, 16, 128,
// over a preallocated file.
// BenchmarkLinkedAppends: the same bytes as N separate pwrite steps linked
// one after another, then the fdatasync: what a long chain costs per step.

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

func BenchmarkEcho(b *testing.B) { benchEchoAll(b, false) }

// BenchmarkEchoRecvMulti is BenchmarkEcho with the server receiving through
// RecvMulti instead of one Recv after another.
func BenchmarkEchoRecvMulti(b *testing.B) { benchEchoAll(b, true) }

func benchEchoAll(b *testing.B, multi bool) {
	for _, conns := range []int{1, 50} {
		for _, kind := range testKinds {
			b.Run(fmt.Sprintf("conns=%d/%s", conns, kind), func(b *testing.B) {
				skipUnavailable(b, kind)
				benchEcho(b, kind, conns, multi)
			})
		}
	}
}

// benchLoopCPU pins a benchmark's loop to the CPU MOOND_BENCH_LOOP_CPU names.
func benchLoopCPU(b *testing.B) func(*Config) {
	return func(c *Config) {
		if v := os.Getenv("MOOND_BENCH_LOOP_CPU"); v != "" {
			cpu, err := strconv.Atoi(v)
			if err != nil {
				b.Fatalf("MOOND_BENCH_LOOP_CPU=%q: %v", v, err)
			}
			c.CPU = cpu
		}
	}
}

func benchEcho(b *testing.B, kind Kind, conns int, multi bool) {
	l := startLoop(b, kind, benchLoopCPU(b))
	var srv *echoServer
	if multi {
		srv = startEchoMulti(b, l)
	} else {
		srv = startEcho(b, l, 4096)
	}
	clients := make([]net.Conn, conns)
	for i := range clients {
		c, err := net.Dial("tcp", srv.addr.String())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		clients[i] = c
	}
	msg := make([]byte, 64)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range clients {
		n := b.N / conns
		if i < b.N%conns {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, len(msg))
			for range n {
				if _, err := c.Write(msg); err != nil {
					b.Error(err)
					return
				}
				if _, err := io.ReadFull(c, buf); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "rt/s")
}

func BenchmarkGroupCommit(b *testing.B) {
	for _, n := range []int{1, 16, 128} {
		for _, kind := range testKinds {
			b.Run(fmt.Sprintf("appends=%d/%s", n, kind), func(b *testing.B) {
				skipUnavailable(b, kind)
				benchCommits(b, kind, n, false)
			})
		}
	}
}

func BenchmarkLinkedAppends(b *testing.B) {
	for _, n := range []int{1, 16, 128} {
		for _, kind := range testKinds {
			b.Run(fmt.Sprintf("appends=%d/%s", n, kind), func(b *testing.B) {
				skipUnavailable(b, kind)
				benchCommits(b, kind, n, true)
			})
		}
	}
}

// benchCommits drives the commits from the loop itself: each chain's
// callback starts the next, so the figure is the backend's, not the cost of
// handing work to the loop. Each commit is appends pages of 4 KiB then an
// fdatasync: one pwritev step, or (linked) one pwrite step per page.
func benchCommits(b *testing.B, kind Kind, appends int, linked bool) {
	const page = 4096
	group := appends * page
	window := max(8<<20/group, 1) * group // a preallocated WAL segment
	path := filepath.Join(b.TempDir(), "wal")
	if err := preallocate(path, window); err != nil {
		b.Fatal(err)
	}
	l := startLoop(b, kind)
	fd := FD(-1)
	opened := make(chan error, 1)
	onLoop(b, l, func() {
		l.Backend().Open(path, os.O_RDWR, 0, func(f FD, err error) { fd = f; opened <- err })
	})
	if err := await(b, opened, "open"); err != nil {
		b.Fatal(err)
	}
	pages := make([][]byte, appends)
	for i := range pages {
		pages[i] = make([]byte, page)
	}
	var ops []Op
	if linked {
		for _, p := range pages {
			ops = append(ops, Op{Kind: OpPwrite, FD: fd, Buf: p})
		}
	} else {
		ops = append(ops, Op{Kind: OpPwritev, FD: fd, Bufs: pages})
	}
	ops = append(ops, Op{Kind: OpFdatasync, FD: fd})

	b.SetBytes(int64(group))
	b.ResetTimer()
	start := time.Now()
	done := make(chan error, 1)
	onLoop(b, l, func() {
		var commit func(i int)
		commit = func(i int) {
			if i == b.N {
				done <- nil
				return
			}
			base := int64(i*group) % int64(window)
			for j := range ops[:len(ops)-1] {
				ops[j].Off = base + int64(j*page)
			}
			l.Backend().Chain(ops, func(r []Result) {
				if k := FailedStep(r); k >= 0 {
					done <- fmt.Errorf("commit %d: step %d: %v", i, k, r[k].Err)
					return
				}
				commit(i + 1)
			})
		}
		commit(0)
	})
	if err := await(b, done, "commits"); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "fsyncs/s")
	b.ReportMetric(float64(b.N)*float64(group)/elapsed.Seconds()/1e6, "MB/s")
}

// preallocate writes size zero bytes and syncs them, so that the benchmark's
// overwrites need no block allocation and fdatasync flushes data only.
func preallocate(path string, size int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(make([]byte, size)); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
