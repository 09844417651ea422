// Package looptest holds test helpers for code that lives on a
// runtime.Loop: running a function on the loop's thread, and waiting for a
// condition that only the loop's thread may read.
package looptest

import (
	"context"
	"testing"
	"time"

	"github.com/moond-db/moond/runtime"
)

// Deadline bounds every wait: generous, because -race and a loaded CI
// machine are slow, but finite, so that a bug fails instead of hanging.
const Deadline = 20 * time.Second

// On runs f on l's thread and returns once it ran.
func On(t testing.TB, l *runtime.Loop, f func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	defer cancel()
	if err := l.Call(ctx, f); err != nil {
		t.Fatal(err)
	}
}

// Until evaluates cond on l's thread until it holds, and reports whether it
// did before the Deadline. The condition is logical (a counter, a state);
// the pause between evaluations is only how often it is looked at.
func Until(t testing.TB, l *runtime.Loop, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(Deadline)
	for {
		var ok bool
		On(t, l, func() { ok = cond() })
		if ok {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Microsecond)
	}
}
