package server

import (
	"testing"
	"time"
)

// TestLatencyMonitorOnePerSecond checks that samples of one second keep
// the highest, that the ring keeps the newest 160 seconds, and LATEST's
// all-time maximum.
func TestLatencyMonitorOnePerSecond(t *testing.T) {
	var m latencyMonitor
	t0 := time.Unix(1_000_000, 0)
	m.add("command", 300, t0)
	m.add("command", 500, t0.Add(200*time.Millisecond))
	m.add("command", 100, t0.Add(400*time.Millisecond))
	h := m.history("command")
	if len(h) != 1 || h[0].ms != 500 || h[0].unix != t0.Unix() {
		t.Fatalf("history %v, want one sample of 500 ms at %d", h, t0.Unix())
	}
	for i := 1; i <= 200; i++ {
		m.add("command", int64(i), t0.Add(time.Duration(i)*time.Second))
	}
	h = m.history("command")
	if len(h) != latencySamples || h[0].ms != 41 || h[len(h)-1].ms != 200 {
		t.Fatalf("history of %d samples from %d to %d ms, want %d from 41 to 200", len(h), h[0].ms, h[len(h)-1].ms, latencySamples)
	}
	latest := m.latestAll()
	if len(latest) != 1 || latest[0].last.ms != 200 || latest[0].max != 500 {
		t.Fatalf("latest %+v, want last 200 ms, max 500 ms", latest)
	}
}

// TestLatencyMonitorReset checks RESET of named events and of all.
func TestLatencyMonitorReset(t *testing.T) {
	var m latencyMonitor
	now := time.Now()
	m.add("command", 10, now)
	m.add("wal-fsync", 10, now)
	m.add("checkpoint", 10, now)
	if n := m.reset([]string{"nope"}); n != 0 {
		t.Errorf("reset of an unknown event = %d, want 0", n)
	}
	if n := m.reset([]string{"command", "command", "nope"}); n != 1 {
		t.Errorf("reset of command = %d, want 1", n)
	}
	if n := m.reset(nil); n != 2 {
		t.Errorf("reset of all = %d, want 2", n)
	}
	if len(m.latestAll()) != 0 || m.history("wal-fsync") != nil {
		t.Error("events left after a reset of all")
	}
}

// TestLatencyEventThreshold checks that the storage's events are kept only
// at or above latency-monitor-threshold, and none while it is 0.
func TestLatencyEventThreshold(t *testing.T) {
	var s Server
	s.timing.Store(&timingSettings{latencyMs: 0})
	s.latencyEvent("wal-fsync", time.Second)
	if l := s.latency.latestAll(); len(l) != 0 {
		t.Fatalf("threshold 0 kept %v", l)
	}
	s.timing.Store(&timingSettings{latencyMs: 5})
	s.latencyEvent("wal-fsync", 4*time.Millisecond)
	s.latencyEvent("checkpoint", 5*time.Millisecond)
	l := s.latency.latestAll()
	if len(l) != 1 || l[0].event != "checkpoint" || l[0].max != 5 {
		t.Fatalf("at 5 ms kept %+v, want the 5 ms checkpoint only", l)
	}
}
