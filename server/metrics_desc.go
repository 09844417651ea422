package server

import "github.com/prometheus/client_golang/prometheus"

// The metric families /metrics exposes. Names follow Prometheus's
// conventions: the moond_ prefix, _total for counters, base units in the
// name (_bytes, _seconds); figures kept per shard carry a shard label, and
// the dashboard (dashboards/moond.json) sums them. Only figures moond
// really keeps are here; each one's source is the INFO field of the same
// meaning (cmd_info.go, info_checkpoint.go).

// metricDescs lists every descriptor, for Describe.
var metricDescs []*prometheus.Desc

func newDesc(name, help string, labels ...string) *prometheus.Desc {
	d := prometheus.NewDesc(name, help, labels, nil)
	metricDescs = append(metricDescs, d)
	return d
}

// Commands, errors, clients (per shard).
var (
	descCommands         = newDesc("moond_commands_total", "Commands called, by command (INFO commandstats calls).", "shard", "command")
	descCommandsFailed   = newDesc("moond_commands_failed_total", "Commands that ran and replied an error, by command (failed_calls).", "shard", "command")
	descCommandsRejected = newDesc("moond_commands_rejected_total", "Commands refused before they ran, by command (rejected_calls).", "shard", "command")
	descCommandDuration  = newDesc("moond_command_duration_seconds", "Time commands took to run on the shard, by command (latency-tracking; INFO latencystats).", "shard", "command")
	descErrorReplies     = newDesc("moond_error_replies_total", "Error replies by their prefix (INFO errorstats).", "shard", "error")
	descConnected        = newDesc("moond_connected_clients", "Client connections open.", "shard")
	descBlocked          = newDesc("moond_blocked_clients", "Connections waiting in a blocking command or held by CLIENT PAUSE.", "shard")
	descConnsReceived    = newDesc("moond_connections_received_total", "Connections accepted.", "shard")
	descConnsRejected    = newDesc("moond_connections_rejected_total", "Connections refused (maxclients, protected mode).", "shard")
	descNetInput         = newDesc("moond_net_input_bytes_total", "Bytes read from clients.", "shard")
	descNetOutput        = newDesc("moond_net_output_bytes_total", "Bytes sent to clients.", "shard")
)

// The keyspace and memory (per shard).
var (
	descKeys         = newDesc("moond_keys", "Keys, by database (db0 always, other databases while they hold keys).", "shard", "db")
	descKeysExpiring = newDesc("moond_keys_expiring", "Keys with a time to live, by database.", "shard", "db")
	descExpired      = newDesc("moond_expired_keys_total", "Keys deleted because their time to live passed.", "shard")
	descEvicted      = newDesc("moond_evicted_keys_total", "Keys evicted under maxmemory.", "shard")
	descHits         = newDesc("moond_keyspace_hits_total", "Lookups that found their key.", "shard")
	descMisses       = newDesc("moond_keyspace_misses_total", "Lookups that did not find their key.", "shard")
	descDatasetMem   = newDesc("moond_dataset_memory_bytes", "Memory of the shard's data, as maxmemory counts it (used_memory_dataset).", "shard")
)

// The WAL (per shard).
var (
	descWALBytes        = newDesc("moond_wal_bytes_total", "WAL record bytes written.", "shard")
	descWALRecords      = newDesc("moond_wal_records_total", "WAL records written (seals included).", "shard")
	descWALGroups       = newDesc("moond_wal_groups_total", "WAL group commits written.", "shard")
	descWALSyncs        = newDesc("moond_wal_fdatasyncs_total", "fdatasyncs of WAL segments.", "shard")
	descWALWriteErrors  = newDesc("moond_wal_write_errors_total", "WAL group writes that failed (and were retried).", "shard")
	descWALSegsCreated  = newDesc("moond_wal_segments_created_total", "WAL segments created.", "shard")
	descWALSegsRecycled = newDesc("moond_wal_segments_recycled_total", "WAL segments unlinked once below the redo point.", "shard")
	descWALSegments     = newDesc("moond_wal_segments", "WAL segment files on disk.", "shard")
	descWALUnwritten    = newDesc("moond_wal_unwritten_bytes", "WAL bytes appended and not yet written.", "shard")
	descWALAboveRedo    = newDesc("moond_wal_above_redo_bytes", "WAL bytes above the published redo point: what a crash would replay.", "shard")
	descWALNextLSN      = newDesc("moond_wal_next_lsn", "The LSN the next WAL record gets.", "shard")
	descWALDurableLSN   = newDesc("moond_wal_durable_lsn", "The last LSN known durable (fdatasynced).", "shard")
	descWALGroupRecords = newDesc("moond_wal_group_commit_records", "Records per WAL group commit.", "shard")
	descWALSyncSeconds  = newDesc("moond_wal_fdatasync_seconds", "WAL fdatasync latency, from submission to completion (with the group's write when chained with it).", "shard")
	descWALRefused      = newDesc("moond_wal_append_refused", "1 once the WAL refused a record since the start (a write refused before it ran).", "shard")
)

