package server

import (
	"fmt"
	"strings"
	"time"
)

// writeInfoCheckpoint writes the checkpoint's share of INFO persistence:
// Redis's rdb_* fields mapped onto checkpoints, then moond's checkpoint_*
// and heap_* fields (per-shard LSNs as comma-separated lists).
func writeInfoCheckpoint(kv func(string, any), infos []shardInfo, changes int64, bgsaveSecs func(time.Duration) int64) {
	var inProgress, poisoned bool
	var completed, flushed, parts, failed, loads, loaded, spills, spilled, fsyncPending, files, bytes, retired, unexpected, walSince, recycled, peerSyncs int64
	var lastDur int64 = -1
	var redo []string
	var reasons, lastErrs []string
	status := "ok"
	var oldest time.Time
	for i, si := range infos {
		ci := si.shard.Checkpoint
		if oldest.IsZero() || ci.LastSave.Before(oldest) {
			oldest = ci.LastSave
		}
		if ci.LastStatus != "ok" {
			status = "err"
		}
		files += int64(ci.HeapFiles)
		bytes += ci.HeapBytes
		st := ci.Stats
		redo = append(redo, fmt.Sprint(st.LastRedoLSN))
		if st.InProgress {
			inProgress = true
		}
		completed += st.Completed
		flushed += st.PagesFlushed
		parts += st.PartsWritten
		failed += st.PagesFailed
		loads += st.PageLoads
		loaded += st.PagesLoaded
		spills += st.Spills
		spilled += st.PagesSpilled
		fsyncPending += int64(st.DataFsyncPending)
		retired += st.VanishedRetired
		unexpected += st.VanishedUnexpected
		walSince += ci.WALSince
		recycled += ci.Recycled
		peerSyncs += ci.PeerSyncs
		if st.Completed > 0 {
			lastDur = max(lastDur, st.LastDurationMs)
		}
		if st.LastError != "" {
			lastErrs = append(lastErrs, fmt.Sprintf("shard %d: %s", i, st.LastError))
		}
		if st.Poisoned {
			poisoned = true
			reasons = append(reasons, fmt.Sprintf("shard %d: %s", i, st.PoisonReason))
		}
	}
	kv("rdb_changes_since_last_save", changes)
	kv("rdb_bgsave_in_progress", boolInt(inProgress))
	kv("rdb_last_save_time", oldest.Unix())
	kv("rdb_last_bgsave_status", status)
	kv("rdb_last_bgsave_time_sec", bgsaveSecs(time.Duration(lastDur)*time.Millisecond))
	kv("rdb_current_bgsave_time_sec", -1)
	kv("checkpoint_in_progress", boolInt(inProgress))
	kv("last_checkpoint_redo_lsn", strings.Join(redo, ","))
	kv("checkpoints_completed", completed)
	kv("checkpoint_last_duration_ms", lastDur)
	kv("checkpoint_pages_flushed", flushed)
	kv("checkpoint_pages_failed", failed)
	kv("checkpoint_parts_written", parts)
	kv("checkpoint_page_loads", loads)
	kv("checkpoint_pages_loaded", loaded)
	kv("checkpoint_spills", spills)
	kv("checkpoint_pages_spilled", spilled)
	kv("checkpoint_txn_log_syncs", peerSyncs)
	kv("data_fsync_pending", fsyncPending)
	kv("heap_files", files)
	kv("heap_bytes", bytes)
	kv("heap_vanished_retired", retired)
	kv("heap_vanished_unexpected", unexpected)
	kv("wal_bytes_since_checkpoint", walSince)
	kv("wal_segments_recycled", recycled)
	kv("checkpoint_state", strings.Join(states(infos), ","))
	if len(lastErrs) > 0 {
		kv("checkpoint_last_error", strings.Join(lastErrs, "; "))
	}
	kv("poisoned", boolInt(poisoned))
	if poisoned {
		kv("poisoned_reason", strings.Join(reasons, "; "))
	}
}

func states(infos []shardInfo) []string {
	out := make([]string, len(infos))
	for i, si := range infos {
		out[i] = si.shard.Checkpoint.Stats.State.String()
	}
	return out
}
