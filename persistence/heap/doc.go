// Package heap is moond's paged heap: the on-disk home of every key that
// has been through a checkpoint. It defines the page format (Page, with
// slotted KV pages and overflow pages), heap files and their synchronous
// reader and writer (File), record placement with a free-space map and
// deferred frees (Heap, DeferredFrees), the bounded page cache with the
// DIRTY and FPI_PENDING flags (Cache), and the per-file write generations
// that decide what an fsync made durable (SyncTracker).
//
// It does no asynchronous I/O and runs no checkpoint: the checkpoint takes
// dirty pages from the Cache, logs their full-page images, writes the
// bytes Page.EncodeInto produces at PageOffset through runtime.Backend,
// and fsyncs the files; this package keeps the books for it.
//
// # Files
//
// A shard's heap lives in <shard dir>/heap/ as files named
// heap-<file id as 8 lower-case hex digits>.dat. File ids come from the
// manifest's counter (never 0, never reused). Page n of a file is at byte
// offset n × 4096; a file is a whole number of pages, except after a torn
// write that extended it. A page that was never written (a hole below a
// page that was) reads as zeros and holds nothing. Files are bounded
// (Options.MaxFileSize, 64 MiB by default) except for a file holding a
// single record whose overflow chain alone exceeds the bound.
//
// # Page header (48 bytes, little-endian, every page type)
//
//	offset size field
//	     0    4 magic "MDHP"
//	     4    1 page type: 1 KV (slotted), 2 overflow, 3 free;
//	            0 and 4..255 invalid, so zeros never decode
//	     5    1 format version (1)
//	     6    2 reserved, zero
//	     8    8 page LSN: the highest LSN of a change in the page (a
//	            record's key LSN, a deletion's LSN); the WAL must be
//	            durable through it before the page is written
//	    16    4 CRC-32C (Castagnoli) of the 4096 bytes of the page with
//	            this field taken as zero
//	    20    4 file id of the file the page belongs to
//	    24    4 page number of the page in that file
//	    28    4 reserved, zero
//	    32   16 type-specific, below
//
// The file id and page number let a decoder reject an intact page that was
// written to the wrong place. The CRC covers the whole page, so a torn
// write (part new, part old) is detected; recovery repairs such a page
// from its full-page image in the WAL.
//
// # Slotted (KV) page
//
//	offset size field
//	    32    2 slot count N
//	    34    2 records start ("upper"): the offset of the lowest record
//	            byte; 4096 when the page has no records
//	    36    2 dead bytes: bytes in [records start, 4096) that no live
//	            slot holds (deleted records), reclaimed by compaction
//	    38   10 reserved, zero
//	    48  4×N slot array; slot i: 2 bytes record offset (0: the slot is
//	            dead), 2 bytes record length (0 when dead)
//	            free space
//	 upper  ... records, packed towards the end of the page
//
// Invariants (checked by the decoder): 48 + 4N ≤ upper ≤ 4096; every live
// slot lies in [upper, 4096), is at least a record header long, and
// overlaps no other; live bytes + dead bytes = 4096 − upper; the last slot
// is live (trailing dead slots are dropped); a page without slots has
// upper 4096 and no dead bytes. Slot numbers are stable: a record keeps
// its slot until it is deleted, and a dead slot is reused first.
//
// # Record (in a slot, little-endian)
//
//	offset size field
//	     0    1 flags: bit 0 set when key‖value continues in an overflow
//	            chain; bits 1..7 zero
//	     1    1 value type (moond's keyspace.Kind; opaque here)
//	     2    2 reserved, zero
//	     4    4 key length K (at most 512 MiB)
//	     8    8 value length V (the encoded value; at most 2^40)
//	    16    8 expiry, unix milliseconds (int64), 0 for none
//	    24    8 key LSN: the LSN of the WAL record that produced this
//	            version (never 0)
//	    32    4 first overflow page, in the same file (only when bit 0 is set)
//	 32/36    I inline bytes: the first I bytes of key‖value
//
// Without a chain, I = K + V. With one, I < K + V and the chain holds the
// other K + V − I bytes. The heap inlines records of up to MaxInline
// (4012) bytes of key‖value; a larger record takes a page of its own and
// inlines the first 4008 bytes (so a key of up to 4008 bytes is always
// inline).
//
// # Overflow page
//
//	offset size field
//	    32    4 next page of the chain in the same file, 0xFFFFFFFF at
//	            the end
//	    36    4 data length L (1..4048)
//	    40    4 owner page: the page of the record whose chain this is
//	    44    2 owner slot
//	    46    2 sequence: this page's index in the chain, mod 65536
//	    48    L data; the rest of the page is zero
//
// Every page of a chain but the last is full. Readers check owner,
// sequence and lengths on every page, so that a chain never wanders into a
// page that was freed and reused.
//
// # Free page
//
// Header only (the 16 type-specific bytes are zero): a slotted page whose
// last record was deleted. Freed overflow pages are not rewritten; boot
// counts an overflow page that no live record's chain reaches as free.
//
// # Page cache and checkpoint cycles
//
// See Cache for the flag transitions and SyncTracker for write
// generations. Pages are modified in place in the cache: a write that is
// in flight must write a copy of the page (EncodeInto), taken in the same
// loop step as Cache.BeginWrite, whose version goes to Cache.WriteDone
// when the write completes.
package heap
