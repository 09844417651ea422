package server

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// gcSettings reads GOGC and the memory limit without changing them.
func gcSettings() (percent, limit int64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
}

func TestBootTurnsTheCollectorOffAndRestoresTheSettings(t *testing.T) {
	const percent, limit = 150, 3 << 30
	oldPercent := debug.SetGCPercent(percent)
	oldLimit := debug.SetMemoryLimit(limit)
	t.Cleanup(func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	})
	// No heap floor: it would raise the percent once the boot ends
	// (gcfloor_test.go tests that).
	s, release := startHeld(t, "pool", 2, "gc-heap-floor", "0")
	p, l := gcSettings()
	if p != -1 || l < bootHeapFloor || l > limit {
		t.Errorf("while loading: GOGC %d, memory limit %d; want off (-1) and a limit in [%d, %d]", p, l, bootHeapFloor, limit)
	}
	release()
	waitLoaded(t, s)
	if p, l := gcSettings(); p != percent || l != limit {
		t.Errorf("after loading: GOGC %d, memory limit %d; want the settings before the boot, %d and %d", p, l, percent, limit)
	}
}

func TestBootMemoryLimit(t *testing.T) {
	for _, c := range []struct{ onDisk, configured, want int64 }{
		{0, math.MaxInt64, bootHeapFloor},
		{100 << 20, math.MaxInt64, 400<<20 + bootHeapFloor},
		{100 << 20, 200 << 20, 200 << 20},
		{math.MaxInt64 / 2, math.MaxInt64, math.MaxInt64},
	} {
		if got := bootMemoryLimit(c.onDisk, c.configured); got != c.want {
			t.Errorf("bootMemoryLimit(%d, %d) = %d, want %d", c.onDisk, c.configured, got, c.want)
		}
	}
}

func TestNextBootLimitStaysTwiceTheLiveHeap(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct{ limit, ceiling, live, want int64 }{
		{100 * mb, math.MaxInt64, 10 * mb, 100 * mb},  // room enough
		{100 * mb, math.MaxInt64, 50 * mb, 100 * mb},  // exactly half
		{100 * mb, math.MaxInt64, 60 * mb, 120 * mb},  // raised to twice
		{100 * mb, math.MaxInt64, 300 * mb, 600 * mb}, // the data set is larger than assumed
		{100 * mb, 150 * mb, 300 * mb, 150 * mb},      // never above the process's limit
		{150 * mb, 150 * mb, 300 * mb, 150 * mb},
		{100 * mb, math.MaxInt64, math.MaxInt64 / 2, 100 * mb}, // no overflow
	} {
		if got := nextBootLimit(c.limit, c.ceiling, c.live); got != c.want {
			t.Errorf("nextBootLimit(%d, %d, %d) = %d, want %d", c.limit, c.ceiling, c.live, got, c.want)
		}
	}
}

func TestDirBytesCountsRegularFilesBelow(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{"x": 10, "a/y": 20, "a/b/z": 30} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := dirBytes(dir); got != 60 {
		t.Errorf("dirBytes = %d, want 60", got)
	}
	if got := dirBytes(filepath.Join(dir, "missing")); got != 0 {
		t.Errorf("dirBytes of a missing directory = %d, want 0", got)
	}
}
