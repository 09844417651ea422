package config

import (
	"testing"
	"time"
)

func TestOutputBufferLimitGetSet(t *testing.T) {
	c := Default()
	want := "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
	if got, _ := c.Get("client-output-buffer-limit"); got != want {
		t.Fatalf("default %q; want Redis's %q", got, want)
	}
	if err := c.SetAtRuntime("client-output-buffer-limit", "pubsub 1mb 1k 5 replica 10 5 2"); err != nil {
		t.Fatal(err)
	}
	want = "normal 0 0 0 slave 10 5 2 pubsub 1048576 1000 5"
	if got, _ := c.Get("client-output-buffer-limit"); got != want {
		t.Fatalf("after CONFIG SET %q; want %q", got, want)
	}
	if l := c.OutputBufferLimits[ClassPubSub]; l.Hard != 1<<20 || l.Soft != 1000 || l.SoftFor != 5*time.Second {
		t.Fatalf("pubsub limit %+v", l)
	}
	for v, msg := range map[string]string{
		"pubsub 1mb 512kb": "Wrong number of arguments in buffer limit configuration.",
		"foo 1 2 3":        "Invalid client class specified in buffer limit configuration.",
		"pubsub x 2 3":     "Error in hard, soft or soft_seconds setting in buffer limit configuration.",
		"pubsub 1 2 -1":    "Error in hard, soft or soft_seconds setting in buffer limit configuration.",
		"pubsub 1 2 3 x":   "Wrong number of arguments in buffer limit configuration.",
	} {
		err := c.SetAtRuntime("client-output-buffer-limit", v)
		if err == nil || err.Error() != msg {
			t.Errorf("%q: error %v; want %q", v, err, msg)
		}
	}
	if got, _ := c.Get("client-output-buffer-limit"); got != want {
		t.Fatalf("a refused value changed the limits to %q", got)
	}
}
