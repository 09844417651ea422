// Package keyspace holds one shard's slice of the keyspace and executes the data
// commands against it.
//
// A [Keyspace] is a set of numbered databases (SELECT's index), each a hash
// table from key to value plus a second table of expiry times for the keys
// that have one. [Keyspace.Exec] runs one command, already routed to this
// shard by the server, and writes its reply through a [ReplyWriter]; the
// command's name, arity, flags and key positions come from the table that
// [Lookup] and [Specs] expose, with Redis 7.0's values, so that the server
// can route keys and answer COMMAND.
//
// Behaviour and error texts follow Redis 7.0 to the letter: clients and the
// Redis test suite match on them.
//
// Time comes from Keyspace.Now (unix milliseconds), read once per command, so
// that tests control it. Keys whose time has come are deleted lazily when a
// command touches them and actively by [Keyspace.ActiveExpire], a bounded
// sampling cycle that the shard's tick runs.
//
// Every write that changes the data is appended to the Keyspace's [Log] in a
// deterministic form (absolute expiry times, resulting values instead of
// increments, DEL for expirations), so that replaying the journal through
// Exec with Keyspace.Loading set rebuilds the same data whatever the clock
// says at replay time.
//
// RENAME, COPY and MOVE are journaled as MOOND.APPLY, a command that only
// replay knows, which carries the values they wrote (journal.go): no record
// reads a key it does not write.
//
// With persistence on, the keyspace is the fuzzy checkpoint's source
// (checkpoint.Source, source.go): each key knows where its heap record
// lives and whether it changed since the checkpoint last took it, and a
// record always stays with the (database, key) pair it names. Heap keys
// name a database by its physical id, fixed at creation; SWAPDB only
// permutes the logical-to-physical map ([Keyspace.DBMap]), which the
// checkpoint logs at its redo point when it is not the identity and
// recovery restores with [Keyspace.SetDBMap] (cmd_db.go). Recovery
// (recovery.go) loads the heap with LoadRecord and replays the WAL above
// the redo point with Replay, applying a record to a key only when the
// record is newer than the key's heap version.
//
// WATCH is the keyspace's too (watch.go): [Keyspace.Watch] registers a
// client's watch of a key of a logical database, every write of the key
// touches it by Redis 7.0's rules (signalModifiedKey's call sites, the
// flushes and SWAPDB, stale keys), and [Watch.Touched] tells EXEC whether
// to abort. MULTI, EXEC and the per-client state are the server's.
//
// A Keyspace belongs to one shard's thread: nothing in it is safe for
// concurrent use.
package keyspace
