package tests

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// histogramOf is LATENCY HISTOGRAM's reply (RESP2: a flat array of name,
// details) as name -> calls, with each command's steps checked.
func histogramOf(t *testing.T, reply any) map[string]int64 {
	t.Helper()
	flat, ok := reply.([]any)
	if !ok || len(flat)%2 != 0 {
		t.Fatalf("LATENCY HISTOGRAM: %v, want name/details pairs", reply)
	}
	out := map[string]int64{}
	for i := 0; i < len(flat); i += 2 {
		d, ok := flat[i+1].([]any)
		if !ok || len(d) != 4 || d[0] != "calls" || d[2] != "histogram_usec" {
			t.Fatalf("LATENCY HISTOGRAM %v: %v, want calls N histogram_usec {...}", flat[i], flat[i+1])
		}
		calls := d[1].(int64)
		steps := d[3].([]any)
		if len(steps) == 0 || steps[len(steps)-1] != calls {
			t.Errorf("%v: steps %v do not end at its %d calls", flat[i], steps, calls)
		}
		out[flat[i].(string)] = calls
	}
	return out
}

// TestLatencyMonitorAsRedis follows Redis 7.0's
// tests/unit/latency-monitor.tcl where it applies: the command events of
// DEBUG SLEEP above latency-monitor-threshold, LATEST, HISTORY, RESET,
// DOCTOR, GRAPH and the per-command histograms (a container's by
// subcommand).
func TestLatencyMonitorAsRedis(t *testing.T) {
	s := startServer(t, "uring", 2)
	x := newTimingConn(t, s)
	x.do("config", "set", "latency-monitor-threshold", 200)
	x.do("latency", "reset")

	x.do("config", "resetstat")
	if h := histogramOf(t, x.do("latency", "histogram")); len(h) != 1 || h["config|resetstat"] != 1 {
		t.Errorf("after CONFIG RESETSTAT: %v, want config|resetstat called once", h)
	}
	x.do("config", "resetstat")
	x.do("client", "id")
	x.do("CLIENT", "LIST")
	if h := histogramOf(t, x.do("latency", "histogram", "client")); len(h) != 2 || h["client|id"] != 1 || h["client|list"] != 1 {
		t.Errorf("LATENCY HISTOGRAM client: %v, want client|id and client|list once each", h)
	}
	if h := histogramOf(t, x.do("latency", "histogram", "CLIENT|ID")); len(h) != 1 || h["client|id"] != 1 {
		t.Errorf("LATENCY HISTOGRAM client|id: %v, want client|id once", h)
	}
	x.do("config", "resetstat")
	x.do("set", "a", "b")
	x.do("set", "c", "d")
	x.do("get", "a")
	x.do("hset", "f", "k", "v")
	if h := histogramOf(t, x.do("latency", "histogram", "set", "hset")); len(h) != 2 || h["set"] != 2 || h["hset"] != 1 {
		t.Errorf("LATENCY HISTOGRAM set hset: %v", h)
	}
	if h := histogramOf(t, x.do("latency", "histogram", "blabla", "get", "zadd")); len(h) != 1 || h["get"] != 1 {
		t.Errorf("LATENCY HISTOGRAM blabla get zadd: %v", h)
	}

	x.do("debug", "sleep", 0.25)
	x.do("debug", "sleep", 0.35)
	hist, ok := x.do("latency", "history", "command").([]any)
	if !ok || len(hist) < 1 || len(hist) > 2 {
		t.Fatalf("LATENCY HISTORY command: %v, want one or two samples", hist)
	}
	last := hist[len(hist)-1].([]any)
	if ms := last[1].(int64); ms < 350 || ms > 2000 {
		t.Errorf("the last sample is %d ms, want DEBUG SLEEP 0.35's", ms)
	}
	latest := x.do("latency", "latest").([]any)
	if len(latest) != 1 {
		t.Fatalf("LATENCY LATEST: %v, want the command event only", latest)
	}
	e := latest[0].([]any)
	if len(e) != 4 || e[0] != "command" || e[1] != last[0] || e[2] != last[1] || e[3].(int64) < 350 {
		t.Errorf("LATENCY LATEST entry %v, want command, %v, %v, max ≥ 350", e, last[0], last[1])
	}
	if now := time.Now().Unix(); e[1].(int64) < now-60 || e[1].(int64) > now+1 {
		t.Errorf("the latest sample's time %v is not now (%d)", e[1], now)
	}
	if g := fmt.Sprint(x.do("latency", "graph", "command")); !strings.Contains(g, "command") {
		t.Errorf("LATENCY GRAPH command: %q", g)
	}
	x.fails("ERR No samples available for event 'blabla'", "latency", "graph", "blabla")
	if h := x.do("latency", "history", "blabla").([]any); len(h) != 0 {
		t.Errorf("LATENCY HISTORY of an unknown event: %v", h)
	}
	if n := x.int("latency", "reset", "blabla"); n != 0 {
		t.Errorf("LATENCY RESET blabla = %d", n)
	}
	if d := fmt.Sprint(x.do("latency", "doctor")); !strings.Contains(d, "command") {
		t.Errorf("LATENCY DOCTOR does not name the command event: %q", d)
	}
	if n := x.int("latency", "reset"); n < 1 {
		t.Errorf("LATENCY RESET = %d, want ≥ 1", n)
	}
	if l := x.do("latency", "latest").([]any); len(l) != 0 {
		t.Errorf("LATENCY LATEST after RESET: %v", l)
	}
	x.fails("ERR wrong number of arguments for 'latency|help' command", "latency", "help", "xxx")
	x.fails("ERR unknown subcommand 'foo'. Try LATENCY HELP.", "latency", "foo")
	x.fails("ERR wrong number of arguments for 'latency|history' command", "latency", "history")
	// Below the threshold, nothing.
	x.do("config", "set", "latency-monitor-threshold", 0)
	x.do("debug", "sleep", 0.05)
	if l := x.do("latency", "latest").([]any); len(l) != 0 {
		t.Errorf("latency-monitor-threshold 0 recorded %v", l)
	}
}

