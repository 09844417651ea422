package shard

import (
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/runtime"
	"github.com/moond-db/moond/runtime/looptest"
)

// BenchmarkBoot measures Open over a checkpointed shard of N keys of 64
// bytes (SET key:%012d), with no WAL to replay above the redo point: the
// cost of loading the heap into the keyspace. MOOND_BOOT_KEYS sets N
// (default 200000; the restart goal is stated for 1000000);
// MOOND_BOOT_GOGC the collector's setting during each boot
// (bootGCPercent). cpu-ms/op is the process's CPU time per boot.
func BenchmarkBoot(b *testing.B) {
	n := 200_000
	if v, err := strconv.Atoi(os.Getenv("MOOND_BOOT_KEYS")); err == nil && v > 0 {
		n = v
	}
	dir := b.TempDir()
	l := runtime.NewLoop(runtime.Config{Backend: runtime.KindPool, CPU: -1})
	if err := l.Start(); err != nil {
		b.Fatal(err)
	}
	defer l.Stop()
	o := testOptions(dir, "no")
	o.PageCacheSize = 256 << 20
	var s *Shard
	var err error
	looptest.On(b, l, func() { s, err = Open(l, o) })
	if err != nil {
		b.Fatal(err)
	}
	value := []byte(strings.Repeat("v", 64))
	const batch = 10_000
	for i := 0; i < n; i += batch {
		looptest.On(b, l, func() {
			var out resp.Writer
			args := [][]byte{[]byte("SET"), nil, value}
			spec := keyspace.Lookup(args[0])
			for j := i; j < min(i+batch, n); j++ {
				args[1] = fmt.Appendf(args[1][:0], "key:%012d", j)
				out.Reset()
				s.Exec(&keyspace.Client{}, spec, args, &out)
			}
		})
	}
	save(b, l, s)
	closeShard(b, l, s)
	gcPercent := bootGCPercent(b)
	var cpu time.Duration
	var faults int64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		goruntime.GC() // the last boot's garbage is not this boot's work
		prev := debug.SetGCPercent(gcPercent)
		before := processCPU(b)
		beforeFaults := minorFaults(b)
		b.StartTimer()
		looptest.On(b, l, func() { s, err = Open(l, o) })
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += processCPU(b) - before
		faults += minorFaults(b) - beforeFaults
		debug.SetGCPercent(prev)
		if got := s.Keyspace().DBInfo(0).Keys; got != int64(n) {
			b.Fatalf("%d keys after the boot, want %d", got, n)
		}
		closeShard(b, l, s)
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
	// CPU time, all threads (the collector's too): less sensitive than
	// the elapsed time to other work on a shared machine.
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	// Page faults: each is a trap and a page of memory zeroed, the cost
	// of memory the boot touches for the first time.
	b.ReportMetric(float64(faults)/float64(b.N), "faults/op")
}

// bootGCPercent is GOGC for the boots BenchmarkBoot times:
// MOOND_BOOT_GOGC (a number, or "off" as the server boots, see
// server/bootgc.go), else the process's setting.
func bootGCPercent(b *testing.B) int {
	v := os.Getenv("MOOND_BOOT_GOGC")
	if v == "off" {
		return -1
	}
	if n, err := strconv.Atoi(v); err == nil {
		return n
	}
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// minorFaults is the number of page faults the process has taken that
// needed no I/O.
func minorFaults(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Minflt
}

// processCPU is the user and system time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
