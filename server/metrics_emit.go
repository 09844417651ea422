package server

import (
	goruntime "runtime"
	"strconv"

	"github.com/moond-db/moond/shard"
	"github.com/prometheus/client_golang/prometheus"
)

// emitter turns snapshots into metrics on a Collect channel.
type emitter struct {
	ch chan<- prometheus.Metric
}

func (e emitter) counter(d *prometheus.Desc, v int64, labels ...string) {
	e.ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
}

func (e emitter) gauge(d *prometheus.Desc, v float64, labels ...string) {
	e.ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

// histogram sends a WAL histogram whose buckets bounds delimit.
func (e emitter) histogram(d *prometheus.Desc, h *shard.WALHistogram, bounds []float64, labels ...string) {
	cum := h.Cumulative()
	buckets := make(map[float64]uint64, len(cum))
	for i, b := range bounds {
		buckets[b] = cum[i]
	}
	e.ch <- prometheus.MustNewConstHistogram(d, h.Count(), h.Sum, buckets, labels...)
}

// commandDuration sends one command's latency histogram on one shard;
// sum is the seconds its calls took.
func (e emitter) commandDuration(h *latencyHist, sum float64, labels ...string) {
	cum := h.cumulativeBelow(promBounds)
	buckets := make(map[float64]uint64, len(cum))
	for i, b := range promBounds {
		buckets[float64(b)/1e9] = cum[i]
	}
	e.ch <- prometheus.MustNewConstHistogram(descCommandDuration, h.total, sum, buckets, labels...)
}

// shard sends one shard's families; sh is its label.
func (e emitter) shard(sh string, si *shardInfo) {
	st := &si.stats
	for id, c := range st.cmdCalls {
		if c == (cmdStat{}) {
			continue // as commandstats: only the commands called
		}
		name := commandList[id].name
		e.counter(descCommands, c.calls, sh, name)
		e.counter(descCommandsFailed, c.failed, sh, name)
		e.counter(descCommandsRejected, c.rejected, sh, name)
		if h := st.hists[id]; h != nil {
			e.commandDuration(h, float64(c.nanos)/1e9, sh, name)
		}
	}
	for prefix, n := range st.errorsByPrefix {
		e.counter(descErrorReplies, n, sh, prefix)
	}
	e.gauge(descConnected, float64(si.clients), sh)
	e.gauge(descBlocked, float64(si.blocked), sh)
	e.counter(descConnsReceived, st.connectionsReceived, sh)
	e.counter(descConnsRejected, st.rejectedConnections, sh)
	e.counter(descNetInput, st.netInputBytes, sh)
	e.counter(descNetOutput, st.netOutputBytes, sh)

	for i, db := range si.keyspace {
		if i == 0 || db.keys > 0 {
			e.gauge(descKeys, float64(db.keys), sh, strconv.Itoa(i))
			e.gauge(descKeysExpiring, float64(db.expires), sh, strconv.Itoa(i))
		}
	}
	e.counter(descExpired, si.expired, sh)
	e.counter(descEvicted, si.evicted, sh)
	e.counter(descHits, si.hits, sh)
	e.counter(descMisses, si.misses, sh)
	e.gauge(descDatasetMem, float64(si.dataMem), sh)
	e.cold(sh, &si.cold)

	e.wal(sh, si)
	e.checkpoint(sh, si)
}

func (e emitter) wal(sh string, si *shardInfo) {
	wi := &si.shard.WAL
	ws := &wi.Stats
	ci := &si.shard.Checkpoint
	e.counter(descWALBytes, ws.Bytes, sh)
	e.counter(descWALRecords, ws.Records, sh)
	e.counter(descWALGroups, ws.Groups, sh)
	e.counter(descWALSyncs, ws.Datasyncs, sh)
	e.counter(descWALWriteErrors, ws.WriteErrors, sh)
	e.counter(descWALSegsCreated, ws.Segments, sh)
	e.counter(descWALSegsRecycled, ci.Recycled, sh)
	e.gauge(descWALSegments, float64(ci.WALSegments), sh)
	e.gauge(descWALUnwritten, float64(wi.Unwritten), sh)
	e.gauge(descWALAboveRedo, float64(ci.WALSince), sh)
	e.gauge(descWALNextLSN, float64(wi.NextLSN), sh)
	e.gauge(descWALDurableLSN, float64(wi.DurableLSN), sh)
	e.histogram(descWALGroupRecords, &ws.GroupRecords, shard.WALGroupRecordBounds, sh)
	e.histogram(descWALSyncSeconds, &ws.SyncSeconds, shard.WALSyncSecondsBounds, sh)
	e.gauge(descWALRefused, float64(boolInt(wi.AppendRefused != nil)), sh)
	reason, poisoned := "", 0.0
	if wi.Poison != nil {
		reason, poisoned = wi.Poison.Error(), 1
	}
	e.gauge(descPoisoned, poisoned, sh, "wal", reason)
}

func (e emitter) checkpoint(sh string, si *shardInfo) {
	ci := &si.shard.Checkpoint
	cs := &ci.Stats
	e.counter(descCkpts, cs.Completed, sh)
	e.gauge(descCkptInProgress, float64(boolInt(cs.InProgress)), sh)
	for ph, secs := range cs.PhaseSeconds {
		if ph > 0 { // 0 is idle, not a phase
			e.ch <- prometheus.MustNewConstMetric(descCkptPhase, prometheus.CounterValue, secs, sh, shard.CheckpointState(ph).String())
		}
	}
	e.gauge(descCkptLastDur, float64(cs.LastDurationMs)/1000, sh)
	e.counter(descCkptPages, cs.PagesFlushed, sh)
	e.counter(descCkptPagesFail, cs.PagesFailed, sh)
	if !ci.LastSave.IsZero() {
		e.gauge(descCkptLastOK, float64(ci.LastSave.UnixNano())/1e9, sh)
	}
	e.gauge(descCkptRedo, float64(cs.LastRedoLSN), sh)
	if wi := &si.shard.WAL; wi.Enabled {
		// Recovery replays the records from max(redo, 1) (LSN 0 is
		// never used; redo 0 is a shard that never checkpointed).
		from := max(cs.LastRedoLSN, 1)
		e.gauge(descCkptRedoLag, float64(wi.NextLSN-min(from, wi.NextLSN)), sh)
	}
	e.gauge(descCkptDirtyKeys, float64(ci.DirtyKeys), sh)
	e.gauge(descHeapFiles, float64(ci.HeapFiles), sh)
	e.gauge(descHeapPages, float64(ci.HeapPages), sh)
	e.gauge(descHeapBytes, float64(ci.HeapBytes), sh)
	e.counter(descHeapRetired, cs.VanishedRetired, sh)
	e.counter(descHeapUnexpected, cs.VanishedUnexpected, sh)
	reason, poisoned := "", 0.0
	if cs.Poisoned {
		reason, poisoned = cs.PoisonReason, 1
	}
	e.gauge(descPoisoned, poisoned, sh, "checkpoint", reason)
}

// server sends the server-wide families.
func (e emitter) server(s *Server) {
	e.gauge(descBuildInfo, 1, Version, RedisVersion, goruntime.Version())
	e.gauge(descIOBackend, 1, s.backend.String(), s.backendReason)
	e.gauge(descShards, float64(s.nshards))
	e.gauge(descLoading, float64(boolInt(s.loading.Load())))
	// A reshard's old shards follow the new ones (loading.go).
	for i, p := range s.progress {
		loaded, total := p.Bytes()
		e.gauge(descLoadedBytes, float64(loaded), strconv.Itoa(i))
		e.gauge(descLoadTotal, float64(total), strconv.Itoa(i))
	}
	heap, rss, _ := memoryFigures()
	e.gauge(descUsedMemory, float64(heap))
	e.gauge(descRSS, float64(rss))
	e.gauge(descMaxMemory, float64(s.maxmemory.Load()))
}
