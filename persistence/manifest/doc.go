// Package manifest is the registry of a shard's heap files,
// <shard dir>/manifest: which files are live, which are tombstoned (and by
// which checkpoint), and the file-id counter.
//
// # File ids
//
// Ids come from one counter, NextID, that never moves back: it is above
// every id the manifest ever listed (tombstoned and forgotten ones
// included, since the counter itself is persisted) and, once Sweep has
// run at boot, above every heap file found on disk. An id is never handed
// out twice, so a file name never means two files.
//
// # Lifecycle of a heap file
//
//  1. AllocateFileID: the heap gets a new id, registered live in memory.
//     The registration becomes durable with the next commit (Write) of
//     the manifest, in a checkpoint's finalize. A file created by a
//     checkpoint that never committed is unregistered: boot's Sweep finds
//     it and deletes it (its content is all above the redo point).
//  2. Tombstone(id, checkpoint): the file holds nothing live; checkpoint
//     is the redo LSN of the checkpoint that will commit the tombstone.
//     The file is not deleted yet, and the heap no longer loads it.
//  3. Unlinkable(published redo): once that checkpoint has finalized (the
//     published redo point reached it), the file may be unlinked; then
//     Forget drops the entry (the counter stays where it is).
//
// # Format (little-endian)
//
//	offset size field
//	     0    8 magic "MOONDMAN"
//	     8    4 format version (2; version 1 is read too)
//	    12    4 shard id
//	    16    8 next file id, 1..2^32: above every id listed, and every
//	            id ever handed out
//	    24    4 entry count N (at most MaxEntries)
//	    28    4 D: the number of key counts (version 2); zero in version 1
//	    32 16×N entries, by ascending file id:
//	              0 4 file id (1 <= id < next file id)
//	              4 1 state: 1 live, 2 tombstoned
//	              5 3 reserved, zero
//	              8 8 tombstone checkpoint: 0 when live; when tombstoned,
//	                  the redo LSN of the checkpoint that commits it (>= 1)
//	 32+16N 8×D key counts (version 2): the keys each physical database
//	            held when the checkpoint that committed the manifest began,
//	            by physical id; D is the header's word at offset 28 (zero
//	            in version 1). A boot sizes its tables from them.
//	 32+16N+8D 4 CRC-32C (Castagnoli) of everything before it
//
// The file is replaced atomically, like the control file (see
// vfs.AtomicWrite): manifest.tmp, fsync, rename, directory fsync.
// A missing manifest is an empty registry.
package manifest
