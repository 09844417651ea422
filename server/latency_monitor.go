package server

import (
	"sort"
	"sync"
	"time"
)

// The latency monitor (LATENCY LATEST, HISTORY, RESET, GRAPH, DOCTOR): for
// each event that lasted at least latency-monitor-threshold milliseconds,
// the latest 160 samples, one per second (the highest of that second), and
// the highest ever, as Redis keeps them. Events come from every shard
// (slow commands, slow WAL fdatasyncs, checkpoints), only when they cross
// the threshold, so one mutex over the server-wide table costs nothing on
// a fast path.

// latencySamples is how many samples an event keeps (Redis's
// LATENCY_TS_LEN).
const latencySamples = 160

// latencySample is one second's highest latency of an event.
type latencySample struct {
	unix int64 // 0: an empty slot
	ms   int64
}

// latencySeries is one event's samples, a ring whose next slot is next.
type latencySeries struct {
	samples [latencySamples]latencySample
	next    int
	max     int64
}

// history returns the samples oldest first.
func (s *latencySeries) history() []latencySample {
	var out []latencySample
	for i := range latencySamples {
		if smp := s.samples[(s.next+i)%latencySamples]; smp.unix != 0 {
			out = append(out, smp)
		}
	}
	return out
}

// latest is the newest sample.
func (s *latencySeries) latest() latencySample {
	return s.samples[(s.next+latencySamples-1)%latencySamples]
}

// latencyMonitor is the server's table of events.
type latencyMonitor struct {
	mu     sync.Mutex
	events map[string]*latencySeries
}

// add records that event lasted ms milliseconds at now: a new sample, or
// the higher of two in the same second.
func (m *latencyMonitor) add(event string, ms int64, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.events == nil {
		m.events = map[string]*latencySeries{}
	}
	s := m.events[event]
	if s == nil {
		s = new(latencySeries)
		m.events[event] = s
	}
	s.max = max(s.max, ms)
	unix := now.Unix()
	if last := &s.samples[(s.next+latencySamples-1)%latencySamples]; last.unix == unix {
		last.ms = max(last.ms, ms)
		return
	}
	s.samples[s.next] = latencySample{unix: unix, ms: ms}
	s.next = (s.next + 1) % latencySamples
}

// latestEntry is one event's line of LATENCY LATEST.
type latestEntry struct {
	event string
	last  latencySample
	max   int64
}

// latestAll returns each event's newest sample and highest latency, by
// event name.
func (m *latencyMonitor) latestAll() []latestEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]latestEntry, 0, len(m.events))
	for name, s := range m.events {
		out = append(out, latestEntry{event: name, last: s.latest(), max: s.max})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].event < out[j].event })
	return out
}

// history returns an event's samples oldest first (none for an unknown
// event).
func (m *latencyMonitor) history(event string) []latencySample {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.events[event]; s != nil {
		return s.history()
	}
	return nil
}

// reset forgets the named events, or all of them when none is named, and
// returns how many it forgot.
func (m *latencyMonitor) reset(events []string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(events) == 0 {
		n := len(m.events)
		m.events = nil
		return n
	}
	n := 0
	for _, e := range events {
		if _, ok := m.events[e]; ok {
			delete(m.events, e)
			n++
		}
	}
	return n
}

// latencyEvent records an event of a shard (wal-fsync, checkpoint,
// expire-cycle, eviction-cycle) that took at least
// latency-monitor-threshold.
func (s *Server) latencyEvent(event string, took time.Duration) {
	if t := s.timing.Load(); t.latencyMs > 0 && took.Milliseconds() >= t.latencyMs {
		s.latency.add(event, took.Milliseconds(), time.Now())
	}
}
