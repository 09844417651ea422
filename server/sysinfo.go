package server

import (
	"os"
	goruntime "runtime"
	"runtime/metrics"
	"strconv"
	"strings"
)

// memoryFigures returns the Go heap in use (INFO's used_memory), the
// process's resident set size and the machine's memory. It uses
// runtime/metrics, which does not stop the world.
func memoryFigures() (heap, rss, system int64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	heap = int64(s[0].Value.Uint64())
	rss = int64(s[1].Value.Uint64())
	if goruntime.GOOS == "linux" {
		if b, err := os.ReadFile("/proc/self/statm"); err == nil {
			if f := strings.Fields(string(b)); len(f) > 1 {
				if pages, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					rss = pages * int64(os.Getpagesize())
				}
			}
		}
		if b, err := os.ReadFile("/proc/meminfo"); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(line, "MemTotal:") {
					if f := strings.Fields(line); len(f) > 1 {
						kb, _ := strconv.ParseInt(f[1], 10, 64)
						system = kb * 1024
					}
				}
			}
		}
	}
	return heap, rss, system
}
