// Package monoclock is a cheap monotonic clock for timing every command.
//
// Reading Go's monotonic clock (time.Since) costs about 22 ns on the hosts
// moond runs on, which per-command timing would pay twice per pipelined
// command; the processor's time-stamp counter costs about 8 ns. Where the
// kernel itself keeps time with the TSC (its clocksource is "tsc", which it
// chooses only for an invariant, synchronized counter) and the processor is
// amd64, Nanos reads the TSC and scales it by a rate measured against the
// monotonic clock at first use; elsewhere it reads the monotonic clock.
// Redis's monotonic clock makes the same choice.
package monoclock
