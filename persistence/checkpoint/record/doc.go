// Package record holds the payload formats of wal.RecordCheckpoint
// records: the first payload byte is the kind (KindFPI, KindEnd,
// KindDBMap, KindGap), the rest is that kind's encoding.
//
// The checkpoint writes these records; recovery (persistence/recovery and
// the server's database-map replay) reads them. Both import this package,
// so that neither decodes a format private to the other.
//
//   - KindFPI: a full-page image, logged before a heap page's first write
//     in a checkpoint cycle, so that recovery can repair a torn write.
//   - KindEnd: a checkpoint reached its finalize step, with its redo LSN.
//   - KindDBMap: the shard's logical-to-physical database map, logged at a
//     checkpoint's redo point when it is not the identity.
//   - KindGap: the log was closed and opened again (CONFIG SET appendonly
//     no, then yes); the data records after it are replayed only from a
//     redo point above it (shard/aof.go).
package record
