package server

import (
	"math"
	"testing"
	"time"
)

func TestTenacityLimit(t *testing.T) {
	for _, c := range []struct {
		tenacity int
		want     time.Duration
	}{
		{0, 0}, {1, 50 * time.Microsecond}, {10, 500 * time.Microsecond},
		{11, 575 * time.Microsecond}, {100, math.MaxInt64},
	} {
		if got := tenacityLimit(c.tenacity); got != c.want {
			t.Errorf("tenacity %d: %v, want %v", c.tenacity, got, c.want)
		}
	}
	if got := tenacityLimit(99); got < time.Minute || got > 3*time.Minute {
		t.Errorf("tenacity 99: %v, want about 2 minutes (Redis's ~2 min)", got)
	}
}

func TestGoMemoryLimit(t *testing.T) {
	const mb = 1 << 20
	if got := goMemoryLimit(100*mb, 0, math.MaxInt64); got != 100*mb+50*mb+64*mb {
		t.Errorf("maxmemory 100 MB: %d", got)
	}
	if got := goMemoryLimit(100*mb, 0, 120*mb); got != 120*mb {
		t.Errorf("a lower GOMEMLIMIT must win: %d", got)
	}
	if got := goMemoryLimit(64*mb, 128*mb, math.MaxInt64); got != 64*mb+32*mb+64*mb+128*mb {
		t.Errorf("maxmemory 64 MB with a 128 MB page cache: %d, want the cache above the room", got)
	}
	if got := goMemoryLimit(math.MaxInt64-1, 0, math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("a maxmemory near the top must not overflow: %d", got)
	}
}
