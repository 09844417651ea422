package keyspace

import (
	"fmt"
	"strconv"
	"unsafe"
)

// DEBUG OBJECT key (Redis's debugCommand "object"): one status line about
// a key's value, in Redis 7.0's format. "Value at" is the key's slot,
// refcount and encoding are OBJECT's, lru the 24 LRU/LFU bits of the
// slot, lru_seconds_idle OBJECT IDLETIME's. serializedlength is the
// length of the value's DUMP serialization without the type byte and the
// trailer, Redis's rdbSavedObjectLen: the same as Redis's for strings that
// LZF does not shorten (moond's LZF finds other matches than Redis's);
// moond serializes collections in RDB's plain encodings, not as listpacks
// and intsets, so theirs differ from Redis's. A list adds Redis's ql_
// fields, its nodes measured as the listpacks Redis would hold.

// debugDumpTrailer is what a DUMP payload has besides the value's
// serialization: the type byte, the RDB version (2) and the CRC-64 (8).
const debugDumpTrailer = 1 + 2 + 8

// DebugObject returns the DEBUG OBJECT line of key in database db, or
// false when there is no such key.
func (ks *Keyspace) DebugObject(db int, key []byte) (string, bool) {
	if db < 0 || db >= len(ks.dbs) {
		return "", false
	}
	// As Redis: the table itself, no expiry (which would write).
	d := ks.dbs[db]
	sl := d.keys.find(d.keys.hash(key), key)
	if sl == nil {
		return "", false
	}
	v, err := ks.valueOf(d, sl)
	if err != nil {
		return "", false // a cold value that cannot be read: counted (cold.go)
	}
	line := fmt.Sprintf("Value at:%p refcount:%d encoding:%s serializedlength:%d lru:%d lru_seconds_idle:%d",
		unsafe.Pointer(sl), v.refcount(), v.encoding(), len(appendDump(nil, v))-debugDumpTrailer,
		lfuBits(sl.kw), ks.idleSeconds(sl.kw))
	if v.kind() == KindList {
		line += ks.quicklistFields((*list)(v.p))
	}
	return line, true
}

// quicklistFields are DEBUG OBJECT's ql_ fields of a list.
func (ks *Keyspace) quicklistFields(l *list) string {
	nodes, size := l.numNodes(), 0
	for ni := 0; ni < nodes; ni++ {
		n := l.node(ni)
		size += lpHeaderSize + 1 // header and end byte
		for p := int(n.lo); p < len(n.b); {
			var e []byte
			e, p = readFwd(n.b, p)
			size += lpEntrySize(e)
		}
	}
	return fmt.Sprintf(" ql_nodes:%d ql_avg_node:%.2f ql_listpack_max:%d ql_compressed:0 ql_uncompressed_size:%d",
		nodes, float64(l.len())/float64(nodes), ks.Limits.ListMaxListpackSize, size)
}

// lpHeaderSize is a listpack's header: total bytes (4) and count (2).
const lpHeaderSize = 6

// lpEntrySize is the bytes an element takes in a Redis listpack: its
// encoding (an integer's, when the element is one in canonical form) and
// the back length.
func lpEntrySize(e []byte) int {
	var n int
	if i, err := strconv.ParseInt(string(e), 10, 64); err == nil && strconv.FormatInt(i, 10) == string(e) {
		switch {
		case i >= 0 && i <= 127:
			n = 1
		case i >= -4096 && i <= 4095:
			n = 2
		case i >= -1<<15 && i < 1<<15:
			n = 3
		case i >= -1<<23 && i < 1<<23:
			n = 4
		case i >= -1<<31 && i < 1<<31:
			n = 5
		default:
			n = 9
		}
	} else {
		switch l := len(e); {
		case l < 64:
			n = 1 + l
		case l < 4096:
			n = 2 + l
		default:
			n = 5 + l
		}
	}
	switch {
	case n < 128:
		return n + 1
	case n < 16384:
		return n + 2
	case n < 2097152:
		return n + 3
	case n < 268435456:
		return n + 4
	}
	return n + 5
}
