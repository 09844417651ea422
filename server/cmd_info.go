package server

import (
	"fmt"
	"os"
	goruntime "runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/shard"
)

func init() {
	register(&serverCmd{name: "info", arity: -1, run: cmdInfo})
}

// shardInfo is what one shard contributes to INFO, gathered on its thread.
type shardInfo struct {
	clients  int
	blocked  int
	timed    int // blocked with a timeout
	stats    workerStats
	keyspace []dbInfo
	expired  int64
	hits     int64
	misses   int64
	dataMem  int64
	evicted  int64
	cold     keyspace.ColdStats // the cold tier's figures (info_cold.go)
	// overTotal and overNow are the ms this shard spent over its share of
	// maxmemory, in all and in the episode going on (evict.go).
	overTotal, overNow int64
	shard              shard.Info
}

// dbInfo is a database's figures: INFO keyspace's, and the bytes of its
// key and expiry tables (MEMORY STATS).
type dbInfo struct{ keys, expires, avgTTL, mainBytes, expiresBytes int64 }

func (w *worker) collectInfo() shardInfo {
	si := shardInfo{clients: len(w.conns), blocked: w.blockedClients + w.heldClients(), timed: w.timedBlocked, stats: w.stats}
	si.overTotal, si.overNow = w.mem.overTimes(w.loop.Now())
	si.stats.errorsByPrefix = make(map[string]int64, len(w.stats.errorsByPrefix))
	for k, v := range w.stats.errorsByPrefix {
		si.stats.errorsByPrefix[k] = v
	}
	si.stats.cmdCalls = append([]cmdStat(nil), w.stats.cmdCalls...)
	si.stats.hists = copyHists(w.stats.hists)
	if w.sh == nil { // loading: no data yet, and nothing saved since the start
		si.shard.Checkpoint = shard.CheckpointInfo{LastSave: w.srv.started, LastStatus: "ok"}
		si.keyspace = make([]dbInfo, w.srv.databases())
		return si
	}
	st := w.ks.Stats()
	si.expired, si.hits, si.misses, si.dataMem = st.ExpiredKeys, st.KeyspaceHits, st.KeyspaceMisses, w.ks.UsedMemory()
	si.evicted = st.EvictedKeys
	si.cold = w.ks.ColdStats()
	si.shard = w.sh.Info()
	for i := 0; i < w.ks.NumDBs(); i++ {
		db := w.ks.DBInfo(i)
		si.keyspace = append(si.keyspace, dbInfo{keys: db.Keys, expires: db.Expires, avgTTL: db.AvgTTL,
			mainBytes: db.MainBytes, expiresBytes: db.ExpiresBytes})
	}
	return si
}

var defaultInfoSections = []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu", "modules", "errorstats", "cluster", "keyspace"}

// allInfoSections are every section, in the order Redis 7.0 writes them.
var allInfoSections = []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu", "modules", "commandstats", "errorstats", "latencystats", "cluster", "keyspace"}

func cmdInfo(c *conn, args [][]byte) {
	want := map[string]bool{}
	for _, a := range args[1:] {
		s := strings.ToLower(string(a))
		switch s {
		case "default":
			for _, d := range defaultInfoSections {
				want[d] = true
			}
		case "all", "everything":
			for _, d := range allInfoSections {
				want[d] = true
			}
		default:
			want[s] = true
		}
	}
	if len(want) == 0 {
		for _, d := range defaultInfoSections {
			want[d] = true
		}
	}
	infos := make([]shardInfo, c.w.srv.nshards)
	srv := c.w.srv
	c.fanoutCollect(func(w *worker, i int) { infos[i] = w.collectInfo() }, func(w *resp.Writer) {
		var b strings.Builder
		for _, sec := range allInfoSections {
			if !want[sec] {
				continue
			}
			if b.Len() > 0 {
				b.WriteString("\r\n")
			}
			srv.writeInfoSection(&b, sec, infos)
		}
		w.Verbatim("txt", []byte(b.String()))
	})
}

