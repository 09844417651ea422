package wal

import (
	"slices"
	"testing"
)

func TestHistogramBucketsAndCumulativeCounts(t *testing.T) {
	var h Histogram
	for _, v := range []float64{0.5, 1, 1.5, 2, 3, 40000} {
		h.Observe(&GroupRecordBounds, v)
	}
	// 0.5 and 1 are ≤ 1; 1.5 and 2 ≤ 2; 3 ≤ 4; 40000 above 32768.
	if h.Counts[0] != 2 || h.Counts[1] != 2 || h.Counts[2] != 1 || h.Counts[HistogramBuckets] != 1 {
		t.Fatalf("counts %v", h.Counts)
	}
	if h.Count() != 6 || h.Sum != 40008 {
		t.Fatalf("count %d sum %v, want 6 and 40008", h.Count(), h.Sum)
	}
	cum := h.Cumulative()
	want := []uint64{2, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5}
	if !slices.Equal(cum, want) {
		t.Fatalf("cumulative %v, want %v", cum, want)
	}
	if !slices.IsSorted(GroupRecordBounds[:]) || !slices.IsSorted(SyncSecondsBounds[:]) {
		t.Fatal("bounds not ascending")
	}
}
