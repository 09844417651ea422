package tests

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// startWithMetrics starts moond with /metrics on a free port and returns
// the server and the endpoint's URL.
func startWithMetrics(t *testing.T, backend string, shards int, extra ...string) (*server, string) {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	s := startServer(t, backend, shards, append([]string{"--metrics-addr", addr}, extra...)...)
	return s, "http://" + addr + "/metrics"
}

// scrapeMetrics fetches url and parses the text exposition format.
func scrapeMetrics(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing the scrape: %v", err)
	}
	return fams
}

// metricValue is a sample's value, whatever its family's type (a
// histogram's: its count).
func metricValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

// sumWhere sums family name's samples whose labels include every
// name=value pair in match.
func sumWhere(fams map[string]*dto.MetricFamily, name string, match ...string) float64 {
	var sum float64
	f := fams[name]
	if f == nil {
		return 0
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(match); i += 2 {
			if labelOf(m, match[i]) != match[i+1] {
				continue next
			}
		}
		sum += metricValue(m)
	}
	return sum
}

func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// perShardFamilies are the families every shard reports in every scrape.
var perShardFamilies = []string{
	"moond_connected_clients", "moond_blocked_clients", "moond_connections_received_total",
	"moond_connections_rejected_total", "moond_net_input_bytes_total", "moond_net_output_bytes_total",
	"moond_keys", "moond_keys_expiring", "moond_expired_keys_total", "moond_evicted_keys_total",
	"moond_keyspace_hits_total", "moond_keyspace_misses_total", "moond_dataset_memory_bytes",
	"moond_wal_bytes_total", "moond_wal_records_total", "moond_wal_groups_total", "moond_wal_fdatasyncs_total",
	"moond_wal_write_errors_total", "moond_wal_segments_created_total", "moond_wal_segments_recycled_total",
	"moond_wal_segments", "moond_wal_unwritten_bytes", "moond_wal_above_redo_bytes", "moond_wal_next_lsn",
	"moond_wal_durable_lsn", "moond_wal_group_commit_records", "moond_wal_fdatasync_seconds",
	"moond_wal_append_refused", "moond_checkpoints_total", "moond_checkpoint_in_progress",
	"moond_checkpoint_phase_seconds_total", "moond_checkpoint_last_duration_seconds",
	"moond_checkpoint_pages_written_total", "moond_checkpoint_pages_failed_total",
	"moond_checkpoint_last_success_timestamp_seconds", "moond_checkpoint_redo_lsn",
	"moond_checkpoint_redo_lsn_lag", "moond_checkpoint_dirty_keys", "moond_heap_files", "moond_heap_pages",
	"moond_heap_bytes", "moond_heap_vanished_retired_total", "moond_heap_vanished_unexpected_total",
	"moond_poisoned", "moond_scrape_shard_timeouts_total", "moond_loading_loaded_bytes", "moond_loading_total_bytes",
	"moond_cold_keys", "moond_cold_bytes", "moond_cold_cooled_total", "moond_cold_reads_total",
	"moond_cold_read_errors_total", "moond_cold_read_duration_seconds",
}

// perShardWhenUsed are per-shard families that have samples once the
// commands or errors they count happened (on the connection's shard).
var perShardWhenUsed = []string{
	"moond_commands_total", "moond_commands_failed_total", "moond_commands_rejected_total", "moond_error_replies_total",
	"moond_command_duration_seconds",
}

// serverFamilies are the server-wide families.
var serverFamilies = []string{
	"moond_build_info", "moond_io_backend_info", "moond_shards", "moond_loading",
	"moond_used_memory_bytes", "moond_used_memory_rss_bytes", "moond_maxmemory_bytes",
	"go_goroutines", "process_resident_memory_bytes",
}

// checkFamilies reports what is missing from a scrape of a server with
// the given number of shards: every family, every shard label.
func checkFamilies(fams map[string]*dto.MetricFamily, shards int) []string {
	var missing []string
	for _, name := range perShardFamilies {
		for sh := 0; sh < shards; sh++ {
			if !hasShard(fams[name], strconv.Itoa(sh)) {
				missing = append(missing, fmt.Sprintf("%s{shard=%q}", name, strconv.Itoa(sh)))
			}
		}
	}
	for _, name := range perShardWhenUsed {
		f := fams[name]
		if f == nil || len(f.GetMetric()) == 0 || labelOf(f.GetMetric()[0], "shard") == "" {
			missing = append(missing, name+" (with a shard label)")
		}
	}
	for _, name := range serverFamilies {
		if fams[name] == nil || len(fams[name].GetMetric()) == 0 {
			missing = append(missing, name)
		}
	}
	return missing
}

func hasShard(f *dto.MetricFamily, sh string) bool {
	if f == nil {
		return false
	}
	for _, m := range f.GetMetric() {
		if labelOf(m, "shard") == sh {
			return true
		}
	}
	return false
}

