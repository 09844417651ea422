package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestTimingParamsFromFileFlagsAndRuntime checks the slow log's and the
// latency monitor's parameters: Redis's defaults, the config file, flags
// after it, CONFIG SET, and Redis's range errors.
func TestTimingParamsFromFileFlagsAndRuntime(t *testing.T) {
	d := Default()
	if d.SlowlogLogSlowerThan != 10000 || d.SlowlogMaxLen != 128 || d.LatencyMonitorThreshold != 0 || !d.LatencyTracking ||
		!slices.Equal(d.LatencyTrackingInfoPercentiles, []float64{50, 99, 99.9}) {
		t.Fatalf("defaults %+v are not Redis's", d)
	}
	path := filepath.Join(t.TempDir(), "moond.conf")
	conf := "slowlog-max-len 64\nlatency-tracking-info-percentiles \"50 99.99\"\nlatency-monitor-threshold 5\n"
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load([]string{path, "--slowlog-log-slower-than", "-1", "--latency-tracking", "no"})
	if err != nil {
		t.Fatal(err)
	}
	if c.SlowlogMaxLen != 64 || c.SlowlogLogSlowerThan != -1 || c.LatencyMonitorThreshold != 5 || c.LatencyTracking {
		t.Fatalf("loaded %+v", c)
	}
	if got, _ := c.Get("latency-tracking-info-percentiles"); got != "50 99.99" {
		t.Errorf("percentiles read back as %q", got)
	}
	for name, bad := range map[string]string{
		"slowlog-log-slower-than":           "argument must be between -1 and 9223372036854775807 inclusive",
		"slowlog-max-len":                   "argument must be between 0 and 9223372036854775807 inclusive",
		"latency-monitor-threshold":         "argument must be between 0 and 9223372036854775807 inclusive",
		"latency-tracking-info-percentiles": "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]",
	} {
		if err := c.SetAtRuntime(name, "-2"); err == nil || err.Error() != bad {
			t.Errorf("CONFIG SET %s -2: %v, want %q", name, err, bad)
		}
	}
	if err := c.SetAtRuntime("latency-tracking-info-percentiles", ""); err != nil || len(c.LatencyTrackingInfoPercentiles) != 0 {
		t.Errorf("no percentiles: %v, %v", err, c.LatencyTrackingInfoPercentiles)
	}
}
