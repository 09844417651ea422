package server

import (
	"fmt"
	"sort"
	"strings"

	"github.com/moond-db/moond/server/config"
)

// writeLatencyStats writes INFO latencystats: for each command called
// since the last CONFIG RESETSTAT, by name, its latency at each
// latency-tracking-info-percentiles percentile, in microseconds:
// latency_percentiles_usec_<cmd>:p50=1.024,p99=...
func writeLatencyStats(b *strings.Builder, hists []*latencyHist, percentiles []float64) {
	var used []*command
	for id, h := range hists {
		if h != nil && h.total > 0 {
			used = append(used, commandList[id])
		}
	}
	sort.Slice(used, func(i, j int) bool { return used[i].name < used[j].name })
	for _, cmd := range used {
		h := hists[cmd.id]
		fmt.Fprintf(b, "latency_percentiles_usec_%s:", cmd.name)
		for i, p := range percentiles {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, "p%s=%.3f", config.FormatPercentile(p), h.percentile(p))
		}
		b.WriteString("\r\n")
	}
}
