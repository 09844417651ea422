// Package txnlog keeps a transaction across shards all-or-nothing through
// a crash, although each shard has its own write-ahead log.
//
// A txn that writes on several shards (MSET over keys of two shards, an
// EXEC, a gathered RENAME, ...) writes its part on each shard between two
// markers in that shard's WAL: BEGIN txid before the part's first record
// and END txid, naming every shard that takes part, after its last. The
// markers are ordinary data records (a MOOND.TXN command), so the log's
// format does not change.
//
// There is no commit record: a txn is committed when every shard it names
// holds its END (parallel commit). The coordinator replies to the client,
// and lets the shards go, only once every part's END is in its WAL as the
// appendfsync mode in force makes a reply durable; nothing on a shard can
// read or overwrite a part's keys before then, except a later txn of the
// same group: the txns a coordinator holds its shards for at once run one
// after the other without waiting for the WAL. Their txids are
// consecutive and an END names the group's first txid (Marker.Group): a
// txn commits only when every txn of its group below it that a log names
// committed too, and the coordinator acknowledges a txn only after the
// one before it in its group. So whenever any record written after a
// part survives a crash, the whole txn does.
//
// Recovery reads each shard's log from its redo point first (Scan's
// Summary), decides which txns committed (Decide), and replays a part's
// records only when its txn committed. A shard's checkpoint may move its
// redo point past a part only while the shard is not held by a txn (so the
// txn was decided and its END durable on every shard); the record at the
// redo point carries the highest txid whose part lies below it (Mark), which
// tells recovery that the part was there. Txids grow on every shard in the
// order its parts were written: a txn takes its id when it holds every
// shard it needs, and a shard is held by one txn at a time.
//
// DESIGN.md §3, "Transactions across shards", has the argument in full.
package txnlog
