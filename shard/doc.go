// Package shard is one shard of moond: the slice of the keyspace that the
// shard's slots map to, and everything that makes it durable — its
// write-ahead log, its heap and page cache, its checkpoints, its boot, and
// the rule that says when a write may be acknowledged.
//
// A [Shard] lives on one runtime.Loop and is touched only on that loop's
// thread. The server owns connections, parsing, routing and the server
// commands; it hands a shard the data commands routed to it ([Shard.Exec])
// and asks it when a reply that depends on a write may leave
// ([Shard.WhenDurable]). The keyspace appends its writes to the shard
// through the keyspace.Log interface; nothing calls back into the server.
//
// Files, one concept each:
//
//	shard.go       Shard, Options, Open, Boot, Exec, Tick, Close
//	log.go         the keyspace's Log: records into the WAL writer
//	ack.go         the acknowledgement rule: held replies, paused readers
//	refusal.go     why writes are refused (MISCONF) and the WAL's error log
//	boot.go        recovery: control file, manifest, heap, WAL replay
//	loading.go     the boot's progress, readable from any thread
//	checkpoint.go  the checkpoint manager's wiring and its callbacks
//	walfull.go     the --max-wal-size trigger and read pause
//	retire.go      WAL segment recycling and heap file retirement
//	pageload.go    reading heap pages a checkpoint step needs
//	save.go        SAVE/BGSAVE requests and the last save time
//	aof.go         CONFIG SET appendonly: sealing the log, and the gap after it
//	info.go        the figures INFO reports
//	crash.go       the test-only crash hook (--test-crash-at)
//
// The design of the whole is in docs/DESIGN.md.
package shard
