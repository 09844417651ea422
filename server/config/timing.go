package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// int64Param is a mutable 64-bit integer parameter of at least lo, with
// Redis's range error (slowlog-log-slower-than, slowlog-max-len,
// latency-monitor-threshold).
func int64Param(name string, lo int64, field func(*Config) *int64) *Param {
	return &Param{Name: name, Mutable: true,
		Get: func(c *Config) string { return strconv.FormatInt(*field(c), 10) },
		Set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return errors.New("argument couldn't be parsed into an integer")
			}
			if n < lo {
				return fmt.Errorf("argument must be between %d and %d inclusive", lo, int64(math.MaxInt64))
			}
			*field(c) = n
			return nil
		}}
}

// percentilesParam is latency-tracking-info-percentiles: the percentiles
// INFO latencystats shows, separated by spaces ("" for none), each
// between 0 and 100.
func percentilesParam() *Param {
	return &Param{Name: "latency-tracking-info-percentiles", Mutable: true,
		Get: func(c *Config) string {
			s := make([]string, len(c.LatencyTrackingInfoPercentiles))
			for i, p := range c.LatencyTrackingInfoPercentiles {
				s[i] = FormatPercentile(p)
			}
			return strings.Join(s, " ")
		},
		Set: func(c *Config, v string) error {
			fields := strings.Fields(v)
			ps := make([]float64, 0, len(fields))
			for _, f := range fields {
				p, err := strconv.ParseFloat(f, 64)
				if err != nil || math.IsNaN(p) {
					return redisError("Invalid latency-tracking-info-percentiles parameters")
				}
				if p < 0 || p > 100 {
					return errors.New("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
				}
				ps = append(ps, p)
			}
			c.LatencyTrackingInfoPercentiles = ps
			return nil
		}}
}

// FormatPercentile writes a percentile as Redis does in CONFIG GET and in
// INFO latencystats' field names: the shortest decimal ("50", "99.9").
func FormatPercentile(p float64) string {
	return strconv.FormatFloat(p, 'f', -1, 64)
}