// Checkpoints and the heap (per shard).
var (
	descCkpts          = newDesc("moond_checkpoints_total", "Checkpoints completed (redo point published).", "shard")
	descCkptInProgress = newDesc("moond_checkpoint_in_progress", "1 while a checkpoint runs.", "shard")
	descCkptPhase      = newDesc("moond_checkpoint_phase_seconds_total", "Time checkpoints spent in each phase, counted when the phase ends.", "shard", "phase")
	descCkptLastDur    = newDesc("moond_checkpoint_last_duration_seconds", "Duration of the last completed checkpoint.", "shard")
	descCkptPages      = newDesc("moond_checkpoint_pages_written_total", "Heap pages checkpoints wrote.", "shard")
	descCkptPagesFail  = newDesc("moond_checkpoint_pages_failed_total", "Heap page writes that failed (and were retried).", "shard")
	descCkptLastOK     = newDesc("moond_checkpoint_last_success_timestamp_seconds", "When the last checkpoint completed (LASTSAVE; the boot's time before the first).", "shard")
	descCkptRedo       = newDesc("moond_checkpoint_redo_lsn", "The published redo point: recovery replays the WAL from this LSN.", "shard")
	descCkptRedoLag    = newDesc("moond_checkpoint_redo_lsn_lag", "WAL records at or above the published redo point: what a crash would replay (absent while appendonly is off).", "shard")
	descCkptDirtyKeys  = newDesc("moond_checkpoint_dirty_keys", "Keys changed since the running or last checkpoint took them.", "shard")
	descHeapFiles      = newDesc("moond_heap_files", "Live heap files.", "shard")
	descHeapPages      = newDesc("moond_heap_pages", "Pages in the live heap files.", "shard")
	descHeapBytes      = newDesc("moond_heap_bytes", "Size of the live heap files.", "shard")
	descHeapRetired    = newDesc("moond_heap_vanished_retired_total", "Heap files found gone that the manifest had retired (expected).", "shard")
	descHeapUnexpected = newDesc("moond_heap_vanished_unexpected_total", "Heap files found gone that the manifest still listed (their keys written again).", "shard")
	descPoisoned       = newDesc("moond_poisoned", "1 when the shard's WAL or checkpoint is poisoned by a failed fsync; reason says why.", "shard", "component", "reason")
)

// Server-wide.
var (
	descScrapeTimeouts = newDesc("moond_scrape_shard_timeouts_total", "Scrapes a shard did not answer in time (left out of them).", "shard")
	descBuildInfo      = newDesc("moond_build_info", "1, labelled with moond's, Redis's and Go's versions.", "version", "redis_version", "go_version")
	descIOBackend      = newDesc("moond_io_backend_info", "1, labelled with the shards' I/O backend and why it was chosen.", "backend", "reason")
	descShards         = newDesc("moond_shards", "Number of shards.")
	descLoading        = newDesc("moond_loading", "1 while the shards load their data (commands answer LOADING).")
	descLoadedBytes    = newDesc("moond_loading_loaded_bytes", "Bytes of heap and WAL a shard's boot has read.", "shard")
	descLoadTotal      = newDesc("moond_loading_total_bytes", "Bytes of heap and WAL a shard's boot reads in all.", "shard")
	descUsedMemory     = newDesc("moond_used_memory_bytes", "Go heap objects' bytes (used_memory).")
	descRSS            = newDesc("moond_used_memory_rss_bytes", "Resident set size (used_memory_rss).")
	descMaxMemory      = newDesc("moond_maxmemory_bytes", "The maxmemory setting (0: no limit).")
)
