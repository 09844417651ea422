package server

import "math/bits"

// latencyHist is one command's latency histogram on one shard: log-linear
// buckets over nanoseconds, eight per doubling from 1.024 µs to about
// 1.07 s (12.5% resolution), plus one bucket below 1.024 µs. Durations
// above the range count in the last bucket, as Redis's histograms clamp
// at one second. Redis uses an HdrHistogram (two significant figures);
// this keeps a fixed 1.3 KB array per command that was called, touched
// only on its shard's thread: recording is a bit scan and an increment.
type latencyHist struct {
	counts [histBuckets]uint64
	total  uint64
}

const (
	histMinShift = 10 // 1024 ns: the lower bound of the first major bucket
	histMaxShift = 30 // 2^30 ns (1.07 s): the upper bound of the last
	histSubBits  = 3  // 8 sub-buckets per doubling
	histSubs     = 1 << histSubBits
	histBuckets  = 1 + (histMaxShift-histMinShift)*histSubs
)

// histIndex is the bucket of a duration of ns nanoseconds.
func histIndex(ns int64) int {
	if ns < 1<<histMinShift {
		return 0
	}
	if ns >= 1<<histMaxShift {
		return histBuckets - 1
	}
	major := bits.Len64(uint64(ns)) - 1
	sub := int(ns>>(major-histSubBits)) & (histSubs - 1)
	return 1 + (major-histMinShift)*histSubs + sub
}

// histUpper is the exclusive upper bound, in nanoseconds, of bucket i.
func histUpper(i int) int64 {
	if i == 0 {
		return 1 << histMinShift
	}
	major := histMinShift + (i-1)/histSubs
	sub := int64((i-1)%histSubs) + 1
	return (histSubs + sub) << (major - histSubBits)
}

// record counts one duration.
func (h *latencyHist) record(ns int64) {
	h.counts[histIndex(ns)]++
	h.total++
}

// merge adds o's counts to h.
func (h *latencyHist) merge(o *latencyHist) {
	for i, n := range o.counts {
		h.counts[i] += n
	}
	h.total += o.total
}

// percentile is the duration in microseconds at or below which p percent
// of the durations lie: the upper bound of the bucket that holds that
// rank, as HdrHistogram answers a bucket's highest equivalent value.
func (h *latencyHist) percentile(p float64) float64 {
	if h.total == 0 {
		return 0
	}
	rank := uint64(p / 100 * float64(h.total))
	if float64(rank) < p/100*float64(h.total) || rank == 0 {
		rank++ // the ceiling, and at least the first
	}
	var seen uint64
	for i, n := range h.counts {
		seen += n
		if seen >= rank {
			return float64(histUpper(i)) / 1000
		}
	}
	return float64(histUpper(histBuckets-1)) / 1000
}

// histPoint is one step of a cumulative distribution: the durations of at
// most usec microseconds number count.
type histPoint struct {
	usec  int64
	count uint64
}

// powersOfTwo is the cumulative distribution LATENCY HISTOGRAM replies, at
// Redis's steps (1.024 µs doubling, labelled as Redis labels them), only
// the steps where the count grows.
func (h *latencyHist) powersOfTwo() []histPoint {
	var out []histPoint
	var seen, last uint64
	i := 0
	for shift := histMinShift; shift <= histMaxShift; shift++ {
		for ; i < histBuckets && histUpper(i) <= 1<<shift; i++ {
			seen += h.counts[i]
		}
		if shift == histMaxShift {
			seen = h.total // the clamped last bucket
		}
		if seen > last {
			out = append(out, histPoint{usec: redisStepLabel(shift), count: seen})
			last = seen
		}
	}
	return out
}

// redisStepLabel is how Redis labels the step at 2^shift ns: the highest
// value its HdrHistogram (two significant figures) counts in that bucket,
// in microseconds: 1, 2, 4, 8, 16, 33, 66, ...
func redisStepLabel(shift int) int64 {
	return ((int64(1032) << (shift - histMinShift)) - 1) / 1000
}

// promBounds are the bucket bounds of moond_command_duration_seconds:
// every other power of two from 1.024 µs to 1.07 s, in nanoseconds (bucket
// bounds of latencyHist, so that the counts below them are exact).
var promBounds = func() []int64 {
	var b []int64
	for s := histMinShift; s <= histMaxShift; s += 2 {
		b = append(b, 1<<s)
	}
	return b
}()

// cumulativeBelow returns, for each bound in bounds (nanoseconds, bucket
// bounds of latencyHist, ascending), the durations below it.
func (h *latencyHist) cumulativeBelow(bounds []int64) []uint64 {
	out := make([]uint64, len(bounds))
	var seen uint64
	i := 0
	for j, b := range bounds {
		for ; i < histBuckets && histUpper(i) <= b; i++ {
			seen += h.counts[i]
		}
		out[j] = seen
	}
	return out
}

// mergeHists adds the histograms of src to dst, command by command.
func mergeHists(dst, src []*latencyHist) {
	for id, h := range src {
		if h == nil {
			continue
		}
		if dst[id] == nil {
			dst[id] = new(latencyHist)
		}
		dst[id].merge(h)
	}
}
