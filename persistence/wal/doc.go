// Package wal is moond's per-shard write-ahead log: the record and segment
// format, the scanner that tells a torn tail from corruption, recovery, and
// the pieces a writer is built from (Appender, which lays records out
// without I/O, and SyncWriter, the synchronous reference writer).
//
// # LSNs
//
// Every record has an LSN: per shard, +1 per record (seal records included),
// never reused across restarts. Recovery replays records with
// lsn >= redo, the one convention everywhere. LSN 0 is never used.
//
// # Files
//
// A shard's log lives in <shard dir>/wal/ as segment files named
// wal-<first LSN as 16 lower-case hex digits>.log, so that names sort by LSN.
// A segment being created is written as wal-<...>.log.tmp, fsynced, renamed
// to its final name and the directory fsynced: a file under a final name
// always has a whole header. Recovery removes leftover .tmp files. Salvage
// may leave wal-<...>.log.salvage-<offset> (bytes it cut off) and
// wal-<...>.log.damaged (a segment it moved aside); neither is read again.
//
// # Segment header (64 bytes, little-endian)
//
//	offset size field
//	     0    8 magic "MOONDWAL"
//	     8    4 format version (2; 1 is still read)
//	    12    4 shard id
//	    16    8 first LSN: the LSN of the segment's first record
//	    24    8 previous segment's first LSN        ┐ the chain link;
//	    32    8 previous segment's seal record LSN  │ all zero for the
//	    40    4 previous segment's seal record CRC  ┘ first segment
//	    44   16 reserved, zero
//	    60    4 CRC-32C of bytes 0..59
//
// The header's first LSN equals the one in the file name. It is normally the
// previous seal's LSN + 1; it may be higher (never lower) when the writer
// started above a floor given by the caller: the LSNs in between were never
// used, and the CRC-protected header says so.
//
// # Records (little-endian), from offset 64 to the end of the file
//
//	offset  size field
//	     0     4 L: payload length in bytes (at most MaxPayload, 513 MiB)
//	     4     8 LSN
//	    12     1 type: 1 data, 2 checkpoint, 3 seal, 4 part, 5 sync mark
//	             (format 2 only); 0 and 6..255 invalid
//	    13     L payload
//	  13+L     4 CRC-32C (Castagnoli) of bytes 0..12+L: length, LSN, type
//	             and payload
//
// Records are packed back to back with no padding; a record is 17+L bytes.
// Type 0 and LSN 0 are invalid, so zero-filled space never decodes.
//
// Data payload (a write command in deterministic form; see EncodeCommand):
//
//	uvarint db | uvarint argc (>= 1) | argc × (uvarint len | len bytes)
//
// Seal payload (13 bytes):
//
//	offset size field
//	     0    1 reason: 1 rotate, 2 recovery, 3 shutdown
//	     1    8 bytes of torn tail cut off before sealing (recovery seals)
//	     9    4 segment digest: CRC-32C over the 4-byte CRC fields of every
//	            record of the segment before the seal, in order
//
// The digest commits the seal to the whole segment; since the next header
// names the seal's CRC, a segment replaced by another with the same LSNs
// (another copy of the data directory, say) breaks the chain.
//
// Checkpoint payload: defined by the checkpoint package.
//
// # Sync marks and the durable point (format 2)
//
// Every group (one pwrite of the writer) opens with a sync mark: a record
// of type 5 whose LSN field holds the LSN of the record after it (it takes
// no LSN of its own) and whose 8-byte payload is Q, the offset before which
// every byte of the segment was durable, by a completed fdatasync (or the
// creation's fsync, for the header), when the group was written. Marks are
// not passed to Visit, not counted as records and not folded into the
// digest; a mark must claim 64 <= Q <= its own offset and never less than
// an earlier mark. A format-1 segment has no marks and keeps the rules of
// format 1 below.
//
// A power loss may leave the bytes written after the last completed
// fdatasync as any mix of written and unwritten pages, so in the last
// segment valid records (whole groups even) may follow damage at P. The
// marks say whether that damage is a power loss's or lost history: a
// readable mark anywhere after P claiming Q > P means a completed
// fdatasync covered the damaged bytes (StopCorrupt, ErrDurableDamaged);
// when none does, the damage lies beyond the last durable point and the
// scan reports StopTorn: recovery cuts at P, as for any torn tail, and
// what it cuts was never acknowledged under appendfsync always. Damage at
// the very end of a group whose fdatasync completed with no later group to
// vouch for it looks the same as a power loss during that write: no format
// can tell them apart, and the tail is cut, as format 1 cuts a torn tail.
//
// # Continuation records (split logical records)
//
// A data record whose payload exceeds the record limit (MaxPayload, or
// less when the writer is configured so) is split into parts: records with
// consecutive LSNs, all in one segment and appended together, each at most
// the limit. Every part but the last has type 4 (part); the last has type
// 1 (data) and ends the logical record. The payloads concatenated, in LSN
// order, are the logical record's payload. Each part is an ordinary record
// with its own length, LSN and CRC, and is folded into the segment digest
// like any other. The logical record's LSN is its last part's: it is
// acknowledged and replayed at that LSN, as one record. So a logical record
// has no size limit below what memory holds (Redis's proto-max-bulk-len
// times the arguments fits), and one that fits in one record is encoded
// exactly as before.
//
// A part may be followed only by the next part, or by the end of the
// valid prefix (a torn tail) or a recovery seal (the seal recovery wrote
// after cutting such a tail). A checkpoint record or a rotate or shutdown
// seal after a part is corruption. A run of parts that never reaches its
// last part was torn by a crash: recovery drops the whole logical record
// (it was never acknowledged, since its LSN is the missing last part's).
//
// # Segment invariants
//
//   - Records in a segment have consecutive LSNs starting at the header's
//     first LSN.
//   - A seal record is the last bytes of its file. Every segment except the
//     last ends with one, and the next segment's header names its LSN and
//     CRC: that link proves no segment between them is missing or was
//     replaced, and that the previous one ended where the next one thinks.
//   - A sealed segment is never written again. A writer always starts a new
//     segment; it never appends to one that recovery found.
//   - Before the next segment is created, the sealed one is fdatasynced
//     (whatever the appendfsync mode), so a power loss cannot leave an
//     unsynced segment in the middle of the chain.
//
// # Reading a segment (ScanSegment)
//
// The scanner reads records until the first one it cannot accept, and
// classifies the stop:
//
//   - StopSealed: a seal record ends the file. Normal for every segment.
//   - StopEOF: the file ends at a record boundary without a seal. Normal for
//     the last segment after a crash between writes.
//   - StopTorn: the valid prefix ends on a partial record, a checksum
//     mismatch, an impossible length or zero-filled bytes, and no valid
//     record with a later LSN follows anywhere in the file (format 1), or
//     no sync mark after it claims the damaged bytes durable (format 2).
//     Normal for the last segment after a crash or a power loss in the
//     middle of a write.
//   - StopCorrupt: what a crash of the writer cannot produce: damaged bytes
//     followed by a valid record with a later LSN (format 1) or by a sync
//     mark claiming them durable (format 2), a checksummed record
//     with the wrong LSN or an invalid type, a malformed seal or one whose
//     digest does not match, bytes after the seal, a bad header.
//
// # Recovery (Recover)
//
// Segments are read in LSN order from the last one whose first LSN is at or
// below the redo point (older ones hold nothing to replay). For each, the
// header must decode, name the shard and the LSN in the file name, and link
// to the previous segment's seal; records must be consecutive. Data and
// checkpoint records with lsn >= redo go to the Apply callback.
//
// The last segment's torn tail is the normal shape of a crash: recovery
// truncates it (and fsyncs), then appends a seal record (and fsyncs), so
// that after one more crash, when a newer segment exists, it is sealed and
// not a tear in the middle. A last segment that ended cleanly without a seal
// is sealed the same way. So when Recover returns, every segment is sealed
// and the writer starts a new one at NextLSN, linked to RecoverResult.Tail.
//
// Anything else is damage to acknowledged history and Recover returns a
// *MidChainTearError naming the shard, segment, offset and the way out
// (--wal-salvage, or MOOND_WAL_SALVAGE=1). With Salvage, recovery skips
// the damaged part, goes on with the next segment, and lists every skip
// (segment, byte range, LSN range) in RecoverResult.Skipped; a damaged last
// segment has its bad bytes copied aside before they are cut off.
//
// NextLSN is above every LSN found anywhere (including records seen after
// damage), and never below the caller's floor or the redo point.
package wal
