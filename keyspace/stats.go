package keyspace

import "time"

// Stats are the keyspace figures of INFO's stats section.
type Stats struct {
	ExpiredKeys           int64         // expired_keys
	KeyspaceHits          int64         // keyspace_hits
	KeyspaceMisses        int64         // keyspace_misses
	ExpiredStalePerc      float64       // expired_stale_perc, as a fraction (0..1)
	ExpiredTimeCapReached int64         // expired_time_cap_reached_count
	ExpireCycleTime       time.Duration // expire_cycle_cpu_milliseconds
	EvictedKeys           int64         // evicted_keys
}

// Stats returns the statistics gathered since the keyspace was made or
// ResetStats last ran.
func (ks *Keyspace) Stats() Stats { return ks.stats }

// ResetStats zeroes the statistics (CONFIG RESETSTAT).
func (ks *Keyspace) ResetStats() {
	ks.stats = Stats{}
	ks.cold.stats = ColdStats{} // the counters; the cold keys stay counted (cold.go)
}

// DBInfo is one database's line of INFO's keyspace section:
// "db0:keys=1,expires=0,avg_ttl=0".
type DBInfo struct {
	Keys    int64 // keys, expired ones not yet reclaimed included
	Expires int64 // keys with a TTL
	AvgTTL  int64 // estimated mean TTL in ms of keys with one, from active expiry's samples
	// MainBytes and ExpiresBytes are the memory of the key table and of
	// the expiry table, their slots and segments (MEMORY STATS's
	// overhead.hashtable.main and .expires).
	MainBytes, ExpiresBytes int64
}

// DBInfo returns database i's figures.
func (ks *Keyspace) DBInfo(i int) DBInfo {
	d := ks.dbs[i]
	return DBInfo{Keys: int64(d.keys.count), Expires: int64(d.expires.count), AvgTTL: d.avgTTL,
		MainBytes: d.keys.memory(), ExpiresBytes: d.expires.memory()}
}

// DBSize is DBSIZE for database i: keys that expired but were not yet
// reclaimed count, as in Redis.
func (ks *Keyspace) DBSize(i int) int { return ks.dbs[i].keys.count }

// UsedMemory estimates the heap memory that the data holds: the tables'
// slots and segment headers, and every key and value allocation rounded to
// the allocator's size classes, and the checkpoint's dirty list.
func (ks *Keyspace) UsedMemory() int64 {
	n := ks.dirtyListMemory()
	for _, d := range ks.dbs {
		n += d.keys.memory() + d.expires.memory() + d.dataBytes
	}
	return n
}
