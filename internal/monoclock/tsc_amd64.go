package monoclock

import (
	"os"
	"strings"
)

// readTSC returns the processor's time-stamp counter (tsc_amd64.s).
func readTSC() uint64

// tscUsable reports whether the kernel keeps its own time with the TSC,
// which it does only when the counter is invariant and synchronized
// across processors.
func tscUsable() bool {
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	return err == nil && strings.TrimSpace(string(b)) == "tsc"
}
