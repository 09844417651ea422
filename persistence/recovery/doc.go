// Package recovery boots one shard's persisted state up to, and not
// including, the replay of its write-ahead log: the steps of docs/DESIGN.md §7
// "Recovery" between taking the directory lock and wal.Recover.
//
// Open runs, in this order, and refuses (with an error that names the file,
// the segment or the page and what is wrong) wherever going on would mean
// guessing:
//
//  1. Control file (control.Read). A missing one is a fresh shard: redo
//     LSN 1. A present one that does not decode is an error. The WAL
//     directory is listed (wal.ParseSegmentName): its oldest segment must
//     start at or below the redo point (at LSN 1 for a fresh shard), or the
//     history that replay needs is gone (ErrMissingHistory). A control file
//     that names a checkpoint record next to an empty WAL is the same loss.
//  2. Manifest (manifest.Read). A missing one is an empty registry, but only
//     for a fresh shard: a checkpoint commits the manifest before it writes
//     the control file, so a control file without a manifest means the
//     registry is lost, and sweeping the heap files as unregistered would
//     delete checkpointed data (ErrManifestMissing). The file-id counter is
//     seeded past the control file's next file id and past every heap file
//     on disk (manifest.Sweep), and written back before anything is deleted
//     (see below). Then heap files the manifest never registered are
//     deleted, and so are tombstoned files whose tombstone the published
//     redo point covers (manifest.Unlinkable); those are forgotten and the
//     manifest is written again.
//  3. Torn-page repair. The WAL is scanned read-only (nothing is truncated
//     or sealed: wal.Recover, which the caller runs next, does that) from
//     the segment that holds the redo point, and the full-page images
//     (record.KindFPI) with LSN >= redo are noted: for each page, where
//     the image with the highest LSN is. Every such page of a live heap file
//     is read; one that fails validation (heap.CheckPage), or the partial
//     page a torn write left at the end of a file, is overwritten with its
//     image (heap.File.WriteImage). A page never written (all zeros) is
//     valid. A torn tail of the last segment ends the scan normally; damage
//     anywhere else ends it too, without an error here: wal.Recover judges
//     the log. Only a page that needs an image the scan could not reach
//     fails the boot here, with ErrNoImage wrapping the damage as a
//     *wal.MidChainTearError (the refusal wal.Recover would give, naming
//     the way out). Under Options.Salvage the scan goes on past damage
//     where wal.Recover's salvage goes on: the next segment.
//  4. Every live heap file, the heap directory and the shard directory are
//     fsynced: whatever a killed process left in the operating system's
//     page cache (pages a checkpoint wrote and never fsynced, the rename of
//     a control file or manifest whose directory fsync never ran) and the
//     repairs are durable before the keyspace is built on them.
//  5. heap.Open loads the live files and hands every live record to
//     Options.OnRecord. A page that still fails validation there had no
//     image at or above the redo point: ErrNoImage.
//
// # Why writing the manifest at boot is safe
//
// The manifest is replaced atomically (temporary file, fsync, rename,
// directory fsync), so a crash leaves the old content or the new. What boot
// writes differs from what it read only in ways that are monotone and that
// any later boot, reading either version, reaches anyway: the counter only
// moves up (SeedPast), and the only entries dropped are tombstones that
// the published redo point covers and whose files were unlinked durably
// first (manifest.RemoveFiles fsyncs the directory before Forget). The live
// set never changes. Boot runs under the directory lock, before any
// checkpoint, so no commit races it.
//
// The counter is written before any heap file is deleted: a swept file can
// carry an id above every id the manifest and the control file recorded (a
// checkpoint that created it and crashed before its commit). Once it is
// deleted, nothing on disk would remember that id; a crash right after would
// let the counter move back and hand the id out again, and a file name would
// mean two files (full-page images of the old file above the redo point
// would then name pages of the new one).
//
// # What the caller does next
//
// wal.Recover with Redo = State.Redo (it truncates the torn tail and seals
// the last segment), replaying the records into the keyspace built from
// OnRecord; then serve. On any error from Open,
// what OnRecord received must be discarded: boot refuses.
package recovery
