// Package rdb reads and writes values in Redis's RDB serialization, the
// encoding of DUMP and RESTORE payloads and, later, of replication's
// snapshots.
//
// It knows Redis 7.0's formats (RDB version 10): the length encoding, the
// string encodings (raw, integers, LZF-compressed), the CRC-64 that ends a
// DUMP payload, and the value encodings of strings, lists, sets, sorted
// sets and hashes, including the listpack and intset blobs that Redis
// stores whole. An [Object] is a value in a neutral form; package keyspace
// turns it into its own representations and back.
//
// Writing uses the plain encodings every Redis since 2.x loads: a list as
// RDB_TYPE_LIST (a count and its elements), a set as RDB_TYPE_SET, a
// sorted set as RDB_TYPE_ZSET_2 (binary scores), a hash as RDB_TYPE_HASH;
// each string in it as Redis writes strings with rdbcompression on (an
// integer encoding for a short canonical integer, LZF over 20 bytes when
// it saves space).
// Reading takes everything redis-server 7.0 writes for those types:
// QUICKLIST_2 lists of plain or listpack nodes, SET_INTSET, ZSET_LISTPACK,
// HASH_LISTPACK, and the older ZSET with decimal scores.
//
// Every decoder takes untrusted bytes: it returns an error wrapping
// [ErrFormat] for anything malformed, never panics, and never allocates
// more than its input justifies (every length is checked against the bytes
// left before anything is allocated for it). The decoders are fuzzed.
package rdb
