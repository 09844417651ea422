// Package server turns shards into a Redis server: every shard's loop
// listens on the port itself (SO_REUSEPORT) and owns the connections it
// accepts; each connection parses its pipelined requests, runs commands for
// local keys inline, sends commands for other shards as one mailbox message
// per target shard per batch, and writes the replies back in the client's
// order with one send. Connection-level commands (HELLO, AUTH, CLIENT,
// CONFIG, INFO, ...) live here; data commands run on the shard that owns
// their keys (package shard, over package keyspace). server imports no
// persistence package: durability, and when a reply may say so, are the
// shard's.
//
// Invariants:
//   - A connection is touched only by the loop that accepted it; other shards
//     reach it only by posting to that loop.
//   - Replies leave in request order: a reply slot is queued for every
//     command when it is parsed and the output is cut only up to the first
//     slot still waiting.
//   - A connection has at most one recv and one send in flight; it reads
//     again only after the replies of what it read have been sent, which is
//     the back-pressure a slow client feels. The one exception is a
//     connection waiting for a blocking command (block.go): it keeps a read
//     posted, into a buffer of its own, to notice a client that hangs up,
//     and runs what it read only after the reply.
//   - A blocking command's wait has one owner shard, the only one that ends
//     it (served, timed out, unblocked or cancelled), so it ends once.
package server
