package server

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// scrape gathers c once, as a scrape does, and returns the families by name.
func scrape(t *testing.T, c prometheus.Collector) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]*dto.MetricFamily, len(fams))
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// shardValue is the value of family name for shard sh (counter or gauge),
// and whether the family has it.
func shardValue(fams map[string]*dto.MetricFamily, name, sh string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "shard" && l.GetValue() == sh {
				if m.Counter != nil {
					return m.Counter.GetValue(), true
				}
				return m.Gauge.GetValue(), true
			}
		}
	}
	return 0, false
}

func TestMetricsScrapeSkipsAShardThatDoesNotAnswer(t *testing.T) {
	s := startTest(t, "pool", 2)
	// Shard 1's thread is stuck until the test ends (before Stop runs).
	stuck, release := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) })
	if err := s.workers[1].loop.Post(func() { close(stuck); <-release }); err != nil {
		t.Fatal(err)
	}
	<-stuck

	c := newMetricsCollector(s, 100*time.Millisecond)
	start := time.Now()
	fams := scrape(t, c)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the scrape took %v: it waited on the stuck shard", d)
	}
	if _, ok := shardValue(fams, "moond_connected_clients", "0"); !ok {
		t.Fatal("the answering shard is missing from the scrape")
	}
	if _, ok := shardValue(fams, "moond_connected_clients", "1"); ok {
		t.Fatal("the stuck shard has figures in the scrape")
	}
	if v, _ := shardValue(fams, "moond_scrape_shard_timeouts_total", "1"); v != 1 {
		t.Fatalf("shard 1 timeouts = %v, want 1", v)
	}
	if v, ok := shardValue(fams, "moond_scrape_shard_timeouts_total", "0"); !ok || v != 0 {
		t.Fatalf("shard 0 timeouts = %v (present %v), want 0", v, ok)
	}
	if fams["moond_shards"] == nil {
		t.Fatal("server-wide families missing while a shard is stuck")
	}
}

func TestMetricsScrapeHasEveryShardWhenAllAnswer(t *testing.T) {
	s := startTest(t, "pool", 2)
	fams := scrape(t, newMetricsCollector(s, scrapeShardTimeout))
	for _, sh := range []string{"0", "1"} {
		for _, name := range []string{"moond_connected_clients", "moond_wal_next_lsn", "moond_heap_files", "moond_scrape_shard_timeouts_total"} {
			if _, ok := shardValue(fams, name, sh); !ok {
				t.Errorf("%s has no shard %s", name, sh)
			}
		}
	}
	if v, _ := shardValue(fams, "moond_scrape_shard_timeouts_total", "1"); v != 0 {
		t.Fatalf("timeouts %v with every shard answering", v)
	}
}
