package server

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/moond-db/moond/resp"
)

func init() {
	register(&serverCmd{name: "latency", arity: -2, run: cmdLatency})
}

var latencyHelp = []string{
	"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DOCTOR",
	"    Return a human readable latency analysis report.",
	"GRAPH <event>",
	"    Return an ASCII latency graph for the <event> class.",
	"HISTORY <event>",
	"    Return time-latency samples for the <event> class.",
	"LATEST",
	"    Return the latest latency samples for all events.",
	"RESET [<event> ...]",
	"    Reset latency data of one or more <event> classes.",
	"    (default: reset all data for all event classes)",
	"HISTOGRAM [COMMAND ...]",
	"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
	"    If no commands are specified then all histograms are replied.",
	"HELP",
	"    Prints this help.",
}

// latencyArity is each LATENCY subcommand's arity, as Redis 7.0 checks it.
var latencyArity = map[string]int{"doctor": 2, "graph": 3, "history": 3, "latest": 2, "reset": -2, "histogram": -2, "help": 2}

// cmdLatency is LATENCY over the server's latency monitor
// (latency_monitor.go) and the shards' command histograms
// (latency_hist.go).
func cmdLatency(c *conn, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	arity, known := latencyArity[sub]
	switch {
	case !known:
		c.errorReply("ERR unknown subcommand '" + string(args[1]) + "'. Try LATENCY HELP.")
		return
	case !arityOK(arity, len(args)):
		c.errorReply("ERR wrong number of arguments for 'latency|" + sub + "' command")
		return
	}
	switch sub {
	case "latest":
		latencyLatest(c)
	case "history":
		latencyHistory(c, string(args[2]))
	case "reset":
		latencyReset(c, args[2:])
	case "graph":
		latencyGraphReply(c, string(args[2]))
	case "doctor":
		m := &c.w.srv.latency
		report := latencyDoctor(m.latestAll(), m, c.w.srv.timing.Load().latencyMs)
		c.replyLocal(func(w *resp.Writer) { w.Verbatim("txt", []byte(report)) })
	case "histogram":
		latencyHistogram(c, args[2:])
	default:
		c.replyLocal(func(w *resp.Writer) { writeHelp(w, latencyHelp) })
	}
}

// latencyLatest answers LATENCY LATEST: per event, its name, the newest
// sample's time and milliseconds, and the highest ever.
func latencyLatest(c *conn) {
	latest := c.w.srv.latency.latestAll()
	c.replyLocal(func(w *resp.Writer) {
		w.ArrayHeader(len(latest))
		for _, e := range latest {
			w.ArrayHeader(4)
			w.BulkString(e.event)
			w.Int(e.last.unix)
			w.Int(e.last.ms)
			w.Int(e.max)
		}
	})
}

// latencyHistory answers LATENCY HISTORY event: its samples, oldest
// first, each its time and milliseconds.
func latencyHistory(c *conn, event string) {
	samples := c.w.srv.latency.history(event)
	c.replyLocal(func(w *resp.Writer) {
		w.ArrayHeader(len(samples))
		for _, s := range samples {
			w.ArrayHeader(2)
			w.Int(s.unix)
			w.Int(s.ms)
		}
	})
}

// latencyReset answers LATENCY RESET [event ...]: how many events it
// forgot.
func latencyReset(c *conn, names [][]byte) {
	events := make([]string, len(names))
	for i, a := range names {
		events[i] = string(a)
	}
	n := c.w.srv.latency.reset(events)
	c.replyLocal(func(w *resp.Writer) { w.Int(int64(n)) })
}

// latencyGraphReply answers LATENCY GRAPH event.
func latencyGraphReply(c *conn, event string) {
	samples := c.w.srv.latency.history(event)
	if len(samples) == 0 {
		c.errorReply("ERR No samples available for event '" + event + "'")
		return
	}
	graph := latencyGraph(event, samples, time.Now())
	c.replyLocal(func(w *resp.Writer) { w.Verbatim("txt", []byte(graph)) })
}

