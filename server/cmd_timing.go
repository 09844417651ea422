package server

import (
	"github.com/moond-db/moond/internal/monoclock"
	"slices"
	"time"
)

// Per-command timing. A connection's commands are timed at their
// boundaries: runInput reads the monotonic clock once before its first
// command and once after each, so the end of one command is the start of
// the next and a pipelined command costs one clock read. A command's time
// thus covers its parsing, dispatch and execution on the shard that runs
// it. Where that time goes:
//   - a command that ran here: recordCmd, at the boundary;
//   - a data command another shard runs alone: that shard reads the clock
//     around it (runBatch) and records it there;
//   - any other command whose reply comes later (split across shards, a
//     txn, a fan-out to every shard, DEBUG SLEEP, EXEC that waits): from
//     its start to its reply, as the connection's shard sees it (the
//     pending reply's timing, recorded when the reply is complete);
//   - a blocking command: its dispatch on the connection's shard (which
//     runs it when its keys are there), never the wait itself (as Redis
//     leaves the blocked time out).

// monotonicNanos is the monotonic clock in nanoseconds: the TSC where the
// kernel trusts it (internal/monoclock), about 9 ns a reading against 22
// for time.Since.
func monotonicNanos() int64 { return monoclock.Nanos() }

// timingSettings are the configuration the command timing reads, swapped
// whole by CONFIG SET (Server.timing): slowlog-log-slower-than (µs, -1:
// off), slowlog-max-len, latency-monitor-threshold (ms, 0: off),
// latency-tracking, latency-tracking-info-percentiles.
type timingSettings struct {
	slowlogUsec int64
	slowlogMax  int
	latencyMs   int64
	tracking    bool
	percentiles []float64
}

// pendingTiming is the timing of a command whose reply comes later: its
// start, and the arguments the slow log would show, trimmed.
type pendingTiming struct {
	c     *conn
	cmd   *command
	start int64
	argv  []string
}

// cmdDone ends the command that began at start and returns the clock
// reading that starts the next: the command dispatch marked as run (ran)
// is recorded now, or when its reply is complete if it is still pending.
func (c *conn) cmdDone(args [][]byte, start int64) int64 {
	end := monotonicNanos()
	w := c.w
	if cmd := w.ran; cmd != nil {
		w.ran = nil
		if p := w.pending; p != nil && !p.ready() {
			p.timing = &pendingTiming{c: c, cmd: cmd, start: start, argv: slowlogArgv(args)}
		} else {
			w.recordCmd(c, cmd, args, nil, end-start)
		}
	}
	w.pending = nil
	return end
}

// done records a pending command once its reply is complete.
func (t *pendingTiming) done() {
	t.c.w.recordCmd(t.c, t.cmd, nil, t.argv, monotonicNanos()-t.start)
}

// recordCmd counts ns nanoseconds for one call of cmd by c: commandstats
// usec, the command's latency histogram, the slow log (argv, or args
// trimmed when argv is nil) and the latency monitor's command events. c is
// nil when this shard ran the command for another shard's connection:
// then the slow log entry, if any, is returned for the connection's shard
// to complete and keep (its name is that shard's to read).
func (w *worker) recordCmd(c *conn, cmd *command, args [][]byte, argv []string, ns int64) *slowEntry {
	w.stats.cmdCalls[cmd.id].nanos += ns
	var slow *slowEntry
	t := w.srv.timing.Load()
	if t.tracking {
		w.histogram(cmd.id).record(ns)
	}
	if t.slowlogUsec >= 0 && ns/1000 >= t.slowlogUsec && !cmd.noSlowlog {
		if argv == nil {
			argv = slowlogArgv(args)
		}
		e := w.srv.newSlowEntry(c, argv, ns)
		if c == nil {
			slow = e
		} else {
			w.slowlog.add(e, t.slowlogMax)
		}
	}
	if t.latencyMs > 0 && ns/1e6 >= t.latencyMs {
		event := "command"
		if cmd.fast {
			event = "fast-command"
		}
		w.srv.latency.add(event, ns/1e6, time.Now())
	}
	return slow
}

// histogram is the latency histogram of command id on this shard, made
// at its first call.
func (w *worker) histogram(id int) *latencyHist {
	h := w.stats.hists[id]
	if h == nil {
		h = new(latencyHist)
		w.stats.hists[id] = h
	}
	return h
}

// copyHists copies a shard's histograms for a snapshot (INFO, /metrics).
func copyHists(hs []*latencyHist) []*latencyHist {
	out := slices.Clone(hs)
	for i, h := range out {
		if h != nil {
			cp := *h
			out[i] = &cp
		}
	}
	return out
}

// cacheTiming publishes the configuration command timing reads; New and
// CONFIG SET call it.
func (s *Server) cacheTiming() {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	c := s.cfg
	s.timing.Store(&timingSettings{
		slowlogUsec: c.SlowlogLogSlowerThan,
		slowlogMax:  int(min(c.SlowlogMaxLen, 1<<30)),
		latencyMs:   c.LatencyMonitorThreshold,
		tracking:    c.LatencyTracking,
		percentiles: slices.Clone(c.LatencyTrackingInfoPercentiles),
	})
}
