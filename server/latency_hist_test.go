package server

import (
	"testing"
)

// TestHistIndexBounds checks that every duration lands in the bucket whose
// bounds hold it, at the edges of the range and inside it.
func TestHistIndexBounds(t *testing.T) {
	for _, ns := range []int64{0, 1, 1023, 1024, 1151, 1152, 2047, 2048, 9999, 123456, 1<<30 - 1} {
		i := histIndex(ns)
		lo := int64(0)
		if i > 0 {
			lo = histUpper(i - 1)
		}
		if ns < lo || ns >= histUpper(i) {
			t.Errorf("%d ns in bucket %d = [%d, %d)", ns, i, lo, histUpper(i))
		}
	}
	if i := histIndex(5 << 30); i != histBuckets-1 {
		t.Errorf("a duration above the range is in bucket %d, want the last (%d)", i, histBuckets-1)
	}
	if histUpper(histBuckets-1) != 1<<histMaxShift {
		t.Errorf("the last bucket ends at %d, want %d", histUpper(histBuckets-1), 1<<histMaxShift)
	}
}

// TestHistPercentile checks percentiles against a known distribution:
// 90 calls of 10 µs and 10 of 1 ms.
func TestHistPercentile(t *testing.T) {
	var h latencyHist
	for range 90 {
		h.record(10_000)
	}
	for range 10 {
		h.record(1_000_000)
	}
	within := func(got, want float64) bool { return got >= want && got <= want*1.125 }
	if p := h.percentile(50); !within(p, 10) {
		t.Errorf("p50 = %v µs, want 10 µs within 12.5%%", p)
	}
	if p := h.percentile(90); !within(p, 10) {
		t.Errorf("p90 = %v µs, want 10 µs within 12.5%%", p)
	}
	if p := h.percentile(91); !within(p, 1000) {
		t.Errorf("p91 = %v µs, want 1000 µs within 12.5%%", p)
	}
	if p := h.percentile(100); !within(p, 1000) {
		t.Errorf("p100 = %v µs, want 1000 µs within 12.5%%", p)
	}
	var empty latencyHist
	if p := empty.percentile(99); p != 0 {
		t.Errorf("an empty histogram's p99 = %v, want 0", p)
	}
}

// TestHistPowersOfTwo checks LATENCY HISTOGRAM's cumulative steps and
// their labels as Redis writes them.
func TestHistPowersOfTwo(t *testing.T) {
	var h latencyHist
	h.record(500)     // under 1.024 µs
	h.record(7_000)   // under 8.192 µs
	h.record(7_500)   // under 8.192 µs
	h.record(30_000)  // under 32.768 µs
	h.record(2 << 30) // above the range: the last step
	got := h.powersOfTwo()
	want := []histPoint{{1, 1}, {8, 3}, {33, 4}, {1082130, 5}}
	if len(got) != len(want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("steps %v, want %v", got, want)
		}
	}
}

// TestHistMergeAndCumulative checks that merging adds counts and that the
// Prometheus buckets count the durations below each bound.
func TestHistMergeAndCumulative(t *testing.T) {
	var a, b latencyHist
	a.record(2_000)
	b.record(2_000)
	b.record(100_000)
	a.merge(&b)
	if a.total != 3 {
		t.Fatalf("total %d after merge, want 3", a.total)
	}
	cum := a.cumulativeBelow(promBounds)
	// promBounds: 1024, 4096, 16384, 65536, 262144 ns, ...
	want := []uint64{0, 2, 2, 2, 3}
	for i, w := range want {
		if cum[i] != w {
			t.Errorf("below %d ns: %d, want %d", promBounds[i], cum[i], w)
		}
	}
	if cum[len(cum)-1] != 3 {
		t.Errorf("below the last bound: %d, want 3", cum[len(cum)-1])
	}
}
