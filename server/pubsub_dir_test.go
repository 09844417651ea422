package server

import (
	"slices"
	"sync"
	"testing"
)

func TestShardSetWithAndHas(t *testing.T) {
	var s shardSet
	s = s.with(3, true).with(70, true)
	if !s.has(3) || !s.has(70) || s.has(4) || s.has(200) {
		t.Fatalf("set %v: wrong membership", s)
	}
	if got := s.with(3, false).with(70, false); got != nil {
		t.Fatalf("emptied set is %v; want nil", got)
	}
	u := shardSet(nil).with(1, true).orInto(shardSet(nil).with(65, true))
	if !u.has(1) || !u.has(65) {
		t.Fatalf("union %v lacks a shard", u)
	}
}

func TestPubsubDirTargets(t *testing.T) {
	var d pubsubDir
	d.setName(false, "news", 0, true)
	d.setName(false, "news", 2, true)
	d.setName(true, "news", 5, true)
	d.setPattern("ne*", 7, true)
	d.setPattern("x*", 1, true)
	shards := func(s shardSet) []int {
		var out []int
		for i := range 128 {
			if s.has(i) {
				out = append(out, i)
			}
		}
		return out
	}
	if got := shards(d.targets(false, []byte("news"), nil)); !slices.Equal(got, []int{0, 2, 7}) {
		t.Fatalf("PUBLISH news targets %v; want 0 2 (channel) and 7 (pattern)", got)
	}
	if got := shards(d.targets(true, []byte("news"), nil)); !slices.Equal(got, []int{5}) {
		t.Fatalf("SPUBLISH news targets %v; want 5 only (patterns do not apply)", got)
	}
	if got := shards(d.targets(false, []byte("other"), nil)); len(got) != 0 {
		t.Fatalf("PUBLISH other targets %v; want none", got)
	}
	if d.nChannels.Load() != 1 || d.nShardChannels.Load() != 1 || d.nPatterns.Load() != 2 {
		t.Fatalf("counts %d %d %d; want 1 1 2", d.nChannels.Load(), d.nShardChannels.Load(), d.nPatterns.Load())
	}
	d.setName(false, "news", 0, false)
	d.setName(false, "news", 2, false)
	d.setPattern("ne*", 7, false)
	if got := shards(d.targets(false, []byte("news"), nil)); len(got) != 0 {
		t.Fatalf("after the last unsubscribe, targets %v; want none", got)
	}
	if d.nChannels.Load() != 0 || d.nPatterns.Load() != 1 || len(d.names(false, nil)) != 0 {
		t.Fatalf("the directory still counts a name nobody subscribes to")
	}
	if got := d.names(true, []byte("n*")); !slices.Equal(got, []string{"news"}) {
		t.Fatalf("shard channel names %v", got)
	}
}

// Shards update the directory concurrently while publishers read it: each
// shard's own subscriptions are never lost.
func TestPubsubDirConcurrentShards(t *testing.T) {
	var d pubsubDir
	var wg sync.WaitGroup
	for shard := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 500 {
				d.setName(false, "c", shard, true)
				d.setPattern("p*", shard, true)
				if !d.targets(false, []byte("c"), nil).has(shard) || !d.targets(false, []byte("px"), nil).has(shard) {
					t.Errorf("shard %d's subscription is missing", shard)
					return
				}
				d.setName(false, "c", shard, false)
				d.setPattern("p*", shard, false)
			}
		}()
		go func() {
			defer wg.Done()
			var buf shardSet
			for range 500 {
				buf = d.targets(false, []byte("pc"), buf)
			}
		}()
	}
	wg.Wait()
	if d.nChannels.Load() != 0 || d.nPatterns.Load() != 0 {
		t.Fatalf("counts %d %d after everyone left", d.nChannels.Load(), d.nPatterns.Load())
	}
}