// pollScrape scrapes url until check finds nothing wrong, or fails the
// test with check's last findings after a deadline.
func pollScrape(t *testing.T, url string, check func(map[string]*dto.MetricFamily) []string) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		fams := scrapeMetrics(t, url)
		bad := check(fams)
		if len(bad) == 0 {
			return fams
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 15s the scrape still shows:\n  %s", strings.Join(bad, "\n  "))
		}
		time.Sleep(20 * time.Millisecond) // polling the condition, not waiting for it
	}
}

func TestMetricsEndpointExposesEveryFamilyPerShard(t *testing.T) {
	const nkeys = 100
	for _, backend := range []string{"uring", "pool"} {
		for _, shards := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/shards=%d", backend, shards), func(t *testing.T) {
				t.Parallel()
				s, url := startWithMetrics(t, backend, shards, "--appendfsync", "always")
				c := s.client(2)
				for i := range nkeys {
					if err := c.Set(ctx(t), fmt.Sprintf("k%d", i), "v", 0).Err(); err != nil {
						t.Fatal(err)
					}
				}
				if err := c.Get(ctx(t), "k1").Err(); err != nil {
					t.Fatal(err)
				}
				if err := c.Incr(ctx(t), "k1").Err(); err == nil || !strings.HasPrefix(err.Error(), "ERR") {
					t.Fatalf("INCR of a non-integer: %v, want an ERR", err)
				}
				if err := c.Save(ctx(t)).Err(); err != nil {
					t.Fatal(err)
				}
				pollScrape(t, url, func(f map[string]*dto.MetricFamily) []string {
					bad := checkFamilies(f, shards)
					want := func(ok bool, format string, args ...any) {
						if !ok {
							bad = append(bad, fmt.Sprintf(format, args...))
						}
					}
					want(sumWhere(f, "moond_commands_total", "command", "set") >= nkeys, "commands_total{set} = %v, want ≥ %d", sumWhere(f, "moond_commands_total", "command", "set"), nkeys)
					want(sumWhere(f, "moond_commands_total", "command", "get") >= 1, "no GET counted")
					// Every SET ran on the shard of its key, which timed it.
					want(sumWhere(f, "moond_command_duration_seconds", "command", "set") >= nkeys, "command_duration_seconds{set} counts %v, want ≥ %d",
						sumWhere(f, "moond_command_duration_seconds", "command", "set"), nkeys)
					want(sumWhere(f, "moond_commands_failed_total", "command", "incr") >= 1, "the failed INCR not counted")
					want(sumWhere(f, "moond_error_replies_total", "error", "ERR") >= 1, "no ERR reply counted")
					want(sumWhere(f, "moond_keys", "db", "0") == nkeys, "keys in db0 = %v, want %d", sumWhere(f, "moond_keys", "db", "0"), nkeys)
					want(sumWhere(f, "moond_connected_clients") >= 1, "no client connected")
					want(sumWhere(f, "moond_shards") == float64(shards), "moond_shards = %v", sumWhere(f, "moond_shards"))
					want(sumWhere(f, "moond_loading") == 0, "still loading")
					want(sumWhere(f, "moond_io_backend_info", "backend", backend) == 1, "io backend %s not reported", backend)
					want(sumWhere(f, "moond_used_memory_bytes") > 0, "used memory 0")
					want(sumWhere(f, "moond_wal_group_commit_records") > 0, "no group commit observed")
					want(sumWhere(f, "moond_wal_fdatasync_seconds") > 0, "no fdatasync observed under appendfsync always")
					want(sumWhere(f, "moond_checkpoint_pages_written_total") > 0, "SAVE wrote no page")
					want(sumWhere(f, "moond_checkpoint_phase_seconds_total") > 0, "no checkpoint phase time")
					// The keys spread over every shard: each one logged,
					// checkpointed and counted its own.
					for sh := range shards {
						l := strconv.Itoa(sh)
						for _, name := range []string{"moond_keys", "moond_wal_bytes_total", "moond_wal_records_total",
							"moond_checkpoints_total", "moond_heap_files", "moond_heap_pages", "moond_checkpoint_redo_lsn",
							"moond_dataset_memory_bytes", "moond_checkpoint_last_success_timestamp_seconds", "moond_wal_segments"} {
							want(sumWhere(f, name, "shard", l) > 0, "%s{shard=%q} is 0", name, l)
						}
						want(sumWhere(f, "moond_poisoned", "shard", l) == 0, "shard %s poisoned", l)
						want(sumWhere(f, "moond_scrape_shard_timeouts_total", "shard", l) == 0, "shard %s missed a scrape", l)
					}
					return bad
				})
			})
		}
	}
}

func TestMetricsOffByDefault(t *testing.T) {
	s := startServer(t, "pool", 1)
	if got := s.client(2).ConfigGet(ctx(t), "metrics-addr").Val(); got["metrics-addr"] != "" {
		t.Fatalf("CONFIG GET metrics-addr = %q, want empty", got)
	}
	if s.logShows("Prometheus metrics") {
		t.Fatal("a server without --metrics-addr serves metrics")
	}
}
