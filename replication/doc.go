// Package replication is moond's side of Redis's replication protocol as
// a replica: the link to a master (handshake, PSYNC, the RDB snapshot in
// both of its transfer forms, the command stream, REPLCONF ACK) and a
// streaming reader of RDB files. As a master's, it has the [Backlog]: the
// one command stream a master's shards feed and its replicas read.
//
// The package does not apply anything itself. The link hands the snapshot
// and the stream to an [Applier], which the server backs with one of its
// own connections, so that every write from the master goes through the
// same dispatch, WAL and acknowledgement rule as a client's. The offset
// the link acknowledges to the master is the offset of the last command
// whose reply the applier got back: only commands the WAL holds.
//
// Everything that comes from the master is untrusted: a malformed reply,
// snapshot or command ends the link with an error (the caller logs it and
// reconnects), never a panic.
package replication
