package server

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The Prometheus metrics (metrics-addr): a scrape asks every shard's loop
// for a snapshot of its counters, as INFO does (worker.collectInfo, run on
// the shard's own thread), and turns the snapshots into metrics. The
// counters stay plain fields that only their shard's thread writes: the
// command path pays nothing for the metrics (no atomics, no locks), and a
// scrape costs each shard one mailbox message and a copy of its counters.
//
// A shard that does not answer within the scrape's deadline (a stuck
// thread, a long command) is left out of that scrape and counted in
// moond_scrape_shard_timeouts_total: a scrape never hangs on one shard.

// scrapeShardTimeout is how long a scrape waits for the shards' snapshots,
// all of them together.
const scrapeShardTimeout = 2 * time.Second

// metricsCollector is the prometheus.Collector over the server's shards.
// Collect may run concurrently with itself (concurrent scrapes): it shares
// nothing with other calls but the timeouts counters, which are atomic.
type metricsCollector struct {
	srv      *Server
	timeout  time.Duration
	timeouts []atomic.Int64 // by shard: snapshots that missed the deadline
}

func newMetricsCollector(s *Server, timeout time.Duration) *metricsCollector {
	return &metricsCollector{srv: s, timeout: timeout, timeouts: make([]atomic.Int64, s.nshards)}
}

// Describe sends every family's descriptor.
func (m *metricsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range metricDescs {
		ch <- d
	}
}

// Collect gathers the shards' snapshots and sends the metrics.
func (m *metricsCollector) Collect(ch chan<- prometheus.Metric) {
	infos, ok := m.gather()
	e := emitter{ch: ch}
	for i := range infos {
		if ok[i] {
			e.shard(strconv.Itoa(i), &infos[i])
		}
	}
	for i := range m.timeouts {
		e.counter(descScrapeTimeouts, m.timeouts[i].Load(), strconv.Itoa(i))
	}
	e.server(m.srv)
}

// gather asks every shard for its snapshot and waits, until the deadline,
// for all of them. ok[i] reports whether shard i answered in time. A late
// answer goes into its own buffered channel and is dropped with it: nothing
// the shard writes is read after the deadline.
func (m *metricsCollector) gather() (infos []shardInfo, ok []bool) {
	n := len(m.srv.workers)
	infos, ok = make([]shardInfo, n), make([]bool, n)
	ctx, cancel := context.WithTimeout(context.Background(), m.timeout)
	defer cancel()
	answers := make([]chan shardInfo, n)
	for i, w := range m.srv.workers {
		if w == nil {
			continue
		}
		ch := make(chan shardInfo, 1)
		if w.loop.PostWait(ctx, func() { ch <- w.collectInfo() }) == nil {
			answers[i] = ch
		}
	}
	for i, ch := range answers {
		if ch != nil {
			infos[i], ok[i] = receiveBy(ctx, ch)
		}
		if !ok[i] && i < len(m.timeouts) {
			m.timeouts[i].Add(1)
		}
	}
	return infos, ok
}

// receiveBy receives from ch unless ctx is done first; an answer already
// there counts even after the deadline (select alone would pick at random).
func receiveBy[T any](ctx context.Context, ch <-chan T) (T, bool) {
	select {
	case v := <-ch:
		return v, true
	default:
	}
	select {
	case v := <-ch:
		return v, true
	case <-ctx.Done():
		var zero T
		return zero, false
	}
}