// latencyHistogram answers LATENCY HISTOGRAM [command ...]: for each named
// command (every command, when none is named) called since the last CONFIG
// RESETSTAT, its calls and the cumulative distribution of their
// latencies, merged over the shards. A container stands for its
// subcommands ("client": "client|id", "client|list", ...), "container|sub"
// for one; unknown names are skipped.
func latencyHistogram(c *conn, names [][]byte) {
	var want []*command
	for _, n := range names {
		want = append(want, histogramEntries(n)...)
	}
	parts := make([][]*latencyHist, c.w.srv.nshards)
	c.fanoutCollect(func(w *worker, i int) { parts[i] = copyHists(w.stats.hists) }, func(w *resp.Writer) {
		all := make([]*latencyHist, len(commandList))
		for _, p := range parts {
			mergeHists(all, p)
		}
		if len(names) == 0 {
			want = commandList
		}
		var out []*command
		seen := map[int]bool{}
		for _, cmd := range want {
			if h := all[cmd.id]; h != nil && h.total > 0 && !seen[cmd.id] {
				seen[cmd.id] = true
				out = append(out, cmd)
			}
		}
		w.MapHeader(len(out))
		for _, cmd := range out {
			h := all[cmd.id]
			w.BulkString(cmd.name)
			w.MapHeader(2)
			w.BulkString("calls")
			w.Int(int64(h.total))
			w.BulkString("histogram_usec")
			points := h.powersOfTwo()
			w.MapHeader(len(points))
			for _, p := range points {
				w.Int(p.usec)
				w.Int(int64(p.count))
			}
		}
	})
}

// histogramEntries are the entries LATENCY HISTOGRAM name shows.
func histogramEntries(name []byte) []*command {
	cmd := lookupCommand(name)
	if cmd == nil {
		if len(name) > maxCommandName {
			return nil
		}
		var buf [maxCommandName]byte
		if sub := subcommandNames[string(foldLower(buf[:0], name))]; sub != nil {
			return []*command{sub}
		}
		return nil
	}
	out := []*command{cmd} // a container's unknown subcommands count on it
	for _, sub := range cmd.subs {
		out = append(out, sub)
	}
	slices.SortFunc(out[1:], func(a, b *command) int { return strings.Compare(a.name, b.name) })
	return out
}

// latencyGraph draws an event's samples, oldest first, one line each: how
// long ago, a bar as long as the sample is high against the highest, and
// the milliseconds.
func latencyGraph(event string, samples []latencySample, now time.Time) string {
	var b strings.Builder
	hi, lo := samples[0].ms, samples[0].ms
	for _, s := range samples {
		hi, lo = max(hi, s.ms), min(lo, s.ms)
	}
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (samples: %d)\n", event, hi, lo, len(samples))
	const width = 50
	for _, s := range samples {
		n := 1
		if hi > 0 {
			n = max(1, int(s.ms*width/hi))
		}
		fmt.Fprintf(&b, "%6ds ago %-*s %d ms\n", now.Unix()-s.unix, width, strings.Repeat("#", n), s.ms)
	}
	return b.String()
}

// latencyDoctor is LATENCY DOCTOR's report: each event's samples, average,
// highest and mean deviation, with a word on what moond's events mean.
// It is moond's own text, not Redis's.
func latencyDoctor(latest []latestEntry, m *latencyMonitor, thresholdMs int64) string {
	var b strings.Builder
	if thresholdMs == 0 {
		b.WriteString("The latency monitor is off: CONFIG SET latency-monitor-threshold <milliseconds> turns it on.\n")
	}
	if len(latest) == 0 {
		b.WriteString("No latency spike was observed since the server started (or since the last LATENCY RESET).\n")
		return b.String()
	}
	fmt.Fprintf(&b, "Latency spikes at or above %d ms were observed for %d event(s):\n\n", thresholdMs, len(latest))
	for i, e := range latest {
		samples := m.history(e.event)
		var sum int64
		for _, s := range samples {
			sum += s.ms
		}
		avg := float64(sum) / float64(max(len(samples), 1))
		var dev float64
		for _, s := range samples {
			dev += abs(float64(s.ms) - avg)
		}
		dev /= float64(max(len(samples), 1))
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %.0f ms, mean deviation %.0f ms, period %s). Worst all time event %d ms.\n",
			i+1, e.event, len(samples), avg, dev, period(samples), e.max)
		if hint := latencyHints[e.event]; hint != "" {
			fmt.Fprintf(&b, "   %s\n", hint)
		}
	}
	return b.String()
}

// latencyHints say what each of moond's events measures.
var latencyHints = map[string]string{
	"command":        "Slow commands: see SLOWLOG GET for which, and avoid O(N) commands on large values.",
	"fast-command":   "O(1) or O(log N) commands were slow: the shard's thread was busy or the host is overloaded.",
	"wal-fsync":      "A WAL fdatasync was slow: the disk is slow or saturated (appendfsync always waits for it).",
	"checkpoint":     "A checkpoint took long: many dirty pages or a slow disk; checkpoint-timeout spreads them.",
	"expire-cycle":   "The active expire cycle was slow: many keys, or large ones, expired at once.",
	"eviction-cycle": "Evicting took long: writes outgrow maxmemory fast, or large keys are evicted.",
}

// period is the mean time between an event's samples.
func period(samples []latencySample) string {
	if len(samples) < 2 {
		return "n/a"
	}
	secs := samples[len(samples)-1].unix - samples[0].unix
	return fmt.Sprintf("%.1f sec", float64(secs)/float64(len(samples)-1))
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
