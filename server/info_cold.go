package server

import (
	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/shard"
)

// The cold tier's figures (keyspace/cold.go) in INFO and /metrics.
//
// INFO memory: tiered_storage, cold_keys (keys whose value is in the heap
// only) and cold_bytes (the memory those values took when warm). INFO
// stats: cold_keys_cooled (values made cold), cold_reads (cold values read
// back), cold_reads_sync (of those, read synchronously under a
// transaction's hold), cold_read_misses (reads that failed: the command
// answered an error), cold_read_usec (their total time) and
// cold_read_usec_per_read.

// addColdStats adds one shard's figures to the server's.
func addColdStats(tot, s *keyspace.ColdStats) {
	tot.Keys += s.Keys
	tot.Bytes += s.Bytes
	tot.Cooled += s.Cooled
	tot.Reads += s.Reads
	tot.SyncReads += s.SyncReads
	tot.Misses += s.Misses
	tot.ReadTime += s.ReadTime
	for i, n := range s.ReadSeconds.Counts {
		tot.ReadSeconds.Counts[i] += n
	}
	tot.ReadSeconds.Sum += s.ReadSeconds.Sum
}

func writeInfoColdMemory(kv func(string, any), on bool, c *keyspace.ColdStats) {
	kv("tiered_storage", boolInt(on))
	kv("cold_keys", c.Keys)
	kv("cold_bytes", c.Bytes)
}

func writeInfoColdStats(kv func(string, any), c *keyspace.ColdStats) {
	kv("cold_keys_cooled", c.Cooled)
	kv("cold_reads", c.Reads)
	kv("cold_reads_sync", c.SyncReads)
	kv("cold_read_misses", c.Misses)
	kv("cold_read_usec", c.ReadTime.Microseconds())
	per := int64(0)
	if c.Reads > 0 {
		per = c.ReadTime.Microseconds() / c.Reads
	}
	kv("cold_read_usec_per_read", per)
}

// cold sends one shard's cold tier metrics.
func (e emitter) cold(sh string, c *keyspace.ColdStats) {
	e.gauge(descColdKeys, float64(c.Keys), sh)
	e.gauge(descColdBytes, float64(c.Bytes), sh)
	e.counter(descColdCooled, c.Cooled, sh)
	e.counter(descColdReads, c.Reads, sh)
	e.counter(descColdErrors, c.Misses, sh)
	e.histogram(descColdReadSeconds, &c.ReadSeconds, coldReadBounds, sh)
}

var (
	descColdKeys        = newDesc("moond_cold_keys", "Keys whose value is cold: in the heap only (tiered-storage).", "shard")
	descColdBytes       = newDesc("moond_cold_bytes", "Memory the cold values took when warm.", "shard")
	descColdCooled      = newDesc("moond_cold_cooled_total", "Values made cold under maxmemory (tiered-storage).", "shard")
	descColdReads       = newDesc("moond_cold_reads_total", "Cold values read back from the heap.", "shard")
	descColdErrors      = newDesc("moond_cold_read_errors_total", "Cold value reads that failed (missing or damaged heap file or page): the command answered an error.", "shard")
	descColdReadSeconds = newDesc("moond_cold_read_duration_seconds", "Cold value read latency, from the command's wait to the value's install.", "shard")
)

// coldReadBounds are the read latency buckets (wal.SyncSecondsBounds).
var coldReadBounds = shard.WALSyncSecondsBounds
