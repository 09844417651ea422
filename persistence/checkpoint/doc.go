// Package checkpoint runs a shard's fuzzy checkpoint (docs/DESIGN.md §6) as an
// explicit state machine on the shard's loop thread. Nothing it does blocks
// the loop: every file operation goes through runtime.Backend, and every
// step that waits (a WAL barrier, a page write, a heap-file fsync, the
// manifest and control-file replacements) is a completion that moves the
// machine on.
//
// # States
//
//		Idle → Writing → Flushing → Syncing → Finalizing → Idle
//		any  → Poisoned (for good)
//
//	  - Begin (→ Writing): redo := the WAL's next LSN; the dirty keys are
//	    taken from the Source. Their current versions are written into heap
//	    pages, a few keys per loop step: a new version is inserted and the
//	    old one filed as a deferred free under redo; a deleted key's record
//	    is freed at once, with the deletion's LSN. A free whose page is not
//	    cached waits for a round of reads of the cold pages the next keys
//	    need (load.go). When dirty pages leave the page cache too little
//	    room for that, Writing first writes the oldest of them as Flushing
//	    does (a spill, spill.go), so that they become clean and evictable.
//	  - Flushing: the dirty pages go out in batches, one batch at a time.
//	    For each: open the files it needs (ENOENT: the file vanished),
//	    append the full-page image of every page still FPI-pending, ONE WAL
//	    barrier through the highest page LSN and FPI LSN of the batch, then
//	    one pwrite per page of a copy of its bytes (Page.EncodeInto). A
//	    failed FPI append, barrier or write leaves its pages dirty: after the
//	    last batch, the pass is repeated (same redo) until none fails.
//	  - Syncing: one outstanding fsync per heap file the flush wrote; a file
//	    is done when heap.SyncTracker says the generation of its last write
//	    in this checkpoint is durable. A write landing after an fsync
//	    started needs another fsync. An fsync error poisons (fsyncgate);
//	    ENOENT means the file vanished and holds nothing back.
//	  - A heap file found missing (open or fsync: NotFound) is never
//	    re-created: its pages lose their flags (heap.Heap.FileVanished) and
//	    it is counted as retired (the manifest no longer listed it live) or
//	    unexpected. An unexpected one is tombstoned in the manifest, and the
//	    keys it held, which the shard marks dirty again from OnVanished, are
//	    written again with the same redo before the checkpoint finalizes.
//	  - Finalizing: fsync the heap directory when the checkpoint created
//	    files, commit the manifest (atomic replacement), append the
//	    checkpoint-end record and wait until it is durable, then write the
//	    control file atomically. Only then does the published redo move;
//	    a failed step leaves it where it was and is retried. Then the
//	    deferred frees filed under redo are released and OnPublished reports
//	    the new redo point (WAL below it may be recycled; Recyclable helps).
//
// Besides these edges (Manager.enter checks them) there is Syncing →
// Writing, when the keys of a vanished file are written again. Within a
// state, the operation the machine waits for is named (waitOpen,
// waitWrites, waitManifest…), and so is the finalize step (finSyncDir →
// finManifest → finEndRecord → finControl); every completion asserts the
// wait, state, finalize step and checkpoint generation it expects
// (Manager.resume).
//
// # WAL records
//
// Full-page images and checkpoint-end records are wal.RecordCheckpoint
// records whose first payload byte is record.KindFPI or record.KindEnd;
// their formats live in package record, which recovery imports too.
//
// The Manager is used from the loop's thread only.
package checkpoint
