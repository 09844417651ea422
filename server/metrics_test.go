package server

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"
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

// keyOnShard returns a key that lives on shard sh of n.
func keyOnShard(t *testing.T, sh, n int) string {
	t.Helper()
	for i := 0; i < 1000; i++ {
		k := fmt.Sprintf("key%d", i)
		if shardOfSlot(KeySlot([]byte(k)), n) == sh {
			return k
		}
	}
	t.Fatalf("no key on shard %d", sh)
	return ""
}

func TestFailedCallsAndErrorstatsCountLocalAndRemoteCommands(t *testing.T) {
	s := startTest(t, "pool", 2)
	c := client(t, s)
	// The client's handshake may have had error replies of its own.
	errsBefore := errorstatERR(t, c)
	// One key per shard: whichever shard the connection is on, one INCR
	// runs there and the other on the other shard.
	for sh := range 2 {
		k := keyOnShard(t, sh, 2)
		if err := c.Set(testCtx(t), k, "not a number", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.Incr(testCtx(t), k).Err(); err == nil {
			t.Fatalf("INCR of a string on shard %d succeeded", sh)
		}
	}
	info, err := c.Info(testCtx(t), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	if want := regexp.MustCompile(`cmdstat_incr:calls=2,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=0,failed_calls=2\r\n`); !want.MatchString(info) {
		t.Errorf("INFO lacks %q:\n%s", want, info)
	}
	if n := errorstatERR(t, c); n != errsBefore+2 {
		t.Errorf("errorstat_ERR went from %d to %d, want +2", errsBefore, n)
	}
	fams := scrape(t, newMetricsCollector(s, scrapeShardTimeout))
	var failed float64
	for _, m := range fams["moond_commands_failed_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "command" && l.GetValue() == "incr" {
				failed += m.GetCounter().GetValue()
			}
		}
	}
	if failed != 2 {
		t.Fatalf("moond_commands_failed_total{command=incr} = %v, want 2", failed)
	}
}

// errorstatERR is INFO errorstats's count of ERR replies.
func errorstatERR(t *testing.T, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(testCtx(t), "errorstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(info, "errorstat_ERR:count=")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(rest, "\r\n", 2)[0]))
	if err != nil {
		t.Fatalf("errorstats: %q", info)
	}
	return n
}

func TestMetricsEndpointServesAndStopsWithTheServer(t *testing.T) {
	s := startTest(t, "pool", 1, "metrics-addr", "127.0.0.1:0")
	addr := s.MetricsAddr()
	if addr == "" || strings.HasSuffix(addr, ":0") {
		t.Fatalf("MetricsAddr = %q", addr)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s, %v", resp.Status, err)
	}
	for _, want := range []string{"\nmoond_shards 1\n", `moond_wal_next_lsn{shard="0"}`, "\ngo_goroutines "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the scrape lacks %q", want)
		}
	}
	s.Stop()
	if _, err := hc.Get("http://" + addr + "/metrics"); err == nil {
		t.Fatal("the endpoint still answers after Stop")
	}
}