// TestCommandTimingInInfo checks INFO commandstats' usec and
// usec_per_call, INFO latencystats' percentiles and their parameters,
// and that CONFIG RESETSTAT clears them.
func TestCommandTimingInInfo(t *testing.T) {
	s := startServer(t, "pool", 2)
	x := newTimingConn(t, s)
	x.do("debug", "sleep", 0.01)
	for i := range 10 {
		x.do("set", fmt.Sprintf("k%d", i), "v")
	}
	stats := fmt.Sprint(x.do("info", "commandstats"))
	m := regexp.MustCompile(`cmdstat_debug:calls=1,usec=(\d+),usec_per_call=([\d.]+),`).FindStringSubmatch(stats)
	if m == nil || len(m[1]) < 5 { // at least 10000 µs
		t.Fatalf("DEBUG SLEEP 0.01 in commandstats: %v\n%s", m, stats)
	}
	if !regexp.MustCompile(`cmdstat_set:calls=10,usec=[1-9]\d*,usec_per_call=\d+\.\d\d,`).MatchString(stats) {
		t.Errorf("SET has no time in commandstats:\n%s", stats)
	}
	lat := fmt.Sprint(x.do("info", "latencystats"))
	if !regexp.MustCompile(`latency_percentiles_usec_set:p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}\r\n`).MatchString(lat) {
		t.Errorf("INFO latencystats has no SET line:\n%s", lat)
	}
	if !strings.Contains(fmt.Sprint(x.do("info", "everything")), "# Latencystats") {
		t.Error("INFO everything has no latencystats section")
	}
	// A container's calls count by subcommand, failures included, on the
	// connection's shard and on the other (the keys spread over both).
	for i := range 10 {
		x.fails("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
			"object", "freq", fmt.Sprintf("k%d", i))
	}
	if stats := fmt.Sprint(x.do("info", "commandstats")); !regexp.MustCompile(`cmdstat_object\|freq:calls=10,usec=\d+,usec_per_call=[\d.]+,rejected_calls=0,failed_calls=10\r\n`).MatchString(stats) ||
		strings.Contains(stats, "cmdstat_object:") {
		t.Errorf("OBJECT FREQ not counted as object|freq:\n%s", stats)
	}
	x.do("config", "set", "latency-tracking-info-percentiles", "50.5 99.99 0")
	if got := x.do("config", "get", "latency-tracking-info-percentiles"); fmt.Sprint(got) != "[latency-tracking-info-percentiles 50.5 99.99 0]" {
		t.Errorf("CONFIG GET latency-tracking-info-percentiles: %v", got)
	}
	if lat := fmt.Sprint(x.do("info", "latencystats")); !regexp.MustCompile(`latency_percentiles_usec_set:p50\.5=[\d.]+,p99\.99=[\d.]+,p0=[\d.]+\r\n`).MatchString(lat) {
		t.Errorf("latencystats after setting the percentiles:\n%s", lat)
	}
	x.fails("ERR CONFIG SET failed (possibly related to argument 'latency-tracking-info-percentiles') - latency-tracking-info-percentiles parameters should sit between [0.0,100.0]",
		"config", "set", "latency-tracking-info-percentiles", "50 101")
	x.fails("ERR CONFIG SET failed (possibly related to argument 'latency-tracking-info-percentiles') - Invalid latency-tracking-info-percentiles parameters",
		"config", "set", "latency-tracking-info-percentiles", "a")
	x.fails("ERR CONFIG SET failed (possibly related to argument 'latency-monitor-threshold') - argument must be between 0 and 9223372036854775807 inclusive",
		"config", "set", "latency-monitor-threshold", -1)
	// latency-tracking no: no new histograms.
	x.do("config", "set", "latency-tracking", "no")
	x.do("config", "resetstat")
	x.do("get", "k1")
	if h := histogramOf(t, x.do("latency", "histogram")); len(h) != 0 {
		t.Errorf("latency-tracking no still tracks: %v", h)
	}
	stats = fmt.Sprint(x.do("info", "commandstats"))
	if strings.Contains(stats, "cmdstat_set") || !strings.Contains(stats, "cmdstat_get:calls=1,") {
		t.Errorf("commandstats after CONFIG RESETSTAT:\n%s", stats)
	}
}
