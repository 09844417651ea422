package runtime

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestCrossLoopWakeUpsUseMsgRingOnUring checks the path the ping-pong took:
// a uring loop wakes another uring loop from its own ring, not through the
// target's eventfd.
func TestCrossLoopWakeUpsUseMsgRingOnUring(t *testing.T) {
	skipUnavailable(t, KindUring)
	a, b := startLoop(t, KindUring), startLoop(t, KindUring)
	const hops = 200
	done := make(chan struct{})
	var hop func(n int, from, to *Loop)
	hop = func(n int, from, to *Loop) {
		if n == hops {
			close(done)
			return
		}
		if err := to.Post(func() { hop(n+1, to, from) }); err != nil {
			t.Error(err)
		}
	}
	if err := a.Post(func() { hop(0, a, b) }); err != nil {
		t.Fatal(err)
	}
	await(t, done, "ping-pong")
	var sent int
	for _, l := range []*Loop{a, b} {
		onLoop(t, l, func() { sent += l.drv.(*uringBackend).msgRings })
	}
	efd := a.drv.(*uringBackend).efdWakes.Load() + b.drv.(*uringBackend).efdWakes.Load()
	t.Logf("%d hops: %d MSG_RING wake-ups, %d eventfd wake-ups", hops, sent, efd)
	if sent == 0 {
		t.Fatal("no wake-up went through MSG_RING")
	}
}

func TestLoopPinsItsThreadToTheConfiguredCPU(t *testing.T) {
	forEachBackend(t, func(t *testing.T, kind Kind) {
		var before unix.CPUSet
		if err := unix.SchedGetaffinity(0, &before); err != nil {
			t.Fatal(err)
		}
		cpu := -1
		for i := range 1024 {
			if before.IsSet(i) {
				cpu = i // the last CPU this process may use
			}
		}
		l := startLoop(t, kind, func(c *Config) { c.CPU = cpu })
		var set unix.CPUSet
		var err error
		onLoop(t, l, func() { err = unix.SchedGetaffinity(0, &set) })
		if err != nil {
			t.Fatal(err)
		}
		if set.Count() != 1 || !set.IsSet(cpu) {
			t.Fatalf("loop thread affinity has %d CPUs (CPU %d set: %v), want only CPU %d", set.Count(), cpu, set.IsSet(cpu), cpu)
		}
	})
}

func TestStopOnTheLoopsOwnThreadPanicsInsteadOfDeadlocking(t *testing.T) {
	l := startLoop(t, KindPool)
	got := make(chan any, 1)
	onLoop(t, l, func() {
		defer func() { got <- recover() }()
		l.Stop()
	})
	if r := <-got; r == nil {
		t.Fatal("Stop on the loop's thread returned instead of panicking")
	}
}
