package server

import "testing"

// TestDebugSleepSecondsReadsLikeStrtod checks that DEBUG SLEEP reads its
// argument as Redis's unchecked strtod: the number at its start, 0 for
// none, and no negative time.
func TestDebugSleepSecondsReadsLikeStrtod(t *testing.T) {
	for arg, want := range map[string]float64{
		"0.5": 0.5, "+2": 2, " \t3": 3, "2x": 2, "1e-3s": 0.001, "05": 5,
		"abc": 0, "": 0, "-1": 0, "nan": 0, " ": 0,
		"1e400": maxDebugSleep, "inf": maxDebugSleep,
	} {
		if got := debugSleepSeconds([]byte(arg)); got != want {
			t.Errorf("DEBUG SLEEP %q sleeps %v s, want %v", arg, got, want)
		}
	}
}
