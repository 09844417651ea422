package server

import "testing"

func TestKeySlotMatchesRedisCluster(t *testing.T) {
	// Values from Redis Cluster's CLUSTER KEYSLOT.
	for key, want := range map[string]int{
		"foo": 12182, "bar": 5061, "123456789": 12739, "": 0,
		"{user1000}.following": 3443, "{user1000}.followers": 3443, "user1000": 3443,
		"foo{}{bar}": 8363, "foo{{bar}}zap": 4015, "foo{bar}{zap}": 5061,
	} {
		if got := KeySlot([]byte(key)); got != want {
			t.Errorf("KeySlot(%q) = %d, want %d", key, got, want)
		}
	}
}

func TestShardOfSlotCoversEveryShard(t *testing.T) {
	for _, n := range []int{1, 2, 3, 16} {
		seen := map[int]bool{}
		for s := 0; s < SlotCount; s++ {
			sh := shardOfSlot(s, n)
			if sh < 0 || sh >= n {
				t.Fatalf("slot %d -> shard %d of %d", s, sh, n)
			}
			seen[sh] = true
		}
		if len(seen) != n {
			t.Fatalf("%d shards, %d used", n, len(seen))
		}
	}
}