func (s *Server) writeInfoSection(b *strings.Builder, sec string, infos []shardInfo) {
	kv := func(k string, v any) { fmt.Fprintf(b, "%s:%v\r\n", k, v) }
	var tot shardInfo
	tot.stats.errorsByPrefix = map[string]int64{}
	tot.stats.cmdCalls = make([]cmdStat, len(commandList))
	tot.stats.hists = make([]*latencyHist, len(commandList))
	for _, si := range infos {
		tot.clients += si.clients
		tot.blocked += si.blocked
		tot.timed += si.timed
		tot.expired += si.expired
		tot.hits += si.hits
		tot.misses += si.misses
		tot.dataMem += si.dataMem
		tot.evicted += si.evicted
		addColdStats(&tot.cold, &si.cold)
		tot.overTotal = max(tot.overTotal, si.overTotal)
		tot.overNow = max(tot.overNow, si.overNow)
		tot.shard.Changes += si.shard.Changes
		st := &tot.stats
		st.connectionsReceived += si.stats.connectionsReceived
		st.rejectedConnections += si.stats.rejectedConnections
		st.txns += si.stats.txns
		st.txnsAcross += si.stats.txnsAcross
		st.txnGroups += si.stats.txnGroups
		st.execs += si.stats.execs
		st.heldNanos += si.stats.heldNanos
		st.obufLimitDisconnections += si.stats.obufLimitDisconnections
		st.commands += si.stats.commands
		st.netInputBytes += si.stats.netInputBytes
		st.netOutputBytes += si.stats.netOutputBytes
		st.errorReplies += si.stats.errorReplies
		for k, v := range si.stats.errorsByPrefix {
			st.errorsByPrefix[k] += v
		}
		for id, v := range si.stats.cmdCalls {
			t := &st.cmdCalls[id]
			t.calls += v.calls
			t.failed += v.failed
			t.rejected += v.rejected
			t.nanos += v.nanos
		}
		mergeHists(st.hists, si.stats.hists)
	}
	now := time.Now()
	s.cfgMu.RLock()
	cfg := *s.cfg
	s.cfgMu.RUnlock()
	switch sec {
	case "server":
		b.WriteString("# Server\r\n")
		kv("redis_version", RedisVersion)
		kv("redis_git_sha1", "00000000")
		kv("redis_git_dirty", 0)
		kv("redis_build_id", "0")
		kv("redis_mode", "standalone")
		kv("os", goruntime.GOOS+" "+goruntime.GOARCH)
		kv("arch_bits", 64)
		kv("monotonic_clock", "POSIX clock_gettime")
		kv("multiplexing_api", s.backend.String())
		kv("atomicvar_api", "go-sync/atomic")
		kv("gcc_version", "0.0.0")
		kv("process_id", os.Getpid())
		kv("process_supervised", "no")
		kv("run_id", s.runID)
		kv("tcp_port", s.port)
		kv("server_time_usec", now.UnixMicro())
		kv("uptime_in_seconds", int64(now.Sub(s.started)/time.Second))
		kv("uptime_in_days", int64(now.Sub(s.started)/(24*time.Hour)))
		kv("hz", cfg.Hz)
		kv("configured_hz", cfg.Hz)
		kv("lru_clock", now.Unix()&(1<<24-1))
		exe, _ := os.Executable()
		kv("executable", exe)
		kv("config_file", "")
		kv("io_threads_active", 0)
		kv("moond_version", Version)
		kv("go_version", goruntime.Version())
		kv("io_backend", s.backend.String())
		kv("io_backend_reason", s.backendReason)
		kv("shards", s.nshards)
	case "clients":
		b.WriteString("# Clients\r\n")
		kv("connected_clients", tot.clients)
		kv("cluster_connections", 0)
		kv("maxclients", cfg.MaxClients)
		kv("client_recent_max_input_buffer", 0)
		kv("client_recent_max_output_buffer", 0)
		kv("blocked_clients", tot.blocked)
		kv("tracking_clients", s.tracking.clients.Load())
		kv("clients_in_timeout_table", tot.timed)
	case "memory":
		heap, rss, sys := memoryFigures()
		b.WriteString("# Memory\r\n")
		kv("used_memory", heap)
		kv("used_memory_human", humanBytes(heap))
		kv("used_memory_rss", rss)
		kv("used_memory_rss_human", humanBytes(rss))
		peak := s.notePeak(heap)
		kv("used_memory_peak", peak)
		kv("used_memory_peak_human", humanBytes(peak))
		kv("used_memory_dataset", tot.dataMem)
		kv("total_system_memory", sys)
		kv("total_system_memory_human", humanBytes(sys))
		kv("maxmemory", cfg.MaxMemory)
		kv("maxmemory_human", humanBytes(cfg.MaxMemory))
		kv("maxmemory_policy", cfg.MaxMemoryPolicy)
		ratio := 0.0
		if heap > 0 {
			ratio = float64(rss) / float64(heap)
		}
		kv("mem_fragmentation_ratio", fmt.Sprintf("%.2f", ratio))
		kv("mem_allocator", "go-"+goruntime.Version())
		kv("lazyfree_pending_objects", 0)
		writeInfoColdMemory(kv, cfg.TieredStorage, &tot.cold)
	case "persistence":
		b.WriteString("# Persistence\r\n")
		loading := s.loading.Load()
		kv("loading", boolInt(loading))
		kv("async_loading", 0)
		kv("current_cow_peak", 0)
		kv("current_cow_size", 0)
		kv("current_fork_perc", "0.00")
		writeInfoCheckpoint(kv, infos, tot.shard.Changes, func(d time.Duration) int64 {
			if d < 0 {
				return -1
			}
			return int64(d / time.Second)
		})
		kv("aof_enabled", boolInt(cfg.AppendOnly))
		kv("aof_rewrite_in_progress", boolInt(slices.ContainsFunc(infos, func(si shardInfo) bool { return si.shard.WAL.Rewriting })))
		kv("aof_rewrite_scheduled", 0)
		kv("aof_last_rewrite_time_sec", -1)
		kv("aof_current_rewrite_time_sec", -1)
		kv("aof_last_bgrewrite_status", "ok")
		kv("aof_rewrites", s.aofRewrites.Load())
		writeInfoWAL(kv, infos)
		kv("aof_last_cow_size", 0)
		if loading {
			s.writeInfoLoading(kv, now)
		}
	case "stats":
		st := tot.stats
		b.WriteString("# Stats\r\n")
		kv("total_connections_received", st.connectionsReceived)
		kv("total_commands_processed", st.commands)
		kv("instantaneous_ops_per_sec", 0)
		kv("total_net_input_bytes", st.netInputBytes)
		kv("total_net_output_bytes", st.netOutputBytes)
		kv("instantaneous_input_kbps", "0.00")
		kv("instantaneous_output_kbps", "0.00")
		kv("rejected_connections", st.rejectedConnections)
		kv("sync_full", s.master.syncFull.Load())
		kv("sync_partial_ok", s.master.syncPartialOK.Load())
		kv("sync_partial_err", s.master.syncPartialErr.Load())
		kv("expired_keys", tot.expired)
		kv("expired_stale_perc", "0.00")
		kv("expired_time_cap_reached_count", 0)
		kv("evicted_keys", tot.evicted)
		writeInfoColdStats(kv, &tot.cold)
		kv("evicted_clients", 0)
		// A shard over its share is the server over maxmemory: the
		// longest of the shards' times.
		kv("total_eviction_exceeded_time", tot.overTotal)
		kv("current_eviction_exceeded_time", tot.overNow)
		kv("keyspace_hits", tot.hits)
		kv("keyspace_misses", tot.misses)
		kv("pubsub_channels", s.pubsub.nChannels.Load())
		kv("pubsub_patterns", s.pubsub.nPatterns.Load())
		kv("pubsubshard_channels", s.pubsub.nShardChannels.Load())
		kv("latest_fork_usec", 0)
		kv("total_forks", 0)
		kv("migrate_cached_sockets", 0)
		keys, items := s.trackedTotals()
		kv("tracking_total_keys", keys)
		kv("tracking_total_items", items)
		kv("tracking_total_prefixes", s.tracking.prefixCount())
		kv("total_error_replies", st.errorReplies)
		kv("client_output_buffer_limit_disconnections", st.obufLimitDisconnections)
		kv("total_reads_processed", 0)
		kv("total_writes_processed", 0)
		kv("total_exec_commands", st.execs)
		kv("txns_coordinated", st.txns)
		kv("txns_across_shards", st.txnsAcross)
		kv("txn_groups", st.txnGroups)
		kv("txn_shard_hold_usec", st.heldNanos/1000)
	case "replication":
		b.WriteString("# Replication\r\n")
		s.infoReplication(kv)
	case "cpu":
		sys, user := cpuTimes()
		b.WriteString("# CPU\r\n")
		kv("used_cpu_sys", fmt.Sprintf("%.6f", sys))
		kv("used_cpu_user", fmt.Sprintf("%.6f", user))
		kv("used_cpu_sys_children", "0.000000")
		kv("used_cpu_user_children", "0.000000")
	case "modules":
		b.WriteString("# Modules\r\n")
	case "errorstats":
		b.WriteString("# Errorstats\r\n")
		for _, k := range sortedKeys(tot.stats.errorsByPrefix) {
			fmt.Fprintf(b, "errorstat_%s:count=%d\r\n", k, tot.stats.errorsByPrefix[k])
		}
	case "commandstats":
		b.WriteString("# Commandstats\r\n")
		var used []*command
		for id, v := range tot.stats.cmdCalls {
			if v != (cmdStat{}) {
				used = append(used, commandList[id])
			}
		}
		sort.Slice(used, func(i, j int) bool { return used[i].name < used[j].name })
		for _, cmd := range used {
			v := tot.stats.cmdCalls[cmd.id]
			usec, perCall := v.nanos/1000, 0.0
			if v.calls > 0 {
				perCall = float64(usec) / float64(v.calls)
			}
			fmt.Fprintf(b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
				cmd.name, v.calls, usec, perCall, v.rejected, v.failed)
		}
	case "latencystats":
		b.WriteString("# Latencystats\r\n")
		writeLatencyStats(b, tot.stats.hists, s.timing.Load().percentiles)
	case "cluster":
		b.WriteString("# Cluster\r\n")
		kv("cluster_enabled", 0)
	case "keyspace":
		b.WriteString("# Keyspace\r\n")
		for db := 0; db < cfg.Databases; db++ {
			var keys, expires, ttlSum, ttlN int64
			for _, si := range infos {
				if db < len(si.keyspace) {
					d := si.keyspace[db]
					keys += d.keys
					expires += d.expires
					if d.avgTTL > 0 {
						ttlSum += d.avgTTL
						ttlN++
					}
				}
			}
			if keys > 0 {
				avg := int64(0)
				if ttlN > 0 {
					avg = ttlSum / ttlN
				}
				fmt.Fprintf(b, "db%d:keys=%d,expires=%d,avg_ttl=%d\r\n", db, keys, expires, avg)
			}
		}
	}
}

