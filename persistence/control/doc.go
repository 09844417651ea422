// Package control reads and writes a shard's control file,
// <shard dir>/control: where recovery starts (the redo LSN) and what the
// last finalized checkpoint published. The file is replaced with
// vfs.AtomicWrite, as the manifest is.
//
// # Format (64 bytes, little-endian)
//
//	offset size field
//	     0    8 magic "MOONDCTL"
//	     8    4 format version (1)
//	    12    4 shard id
//	    16    8 redo LSN: the first LSN recovery must replay (>= 1)
//	    24    8 checkpoint LSN: the LSN of the checkpoint record of the
//	            last finalized checkpoint (>= redo LSN), 0 before the first
//	    32    8 time of that checkpoint, unix milliseconds (int64)
//	    40    4 next file id: above every heap file id handed out (>= 1)
//	    44   16 reserved, zero
//	    60    4 CRC-32C (Castagnoli) of bytes 0..59
//
// # Atomic replacement
//
// The file is never written in place. The new content goes to
// <shard dir>/control.tmp, which is fsynced, renamed over control, and the
// shard directory is fsynced: after a crash at any point, control is the
// old content or the new, whole. A leftover control.tmp is garbage.
// Prepare returns those steps' inputs (paths and bytes) so that the
// serving loop can perform them through runtime.Backend; Write performs
// them through vfs.FS.
//
// # Reading
//
// A missing control file is a fresh shard: Fresh (redo LSN 1). A file that
// is present but does not decode is an error that names the file: the
// shard's recovery point is unknown and boot must not guess. Recovery
// callers should treat a missing control file next to existing heap files
// or WAL segments with suspicion: that is not a fresh shard.
package control
