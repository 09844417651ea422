package runtime

import (
	"container/heap"
	"time"
)

// Timer is a one-shot or periodic callback run on the loop's thread. It is
// created by Loop.AfterFunc or Loop.Every and owned by the loop: every method
// is called on the loop's thread.
type Timer struct {
	loop   *Loop
	when   time.Time
	period time.Duration // 0 for one-shot
	f      func()
	// index is the timer's position in the loop's heap, or -1 while it is
	// not scheduled (fired one-shot, stopped, or running).
	index int
	// seq orders timers scheduled for the same instant (earlier first) and
	// bounds one run of the timer phase: only timers scheduled before the
	// phase began are run in it.
	seq     uint64
	stopped bool
}

// Stop prevents the timer from firing again. It returns true when the call
// stopped a future firing, false when the timer had already fired (one shot)
// or been stopped. A periodic timer may stop itself from its callback.
func (t *Timer) Stop() bool {
	if t.stopped {
		return false
	}
	t.stopped = true
	if t.index < 0 {
		return t.period > 0 // a periodic timer stopping itself in its callback
	}
	heap.Remove(&t.loop.timers, t.index)
	return true
}

// timerHeap is a min-heap of scheduled timers by (when, seq).
//
// Invariant: h[i].index == i for every timer in the heap; a timer not in the
// heap has index -1.
type timerHeap []*Timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].when.Equal(h[j].when) {
		return h[i].seq < h[j].seq
	}
	return h[i].when.Before(h[j].when)
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*Timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	t.index = -1
	*h = old[:n-1]
	return t
}

// AfterFunc runs f once on the loop's thread after at least d. Loop thread
// only.
func (l *Loop) AfterFunc(d time.Duration, f func()) *Timer {
	t := &Timer{loop: l, f: f, index: -1}
	l.schedule(t, time.Now().Add(d))
	return t
}

// Every runs f on the loop's thread every d (d > 0), first after d. When the
// loop falls behind by more than a period, the missed firings are dropped
// rather than run in a burst. Loop thread only.
func (l *Loop) Every(d time.Duration, f func()) *Timer {
	if d <= 0 {
		panic("runtime: Every with a non-positive period")
	}
	t := &Timer{loop: l, f: f, period: d, index: -1}
	l.schedule(t, time.Now().Add(d))
	return t
}

func (l *Loop) schedule(t *Timer, when time.Time) {
	t.when = when
	l.timerSeq++
	t.seq = l.timerSeq
	heap.Push(&l.timers, t)
}

// nextTimer returns the deadline of the earliest timer, and false when no
// timer is scheduled.
func (l *Loop) nextTimer() (time.Time, bool) {
	if len(l.timers) == 0 {
		return time.Time{}, false
	}
	return l.timers[0].when, true
}

// runTimers runs every timer due at now that was scheduled before this call.
// Timers a callback schedules (or reschedules) run in a later iteration, so a
// zero-delay timer that re-arms itself cannot starve I/O.
func (l *Loop) runTimers(now time.Time) int {
	limit := l.timerSeq
	ran := 0
	for len(l.timers) > 0 {
		t := l.timers[0]
		if t.when.After(now) || t.seq > limit {
			break
		}
		heap.Pop(&l.timers)
		if t.period == 0 {
			t.stopped = true // fired: Stop now reports false
		}
		t.f()
		ran++
		if t.period > 0 && !t.stopped {
			next := t.when.Add(t.period)
			if !next.After(now) {
				next = now.Add(t.period)
			}
			l.schedule(t, next)
		}
	}
	return ran
}