// writeInfoWAL writes the WAL's share of INFO persistence: Redis's aof_*
// fields mapped onto the WAL, then moond's wal_* fields (per-shard LSNs as
// comma-separated lists, in shard order).
func writeInfoWAL(kv func(string, any), infos []shardInfo) {
	status := "ok"
	var size, records, groups, bytes, syncs, errs, segs, unwritten int64
	var poisoned, refused []string
	var next, durable []string
	for i, si := range infos {
		wi := si.shard.WAL
		size += wi.RecoveredBytes + wi.Stats.Bytes
		records += wi.Stats.Records
		groups += wi.Stats.Groups
		bytes += wi.Stats.Bytes
		syncs += wi.Stats.Datasyncs
		errs += wi.Stats.WriteErrors
		segs += wi.Stats.Segments
		unwritten += int64(wi.Unwritten)
		if wi.LastErr != nil || wi.Poison != nil || wi.AppendRefused != nil {
			status = "err"
		}
		if wi.AppendRefused != nil {
			refused = append(refused, fmt.Sprintf("shard %d: %v", i, wi.AppendRefused))
		}
		if wi.Poison != nil {
			poisoned = append(poisoned, fmt.Sprintf("shard %d: %v", i, wi.Poison))
		}
		next = append(next, fmt.Sprint(wi.NextLSN))
		durable = append(durable, fmt.Sprint(wi.DurableLSN))
	}
	kv("aof_last_write_status", status)
	kv("aof_current_size", size)
	kv("aof_base_size", 0)
	kv("aof_buffer_length", unwritten)
	kv("wal_next_lsn", strings.Join(next, ","))
	kv("wal_durable_lsn", strings.Join(durable, ","))
	kv("wal_records", records)
	kv("wal_groups", groups)
	avg := 0.0
	if groups > 0 {
		avg = float64(records) / float64(groups)
	}
	kv("wal_group_size_avg", fmt.Sprintf("%.2f", avg))
	kv("wal_bytes", bytes)
	kv("wal_fsyncs", syncs)
	kv("wal_write_errors", errs)
	kv("wal_segments_created", segs)
	kv("wal_unwritten_bytes", unwritten)
	if len(infos) > 0 {
		kv("wal_fsync_policy", infos[0].shard.WAL.Policy)
	}
	kv("wal_poisoned", boolInt(len(poisoned) > 0))
	if len(poisoned) > 0 {
		kv("wal_poisoned_reason", strings.Join(poisoned, "; "))
	}
	// A latch: the WAL refused a record since the start (the write was
	// refused before it changed anything), and aof_last_write_status stays
	// err until restart so that a monitor polling INFO sees it.
	kv("wal_append_refused", boolInt(len(refused) > 0))
	if len(refused) > 0 {
		kv("wal_append_refused_reason", strings.Join(refused, "; "))
	}
}

// notePeak records heap as a candidate for used_memory_peak and returns
// the peak seen so far (sampled when INFO runs).
func (s *Server) notePeak(heap int64) int64 {
	for {
		p := s.peakMem.Load()
		if heap <= p || s.peakMem.CompareAndSwap(p, heap) {
			return max(p, heap)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func sortedKeys(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// humanBytes formats like Redis's bytesToHuman: 1.23K, 4.56M, ...
func humanBytes(n int64) string {
	f := float64(n)
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1<<20:
		return fmt.Sprintf("%.2fK", f/1024)
	case n < 1<<30:
		return fmt.Sprintf("%.2fM", f/(1<<20))
	case n < 1<<40:
		return fmt.Sprintf("%.2fG", f/(1<<30))
	}
	return fmt.Sprintf("%.2fT", f/(1<<40))
}
