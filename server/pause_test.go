package server

import (
	"testing"
	"time"
)

// TestServerPauseMergesAsRedis: the stronger kind and the later end win,
// each on its own; an ended pause is replaced; UNPAUSE ends it; every
// decision has a newer generation.
func TestServerPauseMergesAsRedis(t *testing.T) {
	var p serverPause
	now := time.Unix(1000, 0)
	a := p.pause(pauseAll, now.Add(200*time.Millisecond), now)
	b := p.pause(pauseWrite, now.Add(20*time.Millisecond), now)
	if b.kind != pauseAll || !b.end.Equal(a.end) || b.gen <= a.gen {
		t.Fatalf("ALL 200 then WRITE 20 = %+v, want ALL until %v", b, a.end)
	}
	c := p.pause(pauseWrite, now.Add(time.Second), now)
	if c.kind != pauseAll || !c.end.Equal(now.Add(time.Second)) {
		t.Fatalf("then WRITE 1000 = %+v, want ALL until 1 s", c)
	}
	later := now.Add(2 * time.Second)
	d := p.pause(pauseWrite, later.Add(time.Millisecond), later)
	if d.kind != pauseWrite {
		t.Fatalf("a pause after the last ended = %+v, want WRITE", d)
	}
	e := p.unpause()
	if e.kind != pauseOff || e.gen <= d.gen {
		t.Fatalf("unpause = %+v", e)
	}
}
