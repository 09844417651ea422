package wal

import "time"

// HistogramBuckets is the number of finite buckets of a Histogram.
const HistogramBuckets = 16

// Histogram counts observations in HistogramBuckets fixed buckets plus one
// for the values above the last bound; the bounds are the caller's
// (GroupRecordBounds, SyncSecondsBounds). It is a plain value touched only
// on the writer's loop thread: an observation is a few comparisons and
// increments, cheap enough for once per group, and copying the value (as
// Stats does) is a consistent snapshot. The zero value is empty. The
// server turns it into a Prometheus histogram.
type Histogram struct {
	// Counts[i] holds the observations v with bounds[i-1] < v <=
	// bounds[i]; Counts[HistogramBuckets] those above the last bound.
	Counts [HistogramBuckets + 1]uint64
	Sum    float64
}

// GroupRecordBounds are the bounds of the group-commit size histogram, in
// records per group: powers of two from 1 to 32768.
var GroupRecordBounds = [HistogramBuckets]float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768}

// SyncSecondsBounds are the bounds of the fdatasync latency histogram, in
// seconds: 50µs to about 1.6s, doubling.
var SyncSecondsBounds = [HistogramBuckets]float64{
	0.00005, 0.0001, 0.0002, 0.0004, 0.0008, 0.0016, 0.0032, 0.0064,
	0.0128, 0.0256, 0.0512, 0.1024, 0.2048, 0.4096, 0.8192, 1.6384,
}

// Observe counts v in the buckets that bounds delimit.
func (h *Histogram) Observe(bounds *[HistogramBuckets]float64, v float64) {
	i := 0
	for i < HistogramBuckets && v > bounds[i] {
		i++
	}
	h.Counts[i]++
	h.Sum += v
}

// Count is the number of observations.
func (h *Histogram) Count() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Cumulative returns, for each bound, the observations at or below it, as
// Prometheus histograms count them.
func (h *Histogram) Cumulative() []uint64 {
	out := make([]uint64, HistogramBuckets)
	var n uint64
	for i := range HistogramBuckets {
		n += h.Counts[i]
		out[i] = n
	}
	return out
}

// observeSync counts the seconds since start in a SyncSecondsBounds
// histogram.
func (h *Histogram) observeSync(start time.Time) {
	h.Observe(&SyncSecondsBounds, time.Since(start).Seconds())
}
